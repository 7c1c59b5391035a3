//! Times the datasketch kernels at every SIMD level: SHA-1 of short
//! features and the affine32 min-update (`cargo run --release --example
//! dsbench -- [N]`).

use neardup::minhash::datasketch::{sha1_batch, BandIndex, Permutations, Scheme};
use neardup::simd::{scoped, supported};

#[path = "common/timing.rs"]
mod timing;

fn median(f: impl FnMut()) -> f64 {
    timing::median_secs(7, f)
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(400_000);
    let feats: Vec<Vec<u8>> =
        (0..n).map(|i| format!("word{} other{} third{}", i % 977, i % 131, i).into_bytes()).collect();
    let refs: Vec<&[u8]> = feats.iter().map(Vec::as_slice).collect();
    let p = Permutations::draw(Scheme::Affine32, 1, 128);
    let hashes: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    for level in supported() {
        scoped(level, || {
            let mut out = Vec::with_capacity(n);
            let sha = median(|| {
                out.clear();
                sha1_batch(&refs, &mut out);
            });
            let mut v = p.empty32();
            let upd = median(|| p.update32(&hashes, &mut v));
            let mut v = p.empty32();
            let all = median(|| p.update_bytes32(&refs, &mut v));
            println!(
                "{level:>8}: sha1 {:.1} ns/feature, min-update (K=128) {:.1} ns/feature, both {:.1} ns/feature",
                sha / n as f64 * 1e9,
                upd / n as f64 * 1e9,
                all / n as f64 * 1e9
            );
        });
    }
    use sha1::Digest;
    let crate_sha = median(|| {
        for f in &refs {
            std::hint::black_box(sha1::Sha1::digest(f));
        }
    });
    println!("sha1 crate (SHA-NI where the CPU has it): {:.1} ns/feature", crate_sha / n as f64 * 1e9);
    let compress = median(|| {
        for f in &refs {
            let mut block = [0u8; 64];
            block[..f.len()].copy_from_slice(f);
            block[f.len()] = 0x80;
            block[56..].copy_from_slice(&(f.len() as u64 * 8).to_be_bytes());
            let mut state = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0];
            sha1::compress(&mut state, &[block.into()]);
            std::hint::black_box(state);
        }
    });
    println!("sha1::compress of one padded block: {:.1} ns/feature", compress / n as f64 * 1e9);
    // MinHashLSH's band tables: 25 bands of 5 values (threshold 0.5, K = 128).
    let entries = 100_000usize;
    let rows: Vec<u8> = (0..entries * 125)
        .flat_map(|i| (((i / 125) / 3 * 125 + i % 125) as u32).wrapping_mul(2_654_435_761).to_be_bytes())
        .collect();
    let mut index = BandIndex::new(25, 20);
    let ins = median(|| {
        index = BandIndex::new(25, 20);
        index.insert_batch(&rows);
    });
    let q = median(|| {
        std::hint::black_box(index.query_batch(&rows, 25));
    });
    println!(
        "band tables, {entries} entries of 25 bands: insert {:.0} ns/entry, query {:.0} ns/entry, {} B/entry",
        ins / entries as f64 * 1e9,
        q / entries as f64 * 1e9,
        index.memory_bytes() / entries
    );
}
