//! Against an index of passage windows, where the other text is not at
//! hand: matched windows joined into spans, to window precision.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;

use super::windows::PassageDoc;
use crate::config::PassageConfig;
use crate::error::{Error, Result};
use crate::index::file::IndexFile;
use crate::index::{HammingIndex, Match};
use crate::meta::IndexMeta;
use crate::radius::Radius;
use crate::{Fingerprint, Fingerprinter};

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
    // Both sorted and disjoint (sentences are in order): one sweep.
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < sentences.len() && j < merged.len() {
        let (s, m) = (&sentences[i], &merged[j]);
        let (lo, hi) = (s.start.max(m.start), s.end.min(m.end));
        if lo < hi {
            total += text[lo..hi].chars().count();
        }
        if s.end <= m.end {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// The name of an indexed window: `ID#START-END`, byte offsets of the
/// window in document `ID`.
///
/// ```
/// use neardup::passage::{entry_name, parse_entry_name};
///
/// let name = entry_name("docs/a#1.txt", &(10..42));
/// assert_eq!(name, "docs/a#1.txt#10-42");
/// assert_eq!(parse_entry_name(&name), Some(("docs/a#1.txt", 10..42)));
/// assert_eq!(parse_entry_name("no-range"), None);
/// ```
pub fn entry_name(id: &str, bytes: &Range<usize>) -> String {
    format!("{id}#{}-{}", bytes.start, bytes.end)
}

/// `ID#START-END` → (ID, START..END); `None` for any other name.
pub fn parse_entry_name(name: &str) -> Option<(&str, Range<usize>)> {
    let (id, range) = name.rsplit_once('#')?;
    let (s, e) = range.split_once('-')?;
    let (s, e) = (s.parse().ok()?, e.parse().ok()?);
    (s <= e).then_some((id, s..e))
}

/// One window of a document, ready to index: its fingerprint, its entry
/// name ([`entry_name`]) and its feature count.
pub type PassageEntry = (Fingerprint, String, usize);

/// An index of passage windows (`neardup index build --passages`), opened
/// for the question "which indexed documents does this text copy from, and
/// where" ([`find`](Self::find)).
#[derive(Debug)]
pub struct PassageIndex {
    file: IndexFile,
    fingerprinter: Fingerprinter,
    config: PassageConfig,
}

/// What [`PassageIndex::find`] found of a text in the index.
#[derive(Clone, Debug)]
pub struct Copied {
    /// The text cut into sentences and windows.
    pub doc: PassageDoc,
    /// The indexed documents it copies from, by how much of the text they
    /// hold (most first; ties by id): (id, characters of the text found in
    /// it).
    pub sources: Vec<(String, usize)>,
    /// The copied spans; `target` indexes `sources`.
    pub spans: Vec<IndexedSpan>,
    /// Characters of the text found anywhere.
    pub matched_chars: usize,
    /// Characters in the text's sentences.
    pub chars: usize,
}

impl PassageIndex {
    /// The entries of one document's windows (none for a text without a
    /// window).
    pub fn entries(
        fingerprinter: &Fingerprinter,
        config: &PassageConfig,
        id: &str,
        text: &str,
    ) -> Vec<PassageEntry> {
        let doc = PassageDoc::new(fingerprinter, text, config);
        doc.passages.iter().map(|p| (p.fingerprint, entry_name(id, &p.passage.bytes), p.features)).collect()
    }

    /// A passage index from an opened index file.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the file is not a passage index, knows no
    /// pipeline or has no entry names; errors of the pipeline it names.
    pub fn open(file: IndexFile) -> Result<PassageIndex> {
        let meta = IndexMeta::of(&file)?;
        let Some(config) = meta.passages else {
            return Err(Error::Config(
                "an index of whole documents; build a passage index with `neardup index build --passages`"
                    .into(),
            ));
        };
        let Some(pipeline) = meta.pipeline else {
            return Err(Error::Config("this index knows no pipeline".into()));
        };
        if file.names.is_none() {
            return Err(Error::Config("this index has no entry names".into()));
        }
        Ok(PassageIndex { fingerprinter: Fingerprinter::new(pipeline)?, file, config })
    }

    /// How its documents were cut into windows.
    pub fn config(&self) -> PassageConfig {
        self.config
    }

    /// The pipeline its windows were fingerprinted with.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// The windows of `text` found in the index within `radius` (usually
    /// [`index_radius`](super::index_radius)), joined into spans per indexed document; spans of
    /// fewer than `min_windows` windows and documents named in `exclude`
    /// are left out.
    ///
    /// # Errors
    ///
    /// An entry that is not named `ID#START-END` (a damaged index).
    pub fn find(
        &self,
        text: &str,
        radius: &Radius,
        exclude: &[String],
        min_windows: usize,
    ) -> Result<Copied> {
        let names = self.file.names.as_ref().expect("checked on open");
        let doc = PassageDoc::new(&self.fingerprinter, text, &self.config);
        let results: Vec<Vec<Match>> = doc
            .passages
            .par_iter()
            .map(|p| self.file.index.query(p.fingerprint, radius.k_for(p.features)))
            .collect::<Result<_>>()?;
        let mut targets: HashMap<&str, usize> = HashMap::new();
        let mut target_names: Vec<&str> = Vec::new();
        let mut matches = Vec::new();
        for (window, res) in results.into_iter().enumerate() {
            for m in res {
                let name = names.get(m.id).unwrap_or("");
                let Some((id, bytes)) = parse_entry_name(name) else {
                    return Err(Error::Config(format!(
                        "entry {} is named {name:?}, not ID#START-END: the index is damaged",
                        m.id
                    )));
                };
                if exclude.iter().any(|x| x == id) {
                    continue;
                }
                let target = *targets.entry(id).or_insert_with(|| {
                    target_names.push(id);
                    target_names.len() - 1
                });
                matches.push(WindowMatch { window, target, bytes, distance: m.distance });
            }
        }
        let mut spans = merge_window_matches(&doc, matches);
        spans.retain(|s| s.windows >= min_windows);
        let all: Vec<Range<usize>> = spans.iter().map(|s| s.a.clone()).collect();
        let matched_chars = covered_chars(text, &doc.sentences, &all);
        // Sources by the share of the text they hold, largest first.
        let mut by_source: Vec<(usize, usize)> = (0..target_names.len())
            .map(|t| {
                let ranges: Vec<_> = spans.iter().filter(|s| s.target == t).map(|s| s.a.clone()).collect();
                (t, covered_chars(text, &doc.sentences, &ranges))
            })
            .collect();
        by_source.sort_by(|x, y| y.1.cmp(&x.1).then(target_names[x.0].cmp(target_names[y.0])));
        let rank: HashMap<usize, usize> = by_source.iter().enumerate().map(|(r, &(t, _))| (t, r)).collect();
        for s in &mut spans {
            s.target = rank[&s.target];
        }
        let sources = by_source.iter().map(|&(t, n)| (target_names[t].to_owned(), n)).collect();
        let chars = doc.chars(text);
        Ok(Copied { doc, sources, spans, matched_chars, chars })
    }
}
