//! The Rust half of the Spark job's MinHash method: signatures of an
//! Arrow batch, then the three steps of the core's [`ShardedLsh`] — band
//! rows, a shuffled partition's candidates, a partition of groups'
//! clusters — so a cluster is what `neardup dedup --method minhash` finds.
//!
//! A signature travels as a binary value (K little-endian u32s), once; in
//! the band rows and the graph it is named by its vertex
//! ([`ShardedLsh::vertex`]).

use neardup::dedup::{ClusterMode, Keep, ShardedLsh, SignatureRecords};
use neardup::error::require_features;
use neardup::minhash::LshConfig;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use crate::arrow::{read_primitive, StringColumn};
use crate::minhash::MinHasher;
use crate::spark::le_bytes;
use crate::to_py;

/// Columns of a signed batch: signatures (K·4 bytes each, concatenated;
/// zeros for rows without one), vertices (i64), feature counts (i32),
/// characters (i64), and `(row, message)` for rows that cannot be signed.
type Signed<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Vec<(usize, String)>,
);

/// A signed row: its signature (none without features), features, characters.
type SignedRow = (Option<neardup::minhash::Signature>, usize, usize);

/// Signs one Arrow batch of texts on all cores with the GIL released. Rows
/// that cannot be signed (null, invalid UTF-8, no features unless
/// `allow_empty`) get a message, the command line's, in the last item; a
/// row without features under `allow_empty` has feature count 0 and never
/// links.
#[pyfunction]
pub(crate) fn spark_sign<'py>(
    py: Python<'py>,
    minhasher: PyRef<'py, MinHasher>,
    texts: &Bound<'py, PyAny>,
    allow_empty: bool,
) -> PyResult<Signed<'py>> {
    let minhasher = &minhasher.inner;
    let k = minhasher.permutations();
    let col = StringColumn::read(texts)?
        .ok_or_else(|| PyTypeError::new_err("texts must be a pyarrow string or large_string array"))?;
    let items: Vec<Result<Option<&str>, String>> = col.items().collect();
    let results: Vec<Result<SignedRow, String>> = py.allow_threads(|| {
        items
            .par_iter()
            .map(|item| match item {
                Err(e) => Err(e.clone()),
                Ok(None) => Err("no text (null)".to_owned()),
                Ok(Some(t)) => {
                    let (s, n) = minhasher.signature_counted(t).map_or((None, 0), |(s, n)| (Some(s), n));
                    require_features(n, allow_empty).map_err(|e| e.to_string())?;
                    Ok((s, n, t.chars().count()))
                }
            })
            .collect()
    });
    let mut sigs: Vec<u8> = Vec::with_capacity(results.len() * k * 4);
    let (mut vertices, mut features, mut chars, mut errors) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let zeros = vec![0u32; k];
    let no_signature = ShardedLsh::vertex(&zeros) as i64;
    for (i, r) in results.into_iter().enumerate() {
        let (n, c, v) = match r {
            Ok((Some(s), n, c)) => {
                sigs.extend(s.values().iter().flat_map(|v| v.to_le_bytes()));
                (n, c, ShardedLsh::vertex(s.values()) as i64)
            }
            Ok((None, n, c)) => {
                sigs.resize(sigs.len() + k * 4, 0);
                (n, c, no_signature)
            }
            Err(e) => {
                errors.push((i, e));
                sigs.resize(sigs.len() + k * 4, 0);
                (0, 0, no_signature)
            }
        };
        vertices.push(v);
        features.push(i32::try_from(n).unwrap_or(i32::MAX));
        chars.push(c as i64);
    }
    Ok((
        PyBytes::new(py, &sigs),
        le_bytes(py, &vertices, i64::to_le_bytes),
        le_bytes(py, &features, i32::to_le_bytes),
        le_bytes(py, &chars, i64::to_le_bytes),
        errors,
    ))
}

/// The signatures of a binary column, one after another, each checked to
/// be `k` values.
fn read_signatures(obj: &Bound<'_, PyAny>, k: usize, arg: &str) -> PyResult<Vec<u32>> {
    let col = StringColumn::read_binary(obj)?
        .ok_or_else(|| PyTypeError::new_err(format!("{arg} must be a pyarrow binary array")))?;
    let mut out = Vec::new();
    for (i, b) in col.bytes().enumerate() {
        match b {
            Ok(Some(b)) if b.len() == k * 4 => {
                out.extend(b.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            }
            Ok(Some(b)) => {
                return Err(PyValueError::new_err(format!(
                    "{arg}[{i}] has {} bytes, not the {} of a signature of {k} values",
                    b.len(),
                    k * 4
                )))
            }
            Ok(None) => return Err(PyValueError::new_err(format!("{arg}[{i}] is null"))),
            Err(e) => return Err(PyValueError::new_err(format!("{arg}[{i}]: {e}"))),
        }
    }
    Ok(out)
}

/// The longs of an Arrow column as the u64 bit patterns they carry.
fn read_words(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<Vec<u64>> {
    Ok(read_primitive::<i64>(obj, arg)?.into_iter().map(|v| v as u64).collect())
}

/// The MinHash rule of a Spark job: the threshold, K and the banding (the
/// pipeline's), as the core's [`ShardedLsh`] applies it.
#[pyclass(module = "neardup._neardup", frozen)]
pub(crate) struct MinHashPlan {
    permutations: usize,
    sharded: ShardedLsh,
}

#[pymethods]
impl MinHashPlan {
    /// `MinHashPlan(threshold, permutations, bands, rows)`.
    #[new]
    fn new(threshold: f64, permutations: usize, bands: usize, rows: usize) -> PyResult<MinHashPlan> {
        let lsh = LshConfig { threshold, bands: Some(bands), rows: Some(rows), false_negative_weight: None };
        let banding = lsh.banding(permutations).map_err(PyValueError::new_err)?;
        Ok(MinHashPlan { permutations, sharded: ShardedLsh::new(threshold, banding) })
    }

    /// The plan of a pipeline.
    #[staticmethod]
    fn of(minhasher: PyRef<'_, MinHasher>) -> MinHashPlan {
        let m = &minhasher.inner;
        MinHashPlan { permutations: m.permutations(), sharded: ShardedLsh::of(m) }
    }

    /// The rule in words, as `neardup dedup` prints it.
    #[getter]
    fn rule(&self) -> String {
        let s = &self.sharded;
        format!("Jaccard ≥ {} ({} of {} values)", s.threshold(), s.banding(), self.permutations)
    }

    /// `(threshold, permutations, bands, rows)`.
    fn describe(&self) -> (f64, usize, usize, usize) {
        let s = &self.sharded;
        (s.threshold(), self.permutations, s.banding().bands, s.banding().rows)
    }

    /// The band rows of a batch of signatures and their vertices (the
    /// core's [`ShardedLsh::band_rows`]) cut for `parts` shuffle
    /// partitions ([`ShardedLsh::part`]): for each, its rows packed
    /// as little-endian `(key, vertex)` u64 pairs — one Spark row per
    /// partition and batch instead of one per band and document.
    fn packed_keys<'py>(
        &self,
        py: Python<'py>,
        vertices: &Bound<'py, PyAny>,
        signatures: &Bound<'py, PyAny>,
        parts: usize,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        if parts == 0 {
            return Err(PyValueError::new_err("packed_keys: parts must be at least 1"));
        }
        let vertices = read_words(vertices, "vertices")?;
        let sigs = read_signatures(signatures, self.permutations, "signatures")?;
        if sigs.len() != vertices.len() * self.permutations {
            return Err(PyValueError::new_err("packed_keys: the columns differ in length"));
        }
        let packed = py.allow_threads(|| {
            let mut rows = Vec::new();
            self.sharded.band_rows(&sigs, &vertices, &mut rows);
            let mut out: Vec<Vec<u8>> = vec![Vec::new(); parts];
            for (key, vertex) in rows {
                let to = &mut out[ShardedLsh::part(key, parts)];
                to.extend_from_slice(&key.to_le_bytes());
                to.extend_from_slice(&vertex.to_le_bytes());
            }
            out
        });
        Ok(packed.iter().map(|b| PyBytes::new(py, b)).collect())
    }

    /// The candidate links of a shuffled partition of packed band rows (a
    /// binary column of [`packed_keys`](Self::packed_keys) values; the
    /// core's [`ShardedLsh::candidates`]): `(a, b)` as little-endian i64
    /// bytes.
    fn packed_candidates<'py>(
        &self,
        py: Python<'py>,
        packed: &Bound<'py, PyAny>,
    ) -> PyResult<[Bound<'py, PyBytes>; 2]> {
        let col = StringColumn::read_binary(packed)?
            .ok_or_else(|| PyTypeError::new_err("packed must be a pyarrow binary array"))?;
        let mut rows: Vec<(u64, u64)> = Vec::new();
        for (i, b) in col.bytes().enumerate() {
            let b = b.map_err(|e| PyValueError::new_err(format!("packed[{i}]: {e}")))?.unwrap_or_default();
            if b.len() % 16 != 0 {
                return Err(PyValueError::new_err(format!(
                    "packed[{i}] has {} bytes, not pairs of u64",
                    b.len()
                )));
            }
            rows.extend(b.chunks_exact(16).map(|r| {
                let word = |x: &[u8]| u64::from_le_bytes(x.try_into().expect("8 bytes"));
                (word(&r[..8]), word(&r[8..]))
            }));
        }
        Ok(words(py, py.allow_threads(|| ShardedLsh::candidates(&mut rows))))
    }

    /// The clusters of one shuffled partition of groups (the core's
    /// [`ShardedLsh::owners`]): rows `(signature, vertex, group,
    /// characters)`, each group's rows adjacent and in input order; `keep`
    /// and `clusters` as `neardup dedup` takes them. Out: for each row,
    /// the row it is removed for (or itself), its cluster's first row (u32
    /// each), its similarity to the kept row (f64) and whether it is in a
    /// cluster (u8).
    #[allow(clippy::too_many_arguments)]
    fn owners<'py>(
        &self,
        py: Python<'py>,
        signature: &Bound<'py, PyAny>,
        vertex: &Bound<'py, PyAny>,
        group: &Bound<'py, PyAny>,
        chars: &Bound<'py, PyAny>,
        keep: &str,
        clusters: &str,
    ) -> PyResult<[Bound<'py, PyBytes>; 4]> {
        let keep: Keep = keep.parse().map_err(to_py)?;
        let mode: ClusterMode = clusters.parse().map_err(to_py)?;
        let sigs = read_signatures(signature, self.permutations, "signature")?;
        let vertices = read_words(vertex, "vertex")?;
        let groups: Vec<i64> = read_primitive(group, "group")?;
        let chars: Vec<i64> = read_primitive(chars, "chars")?;
        if chars.len() != groups.len() || sigs.len() != groups.len() * self.permutations {
            return Err(PyValueError::new_err("owners: the columns differ in length"));
        }
        let owners = py.allow_threads(|| {
            let mut records = SignatureRecords::new(self.permutations);
            records.reserve(chars.len());
            for (s, &c) in sigs.chunks_exact(self.permutations).zip(&chars) {
                records.push(s, 1, c.max(0) as usize)?;
            }
            self.sharded.keep(keep).clusters(mode).owners(&records, &vertices, &groups)
        });
        let o = owners.map_err(to_py)?;
        let clustered: Vec<u8> = o.clustered.iter().map(|&c| u8::from(c)).collect();
        Ok([
            le_bytes(py, &o.owner, u32::to_le_bytes),
            le_bytes(py, &o.first, u32::to_le_bytes),
            le_bytes(py, &o.similarity, f64::to_le_bytes),
            PyBytes::new(py, &clustered),
        ])
    }

    /// Pickles as its description, so Spark ships it to executors.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, PyObject)> {
        let args = self.describe().into_pyobject(py)?.into_any().unbind();
        Ok((py.get_type::<MinHashPlan>().into_any(), args))
    }
}

/// Pairs of words as two columns of little-endian i64 bytes.
fn words(py: Python<'_>, pairs: Vec<(u64, u64)>) -> [Bound<'_, PyBytes>; 2] {
    let (a, b): (Vec<u64>, Vec<u64>) = pairs.into_iter().unzip();
    [le_bytes(py, &a, u64::to_le_bytes), le_bytes(py, &b, u64::to_le_bytes)]
}
