//! The indexes against the brute-force reference: `TableIndex` must return
//! exactly what `LinearScan` returns, and `all_pairs` exactly the pairs a
//! double loop finds.

use neardup::index::file::{IndexFile, Names};
use neardup::index::pairs::{all_pairs, PairsOptions};
use neardup::index::{HammingIndex, KeyedIndex, LayoutSpec, LinearScan, Match, RuleTables, TableIndex};
use neardup::meta::IndexMeta;
use neardup::{Bits, Fingerprint, PipelineConfig};
use proptest::prelude::*;

use neardup_testkit::Rng;

/// Random fingerprints plus planted neighbours of some of them at every
/// distance `0..=k + 2` (the test kit's, in this width).
fn planted(rng: &mut Rng, bits: Bits, k: u32, n: usize) -> Vec<u128> {
    neardup_testkit::planted(rng, bits.get(), k, n)
}

/// `v` with exactly `d` distinct bits flipped.
fn flip(rng: &mut Rng, v: u128, d: u32, bits: Bits) -> u128 {
    rng.flip(v, d, bits.get())
}

fn check_same(table: &TableIndex, linear: &LinearScan, queries: &[u128], bits: Bits, max_k: u32) {
    for &q in queries {
        let fp = Fingerprint::new(q, bits);
        for k in 0..=max_k {
            assert_eq!(
                table.query(fp, k).unwrap(),
                linear.query(fp, k).unwrap(),
                "query {fp} at k = {k}, layout {}",
                table.layout()
            );
        }
    }
    // Batched queries (memory reads interleaved across queries) answer the
    // same, query by query, on this thread and over rayon's.
    let fps: Vec<Fingerprint> = queries.iter().map(|&q| Fingerprint::new(q, bits)).collect();
    for k in 0..=max_k {
        let want: Vec<_> = fps.iter().map(|&fp| linear.query(fp, k).unwrap()).collect();
        assert_eq!(
            table.query_batch_local(&fps, k).unwrap(),
            want,
            "batch at k = {k}, layout {}",
            table.layout()
        );
        assert_eq!(table.query_batch(&fps, k).unwrap(), want, "rayon batch at k = {k}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Inserts (through the buffer, segments and merges), removals and
    /// queries at every radius up to k + 2, for several shapes.
    #[test]
    fn table_index_equals_linear_scan(
        seed in any::<u64>(),
        shape in prop::sample::select(vec![
            (Bits::B64, 0u32, 1u32), (Bits::B64, 1, 2), (Bits::B64, 2, 4), (Bits::B64, 3, 4),
            (Bits::B64, 3, 5), (Bits::B64, 3, 6), (Bits::B64, 4, 6), (Bits::B64, 6, 8),
            (Bits::B64, 8, 10), (Bits::B64, 8, 11), (Bits::B128, 3, 5), (Bits::B128, 7, 9),
            (Bits::B128, 8, 10),
        ]),
        n in 1usize..400,
        buffer in 1usize..64,
    ) {
        let (bits, k, m) = shape;
        let mut rng = Rng(seed);
        let fps = planted(&mut rng, bits, k, n);
        let spec = LayoutSpec { bits: bits.get(), k, blocks: m };
        let mut table = TableIndex::with_layout(spec, "test".into(), buffer).unwrap();
        let mut linear = LinearScan::new(bits);
        for (i, &v) in fps.iter().enumerate() {
            // Some ids repeat, so removal must find every entry of an id.
            let id = (i as u64) % (n as u64 * 3 / 4 + 1);
            table.insert(id, Fingerprint::new(v, bits)).unwrap();
            linear.insert(id, Fingerprint::new(v, bits)).unwrap();
        }
        prop_assert_eq!(table.len(), linear.len());
        let mut queries: Vec<u128> = fps.iter().step_by(3).copied().collect();
        for _ in 0..10 {
            let base = fps[(rng.next() % fps.len() as u64) as usize];
            let d = (rng.next() % (k as u64 + 3)) as u32;
            queries.push(flip(&mut rng, base, d, bits));
        }
        check_same(&table, &linear, &queries, bits, k + 2);
        // Remove about a third of the ids, insert some more, check again.
        for i in 0..n / 3 {
            let id = (i * 3) as u64;
            prop_assert_eq!(table.remove(id), linear.remove(id));
        }
        let mut added = Vec::new();
        for (i, &base) in fps.iter().enumerate().take(n / 4) {
            let v = flip(&mut rng, base, (i % 3) as u32, bits);
            let id = 10_000 + i as u64;
            table.insert(id, Fingerprint::new(v, bits)).unwrap();
            linear.insert(id, Fingerprint::new(v, bits)).unwrap();
            added.push((id, v));
        }
        // Removal by id and known fingerprint (a lookup, not a read-through)
        // removes the same entries; a wrong fingerprint removes nothing.
        for &(id, v) in added.iter().step_by(2) {
            prop_assert_eq!(table.remove_entry(id, Fingerprint::new(v ^ 1, bits)).unwrap(), 0);
            prop_assert_eq!(table.remove_entry(id, Fingerprint::new(v, bits)).unwrap(), linear.remove(id));
        }
        prop_assert_eq!(table.len(), linear.len());
        check_same(&table, &linear, &queries, bits, k + 2);
        table.compact().unwrap();
        prop_assert_eq!(table.len(), linear.len());
        check_same(&table, &linear, &queries, bits, k + 2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// KeyedIndex against a brute-force map of key → (fingerprint,
    /// features): inserts, replacements, batches with repeated keys and
    /// removals; queries at fixed radii and by a length-dependent rule.
    #[test]
    fn keyed_index_equals_a_map_scan(seed in any::<u64>(), n in 1usize..300, wide in any::<bool>()) {
        let bits = if wide { Bits::B128 } else { Bits::B64 };
        let mut rng = Rng(seed);
        let fps = planted(&mut rng, bits, 4, n);
        let table = TableIndex::builder().bits(bits).k(3).buffer_len(16).build().unwrap();
        let mut keyed: KeyedIndex<String> = KeyedIndex::new(table);
        // The same operations on an index built for the rule (a table index
        // per pass of its plan).
        let rule = neardup::Radius::by_length(&[(100, 7), (600, 5)], 2);
        let builder = TableIndex::builder().bits(bits).buffer_len(16);
        let mut passes: KeyedIndex<String> = KeyedIndex::for_radius(&rule, builder.clone()).unwrap();
        let mut map: std::collections::BTreeMap<String, (u128, usize, u64)> = Default::default();
        let mut order = 0u64;
        let keys = n / 2 + 1;
        for (i, &v) in fps.iter().enumerate() {
            let key = format!("k{}", rng.next() % keys as u64);
            let feats = (rng.next() % 1500) as usize;
            if i % 5 == 4 {
                // A batch of three, the key possibly repeated.
                let batch: Vec<(String, Fingerprint, usize)> = (0..3)
                    .map(|j| (format!("k{}", (i + j * (j % 2)) % keys), Fingerprint::new(v ^ j as u128, bits), feats))
                    .collect();
                for (k, f, n) in &batch {
                    order += 1;
                    map.insert(k.clone(), (f.value(), *n, order));
                }
                passes.insert_batch(batch.clone()).unwrap();
                keyed.insert_batch(batch).unwrap();
            } else {
                passes.insert(key.clone(), Fingerprint::new(v, bits), feats).unwrap();
                keyed.insert(key.clone(), Fingerprint::new(v, bits), feats).unwrap();
                order += 1;
                map.insert(key, (v, feats, order));
            }
            if i % 7 == 6 {
                let gone = format!("k{}", rng.next() % keys as u64);
                prop_assert_eq!(passes.remove(gone.as_str()).unwrap(), map.contains_key(&gone));
                prop_assert_eq!(keyed.remove(gone.as_str()).unwrap(), map.remove(&gone).is_some());
            }
        }
        prop_assert_eq!(keyed.len(), map.len());
        prop_assert_eq!(passes.len(), map.len());
        // A snapshot holds pass 0; the later passes are rebuilt on load.
        let reloaded = KeyedIndex::from_slots(
            passes.index().clone(),
            passes.slot_keys().map(|k| k.cloned()).collect(),
            Some(passes.slot_features().to_vec()),
        )
        .unwrap()
        .with_radius(&rule, builder)
        .unwrap();
        for &q in fps.iter().step_by(5) {
            let fp = Fingerprint::new(q, bits);
            for k in [0, 2, 3, 5] {
                let mut want: Vec<(u32, u64, &str)> = map
                    .iter()
                    .map(|(key, &(v, _, o))| ((v ^ q).count_ones(), o, key.as_str()))
                    .filter(|w| w.0 <= k)
                    .collect();
                want.sort_unstable();
                let want: Vec<(&str, u32)> = want.into_iter().map(|(d, _, key)| (key, d)).collect();
                let got: Vec<(&str, u32)> = keyed.query(fp, k).unwrap().into_iter().map(|(key, d)| (key.as_str(), d)).collect();
                prop_assert_eq!(got, want);
            }
            for qf in [10usize, 150, 700, 5000] {
                let mut want: Vec<(&str, u32)> = map
                    .iter()
                    .map(|(key, &(v, f, _))| (key.as_str(), (v ^ q).count_ones(), f))
                    .filter(|&(_, d, f)| rule.accepts(d, qf, f))
                    .map(|(key, d, _)| (key, d))
                    .collect();
                want.sort_unstable();
                for index in [&keyed, &passes, &reloaded] {
                    let mut got: Vec<(&str, u32)> =
                        index.query_rule(fp, qf, &rule).unwrap().into_iter().map(|(key, d)| (key.as_str(), d)).collect();
                    got.sort_unstable();
                    prop_assert_eq!(&got, &want);
                }
            }
        }
    }
}

/// With deferred merges, segments pile up until the owner merges them
/// (plan under a read lock, build without, apply): answers stay exact
/// throughout, a stale merge is refused, and merging keeps the segment count
/// logarithmic.
#[test]
fn deferred_merges_stay_exact() {
    let mut rng = Rng(99);
    for bits in [Bits::B64, Bits::B128] {
        let fps = planted(&mut rng, bits, 3, 6000);
        let mut table = TableIndex::builder().bits(bits).k(3).buffer_len(100).build().unwrap();
        table.set_deferred_merges(true);
        let mut linear = LinearScan::new(bits);
        let queries: Vec<u128> = fps.iter().step_by(97).copied().collect();
        let (mut applied, mut stale) = (0, 0);
        for (i, &v) in fps.iter().enumerate() {
            table.insert(i as u64, Fingerprint::new(v, bits)).unwrap();
            linear.insert(i as u64, Fingerprint::new(v, bits)).unwrap();
            if i % 7 == 3 {
                table.remove(i as u64 - 3);
                linear.remove(i as u64 - 3);
            }
            if i % 500 == 499 {
                // A plan stays good while segments are appended; a removal
                // in one of its segments makes it stale.
                let early = table.merge_plan();
                for (j, &v) in fps.iter().enumerate().take(200) {
                    let id = 100_000 + (i * 1000 + j) as u64;
                    table.insert(id, Fingerprint::new(v, bits)).unwrap();
                    linear.insert(id, Fingerprint::new(v, bits)).unwrap();
                }
                if let Some(p) = early {
                    assert!(table.apply_merge(p.build().unwrap()));
                    applied += 1;
                    check_same(&table, &linear, &queries, bits, 5);
                }
                if let Some(p) = table.merge_plan() {
                    let victim = (i - 100) as u64;
                    table.remove(victim);
                    linear.remove(victim);
                    if !table.apply_merge(p.build().unwrap()) {
                        stale += 1;
                    }
                }
                check_same(&table, &linear, &queries, bits, 5);
                while let Some(plan) = table.merge_plan() {
                    assert!(plan.entries() > 0);
                    assert!(table.apply_merge(plan.build().unwrap()));
                    applied += 1;
                }
                check_same(&table, &linear, &queries, bits, 5);
            }
        }
        assert_eq!(table.len(), linear.len());
        assert!(applied >= 8 && stale > 0, "{applied} applied, {stale} stale");
        assert!(table.stats().segments <= 12, "{} segments", table.stats().segments);
    }
}

#[test]
fn automatic_layouts_are_exact_at_every_k() {
    let mut rng = Rng(11);
    for bits in [Bits::B64, Bits::B128] {
        for k in 0..=8 {
            let fps = planted(&mut rng, bits, k, 3000);
            let entries: Vec<(u64, Fingerprint)> =
                fps.iter().enumerate().map(|(i, &v)| (i as u64, Fingerprint::new(v, bits))).collect();
            let table = TableIndex::builder().bits(bits).k(k).build_from(entries.clone()).unwrap();
            let mut linear = LinearScan::new(bits);
            for (id, fp) in entries {
                linear.insert(id, fp).unwrap();
            }
            let queries: Vec<u128> = fps.iter().step_by(37).copied().collect();
            check_same(&table, &linear, &queries, bits, k + 1);
        }
    }
}

#[test]
fn wrong_width_is_an_error() {
    let mut t = TableIndex::builder().build().unwrap();
    let wide = Fingerprint::new(1, Bits::B128);
    assert!(t.insert(1, wide).is_err());
    assert!(t.query(wide, 3).is_err());
}

fn brute_pairs(fps: &[u128], k: u32) -> Vec<(u32, u32, u32)> {
    neardup_testkit::brute_pairs(fps, k)
}

#[test]
fn all_pairs_equals_brute_force_on_ten_thousand() {
    let mut rng = Rng(5);
    for (bits, k, blocks) in
        [(Bits::B64, 3, None), (Bits::B64, 3, Some(4)), (Bits::B64, 6, None), (Bits::B128, 4, None)]
    {
        let mut fps = planted(&mut rng, bits, k, 10_000);
        // Exact copies too: they must all be reported.
        for i in 0..200 {
            fps.push(fps[i * 7]);
        }
        let expected = brute_pairs(&fps, k);
        let got = if bits == Bits::B64 {
            let w: Vec<u64> = fps.iter().map(|&v| v as u64).collect();
            all_pairs(&w, 64, k, PairsOptions { blocks, ..PairsOptions::default() }).unwrap()
        } else {
            all_pairs(&fps, 128, k, PairsOptions { blocks, ..PairsOptions::default() }).unwrap()
        };
        let mut pairs = Vec::new();
        got.for_each_pair(|i, j, d| pairs.push((i, j, d)));
        pairs.sort_unstable();
        assert_eq!(pairs.len() as u64, got.pair_count());
        assert_eq!(pairs, expected, "{bits} bits, k = {k}, blocks {blocks:?}");
    }
}

/// Above 65,536 distinct fingerprints the tables are scattered by key and
/// grouped bucket by bucket (below, sorted whole): random words are never
/// within a few bits of each other by chance, so the pairs are exactly the
/// planted ones, found at every radius and layout.
#[test]
fn all_pairs_finds_the_planted_pairs_among_two_hundred_thousand() {
    for (k, blocks) in [(1, None), (3, None), (3, Some(6)), (6, None)] {
        let mut rng = Rng(11 + u64::from(k));
        let mut fps: Vec<u64> = (0..200_000).map(|_| rng.next()).collect();
        let mut expected = Vec::new();
        for i in 0..20_000 {
            let d = (i % (k as usize + 2)) as u32; // 0 (a copy) ..= k + 1 (too far)
            let j = fps.len();
            fps.push(rng.flip(u128::from(fps[i * 9]), d, 64) as u64);
            if d <= k {
                expected.push((i * 9, j, d));
            }
        }
        let got = all_pairs(&fps, 64, k, PairsOptions { blocks, ..PairsOptions::default() }).unwrap();
        // Pairs of input positions; a copy is its original's pair at 0.
        let mut pairs = Vec::new();
        got.for_each_pair(|a, b, d| pairs.push((a as usize, b as usize, d)));
        pairs.sort_unstable();
        expected.sort_unstable();
        assert_eq!(pairs, expected, "k = {k}, blocks {blocks:?}");
    }
}

#[test]
fn skewed_input_collapses_identical_fingerprints() {
    // One fingerprint 100,000 times plus 300 near neighbours and noise.
    let mut rng = Rng(9);
    let centre = rng.next();
    let mut fps: Vec<u64> = vec![centre; 100_000];
    for i in 0..300 {
        fps.push(rng.flip(centre as u128, 1 + i % 4, 64) as u64);
    }
    for _ in 0..5000 {
        fps.push(rng.next());
    }
    let ap = all_pairs(&fps, 64, 3, PairsOptions::default()).unwrap();
    // The 100,000 copies are one group; neighbours pair with it.
    let g =
        (0..ap.groups() as u32).find(|&g| ap.group(g).len() == 100_000).expect("the copies stay together");
    let near: Vec<u32> =
        ap.pairs.iter().filter(|p| p.0 == g || p.1 == g).map(|p| if p.0 == g { p.1 } else { p.0 }).collect();
    let mut neighbours: Vec<u64> =
        fps[100_000..100_300].iter().copied().filter(|&w| (w ^ centre).count_ones() <= 3).collect();
    neighbours.sort_unstable();
    neighbours.dedup();
    let expected_near = neighbours.len();
    assert_eq!(near.len(), expected_near);
    // Distinct pairs equal the brute force over distinct fingerprints.
    let mut distinct: Vec<u64> = fps.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let wide: Vec<u128> = distinct.iter().map(|&w| w as u128).collect();
    assert_eq!(ap.pairs, brute_pairs(&wide, 3));
    let mut expected_count = 0u64;
    for g in 0..ap.groups() as u32 {
        let n = ap.group(g).len() as u64;
        expected_count += n * (n - 1) / 2;
    }
    for &(a, b, _) in &ap.pairs {
        expected_count += ap.group(a).len() as u64 * ap.group(b).len() as u64;
    }
    assert!(expected_count > 100_000 * 99_999 / 2);
    assert_eq!(ap.pair_count(), expected_count);
}

fn sample_file(dir: &std::path::Path) -> (std::path::PathBuf, TableIndex) {
    let mut rng = Rng(3);
    let fps = planted(&mut rng, Bits::B64, 3, 60);
    let mut entries: Vec<(u64, Fingerprint)> =
        fps.iter().enumerate().map(|(i, &v)| (i as u64, Fingerprint::new(v, Bits::B64))).collect();
    entries.push((60, entries[0].1)); // a duplicate fingerprint
    let index = TableIndex::builder().build_from(entries.clone()).unwrap();
    let names: Vec<String> = (0..61).map(|i| format!("doc-{i}")).collect();
    let pipeline = neardup::presets::config("default").unwrap();
    let rule = RuleTables::build(
        neardup::dedup::Plan::new(&pipeline.radius()),
        &TableIndex::builder(),
        entries.iter().map(|&(id, fp)| (id, fp, sample_features(id))).collect(),
    )
    .unwrap();
    let meta = IndexMeta { pipeline: Some(pipeline), ..IndexMeta::default() };
    let file = IndexFile {
        columns: Vec::new(),
        deferred: Vec::new(),
        index: index.clone(),
        later: rule.tables().cloned().collect(),
        names: Some(Names::from_strings(&names)),
        features: Some((0..61).map(|i| sample_features(i) as u32).collect::<Vec<u32>>().into()),
        meta: meta.to_value(),
    };
    let path = dir.join("small.ndx");
    file.write(&path).unwrap();
    (path, index)
}

/// The sample's feature counts: short and long documents alternate.
fn sample_features(id: u64) -> usize {
    if id.is_multiple_of(2) {
        40 + id as usize
    } else {
        5_000
    }
}

#[test]
fn index_files_keep_the_later_passes_of_their_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (path, index) = sample_file(dir.path());
    let opened = IndexFile::open(&path).unwrap();
    let radius = IndexMeta::of(&opened).unwrap().pipeline.unwrap().radius();
    assert!(!radius.is_fixed(), "the default preset's rule depends on length");
    assert_eq!(opened.later.len(), neardup::dedup::Plan::new(&radius).passes().len() - 1);
    let tables = RuleTables::from_tables(&radius, opened.later.clone()).unwrap();
    // Against a brute-force scan of every entry by the rule.
    let entries = index.entries();
    let mut rng = Rng(9);
    for (q, &(_, fp)) in entries.iter().enumerate() {
        let near =
            Fingerprint::new(fp.value() ^ (1u128 << (rng.next() % 64)) ^ (1u128 << (q % 64)), Bits::B64);
        for (query, features) in [(fp, 50), (near, 50), (fp, 5_000), (near, 300)] {
            let got = tables.query_by(&opened.index, &radius, query, features, sample_features).unwrap();
            let mut want: Vec<Match> = entries
                .iter()
                .map(|&(id, e)| Match { id, distance: (e.value() ^ query.value()).count_ones() })
                .filter(|m| radius.accepts(m.distance, features, sample_features(m.id)))
                .collect();
            want.sort_unstable();
            assert_eq!(got, want, "query {q} of {features} features");
        }
    }
    // The tables of another rule are refused, and an index file without
    // later passes is still version 1.
    assert!(RuleTables::from_tables(&neardup::Radius::fixed(3), opened.later.clone()).is_err());
    let plain = dir.path().join("plain.ndx");
    IndexFile::new(index).write(&plain).unwrap();
    assert_eq!(std::fs::read(&plain).unwrap()[8..12], 1u32.to_le_bytes());
    assert_eq!(std::fs::read(&path).unwrap()[8..12], 2u32.to_le_bytes());
}

#[test]
fn index_files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (path, index) = sample_file(dir.path());
    let opened = IndexFile::open(&path).unwrap();
    assert_eq!(opened.index.len(), index.len());
    assert_eq!(opened.names.as_ref().unwrap().get(60), Some("doc-60"));
    assert_eq!(opened.names.as_ref().unwrap().get(61), None);
    for (_, fp) in index.entries() {
        assert_eq!(opened.index.query(fp, 4).unwrap(), index.query(fp, 4).unwrap());
    }
    // Adding to an opened index and writing again.
    let mut more = opened.clone();
    more.index.insert(99, Fingerprint::from_u64(7)).unwrap();
    more.write(&path).unwrap();
    let again = IndexFile::open(&path).unwrap();
    assert_eq!(again.index.query(Fingerprint::from_u64(7), 0).unwrap()[0].id, 99);
    // The pipeline (the caller's metadata) and the feature counts are
    // kept, and another pipeline is refused.
    let meta = IndexMeta::of(&again).unwrap();
    meta.check_pipeline(&neardup::presets::config("default").unwrap()).unwrap();
    let other: PipelineConfig = neardup::presets::config("keywords").unwrap();
    let err = meta.check_pipeline(&other).unwrap_err().to_string();
    assert!(err.contains("rebuild the index"), "{err}");
    let features: Vec<u32> = (0..61).map(|i| sample_features(i) as u32).collect();
    assert_eq!(again.features.as_ref().map(|f| f.to_vec()), Some(features));
    assert_eq!(again.later.len(), opened.later.len());
    // An empty index round-trips too.
    let empty = IndexFile::new(TableIndex::builder().build().unwrap());
    let p = dir.path().join("empty.ndx");
    empty.write(&p).unwrap();
    assert!(IndexFile::open(&p).unwrap().index.is_empty());
}

#[test]
fn truncated_and_damaged_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (path, index) = sample_file(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.ndx");
    for len in 0..bytes.len() {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        assert!(IndexFile::open(&cut).is_err(), "truncated to {len} bytes");
        assert!(IndexFile::open_unverified(&cut).is_err(), "truncated to {len} bytes (unverified)");
    }
    let probe = index.entries()[0].1;
    let step = (bytes.len() / 700).max(1);
    for pos in (0..bytes.len()).step_by(step) {
        for bit in [0u8, 3, 7] {
            let mut b = bytes.clone();
            b[pos] ^= 1 << bit;
            std::fs::write(&cut, &b).unwrap();
            assert!(IndexFile::open(&cut).is_err(), "bit {bit} of byte {pos} flipped");
            // Without the checksum: an error or an answer, never a panic.
            if let Ok(f) = IndexFile::open_unverified(&cut) {
                let _ = f.index.query(probe, 3);
            }
        }
    }
    // Not an index at all.
    std::fs::write(&cut, b"{\"hello\": 1}").unwrap();
    let err = IndexFile::open(&cut).unwrap_err().to_string();
    assert!(err.contains("too short") || err.contains("not a neardup index"), "{err}");
}

#[test]
fn deferred_columns_are_written_as_they_announce_or_not_at_all() {
    use neardup::index::file::Deferred;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.ndx");
    let mut file = IndexFile::new(TableIndex::builder().build().unwrap());
    file.deferred
        .push(("ok".into(), Deferred { len: 5, write: std::sync::Arc::new(|w| w.write_all(b"hello")) }));
    file.write(&path).unwrap();
    let opened = IndexFile::open(&path).unwrap();
    assert_eq!(
        opened.columns.iter().find(|(n, _)| n == "ok").map(|(_, c)| c.bytes().to_vec()),
        Some(b"hello".to_vec())
    );
    // A column that writes another length than it announced fails the
    // write, and the file in place stays as it was.
    file.deferred[0].1.len = 6;
    assert!(file.write(&path).is_err());
    assert!(IndexFile::open(&path).is_ok());
}
