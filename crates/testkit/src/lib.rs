//! Test helpers shared by neardup's tests and benches (never published):
//! a deterministic generator ([`Rng`], SplitMix64), fingerprint sets with
//! planted near neighbours ([`planted`]), the brute-force oracles every
//! index and dedup test compares against ([`brute_pairs`],
//! [`brute_clusters`]), and the harness that runs the `neardup` binary
//! ([`cli`]), and hostile documents made at test time ([`hostile`]).
//!
//! It depends on no neardup crate (only `flate2`, for the decompression
//! bombs), so the core crate's own unit tests can use it: fingerprints are
//! plain `u64`/`u128` words here.

#![deny(missing_docs)]

pub mod cli;
pub mod hostile;
pub mod tmpfs;

/// SplitMix64 (Steele, Lea & Flood 2014): deterministic test data, so a
/// failure reproduces from its seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A random fingerprint of `bits` (64 or 128) bits.
    pub fn fp(&mut self, bits: u32) -> u128 {
        let v = (self.next() as u128) << 64 | self.next() as u128;
        if bits >= 128 {
            v
        } else {
            v & ((1u128 << bits) - 1)
        }
    }

    /// `v` with exactly `d` distinct bits of the low `bits` flipped.
    pub fn flip(&mut self, v: u128, d: u32, bits: u32) -> u128 {
        assert!(d <= bits, "cannot flip {d} of {bits} bits");
        let mut out = v;
        let mut flipped = 0;
        while flipped < d {
            let b = self.below(u64::from(bits)) as u32;
            if (out ^ v) >> b & 1 == 0 {
                out ^= 1 << b;
                flipped += 1;
            }
        }
        out
    }

    /// A 64-bit word near `base`: up to `max` random bit flips (some may
    /// cancel).
    pub fn near(&mut self, base: u64, max: u32) -> u64 {
        (0..self.below(u64::from(max) + 1)).fold(base, |v, _| v ^ (1 << self.below(64)))
    }
}

/// `n` fingerprints of `bits` bits: random ones, and after about half of
/// them planted neighbours at every distance `0..=k + 2`.
pub fn planted(rng: &mut Rng, bits: u32, k: u32, n: usize) -> Vec<u128> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let base = rng.fp(bits);
        v.push(base);
        if rng.next().is_multiple_of(2) {
            for d in 0..=k + 2 {
                if v.len() < n {
                    v.push(rng.flip(base, d, bits));
                }
            }
        }
    }
    v
}

/// Every pair `(i, j, distance)`, `i < j`, of `words` within `k` bits, by
/// comparing them all: the oracle of the indexes and of dedup.
pub fn brute_pairs<W: Copy + Into<u128>>(words: &[W], k: u32) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    for i in 0..words.len() {
        for j in i + 1..words.len() {
            let d = (words[i].into() ^ words[j].into()).count_ones();
            if d <= k {
                out.push((i as u32, j as u32, d));
            }
        }
    }
    out
}

/// The connected components of more than one of `0..n` joined by `pairs`,
/// each sorted, ordered by their first member.
pub fn brute_clusters(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for (a, b) in pairs {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        parent[ra.max(rb)] = ra.min(rb);
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..n {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort();
    out
}

/// Justified clusters by brute force: `order` (every record, in keep
/// order) walked once; each record is compared with every record kept
/// before it, and removed for the nearest one (smallest `near` value,
/// ties: kept first) that `near` accepts and `verified` confirms, else
/// kept. Returns each kept record that had removals with its members
/// (itself included, sorted), ordered by the first member — what a
/// greedy split of candidate components must give.
pub fn brute_justified<N: Ord>(
    order: &[u32],
    near: impl Fn(u32, u32) -> Option<N>,
    verified: impl Fn(u32, u32) -> bool,
) -> Vec<(u32, Vec<u32>)> {
    let mut kept: Vec<(u32, Vec<u32>)> = Vec::new();
    for &x in order {
        let mut found: Vec<(N, usize)> =
            kept.iter().enumerate().filter_map(|(at, c)| near(x, c.0).map(|n| (n, at))).collect();
        found.sort();
        match found.into_iter().find(|&(_, at)| verified(x, kept[at].0)) {
            Some((_, at)) => kept[at].1.push(x),
            None => kept.push((x, vec![x])),
        }
    }
    let mut out: Vec<(u32, Vec<u32>)> = kept
        .into_iter()
        .filter(|c| c.1.len() > 1)
        .map(|(c, mut m)| {
            m.sort_unstable();
            (c, m)
        })
        .collect();
    out.sort_by_key(|c| c.1[0]);
    out
}

/// The most records any of `components` keeps under the justified
/// clusters `justified` (as [`brute_justified`] gives them): a test's proof
/// that some component has many centres.
pub fn most_kept_in_a_component(components: &[Vec<usize>], justified: &[(u32, Vec<u32>)]) -> usize {
    let removed: std::collections::HashSet<u32> =
        justified.iter().flat_map(|(k, m)| m.iter().copied().filter(move |x| x != k)).collect();
    components
        .iter()
        .map(|c| c.iter().filter(|&&x| !removed.contains(&(x as u32))).count())
        .max()
        .unwrap_or(0)
}

/// The next number of [`Rng`] at state `x`, advancing `x`: for code that
/// keeps its generator's state in a plain `u64`.
pub fn next(x: &mut u64) -> u64 {
    let mut rng = Rng(*x);
    let v = rng.next();
    *x = rng.0;
    v
}

/// The texts of the sample documents: the first `take` of each of
/// testdata/docs_zh.jsonl and docs_en.jsonl, and of ../shared/data's
/// docs_zh.jsonl when it is there (a plain clone has only testdata/).
pub fn sample_texts(take: usize) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("testdata/docs_zh.jsonl"), root.join("testdata/docs_en.jsonl")];
    let shared = root.join("../shared/data/docs_zh.jsonl");
    if shared.exists() {
        files.push(shared);
    }
    let mut texts = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for line in text.lines().take(take) {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            texts.push(v["text"].as_str().expect("a text field").to_owned());
        }
    }
    texts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_neighbours_are_found_by_brute_force() {
        let mut rng = Rng(1);
        let v = planted(&mut rng, 64, 3, 200);
        let pairs = brute_pairs(&v, 5);
        assert!(pairs.iter().any(|p| p.2 == 5) && pairs.iter().any(|p| p.2 == 0));
        let clusters = brute_clusters(v.len(), pairs.iter().map(|p| (p.0 as usize, p.1 as usize)));
        assert!(!clusters.is_empty() && clusters.iter().all(|c| c.windows(2).all(|w| w[0] < w[1])));
        assert_eq!(Rng(7).next(), Rng(7).next());
    }
}
