//! On-disk segments against brute force and the in-memory indexes, before
//! and after merges with tombstones.

use std::collections::HashSet;
use std::sync::Arc;

use neardup::disk::{Segment, SegmentDoc, SegmentKind};
use neardup::index::Match;
use neardup::minhash::index::LshIndex;
use neardup::minhash::Banding;
use neardup::{Fingerprint, Radius};
use neardup_testkit::Rng;

const K: usize = 32;

/// Signatures in families: each family's members share most values.
fn signatures(rng: &mut Rng, n: usize) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    while out.len() < n {
        let base: Vec<u32> = (0..K).map(|_| rng.next() as u32 % 50).collect();
        for _ in 0..1 + rng.next() % 4 {
            let mut s = base.clone();
            for v in s.iter_mut() {
                if rng.next().is_multiple_of(4) {
                    *v = rng.next() as u32 % 50;
                }
            }
            out.push(s);
        }
    }
    out.truncate(n);
    out
}

fn minhash_kind() -> SegmentKind {
    SegmentKind::Minhash { permutations: K, bands: 8, rows: 4 }
}

/// The rows of `seg` confirmed as candidates of `q` (sharing a full band
/// key), as sequence numbers.
fn confirmed(seg: &Segment, banding: Banding, q: &[u32], sigs: &dyn Fn(u64) -> Vec<u32>) -> Vec<u64> {
    let keys: Vec<u64> = (0..banding.bands).map(|b| banding.key(q, b)).collect();
    let mut rows = Vec::new();
    seg.band_candidates(&keys, &mut rows);
    let mut seqs: Vec<u64> = rows
        .into_iter()
        .map(|r| seg.seq(r))
        .filter(|&s| {
            let other = sigs(s);
            (0..banding.bands).any(|b| banding.key(&other, b) == keys[b])
        })
        .collect();
    seqs.sort_unstable();
    seqs.dedup();
    seqs
}

#[test]
fn minhash_segments_find_what_the_in_memory_index_finds_before_and_after_a_merge() {
    let dir = tempfile::tempdir().unwrap();
    let kind = minhash_kind();
    let banding = kind.banding().unwrap();
    let mut rng = Rng(5);
    let sigs = signatures(&mut rng, 900);
    let names: Vec<String> = (0..sigs.len()).map(|i| format!("doc-{i}")).collect();
    // Sequence numbers 10, 20, …: row i holds seq 10(i + 1).
    let seq_of = |i: usize| 10 * (i as u64 + 1);
    let sig_of = |s: u64| sigs[(s / 10 - 1) as usize].clone();
    let docs = |range: std::ops::Range<usize>| -> Vec<SegmentDoc<'_>> {
        range
            .map(|i| SegmentDoc {
                seq: seq_of(i),
                name: &names[i],
                fingerprint: None,
                signature: &sigs[i],
                features: i as u32,
            })
            .collect()
    };
    let (a, b) = (dir.path().join("a.seg"), dir.path().join("b.seg"));
    Segment::write(&a, &kind, &docs(0..500), 1 << 30).unwrap();
    Segment::write(&b, &kind, &docs(500..900), 1 << 30).unwrap();
    let (sa, sb) = (Arc::new(Segment::open(&a, true).unwrap()), Arc::new(Segment::open(&b, false).unwrap()));
    assert_eq!((sa.len(), sb.len(), sa.seq_range()), (500, 400, (10, 5000)));
    assert_eq!((sa.name(3), sa.features(3), sa.row_of(40), sa.row_of(41)), (Some("doc-3"), 3, Some(3), None));
    let mut memory = LshIndex::new(banding, K);
    for (i, s) in sigs.iter().enumerate() {
        memory.insert(i as u32, s);
    }
    let want = |q: &[u32], dead: &HashSet<u64>| -> Vec<u64> {
        let mut v: Vec<u64> = memory
            .candidates(q)
            .into_iter()
            .map(|i| seq_of(i as usize))
            .filter(|s| !dead.contains(s))
            .collect();
        v.sort_unstable();
        v
    };
    let none = HashSet::new();
    for q in sigs.iter().step_by(7) {
        let mut got = confirmed(&sa, banding, q, &sig_of);
        got.extend(confirmed(&sb, banding, q, &sig_of));
        got.sort_unstable();
        assert_eq!(got, want(q, &none));
    }
    // Merged with every third document dead: the same, less the dead.
    let dead: HashSet<u64> = (0..sigs.len()).step_by(3).map(seq_of).collect();
    let m = dir.path().join("m.seg");
    let written =
        Segment::merge(&m, &kind, &[sb.clone(), sa.clone()], &|s| dead.contains(&s), 1 << 30).unwrap();
    assert_eq!(written, sigs.len() - dead.len());
    let sm = Segment::open(&m, true).unwrap();
    assert!((1..sm.len() as u32).all(|r| sm.seq(r - 1) < sm.seq(r)), "rows in sequence order");
    for q in sigs.iter().step_by(5) {
        assert_eq!(confirmed(&sm, banding, q, &sig_of), want(q, &dead));
    }
    // Every segment has a band filter: 6 bits a key, 8 bands here, in
    // whole 64-byte blocks (the answers above went through it).
    for seg in [&*sa, &*sb, &sm] {
        let bytes = seg.filter_bytes();
        let exact = seg.len() * 8 * 6 / 8;
        assert!(bytes >= exact && bytes < exact + 64, "{bytes} for {} rows", seg.len());
    }
    for q in sigs.iter().step_by(5) {
        assert_eq!(confirmed(&sm, banding, q, &sig_of), want(q, &dead));
    }
}

fn fingerprints(rng: &mut Rng, n: usize) -> Vec<Fingerprint> {
    neardup_testkit::planted(rng, 64, 8, n)
        .into_iter()
        .map(|v| Fingerprint::new(v, neardup::Bits::B64))
        .collect()
}

#[test]
fn simhash_segments_answer_every_rule_as_brute_force_does_before_and_after_a_merge() {
    let dir = tempfile::tempdir().unwrap();
    let radius = Radius::by_length(&[(600, 8)], 4);
    let kind = SegmentKind::Simhash { bits: 64, radius: radius.clone() };
    let mut rng = Rng(11);
    let fps = fingerprints(&mut rng, 1_200);
    let features: Vec<u32> =
        (0..fps.len()).map(|i| if i.is_multiple_of(3) { 2_000 } else { 50 + i as u32 % 500 }).collect();
    let names: Vec<String> = (0..fps.len()).map(|i| format!("d{i}")).collect();
    let docs = |range: std::ops::Range<usize>| -> Vec<SegmentDoc<'_>> {
        range
            .map(|i| SegmentDoc {
                seq: i as u64 + 1,
                name: &names[i],
                fingerprint: Some(fps[i]),
                signature: &[],
                features: features[i],
            })
            .collect()
    };
    let (a, b) = (dir.path().join("a.seg"), dir.path().join("b.seg"));
    Segment::write(&a, &kind, &docs(0..700), 1 << 30).unwrap();
    Segment::write(&b, &kind, &docs(700..1_200), 1 << 30).unwrap();
    let segs = [Arc::new(Segment::open(&a, true).unwrap()), Arc::new(Segment::open(&b, true).unwrap())];
    // (seq, distance) of every segment's answer.
    let ask = |segs: &[&Segment], q: Fingerprint, k: Option<u32>, n: usize| -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = segs
            .iter()
            .flat_map(|s| {
                let found: Vec<Match> = s.query_fingerprint(q, k, &radius, n).unwrap();
                found.into_iter().map(|m| (s.seq(m.id as u32), m.distance)).collect::<Vec<_>>()
            })
            .collect();
        v.sort_unstable();
        v
    };
    let brute = |q: Fingerprint, k: Option<u32>, n: usize, dead: &HashSet<u64>| -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = fps
            .iter()
            .enumerate()
            .map(|(i, f)| (i as u64 + 1, (f.value() ^ q.value()).count_ones(), features[i] as usize))
            .filter(|&(s, d, m)| !dead.contains(&s) && k.map_or_else(|| radius.accepts(d, n, m), |k| d <= k))
            .map(|(s, d, _)| (s, d))
            .collect();
        v.sort_unstable();
        v
    };
    let none = HashSet::new();
    for (i, &q) in fps.iter().enumerate().step_by(9) {
        let q = Fingerprint::new(q.value() ^ (1 << (i % 64)), neardup::Bits::B64);
        for (k, n) in [(None, 50), (None, 5_000), (Some(3), 50), (Some(9), 50)] {
            assert_eq!(ask(&[&segs[0], &segs[1]], q, k, n), brute(q, k, n, &none), "query {i}, {k:?}, {n}");
        }
    }
    let dead: HashSet<u64> = (1..=fps.len() as u64).filter(|s| s % 4 == 1).collect();
    let m = dir.path().join("m.seg");
    Segment::merge(&m, &kind, &segs, &|s| dead.contains(&s), 1 << 30).unwrap();
    let merged = Arc::new(Segment::open(&m, true).unwrap());
    for (i, &q) in fps.iter().enumerate().step_by(7) {
        for (k, n) in [(None, 50), (None, 5_000), (Some(4), 50)] {
            let masked: Vec<(u64, u32)> = ask(&[&merged], q, k, n);
            assert_eq!(masked, brute(q, k, n, &dead), "merged: query {i}, {k:?}, {n}");
        }
    }
    // A segment of the other method is refused as a merge input.
    let e =
        Segment::merge(&m, &minhash_kind(), std::slice::from_ref(&merged), &|_| false, 1 << 30).unwrap_err();
    assert!(e.to_string().contains("cannot merge"), "{e}");
}

#[test]
fn damaged_segments_are_errors_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let kind = minhash_kind();
    let mut rng = Rng(2);
    let sigs = signatures(&mut rng, 40);
    let names: Vec<String> = (0..sigs.len()).map(|i| format!("n{i}")).collect();
    let docs: Vec<SegmentDoc<'_>> = (0..sigs.len())
        .map(|i| SegmentDoc {
            seq: i as u64 + 1,
            name: &names[i],
            fingerprint: None,
            signature: &sigs[i],
            features: 1,
        })
        .collect();
    let path = dir.path().join("s.seg");
    Segment::write(&path, &kind, &docs, 1 << 30).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.seg");
    let banding = kind.banding().unwrap();
    let keys: Vec<u64> = (0..banding.bands).map(|b| banding.key(&sigs[0], b)).collect();
    for pos in (0..bytes.len()).step_by(11) {
        let mut b = bytes.clone();
        b[pos] ^= 0x5a;
        std::fs::write(&cut, &b).unwrap();
        assert!(Segment::open(&cut, true).is_err(), "byte {pos} damaged");
        if let Ok(s) = Segment::open(&cut, false) {
            let mut out = Vec::new();
            s.band_candidates(&keys, &mut out);
            for r in out {
                let _ = (s.seq(r), s.name(r), s.features(r));
            }
        }
    }
    // Not in order: refused.
    let mut backwards = docs.clone();
    backwards.reverse();
    assert!(Segment::write(&path, &kind, &backwards, 1 << 30).is_err());
}
