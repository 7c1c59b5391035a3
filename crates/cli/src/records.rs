//! Records as commands take them: read in batches, bad ones failed or
//! skipped by `--on-error` ([`ErrorPolicy`]), signed on every core.

use anyhow::Result;

use crate::args::{InputArgs, OnError};
use crate::input::{self, BadRecord, Record};
use crate::InputFailed;

/// Applies `--on-error` to bad records and counts them.
pub struct ErrorPolicy {
    policy: OnError,
    skipped: std::cell::Cell<u64>,
    /// Where files were cut short (`FILE:LINE`): the rest of each is lost.
    cut_short: std::cell::RefCell<Vec<String>>,
    quiet: bool,
}

/// Set when an input file was cut short under `--on-error skip`: the run
/// finishes with what it read, and exits with 1 ([`input_cut_short`]).
static INPUT_CUT_SHORT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether an input file was cut short in this process (its records past
/// the damage lost): the command's exit code is then 1, not 0.
pub fn input_cut_short() -> bool {
    INPUT_CUT_SHORT.load(std::sync::atomic::Ordering::Relaxed)
}

/// How many skipped records are reported one by one before only counting.
const REPORT_LIMIT: u64 = 100;

impl ErrorPolicy {
    pub fn new(policy: OnError) -> ErrorPolicy {
        ErrorPolicy { policy, skipped: std::cell::Cell::new(0), cut_short: Default::default(), quiet: false }
    }

    /// Skips bad records without a word: a second read of an input whose
    /// bad records the first read reported.
    pub fn quiet() -> ErrorPolicy {
        ErrorPolicy {
            policy: OnError::Skip,
            skipped: std::cell::Cell::new(0),
            cut_short: Default::default(),
            quiet: true,
        }
    }

    /// Reports a bad record; with `--on-error fail` this ends the run.
    pub fn bad(&self, b: &BadRecord) -> Result<()> {
        match self.policy {
            OnError::Fail => {
                note!("neardup: {}: {}", b.origin, b.message);
                note!("neardup: stopped at the first bad record; pass --on-error skip to skip bad records");
                Err(InputFailed.into())
            }
            OnError::Skip if b.rest_lost => {
                // Not a record skipped: the rest of the file is lost.
                self.cut_short.borrow_mut().push(b.origin.clone());
                INPUT_CUT_SHORT.store(true, std::sync::atomic::Ordering::Relaxed);
                if !self.quiet {
                    note!(
                        "neardup: {}: {}; the rest of this file could not be read: its records from here on \
                         are lost (fetch or repair the file and run again)",
                        b.origin,
                        b.message
                    );
                }
                Ok(())
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

    /// Where files were cut short (`FILE:LINE`, the first record lost).
    pub fn cut_short(&self) -> Vec<String> {
        self.cut_short.borrow().clone()
    }

    /// Prints the count of skipped records and the files cut short, if any.
    pub fn summary(&self, total: u64) {
        let cut = self.cut_short.borrow();
        if self.skipped.get() > 0 {
            // A file cut short counted as an item read, not as a record.
            let records = total.saturating_sub(cut.len() as u64);
            note!("neardup: skipped {} of {} records (--on-error skip)", self.skipped.get(), records);
        }
        if !cut.is_empty() {
            note!(
                "neardup: {} cut short, the rest of each not read: {}; the outputs hold the records \
                 read before (exit code 1)",
                crate::output::count(cut.len() as u64, "input file"),
                cut.join(", ")
            );
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
