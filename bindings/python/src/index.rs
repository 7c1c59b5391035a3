//! `neardup.Index`: the permuted-table index, from Python.

use std::borrow::Cow;
use std::path::PathBuf;

use neardup::dedup::UNKNOWN_FEATURES;
use neardup::index::file::IndexFile;
use neardup::index::keys_from_names;
use neardup::index::{HammingIndex, KeyedIndex, Match, TableIndex};
use neardup::{Bits, Fingerprint};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString};

use crate::args::{not_one_str, type_name};
use crate::{to_py, Name};

/// An id as the index keys it: an int or a str.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Int(i64),
    Str(String),
}

impl Key {
    pub(crate) fn of(v: &Bound<'_, PyAny>, name: Name<'_>) -> PyResult<Key> {
        if let Ok(s) = v.downcast::<PyString>() {
            let _ = s;
            return Ok(Key::Str(crate::as_text(v, name)?.into_owned()));
        }
        if v.is_instance_of::<PyInt>() {
            return v
                .extract::<i64>()
                .map(Key::Int)
                .map_err(|_| PyValueError::new_err(format!("{name}: an int id must fit in 64 bits")));
        }
        Err(PyTypeError::new_err(format!("{name} must be str or int, not {}", type_name(v))))
    }

    /// The ids of a batch argument `ids`, each checked and named on error.
    pub(crate) fn all(ids: &Bound<'_, PyAny>) -> PyResult<Vec<Key>> {
        not_one_str(ids, "ids")?;
        ids.try_iter()?.enumerate().map(|(i, v)| Key::of(&v?, Name::Item("ids", i))).collect()
    }

    pub(crate) fn to_object(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(match self {
            Key::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
            Key::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        })
    }

    fn name(&self) -> String {
        match self {
            Key::Int(i) => i.to_string(),
            Key::Str(s) => s.clone(),
        }
    }
}

/// `Index(k=3, f=64)`: fingerprints by id, every one within k bits of a
/// query found exactly (permuted sorted tables; larger radii are exact too,
/// but read everything). Ids are str or int; inserting an id again replaces it.
#[pyclass(module = "neardup")]
pub(crate) struct Index {
    inner: KeyedIndex<Key>,
    k: u32,
}

impl Index {
    fn bits(&self) -> Bits {
        self.inner.index().bits()
    }

    fn fingerprint(&self, v: &Bound<'_, PyAny>, name: Name<'_>) -> PyResult<Fingerprint> {
        let value = crate::as_fingerprint(v, name)?;
        let bits = self.bits();
        if bits == Bits::B64 && value >> 64 != 0 {
            return Err(PyValueError::new_err(format!(
                "{name} is a 128-bit fingerprint for a 64-bit index (Index(f=128) holds them)"
            )));
        }
        Ok(Fingerprint::new(value, bits))
    }

    /// A batch of fingerprints, each checked and named on error.
    fn fingerprints(&self, v: &Bound<'_, PyAny>) -> PyResult<Vec<Fingerprint>> {
        v.try_iter()?.enumerate().map(|(i, x)| self.fingerprint(&x?, Name::Item("fingerprints", i))).collect()
    }

    fn matches(&self, py: Python<'_>, found: Vec<Match>) -> PyResult<Vec<(PyObject, u32)>> {
        self.inner.keyed(found).into_iter().map(|(key, d)| Ok((key.to_object(py)?, d))).collect()
    }

    fn radius(&self, k: Option<u32>) -> PyResult<u32> {
        let k = k.unwrap_or(self.k);
        neardup::Radius::fixed(k).validate(self.bits()).map_err(PyValueError::new_err)?;
        Ok(k)
    }
}

#[pymethods]
impl Index {
    /// An empty index for radius `k` over `f`-bit fingerprints (64 or 128).
    #[new]
    #[pyo3(signature = (k = 3, f = 64))]
    fn new(k: u32, f: u32) -> PyResult<Index> {
        let bits = match f {
            64 => Bits::B64,
            128 => Bits::B128,
            f => return Err(PyValueError::new_err(format!("f must be 64 or 128, not {f}"))),
        };
        let inner = TableIndex::builder().bits(bits).k(k).build().map_err(to_py)?;
        Ok(Index { inner: KeyedIndex::new(inner), k })
    }

    /// The default query radius (what the tables serve).
    #[getter]
    fn k(&self) -> u32 {
        self.k
    }

    /// Adds (or replaces) one fingerprint.
    fn insert(&mut self, id: &Bound<'_, PyAny>, fingerprint: &Bound<'_, PyAny>) -> PyResult<()> {
        let fp = self.fingerprint(fingerprint, Name::Arg("fingerprint"))?;
        self.inner.insert(Key::of(id, Name::Arg("id"))?, fp, UNKNOWN_FEATURES).map_err(to_py)
    }

    /// Adds many: `ids` and `fingerprints` of equal length.
    fn insert_batch(&mut self, ids: &Bound<'_, PyAny>, fingerprints: &Bound<'_, PyAny>) -> PyResult<()> {
        let keys = Key::all(ids)?;
        let fps = self.fingerprints(fingerprints)?;
        if keys.len() != fps.len() {
            return Err(PyValueError::new_err(format!("{} ids but {} fingerprints", keys.len(), fps.len())));
        }
        // One bulk load (a sorted segment) rather than one insert each; an
        // id repeated within the batch keeps its last fingerprint.
        let items = keys.into_iter().zip(fps).map(|(key, fp)| (key, fp, UNKNOWN_FEATURES)).collect();
        self.inner.insert_batch(items).map_err(to_py)
    }

    /// Removes an id; returns whether it was there.
    fn remove(&mut self, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.inner.remove(&Key::of(id, Name::Arg("id"))?).map_err(to_py)
    }

    /// `[(id, distance), …]` within `k` (default: the index's), nearest first.
    #[pyo3(signature = (fingerprint, k = None))]
    fn query(
        &self,
        py: Python<'_>,
        fingerprint: &Bound<'_, PyAny>,
        k: Option<u32>,
    ) -> PyResult<Vec<(PyObject, u32)>> {
        let (fp, k) = (self.fingerprint(fingerprint, Name::Arg("fingerprint"))?, self.radius(k)?);
        let found = self.inner.query_slots(fp, k).map_err(to_py)?;
        self.matches(py, found)
    }

    /// One `query` per fingerprint, on all cores with the GIL released.
    #[pyo3(signature = (fingerprints, k = None))]
    fn query_batch<'py>(
        &self,
        py: Python<'py>,
        fingerprints: &Bound<'py, PyAny>,
        k: Option<u32>,
    ) -> PyResult<Bound<'py, PyList>> {
        let fps = self.fingerprints(fingerprints)?;
        let k = self.radius(k)?;
        let found = py.allow_threads(|| self.inner.index().query_batch(&fps, k)).map_err(to_py)?;
        // Building many small lists and tuples sets off Python's cyclic GC
        // again and again (a fifth of the time at 10^5 queries); none of
        // them can form a cycle, so it is paused while they are made.
        let gc = py.import("gc")?;
        let was_enabled = gc.call_method0("isenabled")?.is_truthy()?;
        if was_enabled {
            gc.call_method0("disable")?;
        }
        let built = found
            .into_iter()
            .map(|f| self.matches(py, f))
            .collect::<PyResult<Vec<_>>>()
            .and_then(|lists| PyList::new(py, lists));
        if was_enabled {
            gc.call_method0("enable")?;
        }
        built
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, id: &Bound<'_, PyAny>) -> bool {
        Key::of(id, Name::Arg("id")).is_ok_and(|k| self.inner.contains(&k))
    }

    /// Writes the index file (the CLI's format; written atomically).
    /// Ids are stored as text: after `load`, int ids come back as str.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        let file = IndexFile {
            columns: Vec::new(),
            deferred: Vec::new(),
            index: self.inner.index().clone(),
            later: Vec::new(),
            names: Some(self.inner.keys().names(|k| Cow::Owned(k.name()))),
            features: None,
            meta: None,
        };
        file.write(&path).map_err(to_py)
    }

    /// Opens an index file written by `save` or by `neardup index build`.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Index> {
        let file = IndexFile::open(&path).map_err(to_py)?;
        let k = file.index.layout().k;
        let mut keys: Vec<Option<Key>> = match &file.names {
            Some(names) => keys_from_names(names, |s| Key::Str(s.to_owned())),
            None => Vec::new(),
        };
        let entries = file.index.entries();
        let top = entries.iter().map(|e| e.0 as usize + 1).max().unwrap_or(0);
        if file.names.is_none() {
            // A file without names (`index build --fingerprints` of bare
            // hex): its entry ids are the keys.
            keys = vec![None; top];
            for &(id, _) in &entries {
                keys[id as usize] = Some(Key::Int(id as i64));
            }
        }
        keys.resize(keys.len().max(top), None);
        let inner = KeyedIndex::from_slots(file.index, keys, None).map_err(to_py)?;
        Ok(Index { inner, k })
    }

    fn __repr__(&self) -> String {
        format!("Index(k={}, f={}, len={})", self.k, self.bits(), self.inner.len())
    }
}
