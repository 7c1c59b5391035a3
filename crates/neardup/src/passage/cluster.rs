//! Hits clustered into passages: hits close together in A, then, among
//! them, close together in B, then in A again, until nothing splits (the
//! extension step of Sanchez-Perez, Sidorov and Gelbukh's text alignment,
//! PAN 2014). Each cluster is one copied passage, however its sentences
//! were reordered, its lines wrapped or its words lightly edited; two
//! passages copied from different places of B stay two.

use std::ops::Range;

use super::seeds::Hit;
use super::tokens::Tokens;

/// A cluster of hits: a passage of A and where it is in B, in tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Fragment {
    /// Tokens of A, from the first hit's start to the last one's end.
    pub a: Range<usize>,
    /// Tokens of B, likewise.
    pub b: Range<usize>,
    /// The weight of A's tokens inside some hit.
    pub a_covered: u32,
    /// The weight of B's tokens inside some hit.
    pub b_covered: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    A,
    B,
}

impl Side {
    fn of(self, h: &Hit) -> &Range<usize> {
        match self {
            Side::A => &h.a,
            Side::B => &h.b,
        }
    }

    fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// The clusters of `hits`: hits whose tokens on one side lie within
/// `max_gap` weight (a word 2, a CJK character 1) of each other are
/// together, on both sides.
pub(super) fn fragments(hits: Vec<Hit>, ta: &Tokens, tb: &Tokens, max_gap: u32) -> Vec<Fragment> {
    let tokens = |side: Side| if side == Side::A { ta } else { tb };
    // (hits, the side to split them on, whether the other side is whole)
    let mut work = vec![(hits, Side::A, false)];
    let mut out = Vec::new();
    while let Some((group, side, settled)) = work.pop() {
        if group.is_empty() {
            continue;
        }
        let mut parts = split(group, side, tokens(side), max_gap);
        if parts.len() == 1 && settled {
            out.push(fragment(parts.pop().expect("one part"), ta, tb));
        } else {
            // Each part is whole on this side; the other side decides.
            work.extend(parts.into_iter().map(|p| (p, side.other(), true)));
        }
    }
    out.sort_by_key(|f| (f.a.start, f.b.start));
    out
}

/// `group` split where, ordered on `side`, a gap heavier than `max_gap`
/// falls between one hit and all those before it.
fn split(mut group: Vec<Hit>, side: Side, tokens: &Tokens, max_gap: u32) -> Vec<Vec<Hit>> {
    group.sort_by_key(|h| (side.of(h).start, side.of(h).end));
    let mut parts: Vec<Vec<Hit>> = Vec::new();
    let mut reach = 0;
    for h in group {
        let r = side.of(&h).clone();
        let far = r.start > reach && tokens.weight(reach..r.start) > max_gap;
        match parts.last_mut() {
            Some(p) if !far => {
                reach = reach.max(r.end);
                p.push(h);
            }
            _ => {
                reach = r.end;
                parts.push(vec![h]);
            }
        }
    }
    parts
}

/// The weight of the union of `ranges` (sorted by start).
fn covered(mut ranges: Vec<Range<usize>>, tokens: &Tokens) -> u32 {
    ranges.sort_by_key(|r| r.start);
    let (mut total, mut end) = (0, 0);
    for r in ranges {
        let start = r.start.max(end);
        if r.end > start {
            total += tokens.weight(start..r.end);
            end = r.end;
        }
    }
    total
}

/// A seed of A found at several places of one cluster's B keeps the place
/// on the diagonal of its nearest seed found once (B repeats a phrase near
/// the copy: "You can have hundreds of" in two sentences in a row).
fn one_place_per_seed(mut group: Vec<Hit>) -> Vec<Hit> {
    group.sort_by_key(|h| (h.a.start, h.b.start));
    let diagonal = |h: &Hit| h.b.start as i64 - h.a.start as i64;
    let once: Vec<(usize, i64)> = group
        .chunk_by(|x, y| x.a.start == y.a.start)
        .filter(|c| c.len() == 1)
        .map(|c| (c[0].a.start, diagonal(&c[0])))
        .collect();
    if once.is_empty() || once.len() == group.len() {
        return group;
    }
    let mut out = Vec::with_capacity(group.len());
    for places in group.chunk_by(|x, y| x.a.start == y.a.start) {
        if places.len() == 1 {
            out.push(places[0].clone());
            continue;
        }
        let at = places[0].a.start;
        let k = once.partition_point(|&(a, _)| a < at);
        let near = [k.checked_sub(1), (k < once.len()).then_some(k)]
            .into_iter()
            .flatten()
            .min_by_key(|&k| once[k].0.abs_diff(at))
            .expect("once is not empty");
        let best = places.iter().min_by_key(|h| diagonal(h).abs_diff(once[near].1)).expect("places");
        out.push(best.clone());
    }
    out
}

fn fragment(group: Vec<Hit>, ta: &Tokens, tb: &Tokens) -> Fragment {
    let group = one_place_per_seed(group);
    let span = |side: Side| {
        let lo = group.iter().map(|h| side.of(h).start).min().expect("a hit");
        let hi = group.iter().map(|h| side.of(h).end).max().expect("a hit");
        lo..hi
    };
    Fragment {
        a: span(Side::A),
        b: span(Side::B),
        a_covered: covered(group.iter().map(|h| h.a.clone()).collect(), ta),
        b_covered: covered(group.iter().map(|h| h.b.clone()).collect(), tb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(a: usize, b: usize) -> Hit {
        Hit { a: a..a + 4, b: b..b + 4 }
    }

    #[test]
    fn near_hits_are_one_passage_far_ones_two() {
        let t = Tokens::of(&"w ".repeat(200));
        // One run in A, from two places of B.
        let hits: Vec<Hit> =
            (0..10).map(|i| hit(i, 100 + i)).chain((10..20).map(|i| hit(i, i - 10))).collect();
        let f = fragments(hits, &t, &t, 10);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!((f[0].a.clone(), f[0].b.clone()), (0..13, 100..113));
        assert_eq!((f[1].a.clone(), f[1].b.clone()), (10..23, 0..13));
        assert_eq!(f[0].a_covered, 26);
        // Reordered inside a passage, and gaps under the limit: one.
        let hits = vec![hit(0, 18), hit(8, 0), hit(16, 12), hit(24, 6)];
        let f = fragments(hits, &t, &t, 10);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].a.clone(), f[0].b.clone(), f[0].a_covered), (0..28, 0..22, 32));
        // A gap over the limit splits.
        assert_eq!(fragments(vec![hit(0, 0), hit(10, 10)], &t, &t, 10).len(), 2);
        assert_eq!(fragments(vec![hit(0, 0), hit(9, 9)], &t, &t, 10).len(), 1);
    }
}
