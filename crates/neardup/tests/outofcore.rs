//! The out-of-core SimHash dedup against the in-memory batch: the same
//! clusters in the same order, whatever the memory (partitions, a mapped
//! union-find, sorted runs on disk, components split in many batches).

use neardup::dedup::{ClusterMode, Dedup, OutOfCore, Records, SpillColumn, SpillTo};
use neardup::index::Words;
use neardup::Radius;
use proptest::prelude::*;

/// `n` fingerprints around `centres` centres, up to `spread` bits from
/// their centre, some repeated exactly.
fn fingerprints(n: usize, seed: u64, centres: usize, spread: u32) -> Vec<u64> {
    let mut x = seed | 1;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x
    };
    let cs: Vec<u64> = (0..centres.max(1)).map(|_| next()).collect();
    (0..n)
        .map(|_| {
            let mut w = cs[(next() >> 33) as usize % cs.len()];
            for _ in 0..(next() >> 60) as u32 % (spread + 1) {
                w ^= 1 << (next() >> 58);
            }
            w
        })
        .collect()
}

fn column(fps: &[u64], dir: &std::path::Path, limit: u64) -> SpillColumn {
    let mut c = SpillColumn::spilling(2, SpillTo { dir: dir.to_path_buf(), limit });
    for &fp in fps {
        c.push(&[fp as u32, (fp >> 32) as u32]).unwrap();
    }
    c
}

fn in_memory(fps: &[u64], k: u32, mode: ClusterMode) -> Vec<(u32, Vec<u32>)> {
    let records = Records::from_words(Words::B64(fps.to_vec()));
    let radius = Radius::fixed(k);
    let found = Dedup::new(&radius).clusters(mode).batch(&records).unwrap();
    found.clusters.into_iter().map(|c| (c.kept, c.members)).collect()
}

fn out_of_core(
    fps: &[u64],
    k: u32,
    mode: ClusterMode,
    memory: u64,
) -> (Vec<(u32, Vec<u32>)>, neardup::dedup::OutOfCoreResult) {
    let dir = tempfile::tempdir().unwrap();
    let col = column(fps, dir.path(), memory / 4);
    let mut got = Vec::new();
    let found = OutOfCore::new(Radius::fixed(k), dir.path())
        .memory(memory)
        .clusters(mode)
        .run(&col, &mut |c| {
            got.push((c.kept, c.members.clone()));
            Ok(())
        })
        .unwrap();
    (got, found)
}

#[test]
fn equals_the_in_memory_batch_with_little_memory() {
    let fps = fingerprints(20_000, 7, 2_000, 6);
    for k in [0, 3, 5] {
        for mode in [ClusterMode::Justified, ClusterMode::Components] {
            let want = in_memory(&fps, k, mode);
            assert!(want.len() > 100, "k = {k}: the data has clusters");
            // 64 KiB: 16 partitions a table, union-find mapped, sorted runs
            // on disk, components split a thousand members at a time.
            for memory in [0, 1 << 30] {
                let (got, found) = out_of_core(&fps, k, mode, memory);
                assert_eq!(got, want, "k = {k}, {mode}, memory {memory}");
                assert_eq!(found.mapped, memory == 0);
                assert_eq!(found.partitions > 1, memory == 0, "{}", found.partitions);
                assert_eq!(found.clusters, want.len());
                let removed: usize = want.iter().map(|c| c.1.len() - 1).sum();
                assert_eq!(found.removed, removed);
                for (kept, members) in &want {
                    for &m in members {
                        assert_eq!(found.is_removed(m as usize), m != *kept);
                    }
                }
            }
        }
    }
}

#[test]
fn one_big_component_and_no_duplicates() {
    // Everything within 2 bits of one centre: one component, split.
    let fps = fingerprints(5_000, 3, 1, 2);
    let (got, _) = out_of_core(&fps, 3, ClusterMode::Justified, 0);
    assert_eq!(got, in_memory(&fps, 3, ClusterMode::Justified));
    // Random words: nothing near.
    let fps: Vec<u64> =
        (1..=5_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)).collect();
    let (got, found) = out_of_core(&fps, 3, ClusterMode::Justified, 0);
    assert_eq!(got, in_memory(&fps, 3, ClusterMode::Justified));
    assert_eq!(found.removed, 0);
    // No records at all.
    let (got, found) = out_of_core(&[], 3, ClusterMode::Justified, 0);
    assert!(got.is_empty() && found.documents == 0);
}

#[test]
fn refuses_a_radius_that_shrinks_and_a_wrong_column() {
    let dir = tempfile::tempdir().unwrap();
    let col = column(&[1, 2, 3], dir.path(), 1 << 20);
    let err =
        OutOfCore::new(Radius::by_length(&[(10, 8)], 3), dir.path()).run(&col, &mut |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("fixed radius"), "{err}");
    let wide = SpillColumn::new(3);
    let err = OutOfCore::new(Radius::fixed(3), dir.path()).run(&wide, &mut |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("width 2"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_corpora_equal_the_in_memory_batch(
        n in 0usize..3_000, seed in any::<u64>(), centres in 1usize..400, spread in 0u32..8, k in 0u32..7,
        whole in any::<bool>(), small in any::<bool>(),
    ) {
        let fps = fingerprints(n, seed, centres, spread);
        let mode = if whole { ClusterMode::Components } else { ClusterMode::Justified };
        let (got, _) = out_of_core(&fps, k, mode, if small { 0 } else { 1 << 30 });
        prop_assert_eq!(got, in_memory(&fps, k, mode));
    }
}
