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

/// Record versions 1–3, still read: 1 has no feature count; 2 adds it;
/// 3 is a signature (the fixed part of version 2 with width 0 and a zero
/// fingerprint, then the number of values (u16) and the values (u32
/// each) before the metadata). None of them holds the sequence number.
const VERSION_SIGNATURE_OLD: u8 = 3;

/// The record version written: the sequence number in the record (the
/// store kept it in a table of its own before, a second copy of every id),
/// and only the sketch's own bytes (see [`DocRecord::encode`]).
const VERSION: u8 = 4;

/// The feature count stored for "not known" (version 2 on).
const NO_FEATURES: u32 = u32::MAX;

/// Bytes of the fixed part of a version 4 record, before the sketch.
const FIXED_V4: usize = 31;

impl DocRecord {
    /// The value stored under the id (version 4, little-endian): version
    /// byte, width byte (64 or 128 for a fingerprint, 0 for a signature),
    /// the sequence number `seq` (u64), inserted_at (u64), a flag and the
    /// content hash (u64), the feature count (u32, `u32::MAX` if not
    /// known); then the sketch: the fingerprint's 8 or 16 bytes, or the
    /// signature's length (u16) and values (u32 each); then the metadata
    /// JSON (possibly empty).
    pub(crate) fn encode(&self, seq: u64) -> Vec<u8> {
        let meta = self.metadata.as_ref().map(|m| m.to_string()).unwrap_or_default();
        let signature = self.sketch.signature().map_or(&[][..], Signature::values);
        let mut v = Vec::with_capacity(FIXED_V4 + 18 + 4 * signature.len() + meta.len());
        v.push(VERSION);
        v.push(match &self.sketch {
            Sketch::Fingerprint(fp) => fp.bits().get() as u8,
            Sketch::Signature(_) => 0,
        });
        v.extend_from_slice(&seq.to_le_bytes());
        v.extend_from_slice(&self.inserted_at_ms.to_le_bytes());
        v.push(u8::from(self.content_hash.is_some()));
        v.extend_from_slice(&self.content_hash.unwrap_or(0).to_le_bytes());
        v.extend_from_slice(&self.features.unwrap_or(NO_FEATURES).to_le_bytes());
        match &self.sketch {
            Sketch::Fingerprint(fp) if fp.bits() == Bits::B64 => {
                v.extend_from_slice(&(fp.value() as u64).to_le_bytes());
            }
            Sketch::Fingerprint(fp) => v.extend_from_slice(&fp.value().to_le_bytes()),
            Sketch::Signature(_) => {
                let n = u16::try_from(signature.len()).expect("signatures have at most 4096 values");
                v.extend_from_slice(&n.to_le_bytes());
                for x in signature {
                    v.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        v.extend_from_slice(meta.as_bytes());
        v
    }

    /// Where the fields of a record are, by its version: (inserted_at,
    /// flag, feature count or `None`, sketch), as byte offsets.
    fn layout(v: &[u8]) -> Layout {
        match v[0] {
            1 => Layout { inserted: 18, flag: 26, features: None, sketch: 2 },
            VERSION => Layout { inserted: 10, flag: 18, features: Some(27), sketch: FIXED_V4 },
            _ => Layout { inserted: 18, flag: 26, features: Some(35), sketch: 2 },
        }
    }

    /// The length of the fixed part of a record (before the metadata),
    /// from its first bytes (`None` if they are too short to say).
    fn fixed_len(v: &[u8]) -> Option<usize> {
        let count = |at: usize| v.get(at..at + 2).map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])));
        Some(match (v[0], v.get(1).copied()?) {
            (1, _) => 35,
            (VERSION_SIGNATURE_OLD, _) => 41 + 4 * count(39)?,
            (VERSION, 0) => FIXED_V4 + 2 + 4 * count(FIXED_V4)?,
            (VERSION, 64) => FIXED_V4 + 8,
            (VERSION, _) => FIXED_V4 + 16,
            _ => 39,
        })
    }

    /// An encoded record of an older version as the current version
    /// writes it, with sequence number `seq` (`None` if it is damaged).
    pub(crate) fn upgrade(v: &[u8], seq: u64) -> Option<Vec<u8>> {
        DocRecord::decode("", v).ok().map(|r| r.encode(seq))
    }

    /// The sequence number an encoded record holds (`None` for records
    /// written before version 4, which kept it beside them).
    pub(crate) fn decode_seq(v: &[u8]) -> Option<u64> {
        (v.first() == Some(&VERSION) && v.len() >= 10)
            .then(|| u64::from_le_bytes(v[2..10].try_into().expect("8 bytes")))
    }

    /// The feature count of an encoded record (checked by
    /// [`decode_sketch`](Self::decode_sketch)).
    pub(crate) fn decode_features(v: &[u8]) -> Option<u32> {
        let at = Self::layout(v).features?;
        let n = u32::from_le_bytes(v[at..at + 4].try_into().expect("4 bytes"));
        (n != NO_FEATURES).then_some(n)
    }

    /// Only the sketch of an encoded record (what rebuilding the index
    /// needs; the metadata is not parsed).
    pub(crate) fn decode_sketch(id: &str, v: &[u8]) -> Result<Sketch> {
        let bad = |message: &str| StoreError::Corrupt { id: id.to_owned(), message: message.to_owned() };
        if v.is_empty() || !(1..=VERSION).contains(&v[0]) {
            return Err(bad("unknown record version"));
        }
        match Self::fixed_len(v) {
            Some(fixed) if v.len() >= fixed && v.len() >= 18 => {}
            _ => return Err(bad("too short")),
        }
        let signature = |at: usize| {
            let n = usize::from(u16::from_le_bytes([v[at], v[at + 1]]));
            if v[1] != 0 || n == 0 || n > MAX_PERMUTATIONS {
                return Err(bad("a signature record of a bad width or length"));
            }
            let values: Vec<u32> = v[at + 2..at + 2 + 4 * n]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            Ok(Sketch::Signature(Signature::from_values(values)))
        };
        let at = Self::layout(v).sketch;
        let (bits, value) = match (v[0], v[1]) {
            (VERSION_SIGNATURE_OLD, _) => return signature(39),
            (VERSION, 0) => return signature(FIXED_V4),
            (VERSION, 64) => {
                (Bits::B64, u128::from(u64::from_le_bytes(v[at..at + 8].try_into().expect("8"))))
            }
            (_, 64) => (Bits::B64, u128::from_le_bytes(v[at..at + 16].try_into().expect("16 bytes"))),
            (_, 128) => (Bits::B128, u128::from_le_bytes(v[at..at + 16].try_into().expect("16 bytes"))),
            _ => return Err(bad("fingerprint width is neither 64 nor 128")),
        };
        if bits == Bits::B64 && value >> 64 != 0 {
            return Err(bad("64-bit fingerprint with high bits set"));
        }
        Ok(Sketch::Fingerprint(Fingerprint::new(value, bits)))
    }

    /// Reads what [`encode`](Self::encode) wrote (or an older version).
    pub(crate) fn decode(id: &str, v: &[u8]) -> Result<DocRecord> {
        let bad = |message: &str| StoreError::Corrupt { id: id.to_owned(), message: message.to_owned() };
        let sketch = Self::decode_sketch(id, v)?;
        let l = Self::layout(v);
        let inserted_at_ms = u64::from_le_bytes(v[l.inserted..l.inserted + 8].try_into().expect("8 bytes"));
        let hash = u64::from_le_bytes(v[l.flag + 1..l.flag + 9].try_into().expect("8 bytes"));
        let content_hash = match v[l.flag] {
            0 => None,
            1 => Some(hash),
            _ => return Err(bad("bad content-hash flag")),
        };
        let fixed = Self::fixed_len(v).expect("checked by decode_sketch");
        let metadata = if v.len() == fixed {
            None
        } else {
            Some(serde_json::from_slice(&v[fixed..]).map_err(|_| bad("metadata is not JSON"))?)
        };
        let features = Self::decode_features(v);
        Ok(DocRecord { id: id.to_owned(), sketch, inserted_at_ms, content_hash, metadata, features })
    }
}

/// Byte offsets of a record's fields (they moved in version 4).
struct Layout {
    inserted: usize,
    flag: usize,
    features: Option<usize>,
    sketch: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as versions 2 and 3 wrote it (no sequence number; a
    /// 16-byte fingerprint field, zero for signatures).
    fn encode_v3(r: &DocRecord) -> Vec<u8> {
        let signature = r.sketch.signature().map_or(&[][..], Signature::values);
        let mut v = Vec::new();
        match &r.sketch {
            Sketch::Fingerprint(fp) => {
                v.push(2);
                v.push(fp.bits().get() as u8);
                v.extend_from_slice(&fp.value().to_le_bytes());
            }
            Sketch::Signature(_) => {
                v.extend_from_slice(&[3, 0]);
                v.extend_from_slice(&0u128.to_le_bytes());
            }
        }
        v.extend_from_slice(&r.inserted_at_ms.to_le_bytes());
        v.push(u8::from(r.content_hash.is_some()));
        v.extend_from_slice(&r.content_hash.unwrap_or(0).to_le_bytes());
        v.extend_from_slice(&r.features.unwrap_or(NO_FEATURES).to_le_bytes());
        if !signature.is_empty() {
            v.extend_from_slice(&(signature.len() as u16).to_le_bytes());
            signature.iter().for_each(|x| v.extend_from_slice(&x.to_le_bytes()));
        }
        v.extend_from_slice(r.metadata.as_ref().map(|m| m.to_string()).unwrap_or_default().as_bytes());
        v
    }

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
        let plain = DocRecord {
            content_hash: None,
            metadata: None,
            sketch: Fingerprint::from_u64(7).into(),
            features: None,
            ..r.clone()
        };
        let sig = DocRecord { sketch: Signature::from_values(vec![7, u32::MAX, 0, 42]).into(), ..r.clone() };
        let bare = DocRecord { metadata: None, features: None, ..sig.clone() };
        let wide64 = DocRecord { sketch: Fingerprint::from_u64(u64::MAX - 1).into(), ..r.clone() };
        for (i, rec) in [&r, &plain, &sig, &bare, &wide64].into_iter().enumerate() {
            // Version 4, with its sequence number; and as versions 2 and 3
            // wrote it (no sequence number).
            let seq = 1 << 40 | i as u64;
            let v = rec.encode(seq);
            assert_eq!(DocRecord::decode("doc-1", &v).unwrap(), *rec);
            assert_eq!(DocRecord::decode_seq(&v), Some(seq));
            assert_eq!(DocRecord::decode_sketch("doc-1", &v).unwrap(), rec.sketch);
            assert_eq!(DocRecord::decode_features(&v), rec.features);
            let old = encode_v3(rec);
            assert_eq!(DocRecord::decode("doc-1", &old).unwrap(), *rec);
            assert_eq!(DocRecord::decode_seq(&old), None);
        }
        // Version 4 is smaller: no zero fingerprint field in signatures,
        // eight bytes for a 64-bit fingerprint; the sequence number added.
        assert_eq!(sig.encode(1).len() + 8, encode_v3(&sig).len());
        assert_eq!(plain.encode(1).len(), encode_v3(&plain).len());
        // Version 1 (before feature counts): version 2 without the count.
        let mut v1 = encode_v3(&r);
        v1.drain(35..39);
        v1[0] = 1;
        assert_eq!(DocRecord::decode("doc-1", &v1).unwrap(), DocRecord { features: None, ..r.clone() });
        let mut cut = sig.encode(1);
        cut.truncate(40);
        let mut empty = bare.encode(1);
        empty[FIXED_V4..FIXED_V4 + 2].copy_from_slice(&0u16.to_le_bytes());
        let mut cut3 = encode_v3(&sig);
        cut3.truncate(50);
        for bad in [cut, empty, cut3] {
            let e = DocRecord::decode("s", &bad).unwrap_err().to_string();
            assert!(e.contains("\"s\"") && e.contains("damaged"), "{e}");
        }
        for bad in [&b"short"[..], &[9; 40][..], &[4][..], &[4, 64, 0][..]] {
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
