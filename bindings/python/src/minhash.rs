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
    /// The feature hashes of a collection of str (a list read in place),
    /// each hashed as it is read; a non-str names its position.
    fn read_hashes(&self, v: &Bound<'_, PyAny>, arg: &str) -> PyResult<Vec<u64>> {
        not_one_str(v, arg)?;
        if let Ok(list) = v.downcast::<PyList>() {
            let mut hashes = ListHashes { minhasher: &self.inner, list, arg, at: 0, error: None };
            let out = hashes.by_ref().collect();
            return hashes.error.map_or(Ok(out), Err);
        }
        let mut out = Vec::with_capacity(v.len().unwrap_or(0));
        for (i, x) in v.try_iter()?.enumerate() {
            out.push(self.inner.feature_hash(&as_text(&x?, Name::Item(arg, i))?));
        }
        Ok(out)
    }

    /// The signature of a collection of str: a list's items folded into
    /// the signature as they are read (no vector of hashes), anything else
    /// through [`read_hashes`](Self::read_hashes).
    fn sign_features(&self, v: &Bound<'_, PyAny>, arg: &str) -> PyResult<Option<Signature>> {
        not_one_str(v, arg)?;
        let Ok(list) = v.downcast::<PyList>() else {
            return Ok(self.inner.signature_of_hashes(self.read_hashes(v, arg)?));
        };
        let mut hashes = ListHashes { minhasher: &self.inner, list, arg, at: 0, error: None };
        let sig = self.inner.signature_of_hashes(&mut hashes);
        hashes.error.map_or(Ok(sig), Err)
    }
}

/// The feature hashes of a list's items, each hashed as it is read: an
/// exact str in place (see [`crate::items`]), anything else by the
/// general path, which names what is wrong with it. The first error ends
/// the hashes and waits in `error`.
struct ListHashes<'a, 'py> {
    minhasher: &'a neardup::minhash::MinHasher,
    list: &'a Bound<'py, PyList>,
    arg: &'a str,
    at: usize,
    error: Option<PyErr>,
}

impl Iterator for ListHashes<'_, '_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        use pyo3::ffi;
        let i = self.at;
        // The length is read anew: the general path may run Python code.
        let len = self.list.len();
        if self.error.is_some() || i >= len {
            return None;
        }
        self.at += 1;
        if i + crate::items::PREFETCH_AHEAD < len {
            // SAFETY: the GIL is held and the index is below the length.
            unsafe { crate::items::prefetch_item(self.list.as_ptr(), i + crate::items::PREFETCH_AHEAD) };
        }
        // SAFETY: the GIL is held (`list` is bound to it), `i` is below the
        // length read above and no Python code has run since; the item is
        // borrowed from the list, which keeps it alive meanwhile.
        let item = unsafe { crate::items::list_item(self.list.as_ptr(), i) };
        // SAFETY: as above; `item` is a live object when not NULL.
        let exact_str = !item.is_null() && unsafe { ffi::PyUnicode_CheckExact(item) } != 0;
        if exact_str {
            // SAFETY: an exact str, alive while the list holds it.
            if let Some(bytes) = unsafe { crate::items::str_utf8(item) } {
                // SAFETY: a str's UTF-8 form (or an ASCII str's data) is UTF-8.
                let text = unsafe { std::str::from_utf8_unchecked(bytes) };
                return Some(self.minhasher.feature_hash(text));
            }
        }
        if item.is_null() || exact_str {
            // SAFETY: the GIL is held. A NULL item or a str without a UTF-8
            // form (a lone surrogate) left an error: the general path
            // raises its own, naming the item.
            unsafe { ffi::PyErr_Clear() };
        }
        let hash =
            |x: Bound<'_, PyAny>| Ok(self.minhasher.feature_hash(&as_text(&x, Name::Item(self.arg, i))?));
        match self.list.get_item(i).and_then(hash) {
            Ok(h) => Some(h),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
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
        let sig = self.sign_features(features, "features")?.ok_or_else(|| {
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
        // Each feature is hashed as it is read (no copy of it is kept). On
        // one thread, each set's hashes go straight into its signature;
        // else the signatures are made on all cores without the GIL.
        if rayon::current_num_threads() == 1 {
            let mut sigs = Vec::new();
            for (i, set) in feature_sets.try_iter()?.enumerate() {
                sigs.push(self.sign_features(&set?, &format!("feature_sets[{i}]"))?);
            }
            return signatures_out(py, sigs, self.inner.permutations(), numpy, "feature_sets");
        }
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
