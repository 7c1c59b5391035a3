//! Verification of candidate pairs: a second, slower test that raises
//! precision (two-stage detection). A [`Verifier`] reduces a document to
//! a [`FeatureSet`] (its token 3-shingles) read from [`Texts`] — texts in
//! memory or a [`TextColumn`](super::TextColumn) that spills to disk, or
//! the shingles signing kept in a [`ShingleColumn`](super::ShingleColumn) — and
//! a pair stands when the sets' Jaccard similarity reaches the threshold.
//! The dedup decides which sets to make and how long to keep them: the
//! justified split makes them one component at a time, so memory follows
//! the largest component, never the corpus.

use std::borrow::Cow;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::error::Result;
use crate::similarity::{FeatureSet, SHINGLE};
use crate::stages::Stages;

/// Where a verifier reads a document's text, by position.
pub trait Texts: Sync {
    /// How many texts.
    fn count(&self) -> usize;

    /// Text `i`.
    ///
    /// # Errors
    ///
    /// A text that spilled to a file cannot be read back.
    fn text(&self, i: u32) -> Result<Cow<'_, str>>;

    /// Whether texts `a` and `b` are known to be the same without reading
    /// them (an exact copy kept as such). By default, no.
    fn same_text(&self, _a: u32, _b: u32) -> bool {
        false
    }

    /// Text `i`'s verification shingles, when they were kept from signing
    /// ([`ShingleColumn`](super::ShingleColumn)): the hashes
    /// [`shingle_hashes`](crate::similarity::shingle_hashes) gives for the
    /// text under the verifying pipeline, so a verifier makes its set from
    /// them instead of tokenizing the text again. By default, none.
    fn shingles(&self, _i: u32) -> Option<Result<Vec<u64>>> {
        None
    }
}

impl<T: AsRef<str> + Sync> Texts for [T] {
    fn count(&self) -> usize {
        self.len()
    }

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        Ok(Cow::Borrowed(self[i as usize].as_ref()))
    }
}

impl<T: AsRef<str> + Sync> Texts for Vec<T> {
    fn count(&self) -> usize {
        self.as_slice().count()
    }

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        self.as_slice().text(i)
    }
}

impl<T: AsRef<str> + Sync, const N: usize> Texts for [T; N] {
    fn count(&self) -> usize {
        self.as_slice().count()
    }

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        self.as_slice().text(i)
    }
}

/// Decides whether a candidate pair of documents (by position) stands:
/// each document is reduced to a set once ([`set`](Verifier::set)), and a
/// pair stands when [`score`](Verifier::score) of their sets is at least
/// [`threshold`](Verifier::threshold).
pub trait Verifier: Sync {
    /// The smallest score of a near duplicate.
    fn threshold(&self) -> f64;

    /// What document `doc` is compared by.
    ///
    /// # Errors
    ///
    /// Its text cannot be read.
    fn set(&self, doc: u32) -> Result<FeatureSet>;

    /// The score of two documents' sets. By default, their Jaccard
    /// similarity.
    fn score(&self, a: &FeatureSet, b: &FeatureSet) -> f64 {
        a.jaccard(b)
    }

    /// Whether documents `a` and `b` are known to have the same set (their
    /// texts are one), so the pair stands without making either set. By
    /// default, no.
    fn same(&self, _a: u32, _b: u32) -> bool {
        false
    }
}

/// The Jaccard similarity of the documents' word 3-shingles (the tokens of
/// the pipeline, after normalization and filtering; see
/// [`FeatureSet::shingles`]).
pub struct ShingleJaccard<'a, X: Texts + ?Sized> {
    stages: &'a Stages,
    texts: &'a X,
    threshold: f64,
}

impl<'a, X: Texts + ?Sized> ShingleJaccard<'a, X> {
    /// Verifies pairs of `texts` (by position) at Jaccard `threshold`,
    /// with the text stages of `stages` (a `Fingerprinter`, a `MinHasher`
    /// or their [`Stages`]).
    pub fn new<S: AsRef<Stages> + ?Sized>(stages: &'a S, texts: &'a X, threshold: f64) -> Self {
        ShingleJaccard { stages: stages.as_ref(), texts, threshold }
    }

    /// The same for a MinHash pipeline: the shingles of its tokens (before
    /// its own shingling), so both methods verify alike.
    pub fn for_minhash(minhasher: &'a crate::minhash::MinHasher, texts: &'a X, threshold: f64) -> Self {
        Self::new(minhasher.stages(), texts, threshold)
    }
}

impl<X: Texts + ?Sized> Verifier for ShingleJaccard<'_, X> {
    fn threshold(&self) -> f64 {
        self.threshold
    }

    fn set(&self, doc: u32) -> Result<FeatureSet> {
        match self.texts.shingles(doc) {
            Some(kept) => Ok(FeatureSet::from_hashes(kept?)),
            None => Ok(FeatureSet::shingles(self.stages, &self.texts.text(doc)?, SHINGLE)),
        }
    }

    fn same(&self, a: u32, b: u32) -> bool {
        self.texts.same_text(a, b)
    }
}

/// A verifier's sets of every document, each made on first use and kept:
/// for the modes that judge pairs all over the corpus (online, and the
/// all-pairs listing of `--pairs` and `--clusters components`).
pub(crate) struct SetCache<'v> {
    verifier: &'v dyn Verifier,
    sets: Vec<OnceLock<FeatureSet>>,
}

impl<'v> SetCache<'v> {
    /// No sets yet, for `n` documents.
    pub(crate) fn new(verifier: &'v dyn Verifier, n: usize) -> SetCache<'v> {
        SetCache { verifier, sets: (0..n).map(|_| OnceLock::new()).collect() }
    }

    /// Makes the sets of `docs` in parallel.
    pub(crate) fn prepare(&self, docs: &[u32]) -> Result<()> {
        docs.par_iter().try_for_each(|&i| self.get(i).map(|_| ()))
    }

    fn get(&self, i: u32) -> Result<&FeatureSet> {
        let cell = &self.sets[i as usize];
        if let Some(s) = cell.get() {
            return Ok(s);
        }
        let made = self.verifier.set(i)?;
        Ok(cell.get_or_init(|| made))
    }

    /// The verifier's score of `a` and `b`, if the pair stands.
    pub(crate) fn stands(&self, a: u32, b: u32) -> Result<Option<f64>> {
        if self.verifier.same(a, b) {
            return Ok(Some(1.0));
        }
        let s = self.verifier.score(self.get(a)?, self.get(b)?);
        Ok((s >= self.verifier.threshold()).then_some(s))
    }
}
