//! Index entries from documents, passages or a fingerprint list.

use std::path::Path;

use anyhow::Result;
use neardup::dedup::UNKNOWN_FEATURES;
use neardup::detector::Detector;
use neardup::minhash::Method;
use neardup::passage::{PassageConfig, PassageIndex};
use neardup::{Fingerprint, Fingerprinter, Sketch};
use rayon::prelude::*;
use serde_json::Value;

use crate::args::InputArgs;
use crate::fplist;
use crate::input::{self, BadRecord};
use crate::records::{batches, sign_records, ErrorPolicy};

/// Entries to index: (entry id, fingerprint or signature), their names
/// and feature counts.
pub struct Entries<T = Fingerprint> {
    pub entries: Vec<(u64, T)>,
    pub names: Vec<String>,
    pub features: Vec<u32>,
}

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Entries { entries: Vec::new(), names: Vec::new(), features: Vec::new() }
    }
}

impl<T> Entries<T> {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn push(&mut self, fp: T, name: String, features: usize, first_id: u64) {
        self.entries.push((first_id + self.entries.len() as u64, fp));
        self.names.push(name);
        self.features.push(features.min(UNKNOWN_FEATURES) as u32);
    }
}

/// A fingerprint list's entries (no feature counts: unknown).
pub fn from_list(path: &Path, first_id: u64) -> Result<Entries> {
    let (words, ids) = fplist::read(path)?;
    let mut e = Entries::default();
    for i in 0..words.len() {
        e.push(words.get(i), ids.text(i), UNKNOWN_FEATURES, first_id);
    }
    Ok(e)
}

/// One entry per document (its fingerprint or signature, as the
/// pipeline's method says), named by the record's id. Documents without
/// features (allowed by `--allow-empty`) that have no sketch (MinHash) are
/// left out, and said so.
pub fn from_documents(input: &InputArgs, detector: &Detector, first_id: u64) -> Result<Entries<Sketch>> {
    let mut all = Entries::default();
    documents_in_chunks(input, detector, first_id, usize::MAX, &mut |e| {
        all = e;
        Ok(())
    })?;
    Ok(all)
}

/// [`from_documents`] handed to `sink` in chunks of about `chunk` entries:
/// what fills a data directory without holding the corpus's sketches.
pub fn documents_in_chunks(
    input: &InputArgs,
    detector: &Detector,
    first_id: u64,
    chunk: usize,
    sink: &mut dyn FnMut(Entries<Sketch>) -> Result<()>,
) -> Result<()> {
    let allow_empty = input.allow_empty;
    let unsigned = std::sync::atomic::AtomicUsize::new(0);
    let what = if detector.method() == Method::Simhash { "fingerprinting" } else { "signing" };
    let each = |batch: &[input::Record]| -> Vec<Made<Sketch>> {
        sign_records(detector, batch, allow_empty)
            .into_iter()
            .zip(batch)
            .map(|(res, r)| {
                res.map(|(s, n)| match s {
                    Some(s) => vec![(s, id_text(&r.id), n)],
                    None => {
                        unsigned.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        Vec::new()
                    }
                })
            })
            .collect()
    };
    entries_in_chunks(input, first_id, what, each, chunk, sink)?;
    let unsigned = unsigned.into_inner();
    if unsigned > 0 {
        note!(
            "neardup: left out {} without features (--allow-empty): they have no {} signature",
            crate::output::count(unsigned as u64, "document"),
            detector.method().title()
        );
    }
    Ok(())
}

impl Entries<Sketch> {
    /// The fingerprints of a SimHash pipeline's entries.
    pub fn into_fingerprints(self) -> Entries<Fingerprint> {
        let entries = self
            .entries
            .into_iter()
            .map(|(i, s)| (i, s.fingerprint().expect("a SimHash pipeline makes fingerprints")))
            .collect();
        Entries { entries, names: self.names, features: self.features }
    }
}

/// A record's id as an entry name (an index's names are text).
pub(crate) fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The passage windows of every document, named `ID#START-END`.
pub fn from_passages(
    input: &InputArgs,
    fingerprinter: &Fingerprinter,
    cfg: &PassageConfig,
    first_id: u64,
) -> Result<Entries> {
    let allow_empty = input.allow_empty;
    entries_of(input, first_id, "fingerprinting passages", |batch| {
        batch
            .par_iter()
            .map(|r| match PassageIndex::entries(fingerprinter, cfg, &id_text(&r.id), &r.text) {
                e if e.is_empty() && !allow_empty => Err(neardup::Error::EmptyDocument),
                e => Ok(e),
            })
            .collect::<Vec<Made<Fingerprint>>>()
    })
}

/// Per-record entries: (fingerprint or signature, name, features).
type Made<T> = neardup::Result<Vec<(T, String, usize)>>;

/// Reads the input and turns each batch, by `each`, into per-record entries
/// or an error for `--on-error`.
fn entries_of<T>(
    input: &InputArgs,
    first_id: u64,
    what: &str,
    each: impl Fn(&[input::Record]) -> Vec<Made<T>>,
) -> Result<Entries<T>> {
    let mut all = Entries::default();
    entries_in_chunks(input, first_id, what, each, usize::MAX, &mut |e| {
        all.entries.extend(e.entries);
        all.names.extend(e.names);
        all.features.extend(e.features);
        Ok(())
    })?;
    Ok(all)
}

/// [`entries_of`] handed to `sink` in chunks of about `chunk` entries (ids
/// continuing across chunks), so that memory holds one chunk, not the
/// input.
fn entries_in_chunks<T>(
    input: &InputArgs,
    first_id: u64,
    what: &str,
    each: impl Fn(&[input::Record]) -> Vec<Made<T>>,
    chunk: usize,
    sink: &mut dyn FnMut(Entries<T>) -> Result<()>,
) -> Result<()> {
    let errors = ErrorPolicy::new(input.on_error);
    let pb = crate::progress::bar(|| input::total_bytes(input), what);
    let mut out = Entries::default();
    let mut first = first_id;
    let total = batches(input, &errors, &pb, |batch| {
        for (r, res) in batch.iter().zip(each(batch)) {
            match res {
                Ok(found) => {
                    for (f, name, n) in found {
                        out.push(f, name, n, first);
                    }
                }
                Err(e) => errors.bad(&BadRecord {
                    rest_lost: false,
                    origin: r.origin.clone(),
                    message: e.to_string(),
                })?,
            }
        }
        if out.len() >= chunk {
            let full = std::mem::take(&mut out);
            first += full.len() as u64;
            sink(full)?;
        }
        Ok(())
    })?;
    if out.len() > 0 {
        sink(out)?;
    }
    pb.finish_and_clear();
    errors.summary(total);
    Ok(())
}
