//! `neardup.MinHasher`, `neardup.MinHashIndex` and `neardup.jaccard`:
//! MinHash signatures from Python. A signature crosses the boundary as a
//! list of K ints (32-bit), or a numpy `uint32` array of shape (n, K) for
//! a batch.

use neardup::minhash::{Banding, KeyedLsh, LshConfig, Signature};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::args::{not_one_str, Texts};
use crate::index::Key;
use crate::{as_text, to_py, Name};

/// A text → signature pipeline: a MinHash preset by name, or a
/// configuration file with `method = "minhash"`.
#[pyclass(module = "neardup", frozen)]
pub(crate) struct MinHasher {
    pub(crate) inner: neardup::minhash::MinHasher,
}

/// The values of a signature argument of `k` values.
pub(crate) fn as_signature(v: &Bound<'_, PyAny>, k: usize, name: Name<'_>) -> PyResult<Vec<u32>> {
    let values: Vec<u32> = v.extract().map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be a signature: a list of {k} ints from 0 to 2**32 - 1 (MinHasher.signature gives one)"
        ))
    })?;
    if values.len() != k {
        return Err(PyValueError::new_err(format!(
            "{name} has {} values, not the {k} of this pipeline's signatures",
            values.len()
        )));
    }
    Ok(values)
}

/// `n` signatures of `k` values as a numpy `uint32` array of shape (n, k).
fn numpy_rows<'py>(py: Python<'py>, values: &[u32], k: usize) -> PyResult<Bound<'py, PyAny>> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let np = py.import("numpy")?;
    let flat = np.call_method1("frombuffer", (PyBytes::new(py, &bytes), "<u4"))?;
    flat.call_method1("astype", ("uint32",))?.call_method1("reshape", ((values.len() / k.max(1), k),))
}

/// Signatures as Python: a list of lists (None for a document without
/// features), or with `numpy` a (n, K) array, where a document without
/// features is an error naming it.
fn signatures_out<'py>(
    py: Python<'py>,
    sigs: Vec<Option<Signature>>,
    k: usize,
    numpy: bool,
    arg: &str,
) -> PyResult<Bound<'py, PyAny>> {
    if numpy {
        let mut flat = Vec::with_capacity(sigs.len() * k);
        for (i, s) in sigs.iter().enumerate() {
            match s {
                Some(s) => flat.extend_from_slice(s.values()),
                None => {
                    return Err(PyValueError::new_err(format!(
                        "{arg}[{i}] has no features (empty after normalization), so no signature; \
                         drop it, or use numpy=False (it gives None there)"
                    )))
                }
            }
        }
        return numpy_rows(py, &flat, k);
    }
    let out = PyList::empty(py);
    for s in sigs {
        match s {
            Some(s) => out.append(PyList::new(py, s.values())?)?,
            None => out.append(py.None())?,
        }
    }
    Ok(out.into_any())
}

impl MinHasher {
    /// Hashes the items of `list` that are exact `str` with valid UTF-8,
    /// from the first, into `out`, with one C call per item (the limited
    /// API's `PyList_GetItem` is the other; the type check is a pointer
    /// compare); returns where it stopped: the length, or the first item
    /// that is not an exact str or has no UTF-8 form (a lone surrogate).
    fn hash_exact_strs(&self, list: &Bound<'_, PyList>, out: &mut Vec<u64>) -> usize {
        use pyo3::ffi;
        let n = list.len();
        let p = list.as_ptr();
        for i in 0..n {
            // SAFETY: we hold the GIL (`list` is bound to it) and run no
            // Python code in this loop, so the list cannot change under it;
            // the item is borrowed from the list for this iteration only.
            // `PyList_GetItem` checks the index anyway (NULL, handled).
            let item = unsafe { ffi::PyList_GetItem(p, i as ffi::Py_ssize_t) };
            if item.is_null() {
                // SAFETY: the GIL is held; the IndexError is ours to drop.
                unsafe { ffi::PyErr_Clear() };
                return i;
            }
            // SAFETY: `item` is a live object (borrowed above).
            if unsafe { ffi::PyUnicode_CheckExact(item) } == 0 {
                return i;
            }
            let mut len: ffi::Py_ssize_t = 0;
            // SAFETY: `item` is a str; the UTF-8 buffer it returns lives
            // as long as the str, which outlives this iteration.
            let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(item, &mut len) };
            if data.is_null() {
                // SAFETY: the GIL is held; the general path raises its own.
                unsafe { ffi::PyErr_Clear() };
                return i;
            }
            // SAFETY: CPython's UTF-8 form of a str is `len` bytes of valid
            // UTF-8 at `data`.
            let text = unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast::<u8>(), len as usize))
            };
            out.push(self.inner.feature_hash(text));
        }
        n
    }

    /// The feature hashes of a collection of str (a list read in place),
    /// each hashed as it is read; a non-str names its position.
    fn read_hashes(&self, v: &Bound<'_, PyAny>, arg: &str) -> PyResult<Vec<u64>> {
        not_one_str(v, arg)?;
        if let Ok(list) = v.downcast::<PyList>() {
            let mut out = Vec::with_capacity(list.len());
            // The common case (every item an exact str) in place; the
            // first item that is not goes by the general path, which names
            // what is wrong with it.
            let from = self.hash_exact_strs(list, &mut out);
            for i in from..list.len() {
                out.push(self.inner.feature_hash(&as_text(&list.get_item(i)?, Name::Item(arg, i))?));
            }
            return Ok(out);
        }
        let mut out = Vec::with_capacity(v.len().unwrap_or(0));
        for (i, x) in v.try_iter()?.enumerate() {
            out.push(self.inner.feature_hash(&as_text(&x?, Name::Item(arg, i))?));
        }
        Ok(out)
    }
}

#[pymethods]
impl MinHasher {
    /// `MinHasher(preset="minhash", config=None, threshold=None)`:
    /// `config`, a path to a TOML (or `.json`) pipeline configuration
    /// with `method = "minhash"`, wins over `preset`; `threshold` replaces
    /// the pipeline's Jaccard threshold (the banding is chosen anew unless
    /// the configuration fixes it).
    #[new]
    #[pyo3(signature = (preset = "minhash", config = None, threshold = None))]
    fn new(preset: &str, config: Option<std::path::PathBuf>, threshold: Option<f64>) -> PyResult<MinHasher> {
        let detector = match config {
            Some(path) => neardup::detector::Detector::from_file(&path),
            None => neardup::detector::Detector::preset(preset),
        };
        let detector = detector
            .and_then(|d| d.with_method(Some(neardup::minhash::Method::Minhash), threshold))
            .map_err(to_py)?;
        let inner = detector.minhasher().expect("a MinHash pipeline").clone();
        Ok(MinHasher { inner })
    }

    /// A pipeline from the text of a TOML configuration
    /// (`neardup config show minhash` prints one).
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<MinHasher> {
        let config = neardup::PipelineConfig::from_toml(text).map_err(to_py)?;
        Ok(MinHasher { inner: neardup::minhash::MinHasher::new(config).map_err(to_py)? })
    }

    /// The configuration as TOML.
    fn config_toml(&self) -> String {
        self.inner.config().to_toml()
    }

    /// Values per signature (K).
    #[getter]
    fn permutations(&self) -> usize {
        self.inner.permutations()
    }

    /// The Jaccard threshold of a near duplicate.
    #[getter]
    fn threshold(&self) -> f64 {
        self.inner.threshold()
    }

    /// The LSH banding candidates are found by: `(bands, rows)`.
    #[getter]
    fn banding(&self) -> (usize, usize) {
        let b = self.inner.banding();
        (b.bands, b.rows)
    }

    /// The near-duplicate rule in words, as `neardup` prints it.
    #[getter]
    fn rule(&self) -> String {
        self.inner.banding().rule(self.inner.threshold(), self.inner.permutations())
    }

    /// The rule as data, as `neardup dedup` writes it in summary.json
    /// (`{"method": "minhash", "threshold", …}`), a JSON text.
    fn rule_json(&self) -> String {
        neardup::detector::Detector::MinHash(self.inner.clone()).rule_json().to_string()
    }

    /// `"minhash"` (a `Fingerprinter`'s is `"simhash"`).
    #[getter]
    fn method(&self) -> &'static str {
        "minhash"
    }

    /// The signature of one text (as `signature`: a text without features
    /// is a ValueError). The twin of `Fingerprinter.sign`.
    fn sign<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.signature(py, text)
    }

    /// The pipeline's id: 16 hex digits (what `neardup` records in
    /// summaries and data directories).
    #[getter]
    fn pipeline_id(&self) -> String {
        format!("{:016x}", self.inner.config().id())
    }

    /// The signature of one text: a list of K ints. A text without
    /// features (empty after normalization) is a ValueError.
    fn signature<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let s = as_text(text, Name::Arg("text"))?;
        let sig = self.inner.signature(&s).map_err(to_py)?;
        PyList::new(py, sig.values())
    }

    /// The signatures of many texts, in order, on all cores with the GIL
    /// released: a list of lists (None for a text without features), or
    /// with `numpy=True` a `uint32` array of shape (n, K). `texts` as for
    /// `Fingerprinter.fingerprint_batch` (a list, any iterable of str, a
    /// pyarrow string array).
    #[pyo3(signature = (texts, numpy = false))]
    fn signature_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        numpy: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let texts = Texts::read(texts, "texts")?;
        let strs = texts.strs("texts")?;
        let sigs = py.allow_threads(|| self.inner.signature_batch(&strs));
        signatures_out(py, sigs, self.inner.permutations(), numpy, "texts")
    }

    /// The signature of a set of features made elsewhere (e.g. shingles
    /// from your own tokenizer), hashed as they are, without the text
    /// stages; repeats count once. An empty set is a ValueError.
    fn signature_of_features<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let hashes = self.read_hashes(features, "features")?;
        let sig = self.inner.signature_of_hashes(hashes).ok_or_else(|| {
            PyValueError::new_err("features is empty: a signature needs at least one feature")
        })?;
        PyList::new(py, sig.values())
    }

    /// `signature_of_features` for many sets (a list of lists of str), on
    /// all cores with the GIL released; results as for `signature_batch`.
    #[pyo3(signature = (feature_sets, numpy = false))]
    fn signature_of_features_batch<'py>(
        &self,
        py: Python<'py>,
        feature_sets: &Bound<'py, PyAny>,
        numpy: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        not_one_str(feature_sets, "feature_sets")?;
        // Each feature is hashed as it is read (no copy of it is kept); the
        // signatures are then made on all cores without the GIL.
        let mut sets: Vec<Vec<u64>> = Vec::new();
        for (i, set) in feature_sets.try_iter()?.enumerate() {
            sets.push(self.read_hashes(&set?, &format!("feature_sets[{i}]"))?);
        }
        let sigs = py.allow_threads(|| {
            use rayon::prelude::*;
            sets.into_par_iter().map(|s| self.inner.signature_of_hashes(s)).collect::<Vec<_>>()
        });
        signatures_out(py, sigs, self.inner.permutations(), numpy, "feature_sets")
    }

    /// The features of a text (normalized, tokenized, filtered, shingled):
    /// the set a signature stands for.
    fn features(&self, text: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let s = as_text(text, Name::Arg("text"))?;
        Ok(self.inner.features(&s))
    }

    /// The exact Jaccard similarity of two texts' feature sets (what a
    /// signature pair estimates).
    fn exact_jaccard(&self, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (a, b) = (as_text(a, Name::Arg("a"))?, as_text(b, Name::Arg("b"))?);
        Ok(self.inner.exact_jaccard(&a, &b))
    }

    /// The exact Jaccard similarity of two texts' word 3-shingles: what
    /// `verify` compares.
    fn shingle_jaccard(&self, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (a, b) = (as_text(a, Name::Arg("a"))?, as_text(b, Name::Arg("b"))?);
        Ok(self.inner.shingle_jaccard(&a, &b))
    }

    /// An empty `MinHashIndex` with this pipeline's K, threshold and banding.
    fn index(&self) -> MinHashIndex {
        MinHashIndex::with(self.inner.banding(), self.inner.permutations(), self.inner.threshold())
    }

    fn __repr__(&self) -> String {
        format!(
            "MinHasher(pipeline={:016x}, permutations={}, threshold={})",
            self.inner.config().id(),
            self.inner.permutations(),
            self.inner.threshold()
        )
    }

    /// Pickles as its configuration.
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(PyObject, (String,))> {
        let from_toml = py.get_type::<MinHasher>().getattr("from_toml")?.unbind();
        Ok((from_toml, (self.config_toml(),)))
    }
}

/// The estimated Jaccard similarity of two signatures: the share of
/// positions where they agree.
#[pyfunction]
pub(crate) fn jaccard(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
    let a: Vec<u32> =
        a.extract().map_err(|_| PyValueError::new_err("a must be a signature: a list of ints"))?;
    let k = a.len();
    let b = as_signature(b, k, Name::Arg("b"))?;
    if k == 0 {
        return Err(PyValueError::new_err("a is empty: a signature has at least one value"));
    }
    Ok(neardup::minhash::estimate(&a, &b))
}

/// `MinHashIndex(threshold=0.5, permutations=128, bands=None, rows=None)`:
/// signatures by id (str or int), banded for lookup (LSH); a query finds
/// the entries sharing a band with it whose estimated similarity reaches
/// the threshold. The banding, unless given, is chosen for the threshold
/// as the `minhash` preset chooses it: a missed pair weighed 0.9 against a
/// needless candidate 0.1, since every candidate is confirmed by its
/// estimate (32 bands × 4 rows at 0.5; `MinHasher.index()` takes a
/// pipeline's). Inserting an id again replaces it.
#[pyclass(module = "neardup")]
pub(crate) struct MinHashIndex {
    inner: KeyedLsh<Key>,
    permutations: usize,
    threshold: f64,
}

impl MinHashIndex {
    fn with(banding: Banding, permutations: usize, threshold: f64) -> MinHashIndex {
        MinHashIndex { inner: KeyedLsh::new(banding, permutations), permutations, threshold }
    }

    fn threshold_of(&self, threshold: Option<f64>) -> PyResult<f64> {
        let t = threshold.unwrap_or(self.threshold);
        if !(t > 0.0 && t <= 1.0) {
            return Err(PyValueError::new_err(format!("threshold must be in (0, 1], not {t}")));
        }
        Ok(t)
    }

    fn matches(&self, py: Python<'_>, values: &[u32], threshold: f64) -> PyResult<Vec<(PyObject, f64)>> {
        self.inner
            .query(values, threshold)
            .into_iter()
            .map(|(key, m)| Ok((key.to_object(py)?, m.similarity)))
            .collect()
    }
}

#[pymethods]
impl MinHashIndex {
    #[new]
    #[pyo3(signature = (threshold = 0.5, permutations = 128, bands = None, rows = None))]
    fn new(
        threshold: f64,
        permutations: usize,
        bands: Option<usize>,
        rows: Option<usize>,
    ) -> PyResult<MinHashIndex> {
        let lsh = LshConfig {
            threshold,
            bands,
            rows,
            false_negative_weight: Some(neardup::config::presets::MINHASH_FALSE_NEGATIVE_WEIGHT),
        };
        let banding = lsh.banding(permutations).map_err(PyValueError::new_err)?;
        if permutations == 0 || permutations > neardup::minhash::MAX_PERMUTATIONS {
            return Err(PyValueError::new_err(format!(
                "permutations must be from 1 to {}, not {permutations}",
                neardup::minhash::MAX_PERMUTATIONS
            )));
        }
        Ok(MinHashIndex::with(banding, permutations, threshold))
    }

    /// The default query threshold.
    #[getter]
    fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Values per signature (K).
    #[getter]
    fn permutations(&self) -> usize {
        self.permutations
    }

    /// `(bands, rows)`.
    #[getter]
    fn banding(&self) -> (usize, usize) {
        let b = self.inner.banding();
        (b.bands, b.rows)
    }

    /// Adds (or replaces) one signature.
    fn insert(&mut self, id: &Bound<'_, PyAny>, signature: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = Key::of(id, Name::Arg("id"))?;
        let values = as_signature(signature, self.permutations, Name::Arg("signature"))?;
        self.inner.insert(key, &values);
        Ok(())
    }

    /// Adds many: `ids` and `signatures` (a list of lists, or a (n, K)
    /// numpy array) of equal length; checked whole before any is added.
    fn insert_batch(&mut self, ids: &Bound<'_, PyAny>, signatures: &Bound<'_, PyAny>) -> PyResult<()> {
        let keys = Key::all(ids)?;
        let sigs: Vec<Vec<u32>> = signatures
            .try_iter()?
            .enumerate()
            .map(|(i, v)| as_signature(&v?, self.permutations, Name::Item("signatures", i)))
            .collect::<PyResult<_>>()?;
        if keys.len() != sigs.len() {
            return Err(PyValueError::new_err(format!("{} ids but {} signatures", keys.len(), sigs.len())));
        }
        for (key, values) in keys.into_iter().zip(sigs) {
            self.inner.insert(key, &values);
        }
        Ok(())
    }

    /// Removes an id; returns whether it was there.
    fn remove(&mut self, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = Key::of(id, Name::Arg("id"))?;
        Ok(self.inner.remove(&key))
    }

    /// `[(id, similarity), …]`: the entries sharing a band with
    /// `signature` whose estimated Jaccard similarity is at least
    /// `threshold` (default: the index's), most similar first.
    #[pyo3(signature = (signature, threshold = None))]
    fn query(
        &self,
        py: Python<'_>,
        signature: &Bound<'_, PyAny>,
        threshold: Option<f64>,
    ) -> PyResult<Vec<(PyObject, f64)>> {
        let values = as_signature(signature, self.permutations, Name::Arg("signature"))?;
        let t = self.threshold_of(threshold)?;
        self.matches(py, &values, t)
    }

    /// One `query` per signature.
    #[pyo3(signature = (signatures, threshold = None))]
    fn query_batch(
        &self,
        py: Python<'_>,
        signatures: &Bound<'_, PyAny>,
        threshold: Option<f64>,
    ) -> PyResult<Vec<Vec<(PyObject, f64)>>> {
        let t = self.threshold_of(threshold)?;
        signatures
            .try_iter()?
            .enumerate()
            .map(|(i, v)| {
                let values = as_signature(&v?, self.permutations, Name::Item("signatures", i))?;
                self.matches(py, &values, t)
            })
            .collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, id: &Bound<'_, PyAny>) -> bool {
        Key::of(id, Name::Arg("id")).is_ok_and(|k| self.inner.contains(&k))
    }

    fn __repr__(&self) -> String {
        let b = self.inner.banding();
        format!(
            "MinHashIndex(threshold={}, permutations={}, bands={}, rows={}, len={})",
            self.threshold,
            self.permutations,
            b.bands,
            b.rows,
            self.inner.len()
        )
    }
}
