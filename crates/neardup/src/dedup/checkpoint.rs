//! Records and results written to a folder and read back: what lets a
//! dedup run that was stopped resume after its last finished stage
//! (`neardup dedup --resume`) instead of signing the corpus again.
//!
//! A folder holds `records.bin` (the method, the count, and per record
//! the feature count and length, then the fingerprints) and, for MinHash,
//! `signatures.bin` (the values, in this machine's byte order: a
//! checkpoint is read back where it was written). Files are written under
//! a temporary name and renamed, so a folder holds whole files or none.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::lsh::SignatureRecords;
use super::spill::SpillColumn;
use super::{DedupRecords, DedupResult, ExactRecords, Records};
use crate::error::{Error, Result};
use crate::fingerprint::{Bits, Fingerprint};

const MAGIC: &[u8; 8] = b"NDDUPCK1";

impl DedupRecords {
    /// Writes the records into `dir` (which exists).
    ///
    /// # Errors
    ///
    /// A file cannot be written or a spilled signature read.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join("records.bin");
        write_atomically(&path, |w| {
            w.write_all(MAGIC)?;
            let (method, width, n) = match self {
                DedupRecords::Fingerprints(r) => (0u8, r.bits().get(), r.len()),
                DedupRecords::Signatures(r) => (1u8, r.permutations() as u32, r.len()),
                DedupRecords::Exact(r) => (2u8, 128, r.len()),
            };
            w.write_all(&[method])?;
            w.write_all(&width.to_le_bytes())?;
            w.write_all(&(n as u64).to_le_bytes())?;
            for i in 0..n as u32 {
                let (features, length) = match self {
                    DedupRecords::Fingerprints(r) => (r.features(i) as u32, r.length(i)),
                    DedupRecords::Signatures(r) => (r.features(i) as u32, r.length(i)),
                    DedupRecords::Exact(r) => (0, r.length(i)),
                };
                w.write_all(&features.to_le_bytes())?;
                w.write_all(&length.to_le_bytes())?;
            }
            if let DedupRecords::Fingerprints(r) = self {
                for i in 0..n as u32 {
                    w.write_all(&r.fingerprint(i).value().to_le_bytes())?;
                }
            }
            if let DedupRecords::Exact(r) = self {
                for i in 0..n as u32 {
                    w.write_all(&r.key(i).to_le_bytes())?;
                }
            }
            Ok(())
        })?;
        if let DedupRecords::Signatures(r) = self {
            let path = dir.join("signatures.bin");
            let mut failed = None;
            write_atomically(&path, |w| {
                let res = r.values_column().chunks(|_, values| {
                    w.write_all(super::spill::as_bytes(values)).map_err(|e| Error::io(&path, e))
                });
                if let Err(e) = res {
                    failed = Some(e);
                    return Err(std::io::Error::other("reading the signatures failed"));
                }
                Ok(())
            })
            .map_err(|e| failed.take().unwrap_or(e))?;
        }
        Ok(())
    }

    /// Reads records that [`save`](Self::save) wrote into `dir`; MinHash
    /// signatures stay in their file (read as spilled ones are).
    ///
    /// # Errors
    ///
    /// A file is missing, damaged or of another version.
    pub fn load(dir: &Path) -> Result<DedupRecords> {
        let path = dir.join("records.bin");
        let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut r = BufReader::with_capacity(1 << 20, file);
        let bad = |what: &str| Error::IndexFile {
            path: path.clone(),
            message: format!("not a checkpoint: {what}"),
        };
        let mut magic = [0u8; 8];
        read(&mut r, &mut magic, &path)?;
        if &magic != MAGIC {
            return Err(bad("wrong magic"));
        }
        let mut head = [0u8; 13];
        read(&mut r, &mut head, &path)?;
        let width = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes"));
        let n = u64::from_le_bytes(head[5..13].try_into().expect("8 bytes")) as usize;
        let mut columns = Vec::with_capacity(n);
        let mut buf = [0u8; 12];
        for _ in 0..n {
            read(&mut r, &mut buf, &path)?;
            let features = u32::from_le_bytes(buf[..4].try_into().expect("4 bytes"));
            let length = u64::from_le_bytes(buf[4..].try_into().expect("8 bytes"));
            columns.push((features, length));
        }
        match head[0] {
            0 => {
                let bits = Bits::try_from(width).map_err(|e| bad(&e))?;
                let mut records = Records::new(bits);
                let mut v = [0u8; 16];
                for &(features, length) in &columns {
                    read(&mut r, &mut v, &path)?;
                    records.push(
                        Fingerprint::new(u128::from_le_bytes(v), bits),
                        features as usize,
                        length as usize,
                    );
                }
                Ok(DedupRecords::Fingerprints(records))
            }
            1 => {
                let path = dir.join("signatures.bin");
                let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
                let want = (n * width as usize * 4) as u64;
                if file.metadata().map_err(|e| Error::io(&path, e))?.len() != want {
                    return Err(Error::IndexFile { path, message: "not a checkpoint: wrong size".into() });
                }
                let values = SpillColumn::from_file(width as usize, file, dir, n);
                Ok(DedupRecords::Signatures(SignatureRecords::from_columns(values, columns)))
            }
            2 => {
                let mut records = ExactRecords::new();
                let mut v = [0u8; 16];
                for &(_, length) in &columns {
                    read(&mut r, &mut v, &path)?;
                    records.push(u128::from_le_bytes(v), length as usize);
                }
                Ok(DedupRecords::Exact(records))
            }
            _ => Err(bad("unknown method")),
        }
    }
}

impl DedupResult {
    /// Writes the result (clusters, pairs, layout, index matches; not the
    /// timings) to `path` as JSON, atomically.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> Result<()> {
        let v = serde_json::json!({
            "clusters": self.clusters,
            "pairs": self.pairs,
            "layout": self.layout,
            "indexed": self.indexed,
        });
        write_atomically(path, |w| serde_json::to_writer(w, &v).map_err(std::io::Error::other))
    }

    /// Reads a result [`save`](Self::save) wrote (without timings).
    ///
    /// # Errors
    ///
    /// The file is missing or damaged.
    pub fn load(path: &Path) -> Result<DedupResult> {
        #[derive(serde::Deserialize)]
        struct Saved {
            clusters: Vec<super::Cluster>,
            pairs: Vec<super::Pair>,
            layout: String,
            indexed: Vec<Option<super::IndexMatch>>,
        }
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let s: Saved = serde_json::from_reader(BufReader::new(file))
            .map_err(|e| Error::IndexFile { path: path.into(), message: format!("not a checkpoint: {e}") })?;
        Ok(DedupResult {
            clusters: s.clusters,
            pairs: s.pairs,
            layout: s.layout,
            timings: Vec::new(),
            indexed: s.indexed,
        })
    }
}

/// Reads exactly `buf.len()` bytes, naming `path` in a failure.
fn read(r: &mut impl Read, buf: &mut [u8], path: &Path) -> Result<()> {
    r.read_exact(buf).map_err(|e| Error::io(path, e))
}

/// Writes `path` through `f` under a temporary name in its folder, synced
/// and renamed into place.
fn write_atomically(path: &Path, f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| super::spill::spill_error(dir, e, 0))?;
    let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
    f(&mut w).map_err(|e| super::spill::spill_error(dir, e, 0))?;
    w.flush().map_err(|e| super::spill::spill_error(dir, e, 0))?;
    drop(w);
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}
