//! Python bindings for neardup: the `neardup._neardup` extension module,
//! re-exported by the pure-Python package `neardup` (python/neardup).
//!
//! Fingerprints cross the boundary as Python `int`s (64 or 128 bits).
//! Batch calls release the GIL and fingerprint on all cores.

#![deny(missing_docs)]

mod args;
mod arrow;
mod batch;
mod clean;
mod datasketch;
mod index;
mod items;
mod minhash;
mod read;
mod spark;
mod spark_minhash;

pub(crate) use args::{as_fingerprint, as_text, Name};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    neardup,
    NeardupError,
    PyException,
    "An error from neardup that is neither bad input (ValueError) nor I/O (OSError)."
);

/// Maps a core error to the Python exception a caller expects.
pub(crate) fn to_py(e: neardup::Error) -> PyErr {
    match e {
        neardup::Error::Io { .. } => PyOSError::new_err(e.to_string()),
        neardup::Error::Config(_)
        | neardup::Error::ConfigSyntax { .. }
        | neardup::Error::UnknownPreset { .. }
        | neardup::Error::ParseFingerprint { .. }
        | neardup::Error::WidthMismatch { .. }
        | neardup::Error::NotUtf8 { .. }
        | neardup::Error::EmptyDocument => PyValueError::new_err(e.to_string()),
        e => NeardupError::new_err(e.to_string()),
    }
}

/// A text → fingerprint pipeline: a preset by name, or a configuration file.
#[pyclass(module = "neardup", frozen)]
pub(crate) struct Fingerprinter {
    pub(crate) inner: neardup::Fingerprinter,
}

#[pymethods]
impl Fingerprinter {
    /// `Fingerprinter(preset="default", config=None)`: `config`, a path to a
    /// TOML (or `.json`) pipeline configuration, wins over `preset`.
    #[new]
    #[pyo3(signature = (preset = "default", config = None))]
    fn new(preset: &str, config: Option<std::path::PathBuf>) -> PyResult<Fingerprinter> {
        let inner = match config {
            Some(path) => neardup::Fingerprinter::from_file(&path).map_err(to_py)?,
            None => neardup::Fingerprinter::preset(preset).map_err(to_py)?,
        };
        Ok(Fingerprinter { inner })
    }

    /// A pipeline from the text of a TOML configuration
    /// (`neardup config show default` prints one).
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<Fingerprinter> {
        let config = neardup::PipelineConfig::from_toml(text).map_err(to_py)?;
        Ok(Fingerprinter { inner: neardup::Fingerprinter::new(config).map_err(to_py)? })
    }

    /// The configuration as TOML.
    fn config_toml(&self) -> String {
        self.inner.config().to_toml()
    }

    /// The fingerprint width in bits (64 or 128).
    #[getter]
    fn bits(&self) -> u32 {
        self.inner.bits().get()
    }

    /// The fingerprint of one text, as an int.
    fn fingerprint(&self, text: &Bound<'_, PyAny>) -> PyResult<u128> {
        let s = as_text(text, Name::Arg("text"))?;
        Ok(self.inner.fingerprint(&s).value())
    }

    /// The fingerprint of `bytes`, as an int: UTF-8 gives what
    /// `fingerprint` gives for the text; other bytes only a byte-grams
    /// pipeline takes (the `ferd` preset), else ValueError.
    fn fingerprint_bytes(&self, data: &[u8]) -> PyResult<u128> {
        Ok(self.inner.fingerprint_bytes(data).map_err(to_py)?.value())
    }

    /// `"simhash"` (a `MinHasher`'s is `"minhash"`).
    #[getter]
    fn method(&self) -> &'static str {
        "simhash"
    }

    /// The near-duplicate rule in words, as `neardup` prints it (the same
    /// as `radius`; a `MinHasher` has `rule` too).
    #[getter]
    fn rule(&self) -> String {
        self.inner.radius().to_string()
    }

    /// The rule as data, as `neardup dedup` writes it in summary.json
    /// (`{"method": "simhash", …}`), a JSON text.
    fn rule_json(&self) -> String {
        neardup::detector::Detector::SimHash(self.inner.clone()).rule_json().to_string()
    }

    /// The fingerprint of one text by the empty-document rule every front
    /// end applies: a text without features (empty, or only punctuation or
    /// stop words) is a ValueError, not the fingerprint 0 that `fingerprint`
    /// gives it. The twin of `MinHasher.sign`.
    fn sign(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u128> {
        let s = as_text(text, Name::Arg("text"))?;
        Ok(py.allow_threads(|| self.inner.try_fingerprint(&s)).map_err(to_py)?.value())
    }

    /// The fingerprints of many texts, in order, computed on all cores with
    /// the GIL released. `texts`: a list or any iterable of str, or a
    /// pyarrow string array (read in place; other Arrow arrays through
    /// `to_pylist`). With `numpy=True` the answer is a numpy `uint64` array
    /// (64-bit pipelines only).
    #[pyo3(signature = (texts, numpy = false))]
    fn fingerprint_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        numpy: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let texts = args::Texts::read(texts, "texts")?;
        let strs = texts.strs("texts")?;
        let fps = py.allow_threads(|| self.inner.fingerprint_batch(&strs));
        if numpy {
            if self.inner.bits() != neardup::Bits::B64 {
                return Err(PyValueError::new_err(
                    "numpy=True needs a 64-bit pipeline (numpy has no uint128)",
                ));
            }
            let bytes: Vec<u8> = fps.iter().flat_map(|f| (f.value() as u64).to_le_bytes()).collect();
            let np = py.import("numpy")?;
            let array = np.call_method1("frombuffer", (PyBytes::new(py, &bytes), "<u8"))?;
            return array.call_method1("astype", ("uint64",));
        }
        Ok(PyList::new(py, fps.into_iter().map(|f| f.value()))?.into_any())
    }

    /// Why a text got its fingerprint: a dict with `fingerprint` (int),
    /// `features` (list of `(feature, weight, hash)` in voting order),
    /// `margins` (`margins[j]` for bit `j`, i.e. `fingerprint >> j & 1`: how
    /// far it was from flipping, as a share of `total_weight`; 0 is a tie)
    /// and `total_weight`.
    fn explain<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let s = as_text(text, Name::Arg("text"))?;
        let e = py.allow_threads(|| self.inner.explain(&s));
        let d = PyDict::new(py);
        d.set_item("fingerprint", e.fingerprint.value())?;
        let margins: Vec<f64> = (0..e.lanes.len()).map(|j| e.margin(j)).collect();
        d.set_item("margins", margins)?;
        let features: Vec<(String, f64, u128)> =
            e.features.into_iter().map(|f| (f.feature, f.weight, f.hash.value())).collect();
        d.set_item("features", features)?;
        d.set_item("total_weight", e.total_weight)?;
        Ok(d)
    }

    /// The pipeline's near-duplicate rule, as `neardup` prints it (e.g.
    /// `k = 8 below 600 features, else 4`): what `dedup`, `Index` and the
    /// Spark job use when no `k` is given.
    #[getter]
    fn radius(&self) -> String {
        self.inner.radius().to_string()
    }

    /// The shingle-Jaccard threshold at which `dedup` verifies this
    /// method's candidate pairs unless told otherwise (SimHash: 0.3).
    #[getter]
    fn default_verify(&self) -> Option<f64> {
        neardup::minhash::Method::Simhash.default_verify().map(|t| t.get())
    }

    /// The rule as data: `([(below_features, k), …], k beyond)`.
    #[getter]
    fn radius_steps(&self) -> (Vec<(usize, u32)>, u32) {
        let (steps, rest) = self.inner.radius().steps();
        (steps.to_vec(), rest)
    }

    /// The radius for two documents of `a` and `b` features (`b` defaults
    /// to `a`); `fingerprint_counted` gives a text's count.
    #[pyo3(signature = (a, b = None))]
    fn k_for(&self, a: usize, b: Option<usize>) -> u32 {
        self.inner.radius().k_for_pair(a, b.unwrap_or(a))
    }

    /// The fingerprint of one text and how many features voted (its
    /// length as the radius sees it).
    fn fingerprint_counted(&self, text: &Bound<'_, PyAny>) -> PyResult<(u128, usize)> {
        let s = as_text(text, Name::Arg("text"))?;
        let (f, n) = self.inner.fingerprint_counted(&s);
        Ok((f.value(), n))
    }

    /// The pipeline's id: 16 hex digits, the same for equal configurations
    /// (what `neardup` records in index files and summaries).
    #[getter]
    fn pipeline_id(&self) -> String {
        format!("{:016x}", self.inner.config().id())
    }

    fn __repr__(&self) -> String {
        format!("Fingerprinter(pipeline={:016x}, bits={})", self.inner.config().id(), self.bits())
    }

    /// Pickles as its configuration.
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(PyObject, (String,))> {
        let from_toml = py.get_type::<Fingerprinter>().getattr("from_toml")?.unbind();
        Ok((from_toml, (self.config_toml(),)))
    }
}

/// The number of bits in which two fingerprints differ.
#[pyfunction]
fn distance(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<u32> {
    Ok((as_fingerprint(a, Name::Arg("a"))? ^ as_fingerprint(b, Name::Arg("b"))?).count_ones())
}

/// `1 - distance / bits`, in [0, 1].
#[pyfunction]
#[pyo3(signature = (a, b, bits = 64))]
fn similarity(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, bits: u32) -> PyResult<f64> {
    if bits != 64 && bits != 128 {
        return Err(PyValueError::new_err(format!("bits must be 64 or 128, not {bits}")));
    }
    let (a, b) = (as_fingerprint(a, Name::Arg("a"))?, as_fingerprint(b, Name::Arg("b"))?);
    if bits == 64 && (a >> 64 != 0 || b >> 64 != 0) {
        return Err(PyValueError::new_err("a 128-bit fingerprint with bits=64; pass bits=128"));
    }
    Ok(1.0 - f64::from((a ^ b).count_ones()) / f64::from(bits))
}

/// The extension module.
#[pymodule]
fn _neardup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Fingerprinter>()?;
    m.add_class::<datasketch::Permuter>()?;
    m.add_class::<datasketch::Bands>()?;
    m.add_function(wrap_pyfunction!(datasketch::optimal_param, m)?)?;
    m.add_class::<index::Index>()?;
    m.add_class::<minhash::MinHasher>()?;
    m.add_class::<minhash::MinHashIndex>()?;
    m.add_function(wrap_pyfunction!(minhash::jaccard, m)?)?;
    m.add_function(wrap_pyfunction!(batch::pairs, m)?)?;
    m.add_function(wrap_pyfunction!(batch::dedup, m)?)?;
    m.add_function(wrap_pyfunction!(clean::boilerplate, m)?)?;
    m.add_function(wrap_pyfunction!(clean::substrings, m)?)?;
    m.add_function(wrap_pyfunction!(batch::pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(distance, m)?)?;
    m.add_class::<spark::SparkPlan>()?;
    m.add_function(wrap_pyfunction!(spark::spark_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(spark::components, m)?)?;
    m.add_class::<spark_minhash::MinHashPlan>()?;
    m.add_function(wrap_pyfunction!(spark_minhash::spark_sign, m)?)?;
    m.add_function(wrap_pyfunction!(spark::recommended_radius, m)?)?;
    m.add_function(wrap_pyfunction!(similarity, m)?)?;
    m.add_class::<read::Reader>()?;
    m.add_function(wrap_pyfunction!(read::read, m)?)?;
    m.add_function(wrap_pyfunction!(read::plan_inputs, m)?)?;
    m.add("NeardupError", m.py().get_type::<NeardupError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
