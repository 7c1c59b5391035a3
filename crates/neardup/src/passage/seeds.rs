//! Seeds: at each token, the shortest run of tokens that weighs at least
//! the seed weight (4 words, or 8 CJK characters), hashed; and the seeds
//! two texts share, which say where a passage may be copied.

use std::collections::HashMap;
use std::ops::Range;

use super::tokens::Tokens;

/// A run of tokens, hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Seed {
    /// Its first token.
    pub start: usize,
    /// One past its last token.
    pub end: usize,
    /// The hash of its tokens' hashes, in order.
    pub hash: u64,
}

/// Seeds of one text, looked up by hash.
#[derive(Debug, Default)]
pub(super) struct SeedTable {
    /// Seed `i` starts at token `i`.
    pub seeds: Vec<Seed>,
    /// Hash → the seeds that have it, in order.
    by_hash: HashMap<u64, Vec<u32>>,
}

/// A seed of A found in B: its tokens in both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hit {
    /// Tokens of A.
    pub a: Range<usize>,
    /// Tokens of B.
    pub b: Range<usize>,
}

/// A seed shared more often than this is followed only along the copies
/// it continues (so repetitive texts stay linear).
const MAX_OCCURRENCES: usize = 16;

fn mix(h: u64, t: u64) -> u64 {
    // splitmix64's finalizer over the running hash and the next token.
    let mut z = (h ^ t).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seeds of `tokens`, one per token until the rest weighs too little.
pub(super) fn seeds(tokens: &Tokens, weight: u32) -> Vec<Seed> {
    let n = tokens.len();
    let mut out = Vec::with_capacity(n);
    let mut end = 0;
    for start in 0..n {
        end = end.max(start);
        while end < n && tokens.weight(start..end) < weight {
            end += 1;
        }
        if tokens.weight(start..end) < weight {
            break;
        }
        let hash = tokens.list[start..end].iter().fold(0, |h, t| mix(h, t.hash));
        out.push(Seed { start, end, hash });
    }
    out
}

impl SeedTable {
    /// The seeds of `tokens`, indexed.
    pub fn new(tokens: &Tokens, weight: u32) -> SeedTable {
        let seeds = seeds(tokens, weight);
        let mut by_hash: HashMap<u64, Vec<u32>> = HashMap::with_capacity(seeds.len());
        for (i, s) in seeds.iter().enumerate() {
            by_hash.entry(s.hash).or_default().push(i as u32);
        }
        SeedTable { seeds, by_hash }
    }

    /// The seeds of `a` (a text of `a_tokens` tokens) found here. A seed
    /// found at most [`MAX_OCCURRENCES`] times gives every place; a more
    /// common one gives the places that continue the previous seed's
    /// (the same copy, one token on), or else the place nearest its
    /// relative position.
    pub fn hits(&self, a: &[Seed], a_tokens: usize, b_tokens: usize) -> Vec<Hit> {
        let mut out = Vec::new();
        let mut previous: Vec<usize> = Vec::new();
        let mut kept: Vec<usize> = Vec::new();
        for (i, s) in a.iter().enumerate() {
            kept.clear();
            if let Some(places) = self.by_hash.get(&s.hash) {
                if places.len() <= MAX_OCCURRENCES {
                    kept.extend(places.iter().map(|&j| j as usize));
                } else {
                    kept.extend(
                        previous
                            .iter()
                            .map(|&j| j + 1)
                            .filter(|&j| self.seeds.get(j).is_some_and(|t| t.hash == s.hash)),
                    );
                    if kept.is_empty() {
                        let at = (i as u128 * b_tokens as u128 / a_tokens.max(1) as u128) as u32;
                        let k = places.partition_point(|&j| j < at);
                        let near = [k.checked_sub(1), (k < places.len()).then_some(k)]
                            .into_iter()
                            .flatten()
                            .min_by_key(|&k| places[k].abs_diff(at))
                            .expect("places are never empty");
                        kept.push(places[near] as usize);
                    }
                }
            }
            for &j in &kept {
                let t = &self.seeds[j];
                out.push(Hit { a: s.start..s.end, b: t.start..t.end });
            }
            std::mem::swap(&mut previous, &mut kept);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_weigh_enough() {
        let t = Tokens::of("one two three four five 中文字符串在这里");
        let s = seeds(&t, 8);
        // Four words; then runs ending in characters.
        assert_eq!((s[0].start, s[0].end), (0, 4));
        assert_eq!((s[1].start, s[1].end), (1, 5));
        assert_eq!((s[2].start, s[2].end), (2, 7));
        assert!(s.iter().all(|x| t.weight(x.start..x.end) >= 8));
        assert_eq!(s.last().map(|x| x.end), Some(t.len()));
        assert!(seeds(&Tokens::of("too short"), 8).is_empty());
    }

    #[test]
    fn shared_seeds_are_hits() {
        let a = Tokens::of("x y the quick brown fox jumps");
        let b = Tokens::of("the quick brown fox jumps over");
        let table = SeedTable::new(&b, 8);
        let hits = table.hits(&seeds(&a, 8), a.len(), b.len());
        assert_eq!(hits, vec![Hit { a: 2..6, b: 0..4 }, Hit { a: 3..7, b: 1..5 }]);
    }

    proptest::proptest! {
        /// Against brute force: every pair of seeds whose tokens are the
        /// same (by their folded hashes), when none is shared more than
        /// MAX_OCCURRENCES times.
        #[test]
        fn hits_equal_brute_force(a in proptest::collection::vec(0usize..6, 0..60), b in proptest::collection::vec(0usize..6, 0..60), weight in 1u32..9) {
            let words = ["ab", "CD", "ef", "中", "文", "gh"];
            let text = |v: &[usize]| v.iter().map(|&i| words[i]).collect::<Vec<_>>().join(" ");
            let (ta, tb) = (Tokens::of(&text(&a)), Tokens::of(&text(&b)));
            let (sa, table) = (seeds(&ta, weight), SeedTable::new(&tb, weight));
            let same = |x: &Seed, y: &Seed| {
                ta.list[x.start..x.end].iter().map(|t| t.hash).eq(tb.list[y.start..y.end].iter().map(|t| t.hash))
            };
            let busiest = table.seeds.iter().map(|y| table.seeds.iter().filter(|z| z.hash == y.hash).count()).max();
            proptest::prop_assume!(busiest.unwrap_or(0) <= MAX_OCCURRENCES);
            let mut want = Vec::new();
            for x in &sa {
                for y in &table.seeds {
                    if same(x, y) {
                        want.push(Hit { a: x.start..x.end, b: y.start..y.end });
                    }
                }
            }
            proptest::prop_assert_eq!(table.hits(&sa, ta.len(), tb.len()), want);
        }
    }

    #[test]
    fn common_seeds_follow_their_copy() {
        let text = "a b c d ".repeat(100);
        let t = Tokens::of(&text);
        let table = SeedTable::new(&t, 8);
        let hits = table.hits(&seeds(&t, 8), t.len(), t.len());
        // One place per seed: the diagonal.
        assert_eq!(hits.len(), table.seeds.len());
        assert!(hits.iter().all(|h| h.a == h.b), "{:?}", &hits[..4]);
    }
}
