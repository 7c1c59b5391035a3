//! Passage-level near duplicates: which parts of one document are copied
//! from another.
//!
//! A document is split into sentences ([`sentences`]: Chinese and English
//! rules), and the sentences are grouped into overlapping windows
//! ([`passages`]: one window starting at each sentence, `window` sentences
//! long and at least `min_chars` characters). Each window is fingerprinted
//! with the pipeline. Windows of A and B within the radius are candidates;
//! inside each candidate pair, sentences are matched by word Jaccard, which
//! puts the boundaries of a copied span on its own sentences rather than on
//! the windows around it ([`Aligner::align`]). Matched sentences that follow
//! each other in both documents form a [`Span`].
//!
//! Against an index of window fingerprints (where the other text is not at
//! hand), [`merge_window_matches`] joins consecutive matched windows into
//! spans; their boundaries are then window-precise.
//!
//! ```
//! use neardup::passage::Aligner;
//! use neardup::Fingerprinter;
//!
//! let copied = "SimHash maps each document to a short fingerprint. Similar documents get \
//!               fingerprints that differ in few bits. An index over permuted tables finds \
//!               them without a full scan. This makes deduplication of web crawls cheap.";
//! let a = format!("Our report starts here. It talks about the weather today. {copied} The end.");
//! let b = format!("Cooking rice takes twenty minutes. {copied} Add salt to taste.");
//! let aligner = Aligner::new(Fingerprinter::preset("default")?);
//! let found = aligner.align(&a, &b);
//! assert_eq!(found.spans.len(), 1);
//! assert_eq!(&a[found.spans[0].a.clone()], copied);
//! assert_eq!(&b[found.spans[0].b.clone()], copied);
//! assert!(found.similarity() > 0.7 && found.similarity() < 0.9);
//! # Ok::<(), neardup::Error>(())
//! ```

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::presets::{self, Radius};
use crate::similarity::FeatureSet;
use crate::{Fingerprint, Fingerprinter};

/// How documents are cut into passages. Defaults: windows of 2 sentences,
/// at least 40 characters; sentences longer than 400 characters are cut
/// (measured: `bench/report_accuracy.py`, docs/QUALITY.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassageConfig {
    /// Sentences per window (at least 1).
    pub window: usize,
    /// A window shorter than this many characters takes in more sentences.
    pub min_chars: usize,
    /// Sentences longer than this many characters are cut (at a space when
    /// there is one), so a text without punctuation still gets passages.
    pub max_sentence_chars: usize,
}

impl Default for PassageConfig {
    fn default() -> PassageConfig {
        PassageConfig { window: 2, min_chars: 40, max_sentence_chars: 400 }
    }
}

/// Characters that end a sentence wherever they appear.
fn is_hard_stop(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '；' | '…' | '．' | '｡')
}

/// Whether the line break at byte `i` ends a sentence. A blank line always
/// does; a single line break does unless it looks like hard wrapping inside
/// a sentence: a letter, digit, comma-like mark or ideograph before it and a
/// lower-case letter or ideograph after it.
fn line_break_ends(text: &str, i: usize) -> bool {
    let after = text[i + 1..].trim_start_matches([' ', '\t', '\r', '\u{3000}']);
    let Some(next) = after.chars().next() else { return true };
    if next == '\n' {
        return true;
    }
    let before = text[..i].trim_end_matches([' ', '\t', '\r', '\u{3000}']);
    let Some(prev) = before.chars().next_back() else { return true };
    let continues_from = prev.is_alphanumeric()
        || matches!(prev, ',' | ';' | ':' | '-' | '–' | '—' | '(' | '，' | '、' | '：' | '（');
    let continues_to = next.is_lowercase() || (is_cjk(next) && next.is_alphanumeric());
    !(continues_from && continues_to)
}

/// Characters that close a sentence after its stop: quotes and brackets.
fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '）' | '】' | '」' | '』' | '》' | '〉' | '”' | '’' | '»')
}

/// Words whose trailing period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "cf", "no", "fig", "al",
    "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "u.s", "a.m", "p.m", "approx", "dept", "est", "vol", "pp",
];

/// Whether the `!` or `?` at byte `i` ends a sentence: followed by
/// whitespace, the end, a closer or a CJK character (not `<!--`, `?x=1`).
fn mark_ends(text: &str, i: usize) -> bool {
    let next = text[i + 1..].trim_start_matches(|c| is_closer(c) || c == '!' || c == '?').chars().next();
    next.is_none_or(|c| c.is_whitespace() || is_cjk(c))
}

/// Whether the `.` at byte `i` of `text` ends a sentence: it must be
/// followed by whitespace, the end, or a CJK character, and not end an
/// abbreviation or an initial ("J. Smith").
fn period_ends(text: &str, i: usize) -> bool {
    let after = &text[i + 1..];
    let next = after.trim_start_matches(is_closer).chars().next();
    match next {
        None => return true,
        Some(c) if c.is_whitespace() || is_cjk(c) => {}
        Some(_) => return false,
    }
    // The word before the period: at most a few characters back (the
    // abbreviations are short), so this stays linear on any input.
    let mut word_start = i;
    for (j, c) in text[..i].char_indices().rev().take(8) {
        if c.is_whitespace() || is_closer(c) || c == '(' {
            break;
        }
        word_start = j;
    }
    let word = &text[word_start..i];
    if word.chars().count() == 1 && word.chars().all(char::is_uppercase) {
        return false; // an initial
    }
    let lower = word.to_lowercase();
    !ABBREVIATIONS.contains(&lower.as_str())
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// The sentences of `text` as byte ranges, in order, trimmed of
/// whitespace; empty ones are left out.
///
/// A sentence ends at `。！？；…!?`, a blank line, a line break that does
/// not look like hard wrapping inside a sentence, or a `.` followed by
/// whitespace (not after an abbreviation such as "Dr." or an initial),
/// together with the quotes and brackets that close it; sentences longer
/// than `max_chars` characters are cut at the last space before the limit
/// (or at the limit). Offsets always fall on character boundaries.
pub fn sentences(text: &str, max_chars: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let stop = is_hard_stop(c)
            || (c == '.' && period_ends(text, i))
            || (matches!(c, '!' | '?') && mark_ends(text, i))
            || (c == '\n' && line_break_ends(text, i));
        if !stop {
            continue;
        }
        let mut end = i + c.len_utf8();
        // Runs of stops ("?!", "……") and the closers after them (not after a
        // line break, where a quote opens the next sentence; an ASCII quote
        // closes only when followed by a space, a stop or the end).
        while let Some(&(j, d)) = iter.peek() {
            let closes = is_closer(d)
                && c != '\n'
                && (!matches!(d, '"' | '\'')
                    || text[j + 1..]
                        .chars()
                        .next()
                        .is_none_or(|x| x.is_whitespace() || is_hard_stop(x) || is_closer(x)));
            if (c != '\n' && (is_hard_stop(d) || matches!(d, '.' | '!' | '?'))) || closes {
                end = j + d.len_utf8();
                iter.next();
            } else {
                break;
            }
        }
        push_sentence(text, start..end, max_chars.max(1), &mut out);
        start = end;
    }
    push_sentence(text, start..text.len(), max_chars.max(1), &mut out);
    out
}

/// Trims a range and cuts it into pieces of at most `max_chars` characters.
fn push_sentence(text: &str, r: Range<usize>, max_chars: usize, out: &mut Vec<Range<usize>>) {
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start().len();
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return;
    }
    let mut start = r.start + lead;
    let end = start + trimmed.len();
    loop {
        let rest = &text[start..end];
        let Some((cut, _)) = rest.char_indices().nth(max_chars) else {
            out.push(start..end);
            return;
        };
        let at = rest[..cut].rfind(char::is_whitespace).filter(|&p| p > 0).unwrap_or(cut);
        let piece = &rest[..at];
        out.push(start..start + piece.trim_end().len());
        let next = &rest[at..];
        start += at + (next.len() - next.trim_start().len());
    }
}

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
    pub fn new(fp: &Fingerprinter, text: &str, cfg: &PassageConfig) -> PassageDoc {
        let sentences = sentences(text, cfg.max_sentence_chars);
        let passages = passages(text, &sentences, cfg)
            .into_par_iter()
            .map(|p| {
                let (fingerprint, features) = fp.fingerprint_counted(&text[p.bytes.clone()]);
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

fn share(n: usize, total: usize) -> f64 {
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
    fp: Fingerprinter,
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
    pub fn new(fp: Fingerprinter) -> Aligner {
        let radius = pair_radius(fp.bits());
        Aligner { fp, radius, passages: PassageConfig::default(), min_jaccard: 0.5, min_words: 6 }
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
        &self.fp
    }

    /// The radius.
    pub fn radius_in_use(&self) -> &Radius {
        &self.radius
    }

    /// The passage configuration.
    pub fn passage_config(&self) -> &PassageConfig {
        &self.passages
    }

    /// Splits and fingerprints a document.
    pub fn doc(&self, text: &str) -> PassageDoc {
        PassageDoc::new(&self.fp, text, &self.passages)
    }

    /// The passages of `a` found in `b`.
    pub fn align(&self, a: &str, b: &str) -> Alignment {
        let (da, db) = (self.doc(a), self.doc(b));
        self.align_docs(a, &da, b, &db)
    }

    /// [`Aligner::align`] on documents already split and fingerprinted.
    pub fn align_docs(&self, a: &str, da: &PassageDoc, b: &str, db: &PassageDoc) -> Alignment {
        // 1. Candidate windows: every pair within the radius.
        let max_k = self.radius.max_k();
        let candidates: Vec<(usize, usize, u32)> = close_pairs(&da.passages, &db.passages, max_k)
            .into_iter()
            .filter(|&(i, j, d)| {
                d <= self.radius.k_for_pair(da.passages[i].features, db.passages[j].features)
            })
            .collect();
        let mut wa = Words::new(&self.fp, a, &da.sentences);
        let mut wb = Words::new(&self.fp, b, &db.sentences);
        // 2. Sentence matches inside candidate windows: a sentence → (b
        //    sentence, window distance, Jaccard).
        let mut matches: HashMap<usize, Vec<(usize, u32, f64)>> = HashMap::new();
        let mut checked: HashMap<(usize, usize), f64> = HashMap::new();
        for &(i, j, d) in &candidates {
            for s in da.passages[i].passage.sentences.clone() {
                for t in db.passages[j].passage.sentences.clone() {
                    let jac = *checked.entry((s, t)).or_insert_with(|| wa.jaccard(s, &mut wb, t));
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
        // 3. Chains: matched sentences that follow each other in both texts.
        let mut spans: Vec<Span> = Vec::new();
        let mut last_b = 0;
        for s in 0..da.sentences.len() {
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
                    // A new span at the best match; among equals, the first
                    // one after the previous span keeps the texts in order.
                    let (t, d, _) = *m
                        .iter()
                        .max_by(|x, y| {
                            x.2.total_cmp(&y.2)
                                .then((x.0 >= last_b).cmp(&(y.0 >= last_b)))
                                .then(y.0.cmp(&x.0))
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
        // 4. Extend each span over neighbouring sentences that match each
        //    other (short sentences at a copy's edges fall outside every
        //    window that lies wholly inside it), then join spans that meet.
        for i in 0..spans.len() {
            let a_limit = spans.get(i + 1).map_or(da.sentences.len(), |n| n.a_sentences.start);
            let a_floor = if i == 0 { 0 } else { spans[i - 1].a_sentences.end };
            let sp = &mut spans[i];
            while let (Some(s), Some(t)) = (
                wa.next_worded(sp.a_sentences.end, a_limit),
                wb.next_worded(sp.b_sentences.end, db.sentences.len()),
            ) {
                if wa.jaccard(s, &mut wb, t) < self.min_jaccard {
                    break;
                }
                sp.a_sentences.end = s + 1;
                sp.b_sentences.end = t + 1;
            }
            while let (Some(s), Some(t)) =
                (wa.prev_worded(sp.a_sentences.start, a_floor), wb.prev_worded(sp.b_sentences.start, 0))
            {
                if wa.jaccard(s, &mut wb, t) < self.min_jaccard {
                    break;
                }
                sp.a_sentences.start = s;
                sp.b_sentences.start = t;
            }
        }
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
        // 5. Bytes and characters: every sentence inside a span counts (the
        //    wordless ones bridged too); B's sentences serving several spans
        //    count once.
        let chars = |text: &str, r: &Range<usize>| text[r.clone()].chars().count();
        let mut out = Alignment { a_chars: da.chars(a), b_chars: db.chars(b), ..Alignment::default() };
        let mut b_used = vec![false; db.sentences.len()];
        for mut span in joined {
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

/// Every pair of windows within `k` bits: (a window, b window, distance).
/// A brute-force scan (in parallel over A, with the CPU's popcount when it
/// has one): about a nanosecond per pair, 1.4·10⁹ pairs for two 1 MB
/// Chinese texts.
fn close_pairs(a: &[FingerprintedPassage], b: &[FingerprintedPassage], k: u32) -> Vec<(usize, usize, u32)> {
    let bv: Vec<u128> = b.iter().map(|p| p.fingerprint.value()).collect();
    let wide = b.iter().chain(a).any(|p| p.fingerprint.as_u64().is_none());
    let b64: Vec<u64> = if wide { Vec::new() } else { bv.iter().map(|&v| v as u64).collect() };
    a.par_iter()
        .enumerate()
        .flat_map_iter(|(i, pa)| {
            let mut hits = Vec::new();
            let q = pa.fingerprint.value();
            if wide {
                for (j, &v) in bv.iter().enumerate() {
                    let d = (q ^ v).count_ones();
                    if d <= k {
                        hits.push((i, j, d));
                    }
                }
            } else {
                scan64(q as u64, &b64, k, |j, d| hits.push((i, j, d)));
            }
            if hits.len() > MAX_CANDIDATES {
                // Repetitive text (logs, tables, a refrain) makes every window
                // a candidate of every other: keep the closest ones, so the
                // work stays linear in the windows of A.
                // Among equals, the windows nearest A's position (scaled to B).
                let here = i * b.len() / a.len().max(1);
                hits.sort_unstable_by_key(|&(_, j, d)| (d, j.abs_diff(here), j));
                hits.truncate(MAX_CANDIDATES);
                hits.sort_unstable_by_key(|&(_, j, _)| j);
            }
            hits
        })
        .collect()
}

/// The most candidate windows of B kept for one window of A.
const MAX_CANDIDATES: usize = 32;

/// Calls `hit(j, d)` for every `b[j]` within `k` bits of `q`.
fn scan64(q: u64, b: &[u64], k: u32, hit: impl FnMut(usize, u32)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has popcnt, checked just above.
        return unsafe { scan64_popcnt(q, b, k, hit) };
    }
    scan64_portable(q, b, k, hit)
}

#[inline(always)]
fn scan64_portable(q: u64, b: &[u64], k: u32, mut hit: impl FnMut(usize, u32)) {
    for (j, &v) in b.iter().enumerate() {
        let d = (q ^ v).count_ones();
        if d <= k {
            hit(j, d);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn scan64_popcnt(q: u64, b: &[u64], k: u32, hit: impl FnMut(usize, u32)) {
    scan64_portable(q, b, k, hit)
}

/// The word sets of a document's sentences, computed when first asked for.
struct Words<'t> {
    fp: &'t Fingerprinter,
    text: &'t str,
    sentences: &'t [Range<usize>],
    sets: Vec<Option<FeatureSet>>,
}

impl<'t> Words<'t> {
    fn new(fp: &'t Fingerprinter, text: &'t str, sentences: &'t [Range<usize>]) -> Words<'t> {
        Words { fp, text, sentences, sets: vec![None; sentences.len()] }
    }

    fn get(&mut self, s: usize) -> &FeatureSet {
        let (fp, text, r) = (self.fp, self.text, &self.sentences[s]);
        self.sets[s].get_or_insert_with(|| FeatureSet::shingles(fp, &text[r.clone()], 1))
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

/// A window of A that matched an indexed window of another document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowMatch {
    /// The window of A (index into A's passages).
    pub window: usize,
    /// The other document (any key the caller uses).
    pub target: usize,
    /// The bytes of the indexed window in the other document.
    pub bytes: Range<usize>,
    /// The Hamming distance.
    pub distance: u32,
}

/// A span of A found in an indexed document, to window precision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexedSpan {
    /// The other document (the caller's key).
    pub target: usize,
    /// Bytes of A: the union of the matched windows.
    pub a: Range<usize>,
    /// Bytes of the other document: the union of the windows they matched.
    pub b: Range<usize>,
    /// The smallest distance among the windows.
    pub distance: u32,
    /// How many matched windows of A it joins.
    pub windows: usize,
}

/// Joins matched windows of A into spans, per target document: windows
/// whose A bytes overlap or touch, matching windows of the same document
/// that overlap or follow within a window's length, become one span.
pub fn merge_window_matches(doc: &PassageDoc, mut matches: Vec<WindowMatch>) -> Vec<IndexedSpan> {
    matches.sort_by_key(|m| (m.target, doc.passages[m.window].passage.bytes.start, m.bytes.start));
    let mut out: Vec<IndexedSpan> = Vec::new();
    let mut last_window = None;
    for m in matches {
        let a = doc.passages[m.window].passage.bytes.clone();
        if let Some(last) = out.last_mut() {
            let b_len = m.bytes.end - m.bytes.start;
            if last.target == m.target
                && a.start <= last.a.end
                && m.bytes.start + b_len >= last.b.start
                && m.bytes.start <= last.b.end + b_len
            {
                last.a.end = last.a.end.max(a.end);
                last.b.start = last.b.start.min(m.bytes.start);
                last.b.end = last.b.end.max(m.bytes.end);
                last.distance = last.distance.min(m.distance);
                if last_window != Some(m.window) {
                    last.windows += 1;
                }
                last_window = Some(m.window);
                continue;
            }
        }
        last_window = Some(m.window);
        out.push(IndexedSpan { target: m.target, a, b: m.bytes, distance: m.distance, windows: 1 });
    }
    out
}

/// The characters of `text` covered by the union of `ranges`, counting only
/// characters inside `sentences` (whitespace between sentences is not text).
pub fn covered_chars(text: &str, sentences: &[Range<usize>], ranges: &[Range<usize>]) -> usize {
    let mut rs: Vec<Range<usize>> = ranges.to_vec();
    rs.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in rs {
        match merged.last_mut() {
            Some(m) if r.start <= m.end => m.end = m.end.max(r.end),
            _ => merged.push(r),
        }
    }
    sentences
        .iter()
        .map(|s| {
            merged
                .iter()
                .map(|m| {
                    let (lo, hi) = (s.start.max(m.start), s.end.min(m.end));
                    if lo < hi {
                        text[lo..hi].chars().count()
                    } else {
                        0
                    }
                })
                .sum::<usize>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        sentences(text, 400).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn english_sentences() {
        assert_eq!(
            texts("Dr. Smith met J. R. Jones at 3.15 p.m. yesterday.  \"Really?!\" he asked. It was (nearly) over.\nNew line"),
            vec![
                "Dr. Smith met J. R. Jones at 3.15 p.m. yesterday.",
                "\"Really?!\"",
                "he asked.",
                "It was (nearly) over.",
                "New line"
            ]
        );
        assert_eq!(
            texts("One.\n\n\"Two\" three. 'Four' five."),
            vec!["One.", "\"Two\" three.", "'Four' five."]
        );
        assert_eq!(texts("Say \"hi.\" Then"), vec!["Say \"hi.\"", "Then"]);
        assert_eq!(texts("<!-- x --> Why?Because. Go!"), vec!["<!-- x --> Why?Because.", "Go!"]);
        assert_eq!(texts("e.g. this, i.e. that. Done"), vec!["e.g. this, i.e. that.", "Done"]);
        assert!(texts("  \n\n  ").is_empty());
        assert!(texts("").is_empty());
    }

    #[test]
    fn chinese_sentences() {
        assert_eq!(
            texts("今天天气很好。我们去公园吧！你来吗？“好的。”他说……然后走了；再见"),
            vec!["今天天气很好。", "我们去公园吧！", "你来吗？", "“好的。”", "他说……", "然后走了；", "再见"]
        );
        assert_eq!(texts("版本3.0发布了.接着"), vec!["版本3.0发布了.", "接着"]);
    }

    #[test]
    fn long_sentences_are_cut_on_char_boundaries() {
        let text = "词".repeat(1000);
        let s = sentences(&text, 400);
        assert_eq!(
            s.iter().map(|r| text[r.clone()].chars().count()).collect::<Vec<_>>(),
            vec![400, 400, 200]
        );
        let words = "word ".repeat(300);
        let s = sentences(&words, 100);
        assert!(s.iter().all(|r| words[r.clone()].chars().count() <= 100), "{s:?}");
        assert!(s.iter().all(|r| words[r.clone()].starts_with("word") && words[r.clone()].ends_with("word")));
        assert_eq!(s.iter().map(|r| words[r.clone()].split(' ').count()).sum::<usize>(), 300);
    }

    #[test]
    fn windows_cover_every_sentence_and_respect_min_chars() {
        let text = "One two three. Four five. Six. Seven eight nine ten. Eleven.";
        let s = sentences(text, 400);
        let cfg = PassageConfig { window: 2, min_chars: 0, ..PassageConfig::default() };
        let p = passages(text, &s, &cfg);
        assert_eq!(p.iter().map(|p| p.sentences.clone()).collect::<Vec<_>>(), vec![0..2, 1..3, 2..4, 3..5]);
        let cfg = PassageConfig { window: 2, min_chars: 30, ..PassageConfig::default() };
        let p = passages(text, &s, &cfg);
        assert!(p.iter().all(|p| text[p.bytes.clone()].chars().count() >= 30 || p.sentences.end == s.len()));
        let covered: std::collections::BTreeSet<usize> = p.iter().flat_map(|p| p.sentences.clone()).collect();
        assert_eq!(covered.len(), s.len());
        // A document shorter than one window is one passage.
        let short = "Just one sentence.";
        assert_eq!(passages(short, &sentences(short, 400), &PassageConfig::default()).len(), 1);
    }

    #[test]
    fn hard_wrapped_lines_stay_one_sentence() {
        assert_eq!(
            texts("The quick brown\nfox jumps over\n  the dog.\nNext one\n\nparagraph two\n--create\n[-]d"),
            vec![
                "The quick brown\nfox jumps over\n  the dog.",
                "Next one",
                "paragraph two",
                "--create",
                "[-]d"
            ]
        );
        assert_eq!(
            texts("床前明月光，\n疑是地上霜。\n举头望明月\n低头思故乡"),
            vec!["床前明月光，\n疑是地上霜。", "举头望明月\n低头思故乡"]
        );
        assert_eq!(texts("名字\n\n总览\ntar\n<操作参数>"), vec!["名字", "总览\ntar", "<操作参数>"]);
    }

    #[test]
    fn periods_after_multibyte_closers() {
        assert_eq!(texts("He said “no”. Then left."), vec!["He said “no”.", "Then left."]);
        assert_eq!(texts("「好」. 然后"), vec!["「好」.", "然后"]);
    }

    proptest::proptest! {
        #[test]
        fn sentences_are_ordered_trimmed_and_on_boundaries(text in "(\\PC|[.。!?？ \n”’」)]){0,200}", max in 1usize..50) {
            let s = sentences(&text, max);
            let mut prev = 0;
            for r in &s {
                proptest::prop_assert!(prev <= r.start && r.start < r.end && r.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
                let t = &text[r.clone()];
                proptest::prop_assert_eq!(t, t.trim());
                proptest::prop_assert!(t.chars().count() <= max);
                prev = r.end;
            }
            // No text is lost: everything outside the sentences is whitespace.
            let mut covered = vec![false; text.len()];
            for r in &s {
                covered[r.clone()].iter_mut().for_each(|c| *c = true);
            }
            for (i, c) in text.char_indices() {
                proptest::prop_assert!(covered[i] || c.is_whitespace(), "{:?} at {} lost", c, i);
            }
            let cfg = PassageConfig { window: 1 + max % 4, min_chars: max, max_sentence_chars: max };
            for p in passages(&text, &s, &cfg) {
                proptest::prop_assert!(p.sentences.start < p.sentences.end && p.sentences.end <= s.len());
                proptest::prop_assert_eq!(p.bytes.clone(), s[p.sentences.start].start..s[p.sentences.end - 1].end);
            }
        }
    }

    #[test]
    fn sentence_splitting_is_linear_without_spaces() {
        let text = "了.接".repeat(200_000);
        let t = std::time::Instant::now();
        assert_eq!(sentences(&text, 400).len(), 200_001);
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }

    #[test]
    fn close_pairs_equal_brute_force() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let window = |v: u128, bits| FingerprintedPassage {
            passage: Passage { bytes: 0..0, sentences: 0..0 },
            fingerprint: Fingerprint::new(v, bits),
            features: 1,
        };
        for bits in [crate::Bits::B64, crate::Bits::B128] {
            let base = u128::from(next()) | (u128::from(next()) << 64);
            // Near neighbours of one value, so every distance occurs.
            let mut make = |n| {
                (0..n)
                    .map(|_| window(base ^ (u128::from(next() & next() & next()) << (next() % 64)), bits))
                    .collect::<Vec<_>>()
            };
            let (a, b) = (make(60), make(70));
            for k in [0, 3, 12, 40] {
                let mut want = Vec::new();
                for (i, pa) in a.iter().enumerate() {
                    let mut hits = Vec::new();
                    for (j, pb) in b.iter().enumerate() {
                        let d = pa.fingerprint.distance(pb.fingerprint);
                        if d <= k {
                            hits.push((i, j, d));
                        }
                    }
                    // The closest MAX_CANDIDATES, by distance, then nearness to i's place.
                    let here = i * b.len() / a.len();
                    hits.sort_by_key(|&(_, j, d)| (d, j.abs_diff(here), j));
                    hits.truncate(MAX_CANDIDATES);
                    hits.sort_by_key(|&(_, j, _)| j);
                    want.extend(hits);
                }
                assert_eq!(close_pairs(&a, &b, k), want, "{bits:?} k={k}");
                assert!(k < 12 || !want.is_empty());
                if k == 40 {
                    assert!(want.len() == a.len() * MAX_CANDIDATES, "the cap is exercised");
                }
            }
        }
    }

    #[test]
    fn repetitive_text_stays_linear() {
        // Every window is a candidate of every other without the cap.
        let words = ["alpha", "beta", "gamma", "delta", "epsilon"];
        let mut x = 7u64;
        let text: String = (0..40_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                words[(x >> 33) as usize % 5]
            })
            .collect::<Vec<_>>()
            .join(" ");
        let aligner = Aligner::new(Fingerprinter::preset("default").unwrap());
        let found = aligner.align(&text, &text);
        assert_eq!((found.similarity(), found.b_similarity()), (1.0, 1.0));
    }

    #[test]
    fn covered_chars_counts_the_union_inside_sentences() {
        let text = "ab cd ef";
        let s = vec![0..2, 3..5, 6..8];
        assert_eq!(covered_chars(text, &s, &[0..5, 3..8]), 6);
        assert_eq!(covered_chars(text, &s, std::slice::from_ref(&(1..4))), 2);
        assert_eq!(covered_chars(text, &s, &[]), 0);
    }
}
