//! Arbitrary bytes as an index file: an error, or an index whose queries,
//! entries, names, feature counts and metadata can all be read — never a
//! panic or an out-of-bounds read.
//!
//! Checksums stop almost every mutation at the door, so an input of even
//! length has its last 16 bytes re-sealed (a valid checksum and end marker
//! over the rest; a valid file is left as it was): the structure checks
//! behind them get fuzzed too. Odd lengths keep their bytes, so the
//! checksum and end-marker checks are fuzzed as well. (Gating on the first
//! byte, as before, never re-sealed a mutated real file: its magic starts
//! with an even byte.)
//! Seeds: `testdata/compat/*.ndx`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::index::file::IndexFile;
use neardup::index::{HammingIndex, KeyedIndex};
use neardup::meta::IndexMeta;
use neardup::Fingerprint;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= 32 && bytes.len() % 2 == 0 {
        let body = bytes.len() - 16;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
        bytes[body..body + 8].copy_from_slice(&sum.to_le_bytes());
        bytes[body + 8..].copy_from_slice(b"NDUPEND\0");
    }
    let Ok(file) = IndexFile::from_bytes(bytes) else { return };
    let bits = file.index.bits();
    for q in [0u128, u128::MAX, 0x0123_4567_89ab_cdef] {
        let fp = Fingerprint::new(q & bits.mask(), bits);
        for k in [0, 3, 8] {
            let _ = file.index.query(fp, k);
        }
    }
    let entries = file.index.entries();
    if let Some(names) = &file.names {
        for (id, _) in &entries {
            let _ = names.get(*id);
        }
    }
    let _ = IndexMeta::of(&file);
    let keys: Vec<Option<u64>> =
        (0..file.names.as_ref().map_or(0, |n| n.len())).map(|i| Some(i as u64)).collect();
    let _ = KeyedIndex::from_slots(file.index.clone(), keys, file.features.as_ref().map(|f| f.to_vec()));
    for later in &file.later {
        for k in [0, 8] {
            let _ = later.query(Fingerprint::new(0, bits), k);
        }
    }
});
