//! Aligning two texts at hand: candidate windows, then sentences matched
//! by word Jaccard, joined into spans.

use std::collections::HashMap;
use std::ops::Range;

use serde::Serialize;

use super::scan::close_pairs;
use super::windows::PassageDoc;
use crate::config::{presets, PassageConfig};
use crate::radius::Radius;
use crate::similarity::FeatureSet;
use crate::Fingerprinter;

/// A copied span: sentences of A and the sentences of B they match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    /// Bytes of A: the first matched sentence's start to the last one's end.
    pub a: Range<usize>,
    /// Bytes of B, likewise.
    pub b: Range<usize>,
    /// A's sentences in the span.
    pub a_sentences: Range<usize>,
    /// B's sentences in the span.
    pub b_sentences: Range<usize>,
    /// The smallest Hamming distance between windows that found it.
    pub distance: u32,
    /// The characters of A's sentences in the span.
    pub matched_chars: usize,
}

/// The passages of A found in B.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Alignment {
    /// The copied spans, in A's order.
    pub spans: Vec<Span>,
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

/// Finds the passages of one document copied in another. Defaults:
/// windows within [`pair_radius`] (k = 12 on 64 bits: windows are only
/// candidates, their sentences are verified), [`PassageConfig::default`],
/// sentence word Jaccard ≥ 0.5, spans of at least 6 words.
#[derive(Clone, Debug)]
pub struct Aligner {
    fingerprinter: Fingerprinter,
    radius: Radius,
    passages: PassageConfig,
    min_jaccard: f64,
    min_words: usize,
}

/// The radius for comparing the windows of two texts at hand: k = 12 on 64
/// bits, 24 on 128. Wider than a document radius because every candidate is
/// verified sentence by sentence; random windows still almost never collide
/// (P(d ≤ 12) ≈ 2·10⁻⁷ for unrelated 64-bit fingerprints).
pub fn pair_radius(bits: crate::Bits) -> Radius {
    Radius::fixed(12 * bits.get() / 64)
}

/// The radius for finding windows in an index of passages, where nothing is
/// verified: k = 3 on 64 bits (6 on 128). Windows are short (two sentences),
/// and at k = 8 unrelated windows collide often (measured with
/// `bench/report_accuracy.py --against`: docs/QUALITY.md); a copied window
/// is at distance 0 to 3.
pub fn index_radius(bits: crate::Bits) -> Radius {
    Radius::fixed(presets::classic_k(bits))
}

impl Aligner {
    /// An aligner with the defaults.
    pub fn new(fingerprinter: Fingerprinter) -> Aligner {
        let radius = pair_radius(fingerprinter.bits());
        Aligner { fingerprinter, radius, passages: PassageConfig::default(), min_jaccard: 0.5, min_words: 6 }
    }

    /// Sets the fewest words (distinct per sentence, summed) a span must have.
    pub fn min_words(mut self, n: usize) -> Aligner {
        self.min_words = n;
        self
    }

    /// Sets the radius windows are compared with.
    pub fn radius(mut self, radius: Radius) -> Aligner {
        self.radius = radius;
        self
    }

    /// Sets how documents are cut into passages.
    pub fn passages(mut self, cfg: PassageConfig) -> Aligner {
        self.passages = cfg;
        self
    }

    /// Sets the word Jaccard at which two sentences of matched windows match.
    pub fn min_jaccard(mut self, t: f64) -> Aligner {
        self.min_jaccard = t;
        self
    }

    /// The pipeline.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// The radius.
    pub fn radius_in_use(&self) -> &Radius {
        &self.radius
    }

    /// The word Jaccard at which sentences match.
    pub fn jaccard_in_use(&self) -> f64 {
        self.min_jaccard
    }

    /// The passage configuration.
    pub fn passage_config(&self) -> &PassageConfig {
        &self.passages
    }

    /// Splits and fingerprints a document.
    pub fn doc(&self, text: &str) -> PassageDoc {
        PassageDoc::new(&self.fingerprinter, text, &self.passages)
    }

    /// The passages of `a` found in `b`.
    pub fn align(&self, a: &str, b: &str) -> Alignment {
        let (da, db) = (self.doc(a), self.doc(b));
        self.align_docs(a, &da, b, &db)
    }

    /// [`Aligner::align`] on documents already split and fingerprinted.
    pub fn align_docs(&self, a: &str, da: &PassageDoc, b: &str, db: &PassageDoc) -> Alignment {
        let mut wa = Words::new(&self.fingerprinter, a, &da.sentences);
        let mut wb = Words::new(&self.fingerprinter, b, &db.sentences);
        let mut matches = self.sentence_matches(da, db, &mut wa, &mut wb);
        let mut spans = chain(&mut matches, &mut wa, &mut wb);
        self.extend(&mut spans, &mut wa, &mut wb);
        let joined = join(spans, &mut wa, &mut wb);
        self.measure(joined, (a, da), (b, db), &mut wa)
    }

    /// Steps 1 and 2: the candidate windows (every pair within the radius),
    /// then the sentence matches inside them: an A sentence → (B sentence,
    /// smallest window distance, word Jaccard).
    fn sentence_matches(
        &self,
        da: &PassageDoc,
        db: &PassageDoc,
        wa: &mut Words<'_>,
        wb: &mut Words<'_>,
    ) -> HashMap<usize, Vec<(usize, u32, f64)>> {
        let candidates =
            close_pairs(&da.passages, &db.passages, self.radius.max_k()).into_iter().filter(|&(i, j, d)| {
                d <= self.radius.k_for_pair(da.passages[i].features, db.passages[j].features)
            });
        let mut matches: HashMap<usize, Vec<(usize, u32, f64)>> = HashMap::new();
        let mut checked: HashMap<(usize, usize), f64> = HashMap::new();
        for (i, j, d) in candidates {
            for s in da.passages[i].passage.sentences.clone() {
                for t in db.passages[j].passage.sentences.clone() {
                    let jac = *checked.entry((s, t)).or_insert_with(|| wa.jaccard(s, wb, t));
                    if jac >= self.min_jaccard {
                        let m = matches.entry(s).or_default();
                        match m.iter_mut().find(|e| e.0 == t) {
                            Some(e) => e.1 = e.1.min(d),
                            None => m.push((t, d, jac)),
                        }
                    }
                }
            }
        }
        matches
    }

    /// Step 4: extends each span over neighbouring sentences that match each
    /// other (short sentences at a copy's edges fall outside every window
    /// that lies wholly inside it).
    fn extend(&self, spans: &mut [Span], wa: &mut Words<'_>, wb: &mut Words<'_>) {
        for i in 0..spans.len() {
            let a_limit = spans.get(i + 1).map_or(wa.sentences.len(), |n| n.a_sentences.start);
            let a_floor = if i == 0 { 0 } else { spans[i - 1].a_sentences.end };
            let sp = &mut spans[i];
            while let (Some(s), Some(t)) = (
                wa.next_worded(sp.a_sentences.end, a_limit),
                wb.next_worded(sp.b_sentences.end, wb.sentences.len()),
            ) {
                if wa.jaccard(s, wb, t) < self.min_jaccard {
                    break;
                }
                sp.a_sentences.end = s + 1;
                sp.b_sentences.end = t + 1;
            }
            while let (Some(s), Some(t)) =
                (wa.prev_worded(sp.a_sentences.start, a_floor), wb.prev_worded(sp.b_sentences.start, 0))
            {
                if wa.jaccard(s, wb, t) < self.min_jaccard {
                    break;
                }
                sp.a_sentences.start = s;
                sp.b_sentences.start = t;
            }
        }
    }

    /// Step 5: bytes and characters. Every sentence inside a span counts (the
    /// wordless ones bridged too); B's sentences serving several spans count
    /// once; spans with fewer than `min_words` words are dropped.
    fn measure(
        &self,
        spans: Vec<Span>,
        (a, da): (&str, &PassageDoc),
        (b, db): (&str, &PassageDoc),
        wa: &mut Words<'_>,
    ) -> Alignment {
        let chars = |text: &str, r: &Range<usize>| text[r.clone()].chars().count();
        let mut out = Alignment { a_chars: da.chars(a), b_chars: db.chars(b), ..Alignment::default() };
        let mut b_used = vec![false; db.sentences.len()];
        for mut span in spans {
            let words: usize = span.a_sentences.clone().map(|s| wa.get(s).len()).sum();
            if words < self.min_words {
                continue;
            }
            span.a = da.sentences[span.a_sentences.start].start..da.sentences[span.a_sentences.end - 1].end;
            span.b = db.sentences[span.b_sentences.start].start..db.sentences[span.b_sentences.end - 1].end;
            span.matched_chars = span.a_sentences.clone().map(|s| chars(a, &da.sentences[s])).sum();
            out.a_matched_chars += span.matched_chars;
            for t in span.b_sentences.clone() {
                if !std::mem::replace(&mut b_used[t], true) {
                    out.b_matched_chars += chars(b, &db.sentences[t]);
                }
            }
            out.spans.push(span);
        }
        out
    }
}

/// Step 3: chains matched sentences that follow each other in both texts
/// into spans.
fn chain(
    matches: &mut HashMap<usize, Vec<(usize, u32, f64)>>,
    wa: &mut Words<'_>,
    wb: &mut Words<'_>,
) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut last_b = 0;
    for s in 0..wa.sentences.len() {
        let Some(m) = matches.get_mut(&s) else { continue };
        m.sort_unstable_by_key(|e| e.0);
        let next = spans
            .last()
            .filter(|sp| wa.only_wordless(sp.a_sentences.end..s))
            .and_then(|sp| {
                let gap = sp.b_sentences.end..=sp.b_sentences.end + 3;
                m.iter().find(|e| gap.contains(&e.0) && wb.only_wordless(sp.b_sentences.end..e.0))
            })
            .copied();
        match next {
            Some((t, d, _)) => {
                let sp = spans.last_mut().expect("continued");
                sp.a_sentences.end = s + 1;
                sp.b_sentences.end = sp.b_sentences.end.max(t + 1);
                sp.distance = sp.distance.min(d);
            }
            None => {
                // A new span at the best match; among equals, the first one
                // after the previous span keeps the texts in order.
                let (t, d, _) = *m
                    .iter()
                    .max_by(|x, y| {
                        x.2.total_cmp(&y.2).then((x.0 >= last_b).cmp(&(y.0 >= last_b))).then(y.0.cmp(&x.0))
                    })
                    .expect("non-empty");
                spans.push(Span {
                    a: 0..0,
                    b: 0..0,
                    a_sentences: s..s + 1,
                    b_sentences: t..t + 1,
                    distance: d,
                    matched_chars: 0,
                });
            }
        }
        last_b = spans.last().expect("a span").b_sentences.end;
    }
    spans
}

/// Step 4, continued: joins spans that meet in both texts (only wordless
/// sentences between them).
fn join(spans: Vec<Span>, wa: &mut Words<'_>, wb: &mut Words<'_>) -> Vec<Span> {
    let mut joined: Vec<Span> = Vec::with_capacity(spans.len());
    for sp in spans {
        if let Some(last) = joined.last_mut() {
            let a_meets = wa.only_wordless(last.a_sentences.end..sp.a_sentences.start);
            let b_meets = sp.b_sentences.start >= last.b_sentences.end
                && wb.only_wordless(last.b_sentences.end..sp.b_sentences.start);
            if a_meets && b_meets {
                last.a_sentences.end = sp.a_sentences.end;
                last.b_sentences.end = sp.b_sentences.end;
                last.distance = last.distance.min(sp.distance);
                continue;
            }
        }
        joined.push(sp);
    }
    joined
}

/// The word sets of a document's sentences, computed when first asked for.
pub(super) struct Words<'t> {
    fingerprinter: &'t Fingerprinter,
    text: &'t str,
    sentences: &'t [Range<usize>],
    sets: Vec<Option<FeatureSet>>,
}

impl<'t> Words<'t> {
    fn new(fingerprinter: &'t Fingerprinter, text: &'t str, sentences: &'t [Range<usize>]) -> Words<'t> {
        Words { fingerprinter, text, sentences, sets: vec![None; sentences.len()] }
    }

    fn get(&mut self, s: usize) -> &FeatureSet {
        let (fingerprinter, text, r) = (self.fingerprinter, self.text, &self.sentences[s]);
        self.sets[s].get_or_insert_with(|| FeatureSet::shingles(fingerprinter, &text[r.clone()], 1))
    }

    fn wordless(&mut self, s: usize) -> bool {
        self.get(s).is_empty()
    }

    /// Whether every sentence in `r` has no words (true for an empty range).
    fn only_wordless(&mut self, r: Range<usize>) -> bool {
        r.into_iter().all(|s| self.wordless(s))
    }

    /// Word Jaccard of sentence `s` here and `t` of `other` (0 if either has no words).
    fn jaccard(&mut self, s: usize, other: &mut Words<'_>, t: usize) -> f64 {
        let y = other.get(t);
        let x = self.get(s);
        if x.is_empty() || y.is_empty() {
            0.0
        } else {
            x.jaccard(y)
        }
    }

    /// The first sentence with words in `from..limit`.
    fn next_worded(&mut self, from: usize, limit: usize) -> Option<usize> {
        (from..limit).find(|&s| !self.wordless(s))
    }

    /// The last sentence with words in `floor..before`.
    fn prev_worded(&mut self, before: usize, floor: usize) -> Option<usize> {
        (floor..before).rev().find(|&s| !self.wordless(s))
    }
}
