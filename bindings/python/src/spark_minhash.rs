//! The Rust half of the Spark job's MinHash method: signatures of an
//! Arrow batch, the band keys of distinct signatures, and the links of a
//! shuffled partition by the core's [`LshDedup::band_links`] — so a
//! cluster is what `neardup dedup --method minhash` finds.
//!
//! A signature travels as a binary value (K little-endian u32s); a
//! distinct signature is named in the graph by its vertex, the XXH3-64 of
//! those bytes (the job checks that no two distinct signatures share one).

use std::collections::HashMap;

use neardup::dedup::{LshDedup, SignatureRecords};
use neardup::error::require_features;
use neardup::minhash::{estimate, Banding, LshConfig};
use neardup::similarity::round4;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use crate::arrow::{read_primitive, StringColumn};
use crate::minhash::MinHasher;
use crate::spark::le_bytes;
use crate::to_py;

/// The vertex of a signature's bytes.
fn vertex(bytes: &[u8]) -> i64 {
    xxhash_rust::xxh3::xxh3_64(bytes) as i64
}

/// The values of a signature's bytes.
fn values(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

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
    for (i, r) in results.into_iter().enumerate() {
        let start = sigs.len();
        let (n, c) = match r {
            Ok((Some(s), n, c)) => {
                sigs.extend(s.values().iter().flat_map(|v| v.to_le_bytes()));
                (n, c)
            }
            Ok((None, n, c)) => {
                sigs.resize(start + k * 4, 0);
                (n, c)
            }
            Err(e) => {
                errors.push((i, e));
                sigs.resize(start + k * 4, 0);
                (0, 0)
            }
        };
        vertices.push(vertex(&sigs[start..]));
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

/// The signatures of a binary column, each checked to be `k` values.
fn read_signatures(obj: &Bound<'_, PyAny>, k: usize, arg: &str) -> PyResult<Vec<Vec<u32>>> {
    let col = StringColumn::read_binary(obj)?
        .ok_or_else(|| PyTypeError::new_err(format!("{arg} must be a pyarrow binary array")))?;
    col.bytes()
        .enumerate()
        .map(|(i, b)| match b {
            Ok(Some(b)) if b.len() == k * 4 => Ok(values(b)),
            Ok(Some(b)) => Err(PyValueError::new_err(format!(
                "{arg}[{i}] has {} bytes, not the {} of a signature of {k} values",
                b.len(),
                k * 4
            ))),
            Ok(None) => Err(PyValueError::new_err(format!("{arg}[{i}] is null"))),
            Err(e) => Err(PyValueError::new_err(format!("{arg}[{i}]: {e}"))),
        })
        .collect()
}

/// The MinHash rule of a Spark job: the threshold, K and the banding (the
/// pipeline's), as the core's [`LshDedup`] applies it.
#[pyclass(module = "neardup._neardup", frozen)]
pub(crate) struct MinHashPlan {
    threshold: f64,
    permutations: usize,
    banding: Banding,
}

#[pymethods]
impl MinHashPlan {
    /// `MinHashPlan(threshold, permutations, bands, rows)`.
    #[new]
    fn new(threshold: f64, permutations: usize, bands: usize, rows: usize) -> PyResult<MinHashPlan> {
        let lsh = LshConfig { threshold, bands: Some(bands), rows: Some(rows), false_negative_weight: None };
        let banding = lsh.banding(permutations).map_err(PyValueError::new_err)?;
        Ok(MinHashPlan { threshold, permutations, banding })
    }

    /// The plan of a pipeline.
    #[staticmethod]
    fn of(minhasher: PyRef<'_, MinHasher>) -> MinHashPlan {
        let m = &minhasher.inner;
        MinHashPlan { threshold: m.threshold(), permutations: m.permutations(), banding: m.banding() }
    }

    /// The rule in words, as `neardup dedup` prints it.
    #[getter]
    fn rule(&self) -> String {
        format!("Jaccard ≥ {} ({} of {} values)", self.threshold, self.banding, self.permutations)
    }

    /// `(threshold, permutations, bands, rows)`.
    fn describe(&self) -> (f64, usize, usize, usize) {
        (self.threshold, self.permutations, self.banding.bands, self.banding.rows)
    }

    /// The band keys of a batch of distinct signatures: `(band i32, key
    /// i64, row i32)` as little-endian bytes, one row per input row and
    /// band (`row` indexes the input, to carry its vertex and signature).
    fn keys<'py>(
        &self,
        py: Python<'py>,
        signatures: &Bound<'py, PyAny>,
    ) -> PyResult<[Bound<'py, PyBytes>; 3]> {
        let sigs = read_signatures(signatures, self.permutations, "signatures")?;
        let (mut band, mut key, mut row) = (Vec::new(), Vec::new(), Vec::new());
        for (i, s) in sigs.iter().enumerate() {
            for b in 0..self.banding.bands {
                band.push(b as i32);
                key.push(self.banding.key(s, b) as i64);
                row.push(i as i32);
            }
        }
        Ok([
            le_bytes(py, &band, i32::to_le_bytes),
            le_bytes(py, &key, i64::to_le_bytes),
            le_bytes(py, &row, i32::to_le_bytes),
        ])
    }

    /// The links of one shuffled partition: rows `(band, key, vertex,
    /// signature)` in any order; the vertices of each run of equal `(band,
    /// key)` linked where their estimate reaches the threshold (the core's
    /// `LshDedup::band_links`, a spanning forest per partition). Out as
    /// `(a, b, similarity)` columns (i64, i64, f64).
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        band: &Bound<'py, PyAny>,
        key: &Bound<'py, PyAny>,
        vertex: &Bound<'py, PyAny>,
        signature: &Bound<'py, PyAny>,
    ) -> PyResult<[Bound<'py, PyBytes>; 3]> {
        let band: Vec<i32> = read_primitive(band, "band")?;
        let key: Vec<i64> = read_primitive(key, "key")?;
        let vertices: Vec<i64> = read_primitive(vertex, "vertex")?;
        let sigs = read_signatures(signature, self.permutations, "signature")?;
        let n = band.len();
        if [key.len(), vertices.len(), sigs.len()].iter().any(|&l| l != n) {
            return Err(PyValueError::new_err("pairs: the columns differ in length"));
        }
        let links = py.allow_threads(|| {
            let mut local: HashMap<i64, u32> = HashMap::new();
            let mut names: Vec<i64> = Vec::new();
            let mut records = SignatureRecords::new(self.permutations);
            let mut rows = Vec::with_capacity(n);
            for i in 0..n {
                let id = *local.entry(vertices[i]).or_insert_with(|| {
                    names.push(vertices[i]);
                    records.push(&sigs[i], 1, 0).expect("records held in memory take every push");
                    (names.len() - 1) as u32
                });
                rows.push(((band[i] as u32, key[i] as u64), id));
            }
            let dedup = LshDedup::new(self.threshold, self.banding);
            dedup.band_links(&records, &mut rows).map(|pairs| {
                pairs
                    .into_iter()
                    .map(|p| (names[p.a as usize], names[p.b as usize], p.score))
                    .collect::<Vec<_>>()
            })
        });
        let links = links.map_err(to_py)?;
        let a: Vec<i64> = links.iter().map(|l| l.0).collect();
        let b: Vec<i64> = links.iter().map(|l| l.1).collect();
        let s: Vec<f64> = links.iter().map(|l| l.2.unwrap_or(0.0)).collect();
        Ok([
            le_bytes(py, &a, i64::to_le_bytes),
            le_bytes(py, &b, i64::to_le_bytes),
            le_bytes(py, &s, f64::to_le_bytes),
        ])
    }

    /// The justified split of one shuffled partition of cluster members:
    /// rows `(signature binary, group i64)`, each component's rows adjacent
    /// and in keep order; out: for each row, the row (i32, of this
    /// partition) it is removed for, or itself when kept — the core's
    /// [`LshDedup::split_groups`].
    fn split<'py>(
        &self,
        py: Python<'py>,
        signature: &Bound<'py, PyAny>,
        groups: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sigs = read_signatures(signature, self.permutations, "signature")?;
        let groups: Vec<i64> = read_primitive(groups, "groups")?;
        if sigs.len() != groups.len() {
            return Err(PyValueError::new_err("split: the columns differ in length"));
        }
        let owners = py.allow_threads(|| {
            let mut records = SignatureRecords::new(self.permutations);
            for s in &sigs {
                records.push(s, 1, 0)?;
            }
            LshDedup::new(self.threshold, self.banding).split_groups(&records, &groups)
        });
        Ok(le_bytes(py, &owners.map_err(to_py)?, u32::to_le_bytes))
    }

    /// Pickles as its description, so Spark ships it to executors.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, PyObject)> {
        let args = self.describe().into_pyobject(py)?.into_any().unbind();
        Ok((py.get_type::<MinHashPlan>().into_any(), args))
    }
}

/// The estimated Jaccard similarity of each pair `a[i]`, `b[i]` of
/// signatures (binary columns), rounded to 4 places as `neardup dedup`
/// writes it; f64 little-endian bytes.
#[pyfunction]
pub(crate) fn spark_similarity<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    permutations: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let a = read_signatures(a, permutations, "a")?;
    let b = read_signatures(b, permutations, "b")?;
    if a.len() != b.len() {
        return Err(PyValueError::new_err(format!("{} signatures a but {} b", a.len(), b.len())));
    }
    let s: Vec<f64> = a.iter().zip(&b).map(|(x, y)| round4(estimate(x, y))).collect();
    Ok(le_bytes(py, &s, f64::to_le_bytes))
}
