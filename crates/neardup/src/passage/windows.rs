//! Windows of sentences, fingerprinted: what passages are compared by.

use std::ops::Range;

use rayon::prelude::*;

use super::sentences;
use crate::config::PassageConfig;
use crate::{Fingerprint, Fingerprinter};

/// One window of consecutive sentences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passage {
    /// Its bytes in the document: from the first sentence's start to the
    /// last one's end.
    pub bytes: Range<usize>,
    /// Its sentences (indices into the document's sentence list).
    pub sentences: Range<usize>,
}

/// The windows over `sentences` of `text`: one starting at each sentence,
/// `window` sentences long, extended while shorter than `min_chars`
/// characters. Windows that would be cut short by the end of the document
/// are left out, except the first (so a short document has one passage).
pub fn passages(text: &str, sentences: &[Range<usize>], cfg: &PassageConfig) -> Vec<Passage> {
    let n = sentences.len();
    let window = cfg.window.max(1);
    let mut out = Vec::new();
    for i in 0..n {
        if i > 0 && i + window > n {
            break;
        }
        let mut j = (i + window).min(n);
        let chars = |j: usize| text[sentences[i].start..sentences[j - 1].end].chars().count();
        while j < n && chars(j) < cfg.min_chars {
            j += 1;
        }
        out.push(Passage { bytes: sentences[i].start..sentences[j - 1].end, sentences: i..j });
        if j == n && i > 0 && chars(j) < cfg.min_chars {
            break;
        }
    }
    out
}

/// A passage with its fingerprint and feature count (which picks the radius).
#[derive(Clone, Debug)]
pub struct FingerprintedPassage {
    /// The window.
    pub passage: Passage,
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// Its features (with repeats).
    pub features: usize,
}

/// A document cut into sentences and fingerprinted windows.
#[derive(Clone, Debug)]
pub struct PassageDoc {
    /// Sentence byte ranges.
    pub sentences: Vec<Range<usize>>,
    /// The windows, fingerprinted.
    pub passages: Vec<FingerprintedPassage>,
}

impl PassageDoc {
    /// Splits and fingerprints `text` (windows in parallel).
    pub fn new(fingerprinter: &Fingerprinter, text: &str, cfg: &PassageConfig) -> PassageDoc {
        let sentences = sentences(text, cfg.max_sentence_chars);
        let passages = passages(text, &sentences, cfg)
            .into_par_iter()
            .map(|p| {
                let (fingerprint, features) = fingerprinter.fingerprint_counted(&text[p.bytes.clone()]);
                FingerprintedPassage { passage: p, fingerprint, features }
            })
            .filter(|p| p.features > 0)
            .collect();
        PassageDoc { sentences, passages }
    }

    /// The characters in all sentences.
    pub fn chars(&self, text: &str) -> usize {
        self.sentences.iter().map(|r| text[r.clone()].chars().count()).sum()
    }
}
