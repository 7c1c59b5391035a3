//! Removing boilerplate: the units (paragraphs, lines or windows of
//! sentences) that repeat across a corpus — cookie banners, navigation,
//! licence footers, "转载请注明出处" — cut out of the documents that carry
//! them, the rest of each document kept.
//!
//! Two passes over the corpus. The first counts each unit's key
//! ([`Counting`], in bounded memory: [`KeyCounter`] spills sorted runs);
//! the second cleans each document in input order ([`Cleaner`]). Two rules:
//! [`Rule::MinDocs`] removes every occurrence of a unit found in at least N
//! documents; [`Rule::Repeats`] (CCNet's, datatrove's) keeps the first
//! occurrence in the corpus and removes every later one.
//!
//! ```
//! use neardup::clean::{Boilerplate, Rule, Unit};
//!
//! let docs = [
//!     "Rice and beans.\n\nAccept all cookies to continue.",
//!     "A review of trains.\n\nAccept all cookies to continue.",
//!     "Notes on tea.",
//! ];
//! let job = Boilerplate::new(Unit::Paragraph).rule(Rule::MinDocs(2));
//! let mut counting = job.counting(1 << 20, std::env::temp_dir())?;
//! for d in &docs {
//!     counting.add(&job.units(d))?;
//! }
//! let mut cleaner = counting.finish()?;
//! let cleaned: Vec<String> = docs.iter().map(|d| cleaner.clean(d, &job.units(d)).text.into_owned()).collect();
//! assert_eq!(cleaned, ["Rice and beans.", "A review of trains.", "Notes on tea."]);
//! assert_eq!(cleaner.removed_units()[0].text, "Accept all cookies to continue.");
//! # Ok::<(), neardup::Error>(())
//! ```

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::ops::Range;
use std::path::PathBuf;

use hashbrown::{HashMap, HashSet};
use serde::Serialize;

use super::counter::KeyCounter;
use super::units::{unit_key, words_up_to, Unit, MIN_UNIT_WORDS};
use crate::error::{Error, Result};

/// Which repeated units are removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Every occurrence of a unit found in at least this many documents.
    MinDocs(u32),
    /// Every occurrence after the first in the corpus (CCNet's rule).
    Repeats,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rule::MinDocs(n) => write!(f, "in at least {n} documents"),
            Rule::Repeats => f.write_str("every repeat after the first"),
        }
    }
}

/// The boilerplate job's settings. Defaults: paragraphs, in at least 2
/// documents, of at least [`MIN_UNIT_WORDS`] words; a cleaned document
/// with fewer than 1 non-space character left is dropped.
#[derive(Clone, Copy, Debug)]
pub struct Boilerplate {
    unit: Unit,
    rule: Rule,
    min_chars: usize,
    min_words: usize,
}

/// The key of a window too short to count ([`Boilerplate::min_words`]):
/// never counted, never removed. Counted windows' keys have their low bit
/// set, so none is this.
const SHORT: u128 = 0;

/// A document cut into pieces, and the key of each counted window.
#[derive(Clone, Debug, Default)]
pub struct DocUnits {
    /// The pieces' byte spans, in order.
    pub pieces: Vec<Range<usize>>,
    /// The key of each window of pieces: window `i` covers pieces `i ..
    /// i + window` (none when the document has fewer pieces than a window).
    pub keys: Vec<u128>,
}

impl Boilerplate {
    /// Removing repeated `unit`s, with the default rule.
    pub fn new(unit: Unit) -> Boilerplate {
        Boilerplate { unit, rule: Rule::MinDocs(2), min_chars: 1, min_words: MIN_UNIT_WORDS }
    }

    /// Counts and removes only units (windows of units) of at least `n`
    /// words ([`words_up_to`]); 0 or 1 counts every unit. By default,
    /// [`MIN_UNIT_WORDS`].
    pub fn min_words(mut self, n: usize) -> Self {
        self.min_words = n;
        self
    }

    /// Sets the rule.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rule = rule;
        self
    }

    /// Drops a document that lost a unit and has fewer than `n` non-space
    /// characters left.
    pub fn min_chars(mut self, n: usize) -> Self {
        self.min_chars = n;
        self
    }

    /// The unit.
    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// The rule.
    pub fn the_rule(&self) -> Rule {
        self.rule
    }

    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// A minimum of fewer than 2 documents.
    pub fn validate(&self) -> Result<()> {
        match self.rule {
            Rule::MinDocs(n) if n < 2 => {
                Err(Error::Config(format!("--min-docs {n}: a unit is boilerplate in 2 documents or more")))
            }
            _ => Ok(()),
        }
    }

    /// `text` cut into pieces, with its windows' keys.
    pub fn units(&self, text: &str) -> DocUnits {
        let pieces = self.unit.pieces(text);
        let w = self.unit.window();
        let piece_keys: Vec<u128> = pieces.iter().map(|r| unit_key(&text[r.clone()])).collect();
        let words: Vec<usize> =
            pieces.iter().map(|r| words_up_to(&text[r.clone()], self.min_words)).collect();
        let short = |i: usize| words[i..i + w].iter().sum::<usize>() < self.min_words;
        let keys = if piece_keys.len() < w {
            Vec::new()
        } else {
            piece_keys
                .windows(w)
                .enumerate()
                .map(|(i, ks)| {
                    if short(i) {
                        return SHORT;
                    }
                    let key = if w == 1 {
                        ks[0]
                    } else {
                        let bytes: Vec<u8> = ks.iter().flat_map(|k| k.to_le_bytes()).collect();
                        xxhash_rust::xxh3::xxh3_128(&bytes)
                    };
                    key | 1
                })
                .collect()
        };
        DocUnits { pieces, keys }
    }

    /// Starts the counting pass, holding about `memory` bytes of counts
    /// before spilling runs into `dir`. Each document's keys also go to an
    /// unnamed file in `dir`, so the cleaning pass ([`Cleaner::clean_next`])
    /// cuts only the documents that lose something into units again.
    ///
    /// # Errors
    ///
    /// The file cannot be created.
    pub fn counting(&self, memory: u64, dir: PathBuf) -> Result<Counting> {
        let log = tempfile::tempfile_in(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Counting {
            job: *self,
            counter: KeyCounter::new(memory, dir.clone()),
            documents: 0,
            log: BufWriter::with_capacity(1 << 20, log),
            dir,
        })
    }
}

/// The counting pass: every document's windows, in any order.
#[derive(Debug)]
pub struct Counting {
    job: Boilerplate,
    counter: KeyCounter,
    documents: u64,
    log: BufWriter<File>,
    dir: PathBuf,
}

impl Counting {
    /// Counts one document's windows (once per document for
    /// [`Rule::MinDocs`], every occurrence for [`Rule::Repeats`]).
    ///
    /// # Errors
    ///
    /// A run of counts cannot be written.
    pub fn add(&mut self, units: &DocUnits) -> Result<()> {
        self.documents += 1;
        let io = |e| Error::io(&self.dir, e);
        self.log.write_all(&(units.keys.len() as u32).to_le_bytes()).map_err(io)?;
        for k in &units.keys {
            self.log.write_all(&k.to_le_bytes()).map_err(io)?;
        }
        // Windows too short to count are never counted, so never removed.
        match self.job.rule {
            Rule::MinDocs(_) => {
                let mut keys = units.keys.clone();
                keys.sort_unstable();
                keys.dedup();
                for k in keys.into_iter().filter(|&k| k != SHORT) {
                    self.counter.add(k, 1)?;
                }
            }
            Rule::Repeats => {
                for &k in units.keys.iter().filter(|&&k| k != SHORT) {
                    self.counter.add(k, 1)?;
                }
            }
        }
        Ok(())
    }

    /// Bytes of counts written to runs.
    pub fn spilled_bytes(&self) -> u64 {
        self.counter.spilled_bytes()
    }

    /// Ends the count: the cleaner of the second pass.
    ///
    /// # Errors
    ///
    /// A run cannot be read back.
    pub fn finish(self) -> Result<Cleaner> {
        let min = match self.job.rule {
            Rule::MinDocs(n) => n,
            Rule::Repeats => 2,
        };
        let spilled = self.counter.spilled_bytes();
        let dir = self.dir;
        let mut log = self.log.into_inner().map_err(|e| Error::io(&dir, e.into_error()))?;
        log.rewind().map_err(|e| Error::io(&dir, e))?;
        Ok(Cleaner {
            job: self.job,
            frequent: self.counter.at_least(min)?,
            seen: HashSet::new(),
            removed: HashMap::new(),
            documents: self.documents,
            spilled,
            log: BufReader::with_capacity(1 << 20, log),
            keys: Vec::new(),
            dir,
        })
    }
}

/// A unit that was removed, for the report.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RemovedUnit {
    /// Its text (as first removed; at most 1,000 characters).
    pub text: String,
    /// How many documents held it, by the first pass's count: what
    /// [`Rule::MinDocs`] decides by (`None` under [`Rule::Repeats`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documents: Option<u32>,
    /// How many times it occurred, by the first pass's count: what
    /// [`Rule::Repeats`] decides by (`None` under [`Rule::MinDocs`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurrences: Option<u32>,
    /// How many times it was removed.
    pub removed: u64,
}

/// One document after cleaning.
#[derive(Clone, Debug)]
pub struct Cleaned<'t> {
    /// What is left of the text (the text itself when nothing was removed).
    pub text: Cow<'t, str>,
    /// The byte spans removed from the original text, in order.
    pub removed: Vec<Range<usize>>,
    /// Whether too little is left, so the document is dropped.
    pub dropped: bool,
}

/// The cleaning pass: documents in input order.
#[derive(Debug)]
pub struct Cleaner {
    job: Boilerplate,
    frequent: HashMap<u128, u32>,
    seen: HashSet<u128>,
    removed: HashMap<u128, RemovedUnit>,
    documents: u64,
    spilled: u64,
    log: BufReader<File>,
    keys: Vec<u128>,
    dir: PathBuf,
}

impl Cleaner {
    /// How many distinct units the rule removes (some occurrences of).
    pub fn frequent_units(&self) -> usize {
        self.frequent.len()
    }

    /// Documents counted by the first pass.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// Bytes of counts the first pass wrote to runs.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled
    }

    /// Cleans the next document, `text` with its [`Boilerplate::units`].
    /// (Either this or [`Cleaner::clean_next`] for a whole pass.)
    pub fn clean<'t>(&mut self, text: &'t str, units: &DocUnits) -> Cleaned<'t> {
        let hits = self.decide(&units.keys);
        self.cut(text, units, &hits)
    }

    /// Cleans the next document with the keys the counting pass logged,
    /// cutting `text` into units (`units`) only when it loses something —
    /// the same result as [`Cleaner::clean`].
    ///
    /// # Errors
    ///
    /// The log cannot be read, or `text` is not the document counted (its
    /// units differ): the input changed between the passes.
    pub fn clean_next<'t>(&mut self, text: &'t str, units: impl FnOnce() -> DocUnits) -> Result<Cleaned<'t>> {
        let io = |e| Error::io(&self.dir, e);
        let mut n = [0u8; 4];
        self.log.read_exact(&mut n).map_err(io)?;
        let n = u32::from_le_bytes(n) as usize;
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        let mut b = [0u8; 16];
        for _ in 0..n {
            self.log.read_exact(&mut b).map_err(|e| Error::io(&self.dir, e))?;
            keys.push(u128::from_le_bytes(b));
        }
        let hits = self.decide(&keys);
        let out = if hits.is_empty() {
            Ok(Cleaned { text: Cow::Borrowed(text), removed: Vec::new(), dropped: false })
        } else {
            let units = units();
            if units.keys != keys {
                return Err(Error::Config(
                    "a document differs from the one counted: the input changed while it was read".into(),
                ));
            }
            Ok(self.cut(text, &units, &hits))
        };
        self.keys = keys;
        out
    }

    /// The windows of a document to remove (index, key, count), in order,
    /// marking first occurrences seen (Rule::Repeats).
    fn decide(&mut self, keys: &[u128]) -> Vec<(usize, u128, u32)> {
        let mut hits = Vec::new();
        for (i, &k) in keys.iter().enumerate() {
            let Some(&count) = self.frequent.get(&k) else { continue };
            let remove = match self.job.rule {
                Rule::MinDocs(_) => true,
                Rule::Repeats => !self.seen.insert(k),
            };
            if remove {
                hits.push((i, k, count));
            }
        }
        hits
    }

    /// `text` without the windows `hits`, and the report of what went.
    fn cut<'t>(&mut self, text: &'t str, units: &DocUnits, hits: &[(usize, u128, u32)]) -> Cleaned<'t> {
        if hits.is_empty() {
            return Cleaned { text: Cow::Borrowed(text), removed: Vec::new(), dropped: false };
        }
        let w = self.job.unit.window();
        let p = &units.pieces;
        let mut cut = vec![false; p.len()];
        for &(i, k, count) in hits {
            cut[i..i + w].iter_mut().for_each(|c| *c = true);
            let span = p[i].start..p[i + w - 1].end;
            let by_docs = matches!(self.job.rule, Rule::MinDocs(_));
            let r = self.removed.entry(k).or_insert_with(|| RemovedUnit {
                text: text[span].chars().take(1000).collect(),
                documents: by_docs.then_some(count),
                occurrences: (!by_docs).then_some(count),
                removed: 0,
            });
            r.removed += 1;
        }
        let mut out = String::with_capacity(text.len());
        out.push_str(&text[..p[0].start]);
        let mut removed: Vec<Range<usize>> = Vec::new();
        for i in 0..p.len() {
            let seg = p[i].start..p.get(i + 1).map_or(text.len(), |n| n.start);
            if cut[i] {
                match removed.last_mut() {
                    Some(last) if last.end == seg.start => last.end = seg.end,
                    _ => removed.push(seg),
                }
            } else {
                out.push_str(&text[seg]);
            }
        }
        if cut[p.len() - 1] {
            out.truncate(out.trim_end().len());
        }
        let left = out.chars().filter(|c| !c.is_whitespace()).count();
        Cleaned { text: Cow::Owned(out), removed, dropped: left < self.job.min_chars }
    }

    /// The units removed, most removed first (ties by text).
    pub fn removed_units(&self) -> Vec<RemovedUnit> {
        let mut v: Vec<RemovedUnit> = self.removed.values().cloned().collect();
        v.sort_by(|a, b| b.removed.cmp(&a.removed).then_with(|| a.text.cmp(&b.text)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The same job by brute force: pieces compared by their normalized
    /// text, windows as lists of texts, counts by scanning every document.
    /// [`reference`], counting only windows of at least `min_words` words.
    fn reference_words(
        docs: &[String],
        unit: Unit,
        rule: Rule,
        min_chars: usize,
        min_words: usize,
    ) -> Vec<Option<String>> {
        let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        // A window too short is a text no other window has: never counted.
        let mut short = 0usize;
        let w = unit.window();
        type Windows = Vec<Vec<String>>;
        let windows: Vec<(Vec<Range<usize>>, Windows)> = docs
            .iter()
            .map(|d| {
                let pieces = unit.pieces(d);
                let texts: Vec<String> = pieces.iter().map(|r| norm(&d[r.clone()])).collect();
                let wins = if texts.len() < w {
                    Vec::new()
                } else {
                    texts
                        .windows(w)
                        .map(|x| {
                            let words: usize = x.iter().map(|t| words_up_to(t, usize::MAX)).sum();
                            if words < min_words {
                                short += 1;
                                vec![format!("\u{0}short {short}")]
                            } else {
                                x.to_vec()
                            }
                        })
                        .collect()
                };
                (pieces, wins)
            })
            .collect();
        let mut seen: Vec<Vec<String>> = Vec::new();
        let mut out = Vec::new();
        for (d, (pieces, wins)) in docs.iter().zip(&windows) {
            let mut cut = vec![false; pieces.len()];
            for (i, win) in wins.iter().enumerate() {
                let remove = match rule {
                    Rule::MinDocs(n) => {
                        windows.iter().filter(|(_, ws)| ws.contains(win)).count() >= n as usize
                    }
                    Rule::Repeats => {
                        let total: usize =
                            windows.iter().map(|(_, ws)| ws.iter().filter(|x| *x == win).count()).sum();
                        if total < 2 {
                            false
                        } else if seen.contains(win) {
                            true
                        } else {
                            seen.push(win.clone());
                            false
                        }
                    }
                };
                if remove {
                    cut[i..i + w].iter_mut().for_each(|c| *c = true);
                }
            }
            if !cut.contains(&true) {
                out.push(Some(d.clone()));
                continue;
            }
            let mut s = d[..pieces[0].start].to_string();
            for i in 0..pieces.len() {
                if !cut[i] {
                    s.push_str(&d[pieces[i].start..pieces.get(i + 1).map_or(d.len(), |n| n.start)]);
                }
            }
            if cut[pieces.len() - 1] {
                s.truncate(s.trim_end().len());
            }
            let left = s.chars().filter(|c| !c.is_whitespace()).count();
            out.push((left >= min_chars).then_some(s));
        }
        out
    }

    const PIECES: [&str; 8] = [
        "Accept all cookies.",
        "ACCEPT  all cookies.",
        "转载请注明出处。",
        "Rice and beans!",
        "今天天气很好。",
        "Share this page?",
        "A b c.",
        "Trains run late.",
    ];

    fn doc_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec((0..PIECES.len(), 0..3usize), 0..7).prop_map(|ps| {
            let mut s = String::new();
            for (p, sep) in ps {
                s.push_str(PIECES[p]);
                s.push_str(["\n\n", "\n", " "][sep]);
            }
            s
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The job (with counts spilled to runs) removes what the brute
        /// force removes, for every unit and rule.
        #[test]
        fn cleaning_equals_brute_force(
            docs in proptest::collection::vec(doc_strategy(), 0..30),
            unit in 0..4usize,
            rule in 0..3usize,
            min_chars in 0..20usize,
            min_words in 0..5usize,
            via_log in any::<bool>(),
        ) {
            let unit = [Unit::Paragraph, Unit::Line, Unit::Sentences(1), Unit::Sentences(2)][unit];
            let rule = [Rule::MinDocs(2), Rule::MinDocs(3), Rule::Repeats][rule];
            let job = Boilerplate::new(unit).rule(rule).min_chars(min_chars).min_words(min_words);
            let dir = tempfile::tempdir().unwrap();
            let mut counting = job.counting(0, dir.path().to_owned()).unwrap();
            for d in &docs {
                counting.add(&job.units(d)).unwrap();
            }
            let mut cleaner = counting.finish().unwrap();
            let got: Vec<Option<String>> = docs
                .iter()
                .map(|d| {
                    let c = if via_log {
                        cleaner.clean_next(d, || job.units(d)).unwrap()
                    } else {
                        cleaner.clean(d, &job.units(d))
                    };
                    // The removed spans and what is left make up the text.
                    let removed: usize = c.removed.iter().map(|r| r.len()).sum();
                    assert!(removed <= d.len());
                    (!c.dropped).then(|| c.text.into_owned())
                })
                .collect();
            prop_assert_eq!(got, reference_words(&docs, unit, rule, min_chars, min_words));
        }
    }

    /// By default a repeated heading, name or number is not boilerplate;
    /// a repeated sentence of three words or more is, in any script.
    #[test]
    fn short_units_are_not_boilerplate_by_default() {
        let docs = [
            "SYNOPSIS\n\nNote\n\n跋\n\n63\n\nShare this page\n\n返回顶部\n\nFirst text.",
            "SYNOPSIS\n\nNote\n\n跋\n\n63\n\nShare this page\n\n返回顶部\n\nSecond text.",
        ];
        let job = Boilerplate::new(Unit::Paragraph);
        let mut counting = job.counting(1 << 20, std::env::temp_dir()).unwrap();
        for d in &docs {
            counting.add(&job.units(d)).unwrap();
        }
        let mut cleaner = counting.finish().unwrap();
        let cleaned = cleaner.clean(docs[0], &job.units(docs[0]));
        assert_eq!(cleaned.text, "SYNOPSIS\n\nNote\n\n跋\n\n63\n\nFirst text.");
        assert_eq!(words_up_to("Share this page", 9), 3);
        assert_eq!(words_up_to("返回顶部", 9), 4);
        assert_eq!(words_up_to("e-mail: a.b@c.d", 9), 6);
    }

    #[test]
    fn the_report_counts_what_was_removed() {
        let docs = ["Intro.\n\nShare this page", "Other.\n\nshare  THIS page", "Third.\n\nShare this page"];
        let job = Boilerplate::new(Unit::Paragraph).rule(Rule::Repeats);
        let mut counting = job.counting(1 << 20, std::env::temp_dir()).unwrap();
        for d in &docs {
            counting.add(&job.units(d)).unwrap();
        }
        let mut cleaner = counting.finish().unwrap();
        let out: Vec<String> =
            docs.iter().map(|d| cleaner.clean(d, &job.units(d)).text.into_owned()).collect();
        assert_eq!(out, ["Intro.\n\nShare this page", "Other.", "Third."]);
        assert_eq!(
            cleaner.removed_units(),
            [RemovedUnit {
                text: "share  THIS page".into(),
                documents: None,
                occurrences: Some(3),
                removed: 2
            }]
        );
        assert!(Boilerplate::new(Unit::Line).rule(Rule::MinDocs(1)).validate().is_err());
    }
}
