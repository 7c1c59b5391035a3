//! SimHash's batch dedup against brute force: whole components equal the
//! components of every pair within the rule, and justified clusters equal
//! the greedy over every record in keep order — on chains of fingerprints
//! (each a few bits from the one before, so the ends of a chain are far
//! apart), with the radius by length, every keep policy, verification,
//! pairs collected or not, and centres many enough for the split's index.

use neardup::dedup::{ClusterMode, Dedup, Keep, Records, Verifier};
use neardup::similarity::FeatureSet;
use neardup::{Bits, Fingerprint, Radius};
use neardup_testkit::{brute_clusters, brute_justified, Rng};

/// Chains of fingerprints: each step flips 1–3 bits of the one before,
/// some steps repeat a fingerprint, and a few chains are long enough for
/// a component with many centres. Feature counts vary around the
/// radius's step so that both radii are used.
fn chains(rng: &mut Rng, chains: usize) -> Records {
    let mut r = Records::new(Bits::B64);
    for c in 0..chains {
        let steps = if c % 10 == 0 { 400 } else { 2 + rng.below(12) as usize };
        let mut fp = rng.next();
        for _ in 0..steps {
            let features = if rng.below(3) == 0 { 300 } else { 900 };
            r.push(Fingerprint::new(u128::from(fp), Bits::B64), features, 100 + rng.below(50) as usize);
            if rng.below(10) > 0 {
                for _ in 0..1 + rng.below(3) {
                    fp ^= 1 << rng.below(64);
                }
            }
        }
    }
    r
}

/// Confirms pairs of records of the same parity (a set of two features:
/// the record's number mod 4 and its parity; Jaccard 1 or 1/3 within a
/// parity, 0 across).
struct Parity;

impl Verifier for Parity {
    fn threshold(&self) -> f64 {
        0.3
    }

    fn set(&self, doc: u32) -> neardup::Result<FeatureSet> {
        let (a, b) = (format!("m{}", doc % 4), format!("p{}", doc % 2));
        Ok(FeatureSet::from_features([a.as_str(), b.as_str()]))
    }
}

fn members(r: &neardup::dedup::DedupResult) -> Vec<(u32, Vec<u32>)> {
    r.clusters.iter().map(|c| (c.kept, c.members.clone())).collect()
}

#[test]
fn simhash_batch_equals_brute_force_components_and_greedy() {
    let mut rng = Rng(5);
    let records = chains(&mut rng, 60);
    let n = records.len() as u32;
    for radius in [Radius::fixed(3), Radius::by_length(&[(600, 6)], 3)] {
        let near = |x: u32, c: u32| {
            let d = records.fingerprint(x).distance(records.fingerprint(c));
            radius.accepts(d, records.features(x), records.features(c)).then_some(d)
        };
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| near(a, b).is_some())
            .map(|(a, b)| (a as usize, b as usize))
            .collect();
        let components = brute_clusters(n as usize, pairs);
        let parity = |x: u32, c: u32| x % 2 == c % 2;
        let mut chained = 0;
        for keep in [Keep::First, Keep::Longest, Keep::Shortest] {
            let d = Dedup::new(&radius).keep(keep);
            let got = d.clusters(ClusterMode::Components).batch(&records).unwrap();
            let got: Vec<Vec<usize>> =
                got.clusters.iter().map(|c| c.members.iter().map(|&m| m as usize).collect()).collect();
            assert_eq!(got, components, "{radius} {keep}: components");
            let mut order: Vec<u32> = (0..n).collect();
            match keep {
                Keep::First => {}
                Keep::Longest => order.sort_by_key(|&i| (std::cmp::Reverse(records.length(i)), i)),
                Keep::Shortest => order.sort_by_key(|&i| (records.length(i), i)),
            }
            let want = brute_justified(&order, near, |_, _| true);
            let verified = brute_justified(&order, near, parity);
            for pairs in [false, true] {
                assert_eq!(
                    members(&d.pairs(pairs).batch(&records).unwrap()),
                    want,
                    "{radius} {keep} {pairs}"
                );
                let got = d.pairs(pairs).verify(&Parity).batch(&records).unwrap();
                assert_eq!(members(&got), verified, "{radius} {keep} {pairs}: verified");
            }
            chained += components.iter().map(Vec::len).sum::<usize>()
                - components.len()
                - want.iter().map(|c| c.1.len() - 1).sum::<usize>();
            // Some component keeps more centres than the split scans, so
            // its index of centres is exercised too.
            let most = neardup_testkit::most_kept_in_a_component(&components, &want);
            // And one is large enough that its verification sets are made
            // up front, in parallel (256 members).
            assert!(components.iter().map(Vec::len).max() >= Some(256));
            assert!(most > 100, "{radius} {keep}: at most {most} centres in a component");
            // Every removal is justified: within the rule of its kept record.
            for (kept, m) in &want {
                assert!(m.iter().all(|&x| x == *kept || near(x, *kept).is_some()));
            }
        }
        assert!(chained > 100, "{radius}: {chained} removed by components only");
    }
}

/// What the Spark job does after finding components: the members of each
/// component, shuffled together in keep order (here in a scrambled order
/// of components), split by `split_groups` — the batch's justified
/// clusters.
#[test]
fn split_groups_of_shuffled_components_equal_the_batch() {
    let mut rng = Rng(9);
    let records = chains(&mut rng, 40);
    let radius = Radius::by_length(&[(600, 6)], 3);
    for keep in [Keep::First, Keep::Longest] {
        let d = Dedup::new(&radius).keep(keep);
        let want = members(&d.batch(&records).unwrap());
        let mut components = d.clusters(ClusterMode::Components).batch(&records).unwrap().clusters;
        components.reverse();
        let (mut rows, mut groups, mut shuffled) = (Vec::new(), Vec::new(), Records::new(Bits::B64));
        for (g, c) in components.iter().enumerate() {
            let mut m = c.members.clone();
            if keep == Keep::Longest {
                m.sort_by_key(|&i| (std::cmp::Reverse(records.length(i)), i));
            }
            for i in m {
                rows.push(i);
                groups.push(g as i64 * 7 - 100);
                shuffled.push(records.fingerprint(i), records.features(i), 0);
            }
        }
        let owners = d.split_groups(&shuffled, &groups).unwrap();
        let mut got: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for (row, &owner) in owners.iter().enumerate() {
            if owner as usize != row {
                got.entry(rows[owner as usize]).or_insert_with(|| vec![rows[owner as usize]]).push(rows[row]);
            }
        }
        let mut got: Vec<(u32, Vec<u32>)> = got
            .into_iter()
            .map(|(k, mut m)| {
                m.sort_unstable();
                (k, m)
            })
            .collect();
        got.sort_by_key(|c| c.1[0]);
        assert_eq!(got, want, "{keep}");
        assert!(d.split_groups(&shuffled, &groups[1..]).is_err(), "one group per record");
    }
}

/// The shingles signing keeps (`Detector::sign_keeping_shingles`) are the
/// sets verification makes from the texts (`FeatureSet::shingles`), and
/// signing gives the same sketch either way — every preset, and the
/// tokenizers with a fast path of their own (character n-grams, byte
/// grams, shingles of words) — so a dedup that verifies from a
/// `ShingleColumn` decides as one that verifies from the texts.
#[test]
fn kept_shingles_are_the_sets_of_the_texts() {
    use neardup::config::presets;
    use neardup::detector::Detector;
    use neardup::TokenizerConfig;

    let docs = crate::util::all_docs();
    let mut texts: Vec<String> = docs.iter().take(40).map(|d| d.text.clone()).collect();
    texts.extend(["".into(), "，。！".into(), "a".into(), "今天".into(), "one two".into()]);
    let mut detectors: Vec<(String, Detector)> = presets::NAMES
        .iter()
        .chain(&presets::MINHASH_NAMES)
        .map(|n| (n.to_string(), Detector::preset(n).unwrap()))
        .collect();
    for (name, tokenizer) in [
        ("char 3-grams", TokenizerConfig::CharNgrams { n: 3, short: Default::default() }),
        ("byte 4-grams", TokenizerConfig::ByteGrams { n: 4, skip_first: 0, skip_last: 0 }),
    ] {
        let mut config = presets::config("default").unwrap();
        if matches!(tokenizer, TokenizerConfig::ByteGrams { .. }) {
            config.filters.clear();
        }
        config.tokenizer = tokenizer;
        detectors.push((name.into(), Detector::new(config).unwrap()));
    }
    for (name, d) in &detectors {
        for (i, t) in texts.iter().enumerate() {
            let mut kept = Vec::new();
            let signed = d.sign_keeping_shingles(t, true, &mut kept).unwrap();
            assert_eq!(signed, d.sign(t, true).unwrap(), "{name}, text {i}");
            assert_eq!(
                FeatureSet::from_hashes(kept),
                FeatureSet::shingles(d.stages(), t, neardup::similarity::SHINGLE),
                "{name}, text {i}"
            );
        }
    }
}

/// A verified dedup over the shingles kept while signing gives the
/// clusters of one over the texts, both methods, held and spilled.
#[test]
fn dedup_verified_from_kept_shingles_equals_from_texts() {
    use neardup::dedup::{DedupOptions, ShingleColumn, SpillTo, Threshold};
    use neardup::detector::Detector;

    let docs = crate::util::all_docs();
    // Each document, a lightly edited copy and an exact copy.
    let mut texts: Vec<String> = Vec::new();
    for d in docs.iter().take(30) {
        texts.push(d.text.clone());
        texts.push(d.text.replacen(' ', "  x ", 3).replacen('的', "之", 2));
        texts.push(d.text.clone());
    }
    let dir = tempfile::tempdir().unwrap();
    for preset in ["default", "minhash"] {
        let d = Detector::preset(preset).unwrap();
        let options = DedupOptions { verify: Some(Threshold::new(0.3).unwrap()), ..DedupOptions::default() };
        let want = d.dedup(&d.records_of(&texts), &texts, &options).unwrap();
        for limit in [u64::MAX, 100] {
            let mut column = ShingleColumn::spilling(SpillTo { dir: dir.path().into(), limit });
            for t in &texts {
                let mut kept = Vec::new();
                d.sign_keeping_shingles(t, true, &mut kept).unwrap();
                column.push(&kept).unwrap();
            }
            let got = d.dedup(&d.records_of(&texts), &column, &options).unwrap();
            assert_eq!(got.clusters, want.clusters, "{preset}, limit {limit}");
            assert!(!want.clusters.is_empty(), "{preset}: the copies make clusters");
        }
    }
}
