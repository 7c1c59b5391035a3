//! What a store holds.

use neardup::minhash::{Signature, MAX_PERMUTATIONS};
use neardup::{Bits, Fingerprint, PipelineConfig, Sketch};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

/// One stored document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DocRecord {
    /// The caller's id (non-empty, at most 1,024 bytes).
    pub id: String,
    /// Its fingerprint or signature (the store's method decides which).
    pub sketch: Sketch,
    /// When it was inserted, in milliseconds since the Unix epoch.
    pub inserted_at_ms: u64,
    /// A hash of its text (XXH3-64 of the UTF-8 bytes), when it came as text.
    pub content_hash: Option<u64>,
    /// The caller's metadata, any JSON.
    pub metadata: Option<serde_json::Value>,
    /// How many features voted in its fingerprint (its length as a
    /// length-dependent radius sees it), when known: documents sent as
    /// text, or as a fingerprint with a count. Records written before
    /// counts were kept have none (they count as long documents).
    pub features: Option<u32>,
}

/// Recorded once per store: what made its fingerprints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoreMeta {
    /// The fingerprint format version ([`neardup::FORMAT_VERSION`]).
    pub format_version: u32,
    /// The pipeline.
    pub config: PipelineConfig,
}

/// Recorded when an engine writes an index snapshot: which state of the
/// store the snapshot file holds. A snapshot is used on open only if the
/// store's [generation](crate::Store::generation) is still the one recorded
/// and the file's checksum is the one recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMark {
    /// The store's generation when the snapshot was taken.
    pub generation: u64,
    /// The snapshot file's XXH3-64 checksum.
    pub checksum: u64,
    /// Documents in the snapshot.
    pub documents: u64,
}

/// The longest id accepted, in bytes.
pub const MAX_ID_CHARS: usize = 1024;

/// Checks an id: non-empty, at most [`MAX_ID_CHARS`] characters (Unicode
/// scalar values, as JSON Schema's `maxLength` counts them).
pub(crate) fn check_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(StoreError::Invalid("a document id must not be empty".into()));
    }
    // More bytes than 4 per character cannot be; fewer than the limit in
    // bytes cannot be over it.
    if id.len() > MAX_ID_CHARS && id.chars().count() > MAX_ID_CHARS {
        return Err(StoreError::Invalid(format!(
            "a document id must be at most {MAX_ID_CHARS} characters; this one has {}",
            id.chars().count()
        )));
    }
    Ok(())
}

/// The record version written for fingerprints: 2 adds the feature
/// count. Version 1 records (no count) are still read.
const VERSION: u8 = 2;

/// The record version written for signatures: the fixed part of version
/// 2 with width 0 and a zero fingerprint, then the number of values (u16)
/// and the values (u32 each) before the metadata.
const VERSION_SIGNATURE: u8 = 3;

/// The feature count stored for "not known" (version 2).
const NO_FEATURES: u32 = u32::MAX;

impl DocRecord {
    /// The value stored under the id: version byte, width byte, 16 bytes of
    /// fingerprint, inserted_at, a flag and the content hash, the feature
    /// count (u32, `u32::MAX` if not known; version 2 on), then the metadata
    /// JSON (possibly empty). A signature (version 3) has width 0, a zero
    /// fingerprint, and its length (u16) and values after the feature
    /// count. Little-endian.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let meta = self.metadata.as_ref().map(|m| m.to_string()).unwrap_or_default();
        let signature = self.sketch.signature().map_or(&[][..], Signature::values);
        let mut v = Vec::with_capacity(41 + 4 * signature.len() + meta.len());
        match &self.sketch {
            Sketch::Fingerprint(fp) => {
                v.push(VERSION);
                v.push(fp.bits().get() as u8);
                v.extend_from_slice(&fp.value().to_le_bytes());
            }
            Sketch::Signature(_) => {
                v.push(VERSION_SIGNATURE);
                v.push(0);
                v.extend_from_slice(&0u128.to_le_bytes());
            }
        }
        v.extend_from_slice(&self.inserted_at_ms.to_le_bytes());
        v.push(u8::from(self.content_hash.is_some()));
        v.extend_from_slice(&self.content_hash.unwrap_or(0).to_le_bytes());
        v.extend_from_slice(&self.features.unwrap_or(NO_FEATURES).to_le_bytes());
        if self.sketch.signature().is_some() {
            let n = u16::try_from(signature.len()).expect("signatures have at most 4096 values");
            v.extend_from_slice(&n.to_le_bytes());
            for x in signature {
                v.extend_from_slice(&x.to_le_bytes());
            }
        }
        v.extend_from_slice(meta.as_bytes());
        v
    }

    /// The length of the fixed part of a record (before the metadata),
    /// from its first bytes (checked long enough for the fingerprint part).
    fn fixed_len(v: &[u8]) -> usize {
        match v[0] {
            1 => 35,
            VERSION_SIGNATURE if v.len() >= 41 => 41 + 4 * usize::from(u16::from_le_bytes([v[39], v[40]])),
            VERSION_SIGNATURE => 41,
            _ => 39,
        }
    }

    /// The feature count of an encoded record (checked by
    /// [`decode_sketch`](Self::decode_sketch)).
    pub(crate) fn decode_features(v: &[u8]) -> Option<u32> {
        if v[0] == 1 {
            return None;
        }
        let n = u32::from_le_bytes(v[35..39].try_into().expect("4 bytes"));
        (n != NO_FEATURES).then_some(n)
    }

    /// Only the sketch of an encoded record (what rebuilding the index
    /// needs; the metadata is not parsed).
    pub(crate) fn decode_sketch(id: &str, v: &[u8]) -> Result<Sketch> {
        let bad = |message: &str| StoreError::Corrupt { id: id.to_owned(), message: message.to_owned() };
        if v.is_empty() || !(1..=VERSION_SIGNATURE).contains(&v[0]) {
            return Err(bad("unknown record version"));
        }
        if v.len() < 18 || v.len() < Self::fixed_len(v) {
            return Err(bad("too short"));
        }
        if v[0] == VERSION_SIGNATURE {
            let n = usize::from(u16::from_le_bytes([v[39], v[40]]));
            if v[1] != 0 || n == 0 || n > MAX_PERMUTATIONS {
                return Err(bad("a signature record of a bad width or length"));
            }
            let values: Vec<u32> = v[41..41 + 4 * n]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            return Ok(Sketch::Signature(Signature::from_values(values)));
        }
        let bits = match v[1] {
            64 => Bits::B64,
            128 => Bits::B128,
            _ => return Err(bad("fingerprint width is neither 64 nor 128")),
        };
        let value = u128::from_le_bytes(v[2..18].try_into().expect("16 bytes"));
        if bits == Bits::B64 && value >> 64 != 0 {
            return Err(bad("64-bit fingerprint with high bits set"));
        }
        Ok(Sketch::Fingerprint(Fingerprint::new(value, bits)))
    }

    /// Reads what [`encode`](Self::encode) wrote.
    pub(crate) fn decode(id: &str, v: &[u8]) -> Result<DocRecord> {
        let bad = |message: &str| StoreError::Corrupt { id: id.to_owned(), message: message.to_owned() };
        let sketch = Self::decode_sketch(id, v)?;
        let inserted_at_ms = u64::from_le_bytes(v[18..26].try_into().expect("8 bytes"));
        let hash = u64::from_le_bytes(v[27..35].try_into().expect("8 bytes"));
        let content_hash = match v[26] {
            0 => None,
            1 => Some(hash),
            _ => return Err(bad("bad content-hash flag")),
        };
        let fixed = Self::fixed_len(v);
        let metadata = if v.len() == fixed {
            None
        } else {
            Some(serde_json::from_slice(&v[fixed..]).map_err(|_| bad("metadata is not JSON"))?)
        };
        let features = Self::decode_features(v);
        Ok(DocRecord { id: id.to_owned(), sketch, inserted_at_ms, content_hash, metadata, features })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_named() {
        let r = DocRecord {
            id: "doc-1".into(),
            sketch: Fingerprint::from_u128(u128::MAX - 5).into(),
            inserted_at_ms: 1_700_000_000_123,
            content_hash: Some(42),
            metadata: Some(serde_json::json!({"url": "https://example.org/", "n": [1, 2]})),
            features: Some(321),
        };
        assert_eq!(DocRecord::decode("doc-1", &r.encode()).unwrap(), r);
        let plain = DocRecord {
            content_hash: None,
            metadata: None,
            sketch: Fingerprint::from_u64(7).into(),
            features: None,
            ..r.clone()
        };
        assert_eq!(DocRecord::decode("doc-1", &plain.encode()).unwrap(), plain);
        // Version 1 (before feature counts): the same fields but the count.
        let mut v1 = r.encode();
        v1.drain(35..39);
        v1[0] = 1;
        assert_eq!(DocRecord::decode("doc-1", &v1).unwrap(), DocRecord { features: None, ..r.clone() });
        // Signatures (version 3), with and without metadata.
        let sig = DocRecord { sketch: Signature::from_values(vec![7, u32::MAX, 0, 42]).into(), ..r.clone() };
        assert_eq!(DocRecord::decode("doc-1", &sig.encode()).unwrap(), sig);
        let bare = DocRecord { metadata: None, features: None, ..sig.clone() };
        assert_eq!(DocRecord::decode("doc-1", &bare.encode()).unwrap(), bare);
        let mut cut = sig.encode();
        cut.truncate(50);
        let mut empty = bare.encode();
        empty[39..41].copy_from_slice(&0u16.to_le_bytes());
        for bad in [cut, empty] {
            let e = DocRecord::decode("s", &bad).unwrap_err().to_string();
            assert!(e.contains("\"s\"") && e.contains("damaged"), "{e}");
        }
        for bad in [&b"short"[..], &[9; 40][..]] {
            let e = DocRecord::decode("x", bad).unwrap_err().to_string();
            assert!(e.contains("\"x\"") && e.contains("damaged"), "{e}");
        }
    }

    #[test]
    fn ids_are_checked() {
        assert!(check_id("").is_err());
        assert!(check_id(&"x".repeat(MAX_ID_CHARS + 1)).is_err());
        assert!(check_id(&"文".repeat(MAX_ID_CHARS)).is_ok(), "characters, not bytes");
        assert!(check_id("文档-1").is_ok());
    }
}
