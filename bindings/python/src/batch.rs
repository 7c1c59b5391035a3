//! `neardup.pairs` and `neardup.dedup`: all pairs within k, and clusters.

use neardup::dedup::{Dedup, Keep, Records, ShingleJaccard};
use neardup::index::pairs::{all_pairs, AllPairs, PairsOptions};
use neardup::Radius;
use pyo3::exceptions::PyValueError;
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
    if k > bits {
        return Err(PyValueError::new_err(format!("k = {k} is more than the {bits} bits of a fingerprint")));
    }
    Ok(())
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
/// them: each cluster (two or more texts linked by the rule) as a list of
/// ids (or positions when `ids` is None), the kept text first (see
/// `keep`), then the others in input order; clusters ordered by their
/// first text. Texts in no cluster are unique. `fingerprinter` defaults to
/// the `default` preset; `k` to its radius (`Fingerprinter.radius`);
/// `verify` is a shingle-Jaccard threshold (`--verify jaccard:T`).
#[pyfunction]
#[pyo3(signature = (texts, k = None, ids = None, fingerprinter = None, keep = "first", verify = None))]
pub(crate) fn dedup<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    k: Option<u32>,
    ids: Option<&Bound<'py, PyAny>>,
    fingerprinter: Option<PyRef<'py, crate::Fingerprinter>>,
    keep: &str,
    verify: Option<f64>,
) -> PyResult<Bound<'py, PyList>> {
    let keep: Keep = keep.parse().map_err(to_py)?;
    if let Some(t) = verify {
        if !(0.0..=1.0).contains(&t) {
            return Err(PyValueError::new_err(format!(
                "verify must be a Jaccard threshold from 0 to 1, not {t}"
            )));
        }
    }
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
    let default;
    let fingerprinter = match &fingerprinter {
        Some(f) => &f.inner,
        None => {
            default = neardup::Fingerprinter::preset("default").map_err(to_py)?;
            &default
        }
    };
    let radius = k.map_or_else(|| fingerprinter.radius().clone(), Radius::fixed);
    radius.validate(fingerprinter.bits()).map_err(PyValueError::new_err)?;
    let found = py.allow_threads(|| {
        let records = Records::from_texts(fingerprinter, &owned);
        let verifier = verify.map(|t| ShingleJaccard::new(fingerprinter, &owned, t));
        let mut dedup = Dedup::new(&radius).keep(keep);
        if let Some(v) = &verifier {
            dedup = dedup.verify(v);
        }
        dedup.batch(&records)
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
