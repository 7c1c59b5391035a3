//! Verification of candidate pairs: a second, slower test that raises
//! precision (two-stage detection).

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::similarity::{FeatureSet, SHINGLE};
use crate::stages::Stages;

/// Scores a candidate pair of documents (by position); the pair stands
/// when the score is at least [`threshold`](Verifier::threshold).
pub trait Verifier: Sync {
    /// The smallest score of a near duplicate.
    fn threshold(&self) -> f64;

    /// Called once, before any [`score`](Verifier::score) of a batch, with
    /// every document (ascending, distinct) that some candidate pair
    /// names: the place to prepare them in parallel. By default, nothing.
    fn prepare(&self, _docs: &[u32]) {}

    /// The score of documents `a` and `b`.
    fn score(&self, a: u32, b: u32) -> f64;
}

/// The Jaccard similarity of the documents' word 3-shingles (the tokens of
/// the pipeline, after normalization and filtering; see
/// [`FeatureSet::shingles`]). Shingle sets are made once per document,
/// only for documents in some candidate pair.
pub struct ShingleJaccard<'a, T> {
    stages: &'a Stages,
    texts: &'a [T],
    threshold: f64,
    sets: Vec<OnceLock<FeatureSet>>,
}

impl<'a, T: AsRef<str> + Sync> ShingleJaccard<'a, T> {
    /// Verifies pairs of `texts` (by position) at Jaccard `threshold`,
    /// with the text stages of `stages` (a `Fingerprinter`, a `MinHasher`
    /// or their [`Stages`]).
    pub fn new<S: AsRef<Stages> + ?Sized>(stages: &'a S, texts: &'a [T], threshold: f64) -> Self {
        let sets = (0..texts.len()).map(|_| OnceLock::new()).collect();
        ShingleJaccard { stages: stages.as_ref(), texts, threshold, sets }
    }

    /// The same for a MinHash pipeline: the shingles of its tokens (before
    /// its own shingling), so both methods verify alike.
    pub fn for_minhash(minhasher: &'a crate::minhash::MinHasher, texts: &'a [T], threshold: f64) -> Self {
        Self::new(minhasher.stages(), texts, threshold)
    }

    fn set(&self, i: u32) -> &FeatureSet {
        self.sets[i as usize]
            .get_or_init(|| FeatureSet::shingles(self.stages, self.texts[i as usize].as_ref(), SHINGLE))
    }
}

impl<T: AsRef<str> + Sync> Verifier for ShingleJaccard<'_, T> {
    fn threshold(&self) -> f64 {
        self.threshold
    }

    fn prepare(&self, docs: &[u32]) {
        docs.par_iter().for_each(|&i| {
            self.set(i);
        });
    }

    fn score(&self, a: u32, b: u32) -> f64 {
        self.set(a).jaccard(self.set(b))
    }
}
