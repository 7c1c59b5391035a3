//! Sorting more `u128` values than memory holds: sorted runs of a
//! memory budget written to unnamed temporary files, then merged.
//!
//! What the out-of-core dedup ([`super::outofcore`]) sorts its
//! `(component, row, fingerprint)` triples and its clusters' places with:
//! memory holds one run while values come in, and a small read buffer per
//! run while they go out, whatever their number.

use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::spill::spill_error;
use crate::error::{Error, Result};

/// Bytes of each run's read buffer during the merge.
const MERGE_BUFFER: usize = 1 << 20;

/// Values pushed in any order, read back ascending (repeats kept).
#[derive(Debug)]
pub(crate) struct Sorter {
    dir: PathBuf,
    /// Values held before a run is sorted and written.
    run_values: usize,
    buf: Vec<u128>,
    runs: Vec<File>,
    written: u64,
}

impl Sorter {
    /// A sorter holding at most `memory` bytes of values (at least 4,096
    /// values) before it writes a sorted run into `dir`.
    pub(crate) fn new(dir: &Path, memory: u64) -> Sorter {
        let run_values = (memory / 16).max(4096) as usize;
        Sorter { dir: dir.to_path_buf(), run_values, buf: Vec::new(), runs: Vec::new(), written: 0 }
    }

    /// Adds a value.
    pub(crate) fn push(&mut self, v: u128) -> Result<()> {
        if self.buf.len() >= self.run_values {
            self.write_run()?;
        }
        self.buf.push(v);
        Ok(())
    }

    /// Bytes written to temporary files so far.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.written
    }

    fn write_run(&mut self) -> Result<()> {
        self.buf.par_sort_unstable();
        let file = tempfile::tempfile_in(&self.dir).map_err(|e| spill_error(&self.dir, e, self.written))?;
        let mut w = BufWriter::with_capacity(MERGE_BUFFER, file);
        for chunk in self.buf.chunks(1 << 16) {
            let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
            w.write_all(&bytes).map_err(|e| spill_error(&self.dir, e, self.written))?;
            self.written += bytes.len() as u64;
        }
        let mut file = w.into_inner().map_err(|e| spill_error(&self.dir, e.into_error(), self.written))?;
        std::io::Seek::rewind(&mut file).map_err(|e| spill_error(&self.dir, e, self.written))?;
        self.runs.push(file);
        self.buf.clear();
        Ok(())
    }

    /// The values ascending, calling `f` on each in turn.
    pub(crate) fn for_each(mut self, mut f: impl FnMut(u128) -> Result<()>) -> Result<()> {
        if self.runs.is_empty() {
            self.buf.par_sort_unstable();
            return self.buf.iter().try_for_each(|&v| f(v));
        }
        if !self.buf.is_empty() {
            self.write_run()?;
        }
        self.buf = Vec::new();
        let dir = self.dir.clone();
        let mut readers: Vec<RunReader> = self
            .runs
            .drain(..)
            .map(|file| RunReader { r: BufReader::with_capacity(MERGE_BUFFER, file) })
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(v) = r.next(&dir)? {
                heap.push(std::cmp::Reverse((v, i)));
            }
        }
        while let Some(std::cmp::Reverse((v, i))) = heap.pop() {
            f(v)?;
            if let Some(next) = readers[i].next(&dir)? {
                heap.push(std::cmp::Reverse((next, i)));
            }
        }
        Ok(())
    }
}

/// A run read back in order.
struct RunReader {
    r: BufReader<File>,
}

impl RunReader {
    fn next(&mut self, dir: &Path) -> Result<Option<u128>> {
        let mut b = [0u8; 16];
        match self.r.read_exact(&mut b) {
            Ok(()) => Ok(Some(u128::from_le_bytes(b))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(Error::Spill {
                dir: dir.to_path_buf(),
                message: format!("cannot read a sorted run back: {e}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_across_runs_and_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut x = 7u64;
        let values: Vec<u128> = (0..50_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x as u128) << 20) | (x >> 50) as u128
            })
            .collect();
        let mut want = values.clone();
        want.sort_unstable();
        for memory in [1 << 16, 1 << 30] {
            let mut s = Sorter::new(dir.path(), memory);
            for &v in &values {
                s.push(v).unwrap();
            }
            assert_eq!(s.runs.len() > 1, memory < 1 << 20);
            let mut got = Vec::new();
            s.for_each(|v| {
                got.push(v);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want);
        }
    }
}
