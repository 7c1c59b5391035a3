//! What the integrity check on open costs: fills a redb store with N
//! documents (random 64-bit fingerprints, 60 bytes of metadata, as a
//! crawler's records), then times `RedbStore::open` (verified: every
//! page's checksum) against `RedbStore::open_unverified`, alternating,
//! median of 5 each.
//!
//! Usage: `cargo run --release -p neardup-store --example verify_open -- [N] [DIR]`

use std::time::Instant;

use neardup::Fingerprint;
use neardup_store::{DocRecord, RedbStore, Store};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(1_000_000, |s| s.parse().expect("N"));
    let dir = args.get(2).map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let path = dir.join(format!("verify_open_{n}.redb"));
    if !path.exists() {
        let store = RedbStore::open_unverified(&path).expect("open");
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for start in (0..n).step_by(50_000) {
            let batch: Vec<DocRecord> = (start..(start + 50_000).min(n))
                .map(|i| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    DocRecord {
                        id: format!("https://example.org/page/{i:08}"),
                        sketch: Fingerprint::from_u64(x).into(),
                        inserted_at_ms: 1,
                        content_hash: Some(x.rotate_left(17)),
                        metadata: Some(serde_json::json!({"crawl": "2026-11", "lang": "en"})),
                        features: Some((x % 2000) as u32),
                    }
                })
                .collect();
            store.put(&batch).expect("put");
        }
    }
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let (mut verified, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        drop(RedbStore::open(&path).expect("open verified"));
        verified.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        drop(RedbStore::open_unverified(&path).expect("open"));
        plain.push(t.elapsed().as_secs_f64());
    }
    verified.sort_by(f64::total_cmp);
    plain.sort_by(f64::total_cmp);
    println!(
        "{{\"documents\":{n},\"file_bytes\":{bytes},\"open_verified_s\":{:.3},\"open_unverified_s\":{:.3}}}",
        verified[2], plain[2]
    );
}
