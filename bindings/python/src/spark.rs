//! The Rust half of the Spark job (`neardup.spark`): one call per Arrow
//! batch or partition, never one per row.
//!
//! Fingerprints travel through Spark as longs (the u64 bit pattern), so
//! only 64-bit pipelines run there. Columns come in as pyarrow arrays read
//! in place and go out as little-endian bytes that the Python side wraps
//! into Arrow arrays without copying.

use neardup::dedup::Plan;
use neardup::index::cluster::UnionFind;
use neardup::index::sharded::{ShardedPairs, MAX_GROUP_ROWS};
use neardup::index::LayoutSpec;
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

/// Columns of a fingerprinted batch: fingerprints (i64), feature counts
/// (i32), characters (i64), and `(row, message)` for rows that cannot be
/// fingerprinted.
type Fingerprinted<'py> =
    (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Vec<(usize, String)>);

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
    if fingerprinter.bits() != neardup::Bits::B64 {
        return Err(PyValueError::new_err(
            "the Spark job carries fingerprints as 64-bit longs: use a 64-bit pipeline",
        ));
    }
    let col = StringColumn::read(texts)?
        .ok_or_else(|| PyTypeError::new_err("texts must be a pyarrow string or large_string array"))?;
    let items: Vec<Result<Option<&str>, String>> = col.items().collect();
    let results: Vec<Result<(u64, usize, usize), String>> = py.allow_threads(|| {
        items
            .par_iter()
            .map(|item| match item {
                Err(e) => Err(e.clone()),
                Ok(None) => Err("no text (null)".to_owned()),
                Ok(Some(t)) => match fingerprinter.fingerprint_counted(t) {
                    (_, 0) if !allow_empty => Err(neardup::Error::EmptyDocument.to_string()),
                    (f, n) => Ok((f.value() as u64, n, t.chars().count())),
                },
            })
            .collect()
    });
    let mut fps = Vec::with_capacity(results.len());
    let mut features = Vec::with_capacity(results.len());
    let mut chars = Vec::with_capacity(results.len());
    let mut errors = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        let (f, n, c) = r.unwrap_or_else(|e| {
            errors.push((i, e));
            (0, 0, 0)
        });
        fps.push(f);
        features.push(i32::try_from(n).unwrap_or(i32::MAX));
        chars.push(c as i64);
    }
    Ok((
        le_bytes(py, &fps, u64::to_le_bytes),
        le_bytes(py, &features, i32::to_le_bytes),
        le_bytes(py, &chars, i64::to_le_bytes),
        errors,
    ))
}

/// One pass of the core's [`Plan`], cut for a shuffle.
struct Pass {
    pass: neardup::dedup::Pass,
    sharded: ShardedPairs,
}

/// The distributed all-pairs join of `neardup dedup`: the core's dedup
/// [`Plan`] (pass 0 at the radius's smallest k over every distinct
/// fingerprint, then one pass per larger k over the fingerprints short
/// enough for it, each pair accepted by one pass), each pass cut into
/// shuffle groups by [`ShardedPairs`].
#[pyclass(module = "neardup._neardup", frozen)]
pub(crate) struct SparkPlan {
    plan: Plan,
    passes: Vec<Pass>,
}

#[pymethods]
impl SparkPlan {
    /// `SparkPlan(steps, rest, n, blocks=None)`: the radius as
    /// `[(below_features, k), …]` and the k beyond, for `n` distinct
    /// fingerprints; `blocks` (one per pass) fixes the layouts, else each
    /// pass takes the fewest tables whose key groups stay under 2^23 rows
    /// (`ShardedPairs::for_shuffle`).
    #[new]
    #[pyo3(signature = (steps, rest, n, blocks = None))]
    fn new(steps: Vec<(usize, u32)>, rest: u32, n: usize, blocks: Option<Vec<u32>>) -> PyResult<SparkPlan> {
        let radius = Radius::by_length(&steps, rest);
        // One row per distinct fingerprint (with its shortest document's
        // features) stands for its documents only if the radius shrinks as
        // documents grow (every preset's does).
        if !radius.shrinks_with_length() {
            return Err(PyValueError::new_err(
                "the Spark job needs a radius that does not grow with document length",
            ));
        }
        let plan = Plan::new(&radius);
        if let Some(b) = &blocks {
            if b.len() != plan.passes().len() {
                return Err(PyValueError::new_err(format!(
                    "{} passes but {} block counts",
                    plan.passes().len(),
                    b.len()
                )));
            }
        }
        let mut passes = Vec::new();
        for (i, &pass) in plan.passes().iter().enumerate() {
            let k = pass.k;
            if k >= 64 {
                return Err(PyValueError::new_err(format!("k = {k} must be below the 64 bits")));
            }
            let sharded = match &blocks {
                Some(b) => ShardedPairs::new(LayoutSpec { bits: 64, k, blocks: b[i] }),
                None => ShardedPairs::for_shuffle(64, k, n, MAX_GROUP_ROWS),
            };
            passes.push(Pass { pass, sharded: sharded.map_err(to_py)? });
        }
        Ok(SparkPlan { plan, passes })
    }

    /// The radius, as `neardup dedup` prints it.
    #[getter]
    fn radius(&self) -> String {
        self.plan.radius().to_string()
    }

    /// `[(k, below_features or None, blocks, tables), …]` per pass.
    fn describe(&self) -> Vec<(u32, Option<usize>, u32, usize)> {
        self.passes
            .iter()
            .map(|p| (p.pass.k, p.pass.below, p.sharded.spec().blocks, p.sharded.tables()))
            .collect()
    }

    /// The rows a batch of distinct fingerprints sends into the shuffle:
    /// `(pass i32, table i32, key i64, permuted i64, features i32)` as
    /// little-endian bytes, one row per pass it belongs to and table.
    fn keys<'py>(
        &self,
        py: Python<'py>,
        fingerprints: &Bound<'py, PyAny>,
        features: &Bound<'py, PyAny>,
    ) -> PyResult<[Bound<'py, PyBytes>; 5]> {
        let fps: Vec<i64> = read_primitive(fingerprints, "fingerprints")?;
        let feats: Vec<i32> = read_primitive(features, "features")?;
        if fps.len() != feats.len() {
            return Err(PyValueError::new_err(format!(
                "{} fingerprints but {} features",
                fps.len(),
                feats.len()
            )));
        }
        let (mut pass, mut table, mut key, mut permuted, mut feat) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (&f, &n) in fps.iter().zip(&feats) {
            for (pi, p) in self.passes.iter().enumerate() {
                if !p.pass.includes(n.max(0) as usize) {
                    continue;
                }
                for t in 0..p.sharded.tables() {
                    let w = p.sharded.permute(t, f as u64);
                    pass.push(pi as i32);
                    table.push(t as i32);
                    key.push(p.sharded.key(t, w) as i64);
                    permuted.push(w as i64);
                    feat.push(n);
                }
            }
        }
        Ok([
            le_bytes(py, &pass, i32::to_le_bytes),
            le_bytes(py, &table, i32::to_le_bytes),
            le_bytes(py, &key, i64::to_le_bytes),
            le_bytes(py, &permuted, i64::to_le_bytes),
            le_bytes(py, &feat, i32::to_le_bytes),
        ])
    }

    /// The edges of one shuffled partition: rows `(pass, table, key,
    /// permuted, features)` (any order; runs of equal `(pass, table, key)`
    /// are verified together, over-long ones split), out as `(a, b,
    /// distance)` columns (i64, i64, i32) with `a < b` as unsigned
    /// fingerprints, each pair once over all partitions.
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        pass_no: &Bound<'py, PyAny>,
        table: &Bound<'py, PyAny>,
        key: &Bound<'py, PyAny>,
        permuted: &Bound<'py, PyAny>,
        features: &Bound<'py, PyAny>,
    ) -> PyResult<[Bound<'py, PyBytes>; 3]> {
        let pass: Vec<i32> = read_primitive(pass_no, "pass")?;
        let table: Vec<i32> = read_primitive(table, "table")?;
        let key: Vec<i64> = read_primitive(key, "key")?;
        let permuted: Vec<i64> = read_primitive(permuted, "permuted")?;
        let features: Vec<i32> = read_primitive(features, "features")?;
        let n = pass.len();
        if [table.len(), key.len(), permuted.len(), features.len()].iter().any(|&l| l != n) {
            return Err(PyValueError::new_err("pairs: the columns differ in length"));
        }
        for i in 0..n {
            let p = self.passes.get(pass[i] as usize).ok_or_else(|| {
                PyValueError::new_err(format!("row {i}: pass {} is not in this plan", pass[i]))
            })?;
            if table[i] < 0 || table[i] as usize >= p.sharded.tables() {
                return Err(PyValueError::new_err(format!(
                    "row {i}: table {} is not in pass {}",
                    table[i], pass[i]
                )));
            }
        }
        let edges = py.allow_threads(|| self.edges(&pass, &table, &key, &permuted, &features));
        let (a, b, d): (Vec<i64>, Vec<i64>, Vec<i32>) = edges.into_iter().fold(
            (Vec::new(), Vec::new(), Vec::new()),
            |(mut a, mut b, mut d), (x, y, z)| {
                a.push(x as i64);
                b.push(y as i64);
                d.push(z as i32);
                (a, b, d)
            },
        );
        Ok([
            le_bytes(py, &a, i64::to_le_bytes),
            le_bytes(py, &b, i64::to_le_bytes),
            le_bytes(py, &d, i32::to_le_bytes),
        ])
    }

    /// Pickles as its description, so Spark ships it to executors.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, PyObject)> {
        let blocks: Vec<u32> = self.passes.iter().map(|p| p.sharded.spec().blocks).collect();
        let (steps, rest) = self.plan.radius().steps();
        let args = (steps.to_vec(), rest, 0usize, Some(blocks)).into_pyobject(py)?.into_any().unbind();
        Ok((py.get_type::<SparkPlan>().into_any(), args))
    }
}

impl SparkPlan {
    fn edges(
        &self,
        pass: &[i32],
        table: &[i32],
        key: &[i64],
        permuted: &[i64],
        features: &[i32],
    ) -> Vec<(u64, u64, u32)> {
        let mut order: Vec<usize> = (0..pass.len()).collect();
        order.sort_unstable_by_key(|&i| (pass[i], table[i], key[i], permuted[i] as u64));
        let mut out = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let head = order[start];
            let run_of = |i: usize| (pass[i], table[i], key[i]);
            let mut end = start + 1;
            while end < order.len() && run_of(order[end]) == run_of(head) {
                end += 1;
            }
            let pass_no = pass[head] as usize;
            let p = &self.passes[pass_no];
            let t = table[head] as usize;
            // (permuted, features), sorted by permuted; repeats keep the fewest features.
            let mut rows: Vec<(u64, i32)> =
                order[start..end].iter().map(|&i| (permuted[i] as u64, features[i])).collect();
            rows.sort_unstable();
            rows.dedup_by_key(|r| r.0);
            let words: Vec<u64> = rows.iter().map(|r| r.0).collect();
            let feats = |w: u64| {
                let pw = p.sharded.permute(t, w);
                rows[rows.partition_point(|r| r.0 < pw)].1.max(0) as usize
            };
            for (a, b, d) in p.sharded.group_pairs(t, words) {
                // Pass 0 takes every pair it finds (no lookups needed).
                if pass_no == 0 || self.plan.accepts(pass_no, d, feats(a), feats(b)) {
                    out.push((a, b, d));
                }
            }
            start = end;
        }
        out
    }
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
    let (vertices, labels) = py.allow_threads(|| {
        let mut vertices: Vec<i64> = a.iter().chain(&b).copied().collect();
        vertices.par_sort_unstable();
        vertices.dedup();
        let at = |v: i64| vertices.binary_search(&v).expect("a vertex") as u32;
        let mut uf = UnionFind::new(vertices.len());
        for (&x, &y) in a.iter().zip(&b) {
            uf.union(at(x), at(y));
        }
        // Vertices are sorted, so a component's first member is its smallest.
        let mut labels = vertices.clone();
        for c in uf.clusters() {
            for &m in &c {
                labels[m as usize] = vertices[c[0] as usize];
            }
        }
        (vertices, labels)
    });
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
