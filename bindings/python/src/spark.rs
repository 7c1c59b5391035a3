//! The Rust half of the Spark job (`neardup.spark`): one call per Arrow
//! batch or partition, never one per row.
//!
//! Fingerprints travel through Spark as longs (the u64 bit pattern); a
//! 128-bit one as two (its low and high 64 bits), its low bits naming it in
//! the graph (the job checks that no two distinct fingerprints share them). Columns come in as pyarrow arrays read
//! in place and go out as little-endian bytes that the Python side wraps
//! into Arrow arrays without copying.

use neardup::dedup::{Dedup, KeyRows, Records, ShardedDedup};
use neardup::error::require_features;
use neardup::index::cluster;
use neardup::Radius;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use crate::arrow::{read_primitive, StringColumn};
use crate::{to_py, Fingerprinter};

pub(crate) fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to: impl Fn(T) -> [u8; N],
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to(v));
    }
    PyBytes::new(py, &out)
}

/// Columns of a fingerprinted batch: fingerprints (i64; for a 128-bit one
/// its vertex, [`ShardedDedup::vertex`]), feature counts (i32), characters
/// (i64), `(row, message)` for rows that cannot be fingerprinted, and the
/// low and high 64 bits (i64 each) of 128-bit fingerprints (None for
/// 64-bit pipelines).
type Fingerprinted<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Vec<(usize, String)>,
    Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>,
);

/// Fingerprints one Arrow batch of texts on all cores with the GIL
/// released. Rows that cannot be fingerprinted (null, invalid UTF-8, no
/// features unless `allow_empty`) get fingerprint 0 and a message, the
/// same the command line gives, in the last item; they are not raised, so
/// the job can name them or skip them.
#[pyfunction]
pub(crate) fn spark_fingerprint<'py>(
    py: Python<'py>,
    fingerprinter: PyRef<'py, Fingerprinter>,
    texts: &Bound<'py, PyAny>,
    allow_empty: bool,
) -> PyResult<Fingerprinted<'py>> {
    let fingerprinter = &fingerprinter.inner;
    let col = StringColumn::read(texts)?
        .ok_or_else(|| PyTypeError::new_err("texts must be a pyarrow string or large_string array"))?;
    let items: Vec<Result<Option<&str>, String>> = col.items().collect();
    let results: Vec<Result<(u128, usize, usize), String>> = py.allow_threads(|| {
        items
            .par_iter()
            .map(|item| match item {
                Err(e) => Err(e.clone()),
                Ok(None) => Err("no text (null)".to_owned()),
                Ok(Some(t)) => {
                    let (f, n) = fingerprinter.fingerprint_counted(t);
                    require_features(n, allow_empty).map_err(|e| e.to_string())?;
                    Ok((f.value(), n, t.chars().count()))
                }
            })
            .collect()
    });
    let bits = fingerprinter.bits();
    let mut fps = Vec::with_capacity(results.len());
    let mut low = Vec::with_capacity(results.len());
    let mut high = Vec::with_capacity(results.len());
    let mut features = Vec::with_capacity(results.len());
    let mut chars = Vec::with_capacity(results.len());
    let mut errors = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        let (f, n, c) = r.unwrap_or_else(|e| {
            errors.push((i, e));
            (0, 0, 0)
        });
        fps.push(ShardedDedup::vertex(f, bits));
        low.push(f as u64);
        high.push((f >> 64) as u64);
        features.push(i32::try_from(n).unwrap_or(i32::MAX));
        chars.push(c as i64);
    }
    Ok((
        le_bytes(py, &fps, u64::to_le_bytes),
        le_bytes(py, &features, i32::to_le_bytes),
        le_bytes(py, &chars, i64::to_le_bytes),
        errors,
        (bits == neardup::Bits::B128)
            .then(|| (le_bytes(py, &low, u64::to_le_bytes), le_bytes(py, &high, u64::to_le_bytes))),
    ))
}

/// Fingerprints from Spark's signed longs: the low 64 bits, and the high
/// 64 bits of 128-bit ones.
fn read_fingerprints(
    low: &Bound<'_, PyAny>,
    high: Option<&Bound<'_, PyAny>>,
    arg: &str,
) -> PyResult<Vec<u128>> {
    let low: Vec<i64> = read_primitive(low, arg)?;
    let Some(high) = high else {
        return Ok(low.into_iter().map(|v| u128::from(v as u64)).collect());
    };
    let high: Vec<i64> = read_primitive(high, &format!("{arg} (high bits)"))?;
    if high.len() != low.len() {
        return Err(PyValueError::new_err(format!("{arg}: the high and low bits differ in length")));
    }
    Ok(low.into_iter().zip(high).map(|(l, h)| u128::from(h as u64) << 64 | u128::from(l as u64)).collect())
}

/// Words as Spark's longs: the low 64 bits, and the high 64 bits when the
/// plan is 128 bits wide.
fn words_out<'py>(
    py: Python<'py>,
    words: &[u128],
    wide: bool,
) -> (Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>) {
    let low: Vec<u64> = words.iter().map(|&w| w as u64).collect();
    let high = wide.then(|| {
        let high: Vec<u64> = words.iter().map(|&w| (w >> 64) as u64).collect();
        le_bytes(py, &high, u64::to_le_bytes)
    });
    (le_bytes(py, &low, u64::to_le_bytes), high)
}

/// The distributed all-pairs join of `neardup dedup`: the core's
/// [`ShardedDedup`] (the dedup plan's passes, each cut into shuffle groups;
/// which rows a fingerprint sends, how a run is verified, which pairs the
/// rule accepts). Only the Arrow glue is here.
#[pyclass(module = "neardup._neardup", frozen)]
pub(crate) struct SparkPlan {
    inner: ShardedDedup,
}

#[pymethods]
impl SparkPlan {
    /// `SparkPlan(steps, rest, n, blocks=None, bits=64)`: the radius as
    /// `[(below_features, k), …]` and the k beyond, for `n` distinct
    /// fingerprints of `bits` (64 or 128); `blocks` (one per pass) fixes
    /// the layouts, else each pass takes the fewest tables whose key groups
    /// stay under 2^23 rows.
    #[new]
    #[pyo3(signature = (steps, rest, n, blocks = None, bits = 64))]
    fn new(
        steps: Vec<(usize, u32)>,
        rest: u32,
        n: usize,
        blocks: Option<Vec<u32>>,
        bits: u32,
    ) -> PyResult<SparkPlan> {
        let bits = match bits {
            64 => neardup::Bits::B64,
            128 => neardup::Bits::B128,
            _ => return Err(PyValueError::new_err(format!("bits must be 64 or 128, not {bits}"))),
        };
        let radius = Radius::by_length(&steps, rest);
        let inner = ShardedDedup::with_bits(&radius, n, blocks.as_deref(), bits).map_err(to_py)?;
        Ok(SparkPlan { inner })
    }

    /// The radius, as `neardup dedup` prints it.
    #[getter]
    fn radius(&self) -> String {
        self.inner.plan().radius().to_string()
    }

    /// The fingerprints' width, 64 or 128.
    #[getter]
    fn bits(&self) -> u32 {
        self.inner.bits().get()
    }

    /// `[(k, below_features or None, blocks, tables), …]` per pass.
    fn describe(&self) -> Vec<(u32, Option<usize>, u32, usize)> {
        self.inner.passes().map(|(pass, spec, tables)| (pass.k, pass.below, spec.blocks, tables)).collect()
    }

    /// The rows a batch of distinct fingerprints (their low 64 bits, and
    /// `high`, the high 64 bits of 128-bit ones) sends into the shuffle:
    /// `(pass i32, table i32, key i64, permuted i64, features i32)` as
    /// little-endian bytes, one row per pass it belongs to and table, then
    /// for 128 bits the permuted words' high 64 bits (i64).
    #[pyo3(signature = (fingerprints, features, high = None))]
    fn keys<'py>(
        &self,
        py: Python<'py>,
        fingerprints: &Bound<'py, PyAny>,
        features: &Bound<'py, PyAny>,
        high: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let fps = read_fingerprints(fingerprints, self.high(high)?, "fingerprints")?;
        let feats: Vec<i32> = read_primitive(features, "features")?;
        if fps.len() != feats.len() {
            return Err(PyValueError::new_err(format!(
                "{} fingerprints but {} features",
                fps.len(),
                feats.len()
            )));
        }
        let feats: Vec<u32> = feats.into_iter().map(|n| n.max(0) as u32).collect();
        let mut rows = KeyRows::<u128>::default();
        if self.wide() {
            self.inner.keys(&fps, &feats, &mut rows);
        } else {
            let narrow: Vec<u64> = fps.iter().map(|&f| f as u64).collect();
            let mut r = KeyRows::<u64>::default();
            self.inner.keys(&narrow, &feats, &mut r);
            let permuted = r.permuted.iter().map(|&w| u128::from(w)).collect();
            rows = KeyRows { pass: r.pass, table: r.table, key: r.key, permuted, features: r.features };
        }
        let (low, high) = words_out(py, &rows.permuted, self.wide());
        let mut out = vec![
            le_bytes(py, &rows.pass, u32::to_le_bytes),
            le_bytes(py, &rows.table, u32::to_le_bytes),
            le_bytes(py, &rows.key, u64::to_le_bytes),
            low,
            le_bytes(py, &rows.features, u32::to_le_bytes),
        ];
        out.extend(high);
        Ok(out)
    }

    /// The edges of one shuffled partition: rows `(pass, table, key,
    /// permuted, features)` and, for 128 bits, the permuted words' high
    /// bits (any order; runs of equal `(pass, table, key)` are verified
    /// together, over-long ones split), out as `(a, b, distance)` columns
    /// (i64, i64, i32): the pair's fingerprints, `a < b` as unsigned words
    /// (128-bit ones named by their vertices), each pair once over all
    /// partitions.
    #[pyo3(signature = (pass_no, table, key, permuted, features, permuted_high = None))]
    #[allow(clippy::too_many_arguments)]
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        pass_no: &Bound<'py, PyAny>,
        table: &Bound<'py, PyAny>,
        key: &Bound<'py, PyAny>,
        permuted: &Bound<'py, PyAny>,
        features: &Bound<'py, PyAny>,
        permuted_high: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<[Bound<'py, PyBytes>; 3]> {
        // Spark's signed columns hold the core's unsigned values bit for bit
        // (a negative pass or table becomes one past every plan's, and is
        // refused by name).
        let words = read_fingerprints(permuted, self.high(permuted_high)?, "permuted")?;
        let pass = unsigned(read_primitive::<i32>(pass_no, "pass")?, |v| v as u32);
        let table = unsigned(read_primitive::<i32>(table, "table")?, |v| v as u32);
        let key = unsigned(read_primitive::<i64>(key, "key")?, |v| v as u64);
        let features = unsigned(read_primitive::<i32>(features, "features")?, |v| v.max(0) as u32);
        let edges: Vec<(u64, u64, u32)> = if self.wide() {
            let rows = KeyRows { pass, table, key, permuted: words, features };
            let links = py.allow_threads(|| self.inner.links(&rows)).map_err(to_py)?;
            let bits = self.inner.bits();
            let name = |w| ShardedDedup::vertex(w, bits);
            links.into_iter().map(|(a, b, d)| (name(a), name(b), d)).collect()
        } else {
            let permuted = words.into_iter().map(|w| w as u64).collect();
            let rows = KeyRows { pass, table, key, permuted, features };
            py.allow_threads(|| self.inner.links(&rows)).map_err(to_py)?
        };
        let a: Vec<u64> = edges.iter().map(|e| e.0).collect();
        let b: Vec<u64> = edges.iter().map(|e| e.1).collect();
        let d: Vec<u32> = edges.iter().map(|e| e.2).collect();
        Ok([
            le_bytes(py, &a, u64::to_le_bytes),
            le_bytes(py, &b, u64::to_le_bytes),
            le_bytes(py, &d, u32::to_le_bytes),
        ])
    }

    /// The justified split of one shuffled partition of cluster members:
    /// rows `(fingerprint i64, features i32, group i64)` (and `high`, the
    /// high bits of 128-bit fingerprints), each component's rows adjacent
    /// and in keep order; out: for each row, the row (i32, of this
    /// partition) it is removed for, or itself when kept — the core's
    /// [`Dedup::split_groups`](neardup::dedup::Dedup::split_groups). With
    /// `verify` (a shingle-Jaccard threshold), each link is verified on the
    /// rows' `texts` by `fingerprinter`'s text stages, as `neardup dedup`
    /// verifies.
    #[pyo3(signature = (fingerprints, features, groups, fingerprinter = None, texts = None, verify = None, high = None))]
    #[allow(clippy::too_many_arguments)]
    fn split<'py>(
        &self,
        py: Python<'py>,
        fingerprints: &Bound<'py, PyAny>,
        features: &Bound<'py, PyAny>,
        groups: &Bound<'py, PyAny>,
        fingerprinter: Option<PyRef<'py, Fingerprinter>>,
        texts: Option<&Bound<'py, PyAny>>,
        verify: Option<f64>,
        high: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let fps = read_fingerprints(fingerprints, self.high(high)?, "fingerprints")?;
        let feats: Vec<i32> = read_primitive(features, "features")?;
        let groups: Vec<i64> = read_primitive(groups, "groups")?;
        if fps.len() != feats.len() || fps.len() != groups.len() {
            return Err(PyValueError::new_err("split: the columns differ in length"));
        }
        let bits = self.inner.bits();
        let mut records = Records::new(bits);
        for (&f, &n) in fps.iter().zip(&feats) {
            records.push(neardup::Fingerprint::new(f, bits), n.max(0) as usize, 0);
        }
        let radius = self.inner.plan().radius();
        let owners = match (verify, fingerprinter, texts) {
            (None, _, _) => py.allow_threads(|| Dedup::new(radius).split_groups(&records, &groups)),
            (Some(t), Some(f), Some(texts)) => {
                let col = StringColumn::read(texts)?.ok_or_else(|| {
                    PyTypeError::new_err("texts must be a pyarrow string or large_string array")
                })?;
                let texts: Vec<&str> = col
                    .items()
                    .map(|t| t.map(Option::unwrap_or_default))
                    .collect::<Result<_, String>>()
                    .map_err(PyValueError::new_err)?;
                if texts.len() != fps.len() {
                    return Err(PyValueError::new_err("split: the columns differ in length"));
                }
                let threshold = neardup::dedup::Threshold::new(t).map_err(to_py)?.get();
                let stages = &f.inner;
                py.allow_threads(|| {
                    let verifier = neardup::dedup::ShingleJaccard::new(stages, &texts[..], threshold);
                    Dedup::new(radius).verify(&verifier).split_groups(&records, &groups)
                })
            }
            _ => return Err(PyValueError::new_err("split: verify needs the fingerprinter and the texts")),
        };
        Ok(le_bytes(py, &owners.map_err(to_py)?, u32::to_le_bytes))
    }

    /// Pickles as its description, so Spark ships it to executors.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, PyObject)> {
        let (steps, rest) = self.inner.plan().radius().steps();
        let args = (steps.to_vec(), rest, 0usize, Some(self.inner.blocks()), self.inner.bits().get())
            .into_pyobject(py)?
            .into_any()
            .unbind();
        Ok((py.get_type::<SparkPlan>().into_any(), args))
    }
}

impl SparkPlan {
    /// Whether the plan's fingerprints are 128 bits wide.
    fn wide(&self) -> bool {
        self.inner.bits() == neardup::Bits::B128
    }

    /// The high-bits column: required for 128 bits, refused for 64.
    fn high<'a, 'py>(&self, high: Option<&'a Bound<'py, PyAny>>) -> PyResult<Option<&'a Bound<'py, PyAny>>> {
        match (self.wide(), high) {
            (true, None) => Err(PyValueError::new_err("a 128-bit plan needs the high 64 bits of each word")),
            (false, Some(_)) => Err(PyValueError::new_err("a 64-bit plan takes no high bits")),
            (_, high) => Ok(high),
        }
    }
}

/// A signed Spark column as the core's unsigned values.
fn unsigned<S, U>(values: Vec<S>, to: impl Fn(S) -> U) -> Vec<U> {
    values.into_iter().map(to).collect()
}

/// Connected components of the graph with edges `a[i] — b[i]` (longs):
/// `(vertex, label)` columns (i64, i64) for every vertex of an edge, the
/// label being the smallest vertex of its component in Spark's (signed)
/// long order, as the DataFrame path labels them.
#[pyfunction]
pub(crate) fn components<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let a: Vec<i64> = read_primitive(a, "a")?;
    let b: Vec<i64> = read_primitive(b, "b")?;
    if a.len() != b.len() {
        return Err(PyValueError::new_err(format!("{} sources but {} targets", a.len(), b.len())));
    }
    let (vertices, labels) = py.allow_threads(|| cluster::components(&a, &b));
    Ok((le_bytes(py, &vertices, i64::to_le_bytes), le_bytes(py, &labels, i64::to_le_bytes)))
}

/// The radius a preset recommends for 64-bit fingerprints, as
/// `(steps, rest)` (what `neardup dedup` uses without `--k`).
#[pyfunction]
pub(crate) fn recommended_radius(preset: &str) -> PyResult<(Vec<(usize, u32)>, u32)> {
    let r = neardup::presets::recommended_radius(preset, neardup::Bits::B64).map_err(to_py)?;
    let (steps, rest) = r.steps();
    Ok((steps.to_vec(), rest))
}
