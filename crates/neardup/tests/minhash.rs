//! MinHash: LSH dedup against brute force over signatures, banding recall
//! against the S-curve, and the index against a linear scan.

use neardup::dedup::{
    ClusterMode, DedupResult, Keep, LshDedup, ShardedLsh, ShingleJaccard, SignatureRecords, SpillTo,
    TextColumn,
};
use neardup::minhash::index::LshIndex;
use neardup::minhash::{estimate, Banding, MinHasher};
use neardup_testkit::{brute_clusters, brute_justified, Rng};
use rayon::prelude::*;

const K: usize = 128;

/// Feature sets of documents in families: each family's members keep a
/// random share of a base set of `size` features and add their own, so
/// pairs inside a family spread over a range of Jaccard similarities.
fn families(rng: &mut Rng, families: usize, per: usize, size: usize) -> Vec<Vec<String>> {
    let mut docs = Vec::new();
    for f in 0..families {
        let keep = 40 + rng.below(61) as usize; // 40–100 % of the base set
        for m in 0..per {
            let mut set: Vec<String> =
                (0..size).filter(|_| rng.below(100) < keep as u64).map(|i| format!("f{f}_{i}")).collect();
            set.extend((0..size / 10 + 1).map(|i| format!("f{f}_m{m}_{i}_{}", rng.next())));
            docs.push(set);
        }
    }
    docs
}

/// Signature records of feature sets, through the `minhash` preset's
/// signature stage (features given as space-free words, one shingle each
/// with a 1-shingle pipeline would change them; so sign the sets directly).
fn records(sets: &[Vec<String>]) -> SignatureRecords {
    let minhasher = set_minhasher();
    let texts: Vec<String> = sets.iter().map(|s| s.join(" ")).collect();
    let r = SignatureRecords::from_texts(&minhasher, &texts);
    assert_eq!(r.len(), sets.len());
    r
}

/// The `minhash` preset with words as they are for tokens.
fn set_minhasher() -> MinHasher {
    MinHasher::new(neardup::PipelineConfig {
        tokenizer: neardup::TokenizerConfig::Words { hmm: false, han: Default::default() },
        filters: vec![],
        normalize: vec![],
        ..neardup::presets::config("minhash").unwrap()
    })
    .unwrap()
}

/// Clusters by brute force: every pair sharing a band key whose estimate
/// reaches the threshold (what banded dedup promises to find exactly).
fn brute(records: &SignatureRecords, banding: Banding, threshold: f64, need_band: bool) -> Vec<Vec<usize>> {
    let n = records.len();
    let mut pairs = Vec::new();
    for a in 0..n as u32 {
        for b in a + 1..n as u32 {
            let (sa, sb) = (records.signature(a), records.signature(b));
            let banded = (0..banding.bands).any(|i| banding.key(sa, i) == banding.key(sb, i));
            if (banded || !need_band) && estimate(sa, sb) >= threshold {
                pairs.push((a as usize, b as usize));
            }
        }
    }
    brute_clusters(n, pairs)
}

fn clusters(result: &neardup::dedup::DedupResult) -> Vec<Vec<usize>> {
    result.clusters.iter().map(|c| c.members.iter().map(|&m| m as usize).collect()).collect()
}

#[test]
fn banded_dedup_equals_brute_force_over_signatures() {
    let mut rng = Rng(17);
    let sets = families(&mut rng, 60, 5, 80);
    let recs = records(&sets);
    for (threshold, banding) in
        [(0.5, Banding::optimal(0.5, K, 0.5, 0.5)), (0.7, Banding { bands: 16, rows: 8 })]
    {
        let d = LshDedup::new(threshold, banding).clusters(ClusterMode::Components);
        let got = d.batch(&recs).unwrap();
        assert_eq!(
            clusters(&got),
            brute(&recs, banding, threshold, true),
            "threshold {threshold}, {banding}"
        );
        assert!(!got.clusters.is_empty());
        // Pairs, when asked for, are every standing pair once.
        let with_pairs = d.pairs(true).batch(&recs).unwrap();
        assert_eq!(clusters(&with_pairs), clusters(&got));
        assert!(with_pairs.pairs.windows(2).all(|w| (w[0].a, w[0].b) < (w[1].a, w[1].b)));
        assert!(with_pairs.pairs.iter().all(|p| p.score.unwrap() >= threshold));
        // Keep policies choose among the same members.
        let longest = d.keep(Keep::Longest).batch(&recs).unwrap();
        assert_eq!(clusters(&longest), clusters(&got));
    }
}

/// Feature sets in chains: each family is a walk where every member keeps
/// most of the one before it and adds new features, so neighbours are
/// near duplicates but the ends of a walk are not; walks of different
/// families share a member's features now and then (families that touch).
fn chains(rng: &mut Rng, walks: usize, steps: usize, size: usize, gentle: bool) -> Vec<Vec<String>> {
    let mut docs: Vec<Vec<String>> = Vec::new();
    for w in 0..walks {
        let mut set: Vec<String> = (0..size).map(|i| format!("w{w}_{i}")).collect();
        for s in 0..steps {
            docs.push(set.clone());
            // Replace a fifth to a third of the features (gentle: a
            // twelfth to a sixth).
            let change = if gentle {
                size / 12 + rng.below((size / 12) as u64) as usize
            } else {
                size / 5 + rng.below((size / 7) as u64) as usize
            };
            for _ in 0..change {
                let at = rng.below(set.len() as u64) as usize;
                set[at] = format!("w{w}_s{s}_{}", rng.next());
            }
            if w > 0 && rng.below(8) == 0 {
                // Touch an earlier walk: borrow a member of it.
                let other = rng.below(docs.len() as u64) as usize;
                docs.push(docs[other].iter().chain(&set[..size / 2]).cloned().collect());
            }
        }
    }
    docs
}

/// The justified clusters are the greedy over every record in keep order
/// by brute force: each removed record shares a band with its kept one
/// and reaches the threshold (and the verifier's), and is removed for the
/// most similar such kept record; kept records are never near one kept
/// before them. On chains, whose components join records far apart, with
/// every keep policy, with and without verification, in memory and
/// spilled, at two thresholds and bandings.
#[test]
fn justified_clusters_equal_the_greedy_by_brute_force() {
    let mut rng = Rng(41);
    let mut sets = chains(&mut rng, 30, 12, 60, false);
    sets.extend(families(&mut rng, 10, 6, 60));
    // One long walk: a component with more centres than the split scans.
    sets.extend(
        chains(&mut rng, 1, 300, 60, true)
            .into_iter()
            .map(|s| s.into_iter().map(|f| format!("long{f}")).collect()),
    );
    sets.insert(5, vec![]);
    let copy = sets[20].clone();
    sets.push(copy);
    let texts: Vec<String> = sets.iter().map(|s| s.join(" ")).collect();
    let minhasher = set_minhasher();
    let recs = SignatureRecords::from_texts(&minhasher, &texts);
    let dir = tempfile::tempdir().unwrap();
    let out = spilled(&recs, 40 * 512, dir.path());
    let mut column = TextColumn::spilling(SpillTo { dir: dir.path().into(), limit: 1000 });
    for t in &texts {
        column.push(t).unwrap();
    }
    let verifier = ShingleJaccard::for_minhash(&minhasher, &column, 0.25);
    let n = recs.len() as u32;
    let mut chained = 0;
    for (threshold, banding) in
        [(0.5, Banding::optimal(0.5, K, 0.5, 0.5)), (0.6, Banding { bands: 16, rows: 8 })]
    {
        let keys: Vec<Vec<u64>> =
            (0..n).map(|i| (0..banding.bands).map(|b| banding.key(recs.signature(i), b)).collect()).collect();
        let near = |x: u32, c: u32| {
            let (sx, sc) = (recs.signature(x), recs.signature(c));
            let banded = keys[x as usize].iter().zip(&keys[c as usize]).any(|(a, b)| a == b);
            let equal = neardup::minhash::equal_values(sx, sc);
            (recs.features(x) > 0 && recs.features(c) > 0 && banded && equal as f64 / K as f64 >= threshold)
                .then_some(std::cmp::Reverse(equal))
        };
        let jaccard =
            |x: u32, c: u32| minhasher.shingle_jaccard(&texts[x as usize], &texts[c as usize]) >= 0.25;
        for keep in [Keep::First, Keep::Longest, Keep::Shortest] {
            let mut order: Vec<u32> = (0..n).collect();
            let len = |i: u32| recs.length(i);
            match keep {
                Keep::First => {}
                Keep::Longest => order.sort_by_key(|&i| (std::cmp::Reverse(len(i)), i)),
                Keep::Shortest => order.sort_by_key(|&i| (len(i), i)),
            }
            let d = LshDedup::new(threshold, banding).keep(keep);
            let want = brute_justified(&order, near, |_, _| true);
            let components = clusters(&d.clusters(ClusterMode::Components).batch(&recs).unwrap());
            let most = neardup_testkit::most_kept_in_a_component(&components, &want);
            if threshold == 0.5 {
                assert!(most > 60, "{keep}: at most {most} centres in a component");
            }
            chained += components.iter().map(Vec::len).sum::<usize>()
                - want.iter().map(|c| c.1.len() - 1).sum::<usize>()
                - components.len();
            for records in [&recs, &out] {
                for pairs in [false, true] {
                    let got = d.pairs(pairs).batch(records).unwrap();
                    assert_eq!(seen(&got).0, want, "{threshold} {keep} {pairs}");
                    let got = d.pairs(pairs).verify(&verifier).batch(records).unwrap();
                    assert_eq!(
                        seen(&got).0,
                        brute_justified(&order, near, jaccard),
                        "verified {threshold} {keep}"
                    );
                }
            }
        }
    }
    // The chains made components that whole-component clusters remove
    // more of than the justified ones.
    assert!(chained > 50, "{chained} documents kept by the split that components remove");
}

/// The same records moved to a temporary file after `limit` bytes.
fn spilled(recs: &SignatureRecords, limit: u64, dir: &std::path::Path) -> SignatureRecords {
    let mut out = SignatureRecords::spilling(recs.permutations(), SpillTo { dir: dir.into(), limit });
    for i in 0..recs.len() as u32 {
        let pushed = match recs.features(i) {
            0 => out.push_empty(recs.length(i) as usize),
            n => out.push(recs.signature(i), n, recs.length(i) as usize),
        };
        pushed.unwrap();
    }
    out
}

/// Clusters (kept member, members) and pairs (a, b, distance, score).
type Seen = (Vec<(u32, Vec<u32>)>, Vec<(u32, u32, u32, Option<f64>)>);

/// Everything a run gives that a user sees: clusters with their kept
/// member, and the pairs.
fn seen(r: &DedupResult) -> Seen {
    (
        r.clusters.iter().map(|c| (c.kept, c.members.clone())).collect(),
        r.pairs.iter().map(|p| (p.a, p.b, p.distance, p.score)).collect(),
    )
}

/// Out of core, every mode gives what the records in memory give: batch
/// with every keep policy, with pairs, with a verifier, band keys in one
/// read or one band at a time, and online. Featureless and identical
/// records are among them; the spill starts after one record, after 40,
/// and never.
#[test]
fn spilled_signatures_give_the_clusters_of_signatures_in_memory() {
    let mut rng = Rng(35);
    let mut sets = families(&mut rng, 40, 5, 60);
    sets.insert(7, vec![]);
    let copy = sets[3].clone();
    sets.push(copy);
    let texts: Vec<String> = sets.iter().map(|s| s.join(" ")).collect();
    let minhasher = set_minhasher();
    let recs = SignatureRecords::from_texts(&minhasher, &texts);
    let dir = tempfile::tempdir().unwrap();
    let verifier = ShingleJaccard::for_minhash(&minhasher, &texts, 0.3);
    for limit in [1, 40 * 512, u64::MAX] {
        let out = spilled(&recs, limit, dir.path());
        assert_eq!(out.spilled_bytes() > 0, limit < u64::MAX, "limit {limit}");
        let d = LshDedup::of(&minhasher);
        for memory in [1, 1 << 30] {
            for keep in [Keep::First, Keep::Longest, Keep::Shortest] {
                for pairs in [false, true] {
                    let d = d.keep(keep).pairs(pairs).memory(memory);
                    let want = d.batch(&recs).unwrap();
                    assert!(want.clusters.len() > 10);
                    assert_eq!(seen(&d.batch(&out).unwrap()), seen(&want), "{limit} {memory} {keep} {pairs}");
                    let want = d.verify(&verifier).batch(&recs).unwrap();
                    assert_eq!(seen(&d.verify(&verifier).batch(&out).unwrap()), seen(&want), "verified");
                }
            }
        }
        let d = d.pairs(true);
        assert_eq!(seen(&d.online(&out).unwrap()), seen(&d.online(&recs).unwrap()), "online, {limit}");
        let mut buf = vec![0; recs.permutations()];
        for i in [0, 7, 150, recs.len() as u32 - 1] {
            assert_eq!(out.read_signature(i, &mut buf).unwrap(), recs.signature(i));
        }
    }
}

#[test]
fn identical_and_featureless_documents() {
    let minhasher = MinHasher::preset("minhash").unwrap();
    let texts = [
        "one two three four five six seven eight nine ten",
        "",
        "one two three four five six seven eight nine ten",
        "  ，。 ",
        "eleven twelve thirteen fourteen fifteen sixteen seventeen",
    ];
    let recs = SignatureRecords::from_texts(&minhasher, &texts);
    let got = LshDedup::of(&minhasher).batch(&recs).unwrap();
    // The two identical texts cluster; the featureless ones match nothing.
    assert_eq!(clusters(&got), vec![vec![0, 2]]);
    let online = LshDedup::of(&minhasher).online(&recs).unwrap();
    assert_eq!(clusters(&online), vec![vec![0, 2]]);
    assert!(minhasher.signature("").is_err());
}

#[test]
fn online_keeps_what_no_earlier_kept_record_matches() {
    let mut rng = Rng(5);
    let sets = families(&mut rng, 40, 4, 60);
    let recs = records(&sets);
    let banding = Banding::optimal(0.5, K, 0.5, 0.5);
    let got = LshDedup::new(0.5, banding).pairs(true).online(&recs).unwrap();
    // Brute force: the same walk with a linear scan of the kept records
    // for the most similar one sharing a band.
    let mut kept: Vec<u32> = Vec::new();
    let mut owner = vec![None; recs.len()];
    for i in 0..recs.len() as u32 {
        let best = kept
            .iter()
            .filter(|&&k| {
                (0..banding.bands)
                    .any(|b| banding.key(recs.signature(k), b) == banding.key(recs.signature(i), b))
            })
            .map(|&k| (estimate(recs.signature(k), recs.signature(i)), k))
            .filter(|&(s, _)| s >= 0.5)
            .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)));
        match best {
            Some((_, k)) => owner[i as usize] = Some(k),
            None => kept.push(i),
        }
    }
    let want: Vec<(u32, u32)> =
        owner.iter().enumerate().filter_map(|(i, o)| o.map(|k| (k, i as u32))).collect();
    let have: Vec<(u32, u32)> = got.pairs.iter().map(|p| (p.a, p.b)).collect();
    assert_eq!(have, want);
    assert!(!want.is_empty());
}

#[test]
fn banding_recall_follows_the_s_curve() {
    // Planted pairs of 200-feature sets at Jaccard s: the share sharing a
    // band is the S-curve's 1 − (1 − s^r)^b, within sampling error.
    let banding = Banding::optimal(0.5, K, 0.5, 0.5);
    let mut rng = Rng(99);
    for s in [0.3f64, 0.45, 0.6, 0.75] {
        let trials = 600;
        // |A ∩ B| = c, |A| = |B| = 200: J = c / (400 − c).
        let c = (400.0 * s / (1.0 + s)).round() as usize;
        let j = c as f64 / (400 - c) as f64;
        let mut sets = Vec::new();
        for t in 0..trials {
            let salt = rng.next();
            let shared: Vec<String> = (0..c).map(|i| format!("s{t}_{salt}_{i}")).collect();
            let own = |tag: &str| (0..200 - c).map(|i| format!("{tag}{t}_{salt}_{i}")).collect::<Vec<_>>();
            sets.push([shared.clone(), own("a")].concat());
            sets.push([shared, own("b")].concat());
        }
        let recs = records(&sets);
        let hit = (0..trials as u32)
            .filter(|&t| {
                let (a, b) = (recs.signature(2 * t), recs.signature(2 * t + 1));
                (0..banding.bands).any(|i| banding.key(a, i) == banding.key(b, i))
            })
            .count() as f64
            / trials as f64;
        let p = banding.probability(j);
        let sigma = (p * (1.0 - p) / trials as f64).sqrt();
        assert!(hit >= p - 4.0 * sigma - 0.01, "J = {j:.3}: {hit:.3} share a band, the S-curve says {p:.3}");
    }
}

#[test]
fn banded_candidates_against_brute_force_on_ten_thousand_documents() {
    // Recall of the banded candidates among the pairs whose estimate
    // reaches the threshold, measured; it must reach the S-curve's
    // prediction averaged over those pairs' similarities.
    let mut rng = Rng(2026);
    let sets = families(&mut rng, 2500, 4, 40);
    let recs = records(&sets);
    assert_eq!(recs.len(), 10_000);
    let banding = Banding::optimal(0.5, K, 0.5, 0.5);
    // Brute force over all 5·10^7 pairs, on every core, each estimate
    // stopping once it cannot reach the threshold.
    let n = recs.len() as u32;
    let close: Vec<(u32, u32, f64)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|a| {
            let recs = &recs;
            let sa = recs.signature(a);
            (a + 1..n).filter_map(move |b| {
                let sb = recs.signature(b);
                let mut unequal = 0;
                for i in 0..K {
                    if sa[i] != sb[i] {
                        unequal += 1;
                        if unequal > K / 2 {
                            return None;
                        }
                    }
                }
                Some((a, b, (K - unequal) as f64 / K as f64))
            })
        })
        .collect();
    let found = close
        .iter()
        .filter(|&&(a, b, _)| {
            let (sa, sb) = (recs.signature(a), recs.signature(b));
            (0..banding.bands).any(|i| banding.key(sa, i) == banding.key(sb, i))
        })
        .count();
    let total = close.len();
    let recall = found as f64 / total as f64;
    let expected = close.iter().map(|p| banding.probability(p.2)).sum::<f64>() / total as f64;
    assert!(total > 1000, "{total} pairs");
    // Measured here: recall 0.893 of the pairs at estimate ≥ 0.5 (many
    // family pairs sit just above it, where the S-curve is at 0.5–0.6).
    assert!(
        recall >= expected - 0.03,
        "recall {recall:.3} of {total} pairs; the S-curve predicts {expected:.3}"
    );
    // And the dedup finds exactly the banded pairs' clusters.
    let got = LshDedup::new(0.5, banding).clusters(ClusterMode::Components).batch(&recs).unwrap();
    assert_eq!(clusters(&got), brute_banded_fast(&recs, banding, 0.5));
}

/// Brute force by band tables (for n = 10^4, the all-pairs band check of
/// [`brute`] is too slow in debug builds): pairs sharing a key, estimated.
fn brute_banded_fast(recs: &SignatureRecords, banding: Banding, threshold: f64) -> Vec<Vec<usize>> {
    let mut index = LshIndex::new(banding, K);
    let mut pairs = Vec::new();
    for i in 0..recs.len() as u32 {
        for m in index.query(recs.signature(i), threshold) {
            pairs.push((m.id as usize, i as usize));
        }
        index.insert(i, recs.signature(i));
    }
    brute_clusters(recs.len(), pairs)
}

#[test]
fn the_index_answers_like_a_scan_after_removals() {
    let mut rng = Rng(3);
    let sets = families(&mut rng, 30, 4, 50);
    let recs = records(&sets);
    let banding = Banding::optimal(0.5, K, 0.5, 0.5);
    let mut index = LshIndex::new(banding, K);
    for i in 0..recs.len() as u32 {
        index.insert(i, recs.signature(i));
    }
    for i in (0..recs.len() as u32).step_by(3) {
        assert!(index.remove(i));
    }
    assert!(!index.remove(0));
    assert_eq!(index.len(), recs.len() - recs.len().div_ceil(3));
    for q in 0..recs.len() as u32 {
        let sq = recs.signature(q);
        let mut want: Vec<(u32, f64)> = (0..recs.len() as u32)
            .filter(|i| i % 3 != 0)
            .filter(|&i| (0..banding.bands).any(|b| banding.key(sq, b) == banding.key(recs.signature(i), b)))
            .map(|i| (i, estimate(sq, recs.signature(i))))
            .filter(|&(_, s)| s >= 0.5)
            .collect();
        want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let have: Vec<(u32, f64)> = index.query(sq, 0.5).iter().map(|m| (m.id, m.similarity)).collect();
        assert_eq!(have, want, "query {q}");
    }
}

/// b-bit signatures estimate what the full ones do: the correction for
/// chance agreement leaves 16-bit estimates within 0.01 of the full ones
/// and 8-bit ones within 0.06 (K = 128: one chance match in 256 values of
/// an unrelated pair moves the share by 1/128), and no worse on average.
#[test]
fn b_bit_signatures_estimate_like_full_ones() {
    use neardup::minhash::{b_bit_jaccard, BBits, Signature};
    let mut rng = Rng(8);
    let sets = families(&mut rng, 30, 4, 120);
    let recs = records(&sets);
    let sig = |i: usize| Signature::from_values(recs.signature(i as u32).to_vec());
    let (mut worst8, mut worst16, mut sum8, mut n) = (0f64, 0f64, 0f64, 0);
    for i in 0..sets.len() {
        for j in i + 1..sets.len().min(i + 9) {
            let (a, b) = (sig(i), sig(j));
            let full = a.jaccard(&b);
            let e8 = b_bit_jaccard(&a.b_bit(BBits::Eight), &b.b_bit(BBits::Eight), BBits::Eight);
            let e16 = b_bit_jaccard(&a.b_bit(BBits::Sixteen), &b.b_bit(BBits::Sixteen), BBits::Sixteen);
            assert_eq!(a.b_bit(BBits::Eight).len(), K);
            assert_eq!(a.b_bit(BBits::Sixteen).len(), 2 * K);
            worst8 = worst8.max((e8 - full).abs());
            worst16 = worst16.max((e16 - full).abs());
            sum8 += e8 - full;
            n += 1;
        }
    }
    assert!(worst16 <= 0.01, "16-bit off by {worst16}");
    assert!(worst8 <= 0.06, "8-bit off by {worst8}");
    assert!((sum8 / f64::from(n)).abs() <= 0.01, "8-bit biased by {}", sum8 / f64::from(n));
}

/// What the Spark job does: band rows cut into partitions by (band, key),
/// each partition's links by `band_links`, then components over all the
/// links — the same clusters as the batch.
#[test]
fn band_links_over_partitions_give_the_batch_clusters() {
    let mut rng = Rng(29);
    let sets = families(&mut rng, 50, 4, 60);
    let recs = records(&sets);
    let banding = Banding::optimal(0.5, K, 0.5, 0.5);
    let d = LshDedup::new(0.5, banding);
    let want = clusters(&d.clusters(ClusterMode::Components).batch(&recs).unwrap());
    assert!(!want.is_empty());
    for partitions in [1u64, 3, 8] {
        let mut parts: Vec<Vec<((u32, u64), u32)>> = vec![Vec::new(); partitions as usize];
        for i in 0..recs.len() as u32 {
            for band in 0..banding.bands {
                let key = banding.key(recs.signature(i), band);
                let p = (key ^ band as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) % partitions;
                parts[p as usize].push(((band as u32, key), i));
            }
        }
        let mut links = Vec::new();
        for mut rows in parts {
            let found = d.band_links(&recs, &mut rows).unwrap();
            assert!(found.iter().all(|p| p.a < p.b && p.score.unwrap() >= 0.5));
            links.extend(found.into_iter().map(|p| (p.a as usize, p.b as usize)));
        }
        assert_eq!(brute_clusters(recs.len(), links), want, "{partitions} partitions");
    }
    // A row naming a record beyond the records is an error, not a panic.
    assert!(d.band_links(&recs, &mut [((0, 1), recs.len() as u32)]).is_err());
}

/// What the Spark job does: band rows `(key, vertex)` from batches, cut
/// into partitions by key; each partition's candidates; components of
/// them all; each group's documents (in input order) cut into partitions
/// by group and deduplicated by `owners` — the clusters, kept members,
/// first members and similarities of the batch over every document, for
/// every keep and both cluster modes, on families, chains that touch and
/// exact copies.
#[test]
fn sharded_lsh_over_partitions_gives_the_batch_clusters() {
    use std::collections::{BTreeMap, HashMap};
    let mut rng = Rng(31);
    let mut sets = families(&mut rng, 30, 4, 60);
    sets.extend(chains(&mut rng, 5, 8, 60, true));
    let copies: Vec<Vec<String>> = sets.iter().step_by(7).cloned().collect();
    sets.extend(copies);
    let recs = records(&sets);
    let n = recs.len();
    let banding = Banding::optimal(0.5, K, 0.5, 0.5);
    let sigs: Vec<Vec<u32>> = (0..n as u32).map(|i| recs.signature(i).to_vec()).collect();
    let vertices: Vec<u64> = sigs.iter().map(|s| ShardedLsh::vertex(s)).collect();
    let spread = |x: u64, parts: usize| (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize % parts;
    for keep in [Keep::First, Keep::Longest, Keep::Shortest] {
        for mode in [ClusterMode::Justified, ClusterMode::Components] {
            let want = LshDedup::new(0.5, banding).keep(keep).clusters(mode).batch(&recs).unwrap();
            let want: Vec<(usize, Vec<usize>)> = want
                .clusters
                .iter()
                .map(|c| (c.kept as usize, c.members.iter().map(|&m| m as usize).collect()))
                .collect();
            assert!(want.len() > 20, "{keep:?} {mode:?}: {} clusters", want.len());
            let plan = ShardedLsh::new(0.5, banding).keep(keep).clusters(mode);
            for partitions in [1usize, 3, 8] {
                let mut parts: Vec<Vec<(u64, u64)>> = vec![Vec::new(); partitions];
                let all: Vec<usize> = (0..n).collect();
                for batch in all.chunks(25) {
                    let values: Vec<u32> = batch.iter().flat_map(|&i| sigs[i].iter().copied()).collect();
                    let batch_vertices: Vec<u64> = batch.iter().map(|&i| vertices[i]).collect();
                    let mut rows = Vec::new();
                    plan.band_rows(&values, &batch_vertices, &mut rows);
                    for row in rows {
                        parts[ShardedLsh::part(row.0, partitions)].push(row);
                    }
                }
                let (a, b): (Vec<u64>, Vec<u64>) =
                    parts.iter_mut().flat_map(|p| ShardedLsh::candidates(p)).unzip();
                let (names, labels) = neardup::index::cluster::components(&a, &b);
                let label: HashMap<u64, u64> = names.into_iter().zip(labels).collect();
                let mut groups: Vec<Vec<usize>> = vec![Vec::new(); partitions];
                for (i, v) in vertices.iter().enumerate() {
                    if let Some(&l) = label.get(v) {
                        groups[spread(l, partitions)].push(i);
                    }
                }
                let mut got: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
                for mut docs in groups {
                    docs.sort_by_key(|&i| (label[&vertices[i]], i));
                    let mut part = SignatureRecords::new(K);
                    for &i in &docs {
                        part.push(&sigs[i], 1, recs.length(i as u32) as usize).unwrap();
                    }
                    let of: Vec<u64> = docs.iter().map(|&i| vertices[i]).collect();
                    let group: Vec<i64> = of.iter().map(|v| label[v] as i64).collect();
                    let owners = plan.owners(&part, &of, &group).unwrap();
                    for (j, &i) in docs.iter().enumerate().filter(|&(j, _)| owners.clustered[j]) {
                        let owner = docs[owners.owner[j] as usize];
                        got.entry(owner).or_default().push(i);
                        let similarity = (estimate(&sigs[i], &sigs[owner]) * 1e4).round() / 1e4;
                        assert_eq!(owners.similarity[j], similarity);
                        let first = docs[owners.first[j] as usize];
                        assert!(first <= i && first <= owner);
                    }
                }
                let mut got: Vec<(usize, Vec<usize>)> = got
                    .into_iter()
                    .map(|(kept, mut members)| {
                        members.sort_unstable();
                        (kept, members)
                    })
                    .collect();
                got.sort_by_key(|c| c.1[0]);
                assert_eq!(got, want, "{keep:?} {mode:?}, {partitions} partitions");
            }
        }
    }
    // Columns of different lengths are an error, not a panic.
    let plan = ShardedLsh::new(0.5, banding);
    assert!(plan.owners(&recs, &vertices[1..], &vec![0; n]).is_err());
}

/// Features made elsewhere sign like the text they came from.
#[test]
fn signature_of_features_equals_the_texts() {
    let m = MinHasher::preset("minhash").unwrap();
    for text in ["the quick brown fox jumps over the lazy dog", "近似重复检测在网页去重中很常见", "one"]
    {
        let features = m.features(text);
        assert_eq!(m.signature_of_features(&features), Some(m.signature(text).unwrap()), "{text}");
    }
    assert_eq!(m.signature_of_features(Vec::<String>::new()), None);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The keyed index answers like a scan over a map of its keys, after
    /// any sequence of inserts, batch inserts, replacements and removals (small value
    /// alphabets, so that bands collide, chains grow and identical
    /// signatures repeat).
    #[test]
    fn keyed_lsh_answers_like_a_scan(
        ops in proptest::collection::vec((0u8..3, 0u16..24, proptest::collection::vec(0u32..3, 8)), 1..120),
        threshold in 0.1f64..1.0,
    ) {
        use neardup::minhash::KeyedLsh;
        use std::collections::BTreeMap;
        let banding = Banding { bands: 4, rows: 2 };
        let mut index: KeyedLsh<u16> = KeyedLsh::new(banding, 8);
        let mut model: BTreeMap<u16, Vec<u32>> = BTreeMap::new();
        for (op, key, sig) in &ops {
            if *op == 0 {
                proptest::prop_assert_eq!(index.remove(key), model.remove(key).is_some());
            } else if *op == 2 {
                // A batch: a repeated key (the last wins) and a neighbour.
                let other: Vec<u32> = sig.iter().map(|v| (v + 1) % 3).collect();
                let next = (key + 1) % 24;
                index.insert_batch([(*key, &other[..]), (next, &other[..]), (*key, &sig[..])]);
                model.insert(next, other.clone());
                model.insert(*key, sig.clone());
            } else {
                index.insert(*key, sig);
                model.insert(*key, sig.clone());
            }
            proptest::prop_assert_eq!(index.len(), model.len());
            let mut want: Vec<(u16, f64)> = model
                .iter()
                .filter(|(_, s)| banding.shares_band(sig, s))
                .map(|(k, s)| (*k, estimate(sig, s)))
                .filter(|&(_, e)| e >= threshold)
                .collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut have: Vec<(u16, f64)> = index.query(sig, threshold).into_iter().map(|(k, m)| (*k, m.similarity)).collect();
            // Equal similarities come in slot order, not key order.
            have.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            proptest::prop_assert_eq!(have, want);
        }
        let entries: BTreeMap<u16, Vec<u32>> = index.entries().map(|(k, s)| (*k, s.to_vec())).collect();
        proptest::prop_assert_eq!(entries, model);
    }
}
