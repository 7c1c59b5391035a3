//! Detection quality on labelled pairs: precision, recall and F1 at every
//! Hamming radius `k`.
//!
//! A pair is *predicted* a near duplicate at radius `k` when the distance
//! of its fingerprints is at most `k` (and, with two-stage detection, its
//! verification passes). [`Curve`] counts the outcomes at every `k` in one
//! pass over a histogram of distances.
//!
//! ```
//! use neardup::quality::Curve;
//!
//! // (distance, labelled a near duplicate, passes verification)
//! let pairs = [(0, true, true), (2, true, true), (5, true, true), (3, false, true), (9, false, true)];
//! let curve = Curve::new(pairs, 10);
//! let at3 = curve.at(3);
//! assert_eq!((at3.tp, at3.fp, at3.fn_, at3.tn), (2, 1, 1, 1));
//! assert_eq!(at3.precision(), 2.0 / 3.0);
//! assert_eq!(at3.recall(), 2.0 / 3.0);
//! assert_eq!(curve.best_k(), 5); // F1 = 6/7 there
//! ```

use serde::Serialize;

/// The confusion counts at one radius.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Near duplicates found.
    pub tp: u64,
    /// Pairs found that are not near duplicates.
    pub fp: u64,
    /// Near duplicates missed.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Pairs correctly not found.
    pub tn: u64,
}

impl Counts {
    /// Tallies `(predicted a near duplicate, labelled one)` outcomes.
    pub fn tally(outcomes: impl IntoIterator<Item = (bool, bool)>) -> Counts {
        let mut c = Counts::default();
        for o in outcomes {
            match o {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, true) => c.fn_ += 1,
                (false, false) => c.tn += 1,
            }
        }
        c
    }

    /// tp / (tp + fp); 1 when nothing is found (no false alarm was raised).
    pub fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }

    /// tp / (tp + fn); 1 when there are no near duplicates to find.
    pub fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }

    /// The harmonic mean of precision and recall, 2tp / (2tp + fp + fn);
    /// 1 when there is nothing to find and nothing was found.
    pub fn f1(&self) -> f64 {
        let d = 2 * self.tp + self.fp + self.fn_;
        if d == 0 {
            1.0
        } else {
            (2 * self.tp) as f64 / d as f64
        }
    }

    /// Labelled near duplicates (tp + fn).
    pub fn positives(&self) -> u64 {
        self.tp + self.fn_
    }

    /// Labelled non-duplicates (fp + tn).
    pub fn negatives(&self) -> u64 {
        self.fp + self.tn
    }
}

/// Precision, recall and F1 at every radius `0..=max_k`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Curve {
    counts: Vec<Counts>,
}

impl Curve {
    /// Counts outcomes for `(distance, is_duplicate, verified)` triples: a
    /// pair is predicted a near duplicate at `k` when `distance ≤ k` and
    /// `verified` (pass `true` without a second stage).
    pub fn new(pairs: impl IntoIterator<Item = (u32, bool, bool)>, max_k: u32) -> Curve {
        let len = max_k as usize + 1;
        // found[label][d]: pairs predicted from radius d on (d > max_k: never).
        let mut found = [vec![0u64; len + 1], vec![0u64; len + 1]];
        for (d, dup, verified) in pairs {
            let d = if verified { (d as usize).min(len) } else { len };
            found[usize::from(dup)][d] += 1;
        }
        let total = [found[0].iter().sum::<u64>(), found[1].iter().sum::<u64>()];
        let mut counts = Vec::with_capacity(len);
        let (mut neg, mut pos) = (0, 0);
        for (n, p) in found[0].iter().zip(&found[1]).take(len) {
            neg += n;
            pos += p;
            counts.push(Counts { tp: pos, fp: neg, fn_: total[1] - pos, tn: total[0] - neg });
        }
        Curve { counts }
    }

    /// The largest radius on the curve.
    pub fn max_k(&self) -> u32 {
        self.counts.len() as u32 - 1
    }

    /// The counts at radius `k` (the last radius for larger `k`).
    pub fn at(&self, k: u32) -> Counts {
        self.counts[(k as usize).min(self.counts.len() - 1)]
    }

    /// The counts at every radius, from 0.
    pub fn points(&self) -> &[Counts] {
        &self.counts
    }

    /// The radius with the highest F1; the smallest such radius on ties.
    pub fn best_k(&self) -> u32 {
        let mut best = 0;
        for (k, c) in self.counts.iter().enumerate() {
            if c.f1() > self.counts[best].f1() {
                best = k;
            }
        }
        best as u32
    }
}

/// Precision, recall and F1 at each of a list of Jaccard thresholds: the
/// curve of a MinHash pipeline, where a pair is found at threshold `t`
/// when its bands meet under the banding for `t` and its estimated
/// similarity is at least `t`. (Bandings differ between thresholds, so the
/// outcomes are not nested as a radius's are: each point is counted on its
/// own.)
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdCurve {
    points: Vec<(f64, Counts)>,
}

impl ThresholdCurve {
    /// The thresholds a curve is drawn at by default: 0.01, 0.02, …, 1.
    pub fn grid() -> Vec<f64> {
        (1..=100).map(|i| f64::from(i) / 100.0).collect()
    }

    /// The curve of `(threshold, counts there)` points, by threshold.
    ///
    /// # Panics
    ///
    /// If there are no points.
    pub fn new(mut points: Vec<(f64, Counts)>) -> ThresholdCurve {
        assert!(!points.is_empty(), "a curve of at least one point");
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        ThresholdCurve { points }
    }

    /// The points, by ascending threshold.
    pub fn points(&self) -> &[(f64, Counts)] {
        &self.points
    }

    /// The point with the highest F1; the highest threshold on ties (the
    /// one that asks most of a pair).
    pub fn best(&self) -> (f64, Counts) {
        let mut best = self.points[0];
        for &p in &self.points[1..] {
            if p.1.f1() >= best.1.f1() {
                best = p;
            }
        }
        best
    }
}

/// Length buckets for quality by document length, in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum LengthBucket {
    /// Fewer than 100 characters (poems, titles, tweets).
    #[serde(rename = "<100")]
    Short,
    /// 100 to 1,000 characters.
    #[serde(rename = "100-1000")]
    Medium,
    /// More than 1,000 characters.
    #[serde(rename = ">1000")]
    Long,
}

impl LengthBucket {
    /// All buckets, shortest first.
    pub const ALL: [LengthBucket; 3] = [LengthBucket::Short, LengthBucket::Medium, LengthBucket::Long];

    /// The bucket of a text of `chars` characters.
    pub fn of(chars: usize) -> LengthBucket {
        match chars {
            0..=99 => LengthBucket::Short,
            100..=1000 => LengthBucket::Medium,
            _ => LengthBucket::Long,
        }
    }

    /// The bucket's name: `<100`, `100-1000` or `>1000`.
    pub fn name(self) -> &'static str {
        match self {
            LengthBucket::Short => "<100",
            LengthBucket::Medium => "100-1000",
            LengthBucket::Long => ">1000",
        }
    }
}

/// How many pairs of each label lie at each distance: the data of a
/// distance histogram.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DistanceHistogram {
    /// `duplicates[d]`: near-duplicate pairs at distance `d`.
    pub duplicates: Vec<u64>,
    /// `others[d]`: non-duplicate pairs at distance `d`.
    pub others: Vec<u64>,
}

impl DistanceHistogram {
    /// The histogram of `(distance, is_duplicate)` pairs for `bits`-bit
    /// fingerprints (distances `0..=bits`; larger ones are clamped).
    pub fn new(pairs: impl IntoIterator<Item = (u32, bool)>, bits: u32) -> DistanceHistogram {
        let mut h =
            DistanceHistogram { duplicates: vec![0; bits as usize + 1], others: vec![0; bits as usize + 1] };
        for (d, dup) in pairs {
            let d = (d as usize).min(bits as usize);
            if dup {
                h.duplicates[d] += 1;
            } else {
                h.others[d] += 1;
            }
        }
        h
    }

    /// The histogram of `(similarity, is_duplicate)` pairs in `bins` bins
    /// of width `1/bins`: bin `i` holds `[i/bins, (i+1)/bins)`, and one
    /// more bin, `bins`, holds similarity 1.
    pub fn of_similarity(pairs: impl IntoIterator<Item = (f64, bool)>, bins: u32) -> DistanceHistogram {
        let bin = |s: f64| (s.clamp(0.0, 1.0) * f64::from(bins)).floor() as u32;
        DistanceHistogram::new(pairs.into_iter().map(|(s, dup)| (bin(s), dup)), bins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_matches_counting_at_every_k() {
        let pairs: Vec<(u32, bool, bool)> =
            (0..200u32).map(|i| ((i * 7919) % 23, i % 3 == 0, i % 5 != 0)).collect();
        let curve = Curve::new(pairs.iter().copied(), 20);
        for k in 0..=20 {
            let want = Counts::tally(pairs.iter().map(|&(d, dup, ok)| (d <= k && ok, dup)));
            assert_eq!(want.tp + want.fp + want.fn_ + want.tn, 200);
            assert_eq!(curve.at(k), want, "k = {k}");
        }
        assert_eq!(curve.at(99), curve.at(20));
    }

    #[test]
    fn degenerate_counts() {
        let none = Counts { tp: 0, fp: 0, fn_: 4, tn: 3 };
        assert_eq!((none.precision(), none.recall(), none.f1()), (1.0, 0.0, 0.0));
        let empty = Counts::default();
        assert_eq!((empty.precision(), empty.recall(), empty.f1()), (1.0, 1.0, 1.0));
        let c = Counts { tp: 3, fp: 1, fn_: 2, tn: 0 };
        assert_eq!(c.f1(), 6.0 / 9.0);
        assert_eq!((c.positives(), c.negatives()), (5, 1));
    }

    #[test]
    fn buckets_and_histogram() {
        assert_eq!(LengthBucket::of(99), LengthBucket::Short);
        assert_eq!(LengthBucket::of(100), LengthBucket::Medium);
        assert_eq!(LengthBucket::of(1000), LengthBucket::Medium);
        assert_eq!(LengthBucket::of(1001), LengthBucket::Long);
        let h = DistanceHistogram::new([(0, true), (3, false), (70, false)], 64);
        assert_eq!(h.duplicates[0], 1);
        assert_eq!(h.others[3], 1);
        assert_eq!(h.others[64], 1);
        let h = DistanceHistogram::of_similarity([(1.0, true), (0.5, false), (0.499, false)], 50);
        assert_eq!((h.duplicates[50], h.others[25], h.others[24]), (1, 1, 1));
    }

    #[test]
    fn threshold_curve_best_prefers_the_higher_threshold_on_ties() {
        let c = |tp, fp| Counts { tp, fp, fn_: 10 - tp, tn: 10 - fp };
        let curve = ThresholdCurve::new(vec![(0.5, c(8, 2)), (0.3, c(9, 5)), (0.7, c(8, 2)), (0.9, c(2, 0))]);
        assert_eq!(curve.points()[0].0, 0.3);
        assert_eq!(curve.best().0, 0.7);
        assert_eq!(ThresholdCurve::grid().len(), 100);
    }
}
