//! `neardup.pairs` and `neardup.dedup`: all pairs within k, and clusters.

use neardup::dedup::{ClusterMode, DedupOptions, ExactText, Keep, Threshold};
use neardup::detector::Detector;
use neardup::index::pairs::{all_pairs, AllPairs, PairsOptions};
use neardup::minhash::Method;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::args::{not_one_str, Texts};
use crate::{as_fingerprint, to_py, Name};

/// All pairs of `values` (of `bits` bits) within `k`, with the GIL released.
fn find(py: Python<'_>, values: Vec<u128>, bits: u32, k: u32) -> PyResult<AllPairs> {
    if bits == 64 {
        if let Some(i) = values.iter().position(|v| v >> 64 != 0) {
            return Err(PyValueError::new_err(format!(
                "fingerprints[{i}] has more than 64 bits; pass f=128"
            )));
        }
        let words: Vec<u64> = values.into_iter().map(|v| v as u64).collect();
        py.allow_threads(|| all_pairs(&words, 64, k, PairsOptions::default())).map_err(to_py)
    } else {
        py.allow_threads(|| all_pairs(&values, 128, k, PairsOptions::default())).map_err(to_py)
    }
}

/// Refuses a radius wider than the fingerprints (every pair would match).
fn radius(k: u32, bits: u32) -> PyResult<()> {
    let bits = neardup::Bits::try_from(bits).map_err(PyValueError::new_err)?;
    neardup::Radius::fixed(k).validate(bits).map_err(PyValueError::new_err)
}

fn width(f: u32) -> PyResult<u32> {
    match f {
        64 | 128 => Ok(f),
        f => Err(PyValueError::new_err(format!("f must be 64 or 128, not {f}"))),
    }
}

/// Every pair `(i, j, distance)`, `i < j`, of positions in `fingerprints`
/// whose fingerprints are within `k` bits, sorted.
#[pyfunction]
#[pyo3(signature = (fingerprints, k = 3, f = 64))]
pub(crate) fn pairs(
    py: Python<'_>,
    fingerprints: &Bound<'_, PyAny>,
    k: u32,
    f: u32,
) -> PyResult<Vec<(u32, u32, u32)>> {
    let bits = width(f)?;
    radius(k, bits)?;
    let values: Vec<u128> = fingerprints
        .try_iter()?
        .enumerate()
        .map(|(i, v)| as_fingerprint(&v?, Name::Item("fingerprints", i)))
        .collect::<PyResult<_>>()?;
    let ap = find(py, values, bits, k)?;
    let mut out = Vec::new();
    ap.for_each_pair(|i, j, d| out.push((i, j, d)));
    out.sort_unstable();
    Ok(out)
}

/// Groups of near-duplicate texts, exactly as `neardup dedup` clusters
/// them: each cluster as a list of ids (or positions when `ids` is None),
/// the kept text first (see `keep`), then the texts removed for it in
/// input order; clusters ordered by their first text. With
/// `clusters="justified"` (the default) every removed text is near (and,
/// with `verify`, verified against) the kept text of its cluster: chains
/// of neighbours are split in keep order. `clusters="components"` keeps
/// one text per connected component of near pairs instead. Texts in no
/// cluster are kept.
///
/// The pipeline, as `neardup dedup` resolves it: `fingerprinter` (a
/// `Fingerprinter` or a `MinHasher`), else the preset of `method`
/// (`"simhash"`: `default`; `"minhash"`: `minhash`), of the method `k`
/// (SimHash) or `threshold` (MinHash) implies, else of the default
/// method. `k` defaults to the pipeline's radius, `threshold` to its
/// Jaccard threshold; `verify` is a shingle-Jaccard threshold
/// (`--verify jaccard:T`), `False` for none (`--verify none`); by default
/// SimHash verifies (0.3) and MinHash does not, as `neardup dedup`. `method="exact"` groups identical texts only:
/// the pipeline's normalized texts (`exact="normalized"`) or the raw ones
/// (`exact="raw"`), as `neardup dedup --method exact --exact ...`.
#[pyfunction]
#[pyo3(signature = (texts, k = None, ids = None, fingerprinter = None, keep = "first", verify = None, method = None, threshold = None, exact = "normalized", clusters = "justified"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn dedup<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    k: Option<u32>,
    ids: Option<&Bound<'py, PyAny>>,
    fingerprinter: Option<&Bound<'py, PyAny>>,
    keep: &str,
    verify: Option<&Bound<'py, PyAny>>,
    method: Option<&str>,
    threshold: Option<f64>,
    exact: &str,
    clusters: &str,
) -> PyResult<Bound<'py, PyList>> {
    let keep: Keep = keep.parse().map_err(to_py)?;
    let clusters: ClusterMode = clusters.parse().map_err(to_py)?;
    let exact_mode: ExactText = exact.parse().map_err(to_py)?;
    let is_exact = method == Some("exact");
    // None: the method's default; False: none; a number: that threshold.
    let verify: Option<Option<f64>> = match verify {
        None => None,
        Some(v) if v.is_instance_of::<pyo3::types::PyBool>() => {
            if v.extract::<bool>()? {
                return Err(PyValueError::new_err(
                    "verify: a Jaccard threshold in (0, 1], or False for none",
                ));
            }
            Some(None)
        }
        Some(v) => Some(Some(v.extract::<f64>().map_err(|_| {
            PyTypeError::new_err("verify: a Jaccard threshold in (0, 1], or False for none")
        })?)),
    };
    if is_exact && (k.is_some() || threshold.is_some() || matches!(verify, Some(Some(_)))) {
        return Err(PyValueError::new_err(
            "method=\"exact\" finds identical texts: k, threshold and verify belong to simhash and minhash",
        ));
    }
    let method = if is_exact { None } else { method };
    let detector = detector(fingerprinter, method, k, threshold)?;
    let verify = match verify {
        Some(Some(t)) => Some(Threshold::new(t).map_err(|e| PyValueError::new_err(format!("verify: {e}")))?),
        Some(None) => None,
        None if is_exact => None,
        None => detector.default_verify(),
    };
    let texts = Texts::read(texts, "texts")?;
    let owned = texts.strs("texts")?;
    if let Some(ids) = ids {
        not_one_str(ids, "ids")?;
    }
    let ids: Option<Vec<PyObject>> =
        ids.map(|v| v.try_iter()?.map(|x| Ok(x?.unbind())).collect::<PyResult<_>>()).transpose()?;
    if let Some(ids) = &ids {
        if ids.len() != owned.len() {
            return Err(PyValueError::new_err(format!("{} texts but {} ids", owned.len(), ids.len())));
        }
    }
    let options = DedupOptions { keep, verify, clusters, ..DedupOptions::default() };
    let found = py.allow_threads(|| {
        let records =
            if is_exact { detector.exact_records(&owned, exact_mode) } else { detector.records_of(&owned) };
        detector.dedup(&records, &owned, &options)
    });
    let found = found.map_err(to_py)?;
    let out = PyList::empty(py);
    for c in found.clusters {
        let order = std::iter::once(c.kept).chain(c.members.iter().copied().filter(|&m| m != c.kept));
        let members: Vec<PyObject> = match &ids {
            Some(ids) => order.map(|i| ids[i as usize].clone_ref(py)).collect(),
            None => order
                .map(|i| match i.into_pyobject(py) {
                    Ok(v) => v.into_any().unbind(),
                    Err(never) => match never {},
                })
                .collect(),
        };
        out.append(members)?;
    }
    Ok(out)
}

/// The pipeline of a dedup call (see `dedup`), resolved by the core as the
/// command line resolves it.
fn detector(
    pipeline: Option<&Bound<'_, PyAny>>,
    method: Option<&str>,
    k: Option<u32>,
    threshold: Option<f64>,
) -> PyResult<Detector> {
    let given = match pipeline {
        None => None,
        Some(p) => {
            if let Ok(f) = p.downcast::<crate::Fingerprinter>() {
                Some(Detector::from(f.get().inner.clone()))
            } else if let Ok(m) = p.downcast::<crate::minhash::MinHasher>() {
                Some(Detector::from(m.get().inner.clone()))
            } else {
                return Err(PyTypeError::new_err(format!(
                    "fingerprinter must be a neardup.Fingerprinter or a neardup.MinHasher, not {}",
                    crate::args::type_name(p)
                )));
            }
        }
    };
    let method: Option<Method> = method.map(str::parse).transpose().map_err(to_py)?;
    Detector::for_dedup(given, method, k, threshold).map_err(to_py)
}

/// `neardup.pipeline(preset=None, config=None, method=None, k=None,
/// threshold=None)`: the pipeline every front end runs when told the same,
/// as `neardup dedup` resolves it (the core's `Detector::for_dedup`):
/// `config` (a file) or `preset`, else the preset of `method`, or of the
/// method `k` or `threshold` implies, else of the default method
/// (MinHash). A `MinHasher` (with the threshold set) or a `Fingerprinter`
/// (with the radius `k` fixed); both have `method`, `rule`, `sign` and
/// `index`.
#[pyfunction]
#[pyo3(signature = (preset = None, config = None, method = None, k = None, threshold = None))]
pub(crate) fn pipeline(
    py: Python<'_>,
    preset: Option<&str>,
    config: Option<std::path::PathBuf>,
    method: Option<&str>,
    k: Option<u32>,
    threshold: Option<f64>,
) -> PyResult<PyObject> {
    let given = match (preset, config) {
        (_, Some(path)) => Some(Detector::from_file(&path).map_err(to_py)?),
        (Some(name), None) => Some(Detector::preset(name).map_err(to_py)?),
        (None, None) => None,
    };
    let method: Option<Method> = method.map(str::parse).transpose().map_err(to_py)?;
    Ok(match Detector::for_dedup(given, method, k, threshold).map_err(to_py)? {
        Detector::SimHash(inner) => crate::Fingerprinter { inner }.into_pyobject(py)?.into_any().unbind(),
        Detector::MinHash(inner) => {
            crate::minhash::MinHasher { inner }.into_pyobject(py)?.into_any().unbind()
        }
    })
}
