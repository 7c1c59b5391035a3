//! A column of fixed-width rows of `u32` that moves to a temporary file
//! when it outgrows its memory budget: what lets MinHash signatures (512
//! bytes a document) of a corpus larger than memory be deduplicated.
//!
//! Rows are appended in order. Until the column's bytes pass the budget
//! they live in memory; then they are written to an unnamed temporary file
//! in the given folder (gone when the process ends, even by `kill -9`), and
//! later rows are buffered and appended in blocks. A row is read back with
//! [`SpillColumn::get`] (one positioned read, nothing held) and the whole
//! column in order with [`SpillColumn::chunks`] (one block at a time), so
//! memory stays at the buffer's size whatever the column's length.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Rows buffered before a write to the file, in bytes.
const WRITE_BLOCK: usize = 8 << 20;

/// The rows of a [`SpillColumn`] read at once by [`SpillColumn::chunks`],
/// in bytes.
pub(crate) const READ_BLOCK: usize = 8 << 20;

/// Where a spilling column writes and when.
#[derive(Clone, Debug)]
pub struct SpillTo {
    /// The folder of the temporary file.
    pub dir: PathBuf,
    /// Bytes of rows held in memory before the column moves to the file.
    pub limit: u64,
}

/// The file part of a spilled column.
#[derive(Debug)]
struct Spilled {
    file: File,
    dir: PathBuf,
    /// Rows in the file; later rows are in the column's tail.
    rows: usize,
}

/// Fixed-width rows of `u32`, in memory or (past a budget) in a temporary
/// file. Rows are appended in order; until the column's bytes pass the
/// budget they live in memory, then in an unnamed temporary file (gone
/// when the process ends, even by `kill -9`) to which later rows are
/// appended in blocks. A row is read back with [`get`](Self::get) (one
/// positioned read) and the whole column with [`chunks`](Self::chunks)
/// (one block at a time).
#[derive(Debug)]
pub struct SpillColumn {
    width: usize,
    /// Every row while in memory; once spilled, the rows after the file's.
    tail: Vec<u32>,
    spill_to: Option<SpillTo>,
    spilled: Option<Spilled>,
}

impl Clone for SpillColumn {
    /// A copy in memory of an unspilled column.
    ///
    /// # Panics
    ///
    /// If the column was spilled to a file (a file is not copied).
    fn clone(&self) -> SpillColumn {
        assert!(self.spilled.is_none(), "a spilled column is not cloned");
        SpillColumn {
            width: self.width,
            tail: self.tail.clone(),
            spill_to: self.spill_to.clone(),
            spilled: None,
        }
    }
}

impl SpillColumn {
    /// An empty column of rows of `width` values, always in memory.
    pub fn new(width: usize) -> SpillColumn {
        SpillColumn { width, tail: Vec::new(), spill_to: None, spilled: None }
    }

    /// An empty column that moves to a file in `to.dir` once its rows take
    /// more than `to.limit` bytes.
    pub fn spilling(width: usize, to: SpillTo) -> SpillColumn {
        SpillColumn { width, tail: Vec::new(), spill_to: Some(to), spilled: None }
    }

    /// A column of `rows` rows already in `file` (a checkpoint's), read
    /// as a spilled column; `dir` names it in errors.
    pub(crate) fn from_file(width: usize, file: File, dir: &Path, rows: usize) -> SpillColumn {
        SpillColumn {
            width,
            tail: Vec::new(),
            spill_to: None,
            spilled: Some(Spilled { file, dir: dir.to_path_buf(), rows }),
        }
    }

    /// Values per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.spilled.as_ref().map_or(0, |s| s.rows) + self.tail.len() / self.width.max(1)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes written to the temporary file (0 while in memory).
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled.as_ref().map_or(0, |s| (s.rows * self.width * 4) as u64)
    }

    /// Every value, when the column is in memory.
    pub fn as_slice(&self) -> Option<&[u32]> {
        self.spilled.is_none().then_some(&self.tail[..])
    }

    /// Room for `n` more rows in memory (nothing once spilled or when the
    /// rows would pass the budget).
    pub fn reserve(&mut self, n: usize) {
        let fits =
            self.spill_to.as_ref().is_none_or(|t| ((self.len() + n) * self.width * 4) as u64 <= t.limit);
        if self.spilled.is_none() && fits {
            self.tail.reserve(n * self.width);
        }
    }

    /// Appends a row.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be made or written (a full disk says
    /// where and how much).
    ///
    /// # Panics
    ///
    /// If the row's length is not the column's width.
    pub fn push(&mut self, row: &[u32]) -> Result<()> {
        assert_eq!(row.len(), self.width, "a row of the column's width");
        self.tail.extend_from_slice(row);
        self.after_push()
    }

    /// Appends a row of zeros.
    ///
    /// # Errors
    ///
    /// As [`push`](Self::push).
    pub fn push_zeros(&mut self) -> Result<()> {
        self.tail.resize(self.tail.len() + self.width, 0);
        self.after_push()
    }

    /// Spills or flushes when the buffered rows say so.
    fn after_push(&mut self) -> Result<()> {
        let bytes = self.tail.len() * 4;
        match (&self.spilled, &self.spill_to) {
            (None, Some(to)) if bytes as u64 > to.limit => {
                let file = tempfile::tempfile_in(&to.dir).map_err(|e| spill_error(&to.dir, e, 0))?;
                self.spilled = Some(Spilled { file, dir: to.dir.clone(), rows: 0 });
                self.flush()
            }
            (Some(_), _) if bytes >= WRITE_BLOCK => self.flush(),
            _ => Ok(()),
        }
    }

    /// Writes the buffered rows to the file.
    fn flush(&mut self) -> Result<()> {
        let Some(s) = &mut self.spilled else { return Ok(()) };
        let at = (s.rows * self.width * 4) as u64;
        let bytes = as_bytes(&self.tail);
        s.file.write_all_at(bytes, at).map_err(|e| spill_error(&s.dir, e, at))?;
        s.rows += self.tail.len() / self.width;
        self.tail.clear();
        self.tail.shrink_to(WRITE_BLOCK / 4 + self.width);
        Ok(())
    }

    /// Row `i`: a slice of the column in memory, or read into `buf` from
    /// the file.
    ///
    /// # Errors
    ///
    /// The file cannot be read.
    ///
    /// # Panics
    ///
    /// If `i` is out of range or `buf` is shorter than a row.
    pub fn get<'a>(&'a self, i: usize, buf: &'a mut [u32]) -> Result<&'a [u32]> {
        let w = self.width;
        if let Some(row) = self.in_memory(i) {
            return Ok(row);
        }
        match &self.spilled {
            None => unreachable!("every row of an unspilled column is in memory"),
            Some(s) => {
                let buf = &mut buf[..w];
                s.file
                    .read_exact_at(as_bytes_mut(buf), (i * w * 4) as u64)
                    .map_err(|e| Error::io(&s.dir, e))?;
                Ok(buf)
            }
        }
    }

    /// Row `i` if it is in memory (every row before the column spills,
    /// the buffered ones after), else `None`: what [`get`](Self::get)
    /// returns without reading.
    pub fn in_memory(&self, i: usize) -> Option<&[u32]> {
        let w = self.width;
        let first = self.spilled.as_ref().map_or(0, |s| s.rows);
        (i >= first).then(|| &self.tail[(i - first) * w..(i - first + 1) * w])
    }

    /// Hands every row to `f` in order, in blocks of whole rows: `f(first,
    /// values)` gets the index of the block's first row and its values.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or what `f` returns.
    pub fn chunks(&self, mut f: impl FnMut(usize, &[u32]) -> Result<()>) -> Result<()> {
        let w = self.width.max(1);
        let Some(s) = &self.spilled else {
            return if self.tail.is_empty() { Ok(()) } else { f(0, &self.tail) };
        };
        let per_block = (READ_BLOCK / 4 / w).max(1);
        let mut buf = vec![0u32; per_block.min(s.rows) * w];
        let mut first = 0;
        while first < s.rows {
            let n = per_block.min(s.rows - first);
            let block = &mut buf[..n * w];
            s.file
                .read_exact_at(as_bytes_mut(block), (first * w * 4) as u64)
                .map_err(|e| Error::io(&s.dir, e))?;
            f(first, block)?;
            first += n;
        }
        if !self.tail.is_empty() {
            f(s.rows, &self.tail)?;
        }
        Ok(())
    }
}

/// The bytes of `values` in memory order (the file is this process's own,
/// read back by the same machine).
pub(crate) fn as_bytes(values: &[u32]) -> &[u8] {
    // SAFETY: u8 has alignment 1 and every byte of a u32 is initialised;
    // the slice covers exactly the values' memory and borrows them.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// The bytes of `values`, to read into.
fn as_bytes_mut(values: &mut [u32]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; any bytes written make valid u32 values
    // (u32 has no invalid bit patterns), and the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// The error of a failed spill: a full disk says so, names the folder and
/// what was written, and says what to do.
pub(crate) fn spill_error(dir: &Path, e: std::io::Error, written: u64) -> Error {
    if e.kind() == std::io::ErrorKind::StorageFull || e.raw_os_error() == Some(28) {
        let free =
            crate::dedup::spill::free_bytes(dir).map_or(String::new(), |f| format!(", {} free", mb(f)));
        return Error::Spill {
            dir: dir.to_path_buf(),
            message: format!(
                "no space left in the temporary folder after {} written{free}; free space there or \
                 choose a folder with more (`neardup dedup --tmp-dir`)",
                mb(written)
            ),
        };
    }
    Error::Spill { dir: dir.to_path_buf(), message: format!("cannot write a temporary file: {e}") }
}

/// Bytes as megabytes for messages.
pub(crate) fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The bytes free to an unprivileged user on `dir`'s file system.
#[cfg(target_os = "linux")]
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; zeroed is a valid value to be overwritten.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `st` a valid out-pointer.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// The bytes free on `dir`'s file system (unknown off Linux).
#[cfg(not(target_os = "linux"))]
pub fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column read back from its file equals the rows pushed, by row and
    /// in blocks, across the file and the tail.
    #[test]
    fn a_spilled_column_reads_back_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let width = 7;
        let mut col = SpillColumn::spilling(width, SpillTo { dir: dir.path().into(), limit: 100 });
        let rows: Vec<Vec<u32>> =
            (0..5000u32).map(|i| (0..width as u32).map(|j| i * 31 + j).collect()).collect();
        for (i, r) in rows.iter().enumerate() {
            if i % 100 == 3 {
                col.push_zeros().unwrap();
            } else {
                col.push(r).unwrap();
            }
        }
        let want = |i: usize| if i % 100 == 3 { vec![0; width] } else { rows[i].clone() };
        assert!(col.spilled_bytes() > 0 && col.as_slice().is_none());
        assert_eq!(col.len(), rows.len());
        let mut buf = vec![0; width];
        for i in [0, 1, 3, 2999, 4999] {
            assert_eq!(col.get(i, &mut buf).unwrap(), want(i).as_slice(), "row {i}");
        }
        let mut seen = 0;
        col.chunks(|first, values| {
            assert_eq!(first, seen);
            for (k, row) in values.chunks_exact(width).enumerate() {
                assert_eq!(row, want(first + k).as_slice());
            }
            seen += values.len() / width;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, rows.len());
    }

    /// Within its budget a column stays in memory.
    #[test]
    fn a_column_within_its_budget_stays_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut col = SpillColumn::spilling(4, SpillTo { dir: dir.path().into(), limit: 1 << 20 });
        for i in 0..100 {
            col.push(&[i, i, i, i]).unwrap();
        }
        assert_eq!(col.spilled_bytes(), 0);
        assert_eq!(col.as_slice().map(<[u32]>::len), Some(400));
    }
}
