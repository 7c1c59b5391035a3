//! One module per subcommand.

pub mod boilerplate;
mod clean;
mod cluster_view;
pub mod compare;
mod compare_minhash;
pub mod config;
pub mod dedup;
pub mod eval;
pub mod fingerprint;
pub mod idf;
pub mod index;
pub mod pairs;
pub mod plot;
pub mod report;
pub mod serve;
pub mod substrings;

use anyhow::Result;

use crate::args::{InputArgs, OnError};
use crate::input::{self, BadRecord, Record};
use crate::InputFailed;

/// Applies `--on-error` to bad records and counts them.
pub struct ErrorPolicy {
    policy: OnError,
    skipped: std::cell::Cell<u64>,
    quiet: bool,
}

/// How many skipped records are reported one by one before only counting.
const REPORT_LIMIT: u64 = 100;

impl ErrorPolicy {
    pub fn new(policy: OnError) -> ErrorPolicy {
        ErrorPolicy { policy, skipped: std::cell::Cell::new(0), quiet: false }
    }

    /// Skips bad records without a word: a second read of an input whose
    /// bad records the first read reported.
    pub fn quiet() -> ErrorPolicy {
        ErrorPolicy { policy: OnError::Skip, skipped: std::cell::Cell::new(0), quiet: true }
    }

    /// Reports a bad record; with `--on-error fail` this ends the run.
    pub fn bad(&self, b: &BadRecord) -> Result<()> {
        match self.policy {
            OnError::Fail => {
                note!("neardup: {}: {}", b.origin, b.message);
                note!("neardup: stopped at the first bad record; pass --on-error skip to skip bad records");
                Err(InputFailed.into())
            }
            OnError::Skip => {
                let n = self.skipped.get() + 1;
                self.skipped.set(n);
                if self.quiet {
                    return Ok(());
                }
                if n <= REPORT_LIMIT {
                    note!("neardup: skipped {}: {}", b.origin, b.message);
                } else if n == REPORT_LIMIT + 1 {
                    note!("neardup: more records skipped; counting only from here");
                }
                Ok(())
            }
        }
    }

    /// How many records were skipped.
    pub fn skipped(&self) -> u64 {
        self.skipped.get()
    }

    /// Counts records an earlier run skipped (a resumed run).
    pub fn add_skipped(&self, n: u64) {
        self.skipped.set(self.skipped.get() + n);
    }

    /// Prints the count of skipped records, if any.
    pub fn summary(&self, total: u64) {
        if self.skipped.get() > 0 {
            note!("neardup: skipped {} of {} records (--on-error skip)", self.skipped.get(), total);
        }
    }
}

/// Signs a batch of records in parallel by the core's empty-document rule
/// ([`Detector::sign`](neardup::detector::Detector::sign)), with each
/// one's feature count: a record without features is an error unless
/// `allow_empty` (then a SimHash pipeline gives its fingerprint and a
/// MinHash one no signature: kept by dedup and never a near duplicate,
/// left out of indexes).
pub fn sign_records(
    detector: &neardup::detector::Detector,
    batch: &[Record],
    allow_empty: bool,
) -> Vec<neardup::Result<(Option<neardup::Sketch>, usize)>> {
    use rayon::prelude::*;
    batch.par_iter().map(|r| detector.sign(&r.text, allow_empty)).collect()
}

/// Reads the input in batches of records (bad records go to `errors` on the
/// way) and hands each batch to `f`, in input order.
///
/// Reading (decompressing, validating UTF-8, parsing JSON or CSV) runs on a
/// thread of its own, a batch or two ahead of `f`, so that reading the next
/// batch overlaps with working on this one; `--threads` counts the workers
/// of `f`, not this reader.
pub fn batches(
    args: &InputArgs,
    errors: &ErrorPolicy,
    pb: &indicatif::ProgressBar,
    mut f: impl FnMut(&mut Vec<Record>) -> Result<()>,
) -> Result<u64> {
    /// What the reader hands on, in input order.
    enum Msg {
        Batch(Vec<Record>, usize),
        Bad(input::BadRecord),
    }
    // Small batches keep both sides busy; large enough to share among
    // threads. The first batches are smaller still, so the workers start
    // before a whole megabyte has been read and parsed.
    const MAX_DOCS: usize = 2048;
    const MAX_BYTES: usize = 1 << 20; // of input, per batch
    const FIRST_BYTES: usize = 1 << 16;
    let fail_fast = errors.policy == OnError::Fail;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(2);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> Result<u64> {
            let mut batch: Vec<Record> = Vec::new();
            let mut bytes = 0;
            let mut max_bytes = FIRST_BYTES;
            let mut total = 0u64;
            // A send fails only when the consumer stopped: stop reading too.
            let stopped = || anyhow::anyhow!("stopped");
            let read = input::read_all(args, |item| {
                total += 1;
                match item {
                    Ok(r) => {
                        bytes += r.raw_len as usize;
                        batch.push(r);
                        if batch.len() >= MAX_DOCS || bytes >= max_bytes {
                            tx.send(Msg::Batch(std::mem::take(&mut batch), bytes)).map_err(|_| stopped())?;
                            bytes = 0;
                            max_bytes = (2 * max_bytes).min(MAX_BYTES);
                        }
                    }
                    Err(b) => {
                        // Stopping there: everything before the bad record goes first.
                        if fail_fast && !batch.is_empty() {
                            tx.send(Msg::Batch(std::mem::take(&mut batch), bytes)).map_err(|_| stopped())?;
                            bytes = 0;
                        }
                        tx.send(Msg::Bad(b)).map_err(|_| stopped())?;
                    }
                }
                Ok(())
            });
            if read.is_ok() && !batch.is_empty() {
                tx.send(Msg::Batch(batch, bytes)).map_err(|_| stopped())?;
            }
            read.map(|()| total)
        });
        let mut consumed: Result<()> = Ok(());
        for msg in &rx {
            consumed = match msg {
                Msg::Batch(mut batch, bytes) => {
                    pb.inc(bytes as u64);
                    f(&mut batch)
                }
                Msg::Bad(b) => errors.bad(&b),
            };
            if consumed.is_err() {
                break;
            }
        }
        // Dropping the receiver ends a reader that is still sending.
        drop(rx);
        let total = reader.join().map_err(|_| anyhow::anyhow!("the input reader panicked"))?;
        consumed?;
        total
    })
}
