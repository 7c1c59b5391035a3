//! Aligning two texts at hand: shared seeds, clustered into one fragment
//! per copied passage, kept when dense and long enough.

use std::ops::Range;

use serde::Serialize;

use super::cluster::{fragments, Fragment};
use super::indexed::covered_chars;
use super::seeds::SeedTable;
use super::sentences;
use super::tokens::{Tokens, WORD};
use crate::config::{presets, PassageConfig};
use crate::radius::Radius;
use crate::tokenize::{script_of, Script};
use crate::Fingerprinter;

/// A copied passage: bytes of A and the bytes of B they copy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    /// Bytes of A: from the first copied word to the last (with the
    /// punctuation around them that both texts share).
    pub a: Range<usize>,
    /// Bytes of B, likewise.
    pub b: Range<usize>,
    /// A's sentences the span touches.
    pub a_sentences: Range<usize>,
    /// B's sentences the span touches.
    pub b_sentences: Range<usize>,
    /// The bits the pipeline's fingerprints of the two spans differ by.
    pub distance: u32,
    /// The characters of A in the span (inside sentences: not the
    /// whitespace between them).
    pub matched_chars: usize,
}

/// The passages of A found in B.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Alignment {
    /// The copied spans, in A's order.
    pub spans: Vec<Span>,
    /// Sentences in A.
    pub a_sentence_count: usize,
    /// Characters in A's sentences.
    pub a_chars: usize,
    /// Characters of A's sentences that were matched.
    pub a_matched_chars: usize,
    /// Characters in B's sentences.
    pub b_chars: usize,
    /// Characters of B's sentences that were matched.
    pub b_matched_chars: usize,
}

impl Alignment {
    /// The share of A's text found in B (0 for an empty A).
    pub fn similarity(&self) -> f64 {
        share(self.a_matched_chars, self.a_chars)
    }

    /// The share of B's text found in A.
    pub fn b_similarity(&self) -> f64 {
        share(self.b_matched_chars, self.b_chars)
    }
}

pub(super) fn share(n: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64
    }
}

/// Finds the passages of one document copied in another.
///
/// Both texts are cut into tokens (words; Han, kana and Hangul
/// characters one by one; punctuation and whitespace ignored). A *seed*
/// is the shortest run of tokens holding `seed_words` words (two CJK
/// characters count as a word); the seeds A and B share are clustered, in
/// both texts at once, across gaps of at most `max_gap` words, so a passage
/// with a changed word, dropped punctuation, new line breaks or reordered
/// sentences is one span. A span is kept when at least `min_words` of its
/// words lie in shared seeds, and at least `min_density` of its words in
/// each text; of spans that overlap in A by more than half, the larger
/// stays. Defaults: seeds of 4 words, gaps of 20 words, spans of 6 words,
/// density 0.5; texts cut into sentences by [`PassageConfig::default`].
#[derive(Clone, Debug)]
pub struct Aligner {
    fingerprinter: Fingerprinter,
    passages: PassageConfig,
    settings: AlignSettings,
}

/// What an [`Aligner`] aligns with (its builder's settings; defaults as
/// [`Aligner`] says).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AlignSettings {
    /// Words in a seed.
    pub seed_words: u32,
    /// The most words between two seeds of one span.
    pub max_gap: u32,
    /// The fewest words of a span in shared seeds.
    pub min_words: usize,
    /// The share of a span's words in shared seeds.
    pub min_density: f64,
}

impl Default for AlignSettings {
    fn default() -> AlignSettings {
        AlignSettings { seed_words: 4, max_gap: 20, min_words: 6, min_density: 0.5 }
    }
}

impl std::fmt::Display for AlignSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "shared runs of {} words (2 CJK characters a word) joined across gaps of up to {} words; \
             spans of at least {} words, {:.0}% of them shared",
            self.seed_words,
            self.max_gap,
            self.min_words,
            self.min_density * 100.0
        )
    }
}

/// The radius for finding windows in an index of passages: k = 3 on 64
/// bits (6 on 128). Windows are short (two sentences), and at k = 8
/// unrelated windows collide often (measured with
/// `bench/report_accuracy.py --against`: docs/QUALITY.md); a copied window
/// is at distance 0 to 3.
pub fn index_radius(bits: crate::Bits) -> Radius {
    Radius::fixed(presets::classic_k(bits))
}

/// A text cut into sentences, tokens and seeds, to be aligned with others
/// ([`Aligner::prepare`]).
#[derive(Debug)]
pub struct Prepared<'t> {
    text: &'t str,
    sentences: Vec<Range<usize>>,
    tokens: Tokens,
    seeds: SeedTable,
    chars: usize,
}

impl Prepared<'_> {
    /// Its sentences' byte ranges.
    pub fn sentences(&self) -> &[Range<usize>] {
        &self.sentences
    }

    /// The characters in its sentences.
    pub fn chars(&self) -> usize {
        self.chars
    }
}

impl Aligner {
    /// An aligner with the defaults.
    pub fn new(fingerprinter: Fingerprinter) -> Aligner {
        Aligner { fingerprinter, passages: PassageConfig::default(), settings: AlignSettings::default() }
    }

    /// Sets all of [`AlignSettings`] at once.
    pub fn settings_from(mut self, s: AlignSettings) -> Aligner {
        self.settings = AlignSettings { seed_words: s.seed_words.max(1), ..s };
        self
    }

    /// Sets the fewest words a span must have in shared seeds.
    pub fn min_words(mut self, n: usize) -> Aligner {
        self.settings.min_words = n;
        self
    }

    /// Sets the words in a seed (at least 1).
    pub fn seed_words(mut self, n: u32) -> Aligner {
        self.settings.seed_words = n.max(1);
        self
    }

    /// Sets the most words between two seeds of one span.
    pub fn max_gap(mut self, n: u32) -> Aligner {
        self.settings.max_gap = n;
        self
    }

    /// Sets the share of a span's words (in each text) that must lie in
    /// shared seeds.
    pub fn min_density(mut self, d: f64) -> Aligner {
        self.settings.min_density = d;
        self
    }

    /// Sets how documents are cut into sentences and windows.
    pub fn passages(mut self, cfg: PassageConfig) -> Aligner {
        self.passages = cfg;
        self
    }

    /// The pipeline (the spans' fingerprint distance).
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// The passage configuration.
    pub fn passage_config(&self) -> &PassageConfig {
        &self.passages
    }

    /// The settings in use.
    pub fn settings(&self) -> AlignSettings {
        self.settings
    }

    /// Cuts `text` into sentences, tokens and seeds.
    pub fn prepare<'t>(&self, text: &'t str) -> Prepared<'t> {
        let sentences = sentences(text, self.passages.max_sentence_chars);
        let tokens = Tokens::of(text);
        let seeds = SeedTable::new(&tokens, self.settings.seed_words * WORD);
        let chars = sentences.iter().map(|r| text[r.clone()].chars().count()).sum();
        Prepared { text, sentences, tokens, seeds, chars }
    }

    /// The passages of `a` found in `b`.
    pub fn align(&self, a: &str, b: &str) -> Alignment {
        self.align_prepared(&self.prepare(a), &self.prepare(b))
    }

    /// [`Aligner::align`] on texts already prepared (one A against many
    /// sources).
    pub fn align_prepared(&self, a: &Prepared<'_>, b: &Prepared<'_>) -> Alignment {
        let hits = b.seeds.hits(&a.seeds.seeds, a.tokens.len(), b.tokens.len());
        let kept = self.keep(fragments(hits, &a.tokens, &b.tokens, self.settings.max_gap * WORD), a, b);
        let mut out = Alignment {
            a_sentence_count: a.sentences.len(),
            a_chars: a.chars,
            b_chars: b.chars,
            ..Alignment::default()
        };
        for f in kept {
            let (ra, rb) =
                widen((a.text, a.tokens.bytes(f.a.clone())), (b.text, b.tokens.bytes(f.b.clone())));
            let distance = self
                .fingerprinter
                .fingerprint(&a.text[ra.clone()])
                .distance(self.fingerprinter.fingerprint(&b.text[rb.clone()]));
            out.spans.push(Span {
                a_sentences: touched(&a.sentences, &ra),
                b_sentences: touched(&b.sentences, &rb),
                matched_chars: covered_chars(a.text, &a.sentences, std::slice::from_ref(&ra)),
                a: ra,
                b: rb,
                distance,
            });
        }
        let (sa, sb): (Vec<_>, Vec<_>) = out.spans.iter().map(|s| (s.a.clone(), s.b.clone())).unzip();
        out.a_matched_chars = covered_chars(a.text, &a.sentences, &sa);
        out.b_matched_chars = covered_chars(b.text, &b.sentences, &sb);
        out
    }

    /// The fragments long and dense enough, without those mostly inside
    /// a larger one in A; in A's order.
    fn keep(&self, mut found: Vec<Fragment>, a: &Prepared<'_>, b: &Prepared<'_>) -> Vec<Fragment> {
        let s = &self.settings;
        let dense = |covered: u32, all: u32| f64::from(covered) >= s.min_density * f64::from(all);
        found.retain(|f| {
            f.a_covered as usize >= s.min_words * WORD as usize
                && dense(f.a_covered, a.tokens.weight(f.a.clone()))
                && dense(f.b_covered, b.tokens.weight(f.b.clone()))
        });
        found.sort_by(|x, y| {
            y.a_covered.cmp(&x.a_covered).then(x.a.start.cmp(&y.a.start)).then(x.b.start.cmp(&y.b.start))
        });
        let mut kept: Vec<Fragment> = Vec::with_capacity(found.len());
        for f in found {
            let inside: u32 = kept
                .iter()
                .filter(|k| k.a.start < f.a.end && f.a.start < k.a.end)
                .map(|k| a.tokens.weight(k.a.start.max(f.a.start)..k.a.end.min(f.a.end)))
                .sum();
            if 2 * inside <= a.tokens.weight(f.a.clone()) {
                kept.push(f);
            }
        }
        kept.sort_by_key(|f| (f.a.start, f.b.start));
        kept
    }
}

/// Spans widened over the marks both texts have around them, at most 8
/// characters a side: after the span, marks that do not open (a
/// sentence's stop, a closing quote or bracket); before it, marks that do
/// not close or end a sentence (an opening quote, a heading's `###`, a
/// code span's backtick), with the spaces between them.
fn widen(
    (a, mut ra): (&str, Range<usize>),
    (b, mut rb): (&str, Range<usize>),
) -> (Range<usize>, Range<usize>) {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    let mark = |c: char| !c.is_whitespace() && !c.is_alphanumeric() && script_of(c) == Script::Other;
    let category = |c: char| get_general_category(c);
    let opens = |c: char| matches!(category(c), G::OpenPunctuation | G::InitialPunctuation);
    let closes = |c: char| {
        matches!(category(c), G::ClosePunctuation | G::FinalPunctuation)
            || matches!(
                c,
                '.' | '。' | '!' | '！' | '?' | '？' | ';' | '；' | ',' | '，' | '、' | ':' | '：' | '…'
            )
    };
    for _ in 0..8 {
        match (a[ra.end..].chars().next(), b[rb.end..].chars().next()) {
            (Some(x), Some(y)) if x == y && mark(x) && !opens(x) => {
                ra.end += x.len_utf8();
                rb.end += x.len_utf8();
            }
            _ => break,
        }
    }
    let (mut sa, mut sb, mut n) = (ra.start, rb.start, 0);
    while n < 8 {
        match (a[..sa].chars().next_back(), b[..sb].chars().next_back()) {
            (Some(x), Some(y)) if x == y && ((mark(x) && !closes(x)) || x == ' ' || x == '\t') => {
                sa -= x.len_utf8();
                sb -= x.len_utf8();
                n += 1;
                if mark(x) {
                    (ra.start, rb.start) = (sa, sb);
                }
            }
            _ => break,
        }
    }
    (ra, rb)
}

/// The sentences that `r` touches.
fn touched(sentences: &[Range<usize>], r: &Range<usize>) -> Range<usize> {
    let first = sentences.partition_point(|s| s.end <= r.start);
    let last = sentences.partition_point(|s| s.start < r.end);
    first..last.max(first)
}
