//! Counting 128-bit keys in bounded memory: counts gather in a hash map;
//! when it holds its budget's worth, it is sorted and written to a
//! temporary file (a run), and at the end the runs and what is left are
//! merged, summing the counts of each key, to keep the keys counted at
//! least a threshold — what lets the units of a corpus larger than memory
//! be counted.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::PathBuf;

use hashbrown::HashMap;

use crate::error::{Error, Result};

/// Bytes a counted key takes in the map (key, count, the table's slack).
const ENTRY_BYTES: u64 = 32;
/// Bytes of a key and its count in a run file.
const RUN_ENTRY: usize = 20;

/// Counts of 128-bit keys that move to sorted runs on disk past a budget.
#[derive(Debug)]
pub struct KeyCounter {
    map: HashMap<u128, u32, foldhash::fast::FixedState>,
    limit: usize,
    dir: PathBuf,
    runs: Vec<File>,
    spilled: u64,
}

impl KeyCounter {
    /// A counter that holds about `memory` bytes before it writes a run
    /// into an unnamed temporary file in `dir`.
    pub fn new(memory: u64, dir: PathBuf) -> KeyCounter {
        let limit = (memory / ENTRY_BYTES).max(1024) as usize;
        KeyCounter { map: HashMap::default(), limit, dir, runs: Vec::new(), spilled: 0 }
    }

    /// Adds `n` to `key`'s count.
    ///
    /// # Errors
    ///
    /// A run cannot be written.
    pub fn add(&mut self, key: u128, n: u32) -> Result<()> {
        let c = self.map.entry(key).or_insert(0);
        *c = c.saturating_add(n);
        if self.map.len() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Bytes written to runs so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled
    }

    fn spill(&mut self) -> Result<()> {
        let mut entries: Vec<(u128, u32)> = self.map.drain().collect();
        entries.sort_unstable_by_key(|e| e.0);
        let io = |e| Error::io(&self.dir, e);
        let file = tempfile::tempfile_in(&self.dir).map_err(io)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        for (k, c) in &entries {
            w.write_all(&k.to_le_bytes()).map_err(io)?;
            w.write_all(&c.to_le_bytes()).map_err(io)?;
        }
        let mut file = w.into_inner().map_err(|e| io(e.into_error()))?;
        file.rewind().map_err(io)?;
        self.spilled += (entries.len() * RUN_ENTRY) as u64;
        self.runs.push(file);
        self.map.shrink_to(self.limit);
        Ok(())
    }

    /// The keys counted at least `min` times, with their counts.
    ///
    /// # Errors
    ///
    /// A run cannot be read back.
    pub fn at_least(mut self, min: u32) -> Result<HashMap<u128, u32>> {
        if self.runs.is_empty() {
            self.map.retain(|_, c| *c >= min);
            return Ok(self.map.into_iter().collect());
        }
        let mut last: Vec<(u128, u32)> = self.map.drain().collect();
        last.sort_unstable_by_key(|e| e.0);
        let dir = self.dir.clone();
        let mut sources: Vec<Source> =
            self.runs.into_iter().map(|f| Source::Run(BufReader::with_capacity(1 << 16, f))).collect();
        sources.push(Source::Memory(last.into_iter()));
        let mut heap = BinaryHeap::new();
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some((k, c)) = s.next().map_err(|e| Error::io(&dir, e))? {
                heap.push(Reverse((k, i, c)));
            }
        }
        let mut out = HashMap::new();
        let mut current: Option<(u128, u32)> = None;
        while let Some(Reverse((k, i, c))) = heap.pop() {
            current = match current {
                Some((ck, cc)) if ck == k => Some((ck, cc.saturating_add(c))),
                Some((ck, cc)) => {
                    if cc >= min {
                        out.insert(ck, cc);
                    }
                    Some((k, c))
                }
                None => Some((k, c)),
            };
            if let Some((k, c)) = sources[i].next().map_err(|e| Error::io(&dir, e))? {
                heap.push(Reverse((k, i, c)));
            }
        }
        if let Some((ck, cc)) = current.filter(|&(_, c)| c >= min) {
            out.insert(ck, cc);
        }
        Ok(out)
    }
}

/// A sorted source of counted keys: a run file, or the map's last entries.
enum Source {
    Run(BufReader<File>),
    Memory(std::vec::IntoIter<(u128, u32)>),
}

impl Source {
    fn next(&mut self) -> std::io::Result<Option<(u128, u32)>> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::Run(r) => {
                let mut buf = [0u8; RUN_ENTRY];
                match r.read_exact(&mut buf) {
                    Ok(()) => Ok(Some((
                        u128::from_le_bytes(buf[..16].try_into().expect("16 bytes")),
                        u32::from_le_bytes(buf[16..].try_into().expect("4 bytes")),
                    ))),
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Spilling or not, the counts are a plain map's.
        #[test]
        fn counts_out_of_core_equal_counts_in_memory(keys in proptest::collection::vec(0u128..3000, 0..6000), min in 1u32..4) {
            let dir = tempfile::tempdir().unwrap();
            let mut small = KeyCounter::new(0, dir.path().to_owned()); // 1,024 keys a run
            let mut want: std::collections::HashMap<u128, u32> = Default::default();
            for &k in &keys {
                small.add(k * 0x9e37_79b9_7f4a_7c15, 1).unwrap();
                *want.entry(k * 0x9e37_79b9_7f4a_7c15).or_default() += 1;
            }
            want.retain(|_, c| *c >= min);
            let got = small.at_least(min).unwrap();
            prop_assert_eq!(got.len(), want.len());
            for (k, c) in &want {
                prop_assert_eq!(got.get(k), Some(c));
            }
        }
    }
}
