//! The kernels under `neardup.datasketch` (the drop-in for datasketch
//! 2.0.0): permutations, SHA-1 feature hashing and the min-update, and the
//! exact band tables of `MinHashLSH`. The Python classes keep datasketch's
//! attributes (numpy `hashvalues` and `permutations`) and call these for
//! the arithmetic, which lives in `neardup::minhash::datasketch`.

use neardup::minhash::datasketch::{BandIndex, Permutations, Scheme};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyTuple};
use rayon::prelude::*;

fn scheme(name: &str) -> PyResult<Scheme> {
    Scheme::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!("scheme must be one of affine32, affine64, legacy, got {name:?}"))
    })
}

/// `f` of the items of a list or tuple of `bytes`, borrowed without
/// touching their reference counts; `None` when one is not `bytes`. The
/// GIL stays held and no Python code runs while `f` does, so the
/// container cannot change under it.
fn with_byte_slices<'a, R>(items: &'a Bound<'_, PyAny>, f: impl FnOnce(&[&'a [u8]]) -> R) -> Option<R> {
    let mut slices: Vec<&'a [u8]> = Vec::new();
    if let Ok(list) = items.downcast::<PyList>() {
        slices.reserve(list.len());
        for i in 0..list.len() {
            // SAFETY: i < len; the item is a borrowed reference the list
            // keeps alive while the GIL is held and nothing mutates it.
            let item = unsafe { crate::items::list_item(list.as_ptr(), i) };
            slices.push(bytes_of(item)?);
        }
    } else if let Ok(tuple) = items.downcast::<PyTuple>() {
        for item in tuple.iter_borrowed() {
            slices.push(bytes_of(item.as_ptr())?);
        }
    } else {
        return None;
    }
    Some(f(&slices))
}

/// The contents of a `bytes` object (`None` for anything else), borrowed.
fn bytes_of<'a>(item: *mut pyo3::ffi::PyObject) -> Option<&'a [u8]> {
    use pyo3::ffi;
    // SAFETY: `item` is a live object (a borrowed list or tuple item); a
    // bytes object's buffer holds its size in bytes and never changes.
    unsafe {
        if item.is_null() {
            return None;
        }
        let exact = std::ptr::eq(ffi::Py_TYPE(item), std::ptr::addr_of_mut!(ffi::PyBytes_Type));
        if !exact && ffi::PyBytes_Check(item) == 0 {
            return None;
        }
        let mut data: *mut std::os::raw::c_char = std::ptr::null_mut();
        let mut len: ffi::Py_ssize_t = 0;
        if ffi::PyBytes_AsStringAndSize(item, &mut data, &mut len) != 0 {
            ffi::PyErr_Clear();
            return None;
        }
        Some(std::slice::from_raw_parts(data.cast::<u8>(), len as usize))
    }
}

/// The permutations of one MinHash family: `Permuter.draw(scheme, seed,
/// num_perm)` or `Permuter(scheme, a, b)`.
#[pyclass(module = "neardup._neardup", frozen)]
pub(crate) struct Permuter {
    inner: Permutations,
}

impl Permuter {
    /// Hash values from their native-endian bytes (`ndarray.tobytes()`).
    fn values(&self, bytes: &[u8]) -> PyResult<Values> {
        let n = self.inner.len();
        let width = self.inner.scheme().value_bytes();
        if bytes.len() != n * width {
            return Err(PyValueError::new_err(format!(
                "{} bytes of hash values for {n} permutations of {width} bytes",
                bytes.len()
            )));
        }
        Ok(if width == 4 { Values::U32(words(bytes)) } else { Values::U64(words(bytes)) })
    }
}

/// Native-endian words of a byte string whose length is a multiple of
/// their size.
fn words<T: Word>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::from_ne).collect()
}

trait Word: Sized {
    const SIZE: usize;
    fn from_ne(b: &[u8]) -> Self;
}

impl Word for u32 {
    const SIZE: usize = 4;
    fn from_ne(b: &[u8]) -> u32 {
        u32::from_ne_bytes(b.try_into().expect("4 bytes"))
    }
}

impl Word for u64 {
    const SIZE: usize = 8;
    fn from_ne(b: &[u8]) -> u64 {
        u64::from_ne_bytes(b.try_into().expect("8 bytes"))
    }
}

enum Values {
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Values {
    fn into_bytearray(self, py: Python<'_>) -> Bound<'_, PyByteArray> {
        match self {
            Values::U32(v) => {
                PyByteArray::new(py, &v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>())
            }
            Values::U64(v) => {
                PyByteArray::new(py, &v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>())
            }
        }
    }
}

#[pymethods]
impl Permuter {
    /// Permutations from their parameters (`a` odd for the affine schemes).
    #[new]
    fn new(scheme_name: &str, a: Vec<u64>, b: Vec<u64>) -> PyResult<Permuter> {
        let inner = Permutations::from_parts(scheme(scheme_name)?, a, b)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Permuter { inner })
    }

    /// The permutations datasketch draws from `np.random.RandomState(seed)`.
    #[staticmethod]
    fn draw(scheme_name: &str, seed: u32, num_perm: usize) -> PyResult<Permuter> {
        Ok(Permuter { inner: Permutations::draw(scheme(scheme_name)?, seed, num_perm) })
    }

    /// `a` then `b`, each `num_perm` native-endian `u64`s.
    fn parameters<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes: Vec<u8> =
            self.inner.a().iter().chain(self.inner.b()).flat_map(|x| x.to_ne_bytes()).collect();
        PyBytes::new(py, &bytes)
    }

    /// `values` (the bytes of a numpy array of the scheme's dtype) lowered by `items`
    /// (a list or tuple of `bytes`) hashed with SHA-1, as a new bytearray;
    /// `None`, with nothing done, when an item is not `bytes`.
    fn update_bytes<'py>(
        &self,
        py: Python<'py>,
        values: &[u8],
        items: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyByteArray>>> {
        let mut v = self.values(values)?;
        let done = with_byte_slices(items, |slices| match &mut v {
            Values::U32(v) => self.inner.update_bytes32(slices, v),
            Values::U64(v) => self.inner.update_bytes64(slices, v),
        });
        Ok(done.map(|()| v.into_bytearray(py)))
    }

    /// `values` lowered by hash values (the bytes of a numpy array: `uint32`
    /// for affine32, `uint64` otherwise), as a new bytearray.
    fn update_hashes<'py>(
        &self,
        py: Python<'py>,
        values: &[u8],
        hashes: &[u8],
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let mut v = self.values(values)?;
        let width = self.inner.scheme().value_bytes();
        if !hashes.len().is_multiple_of(width) {
            return Err(PyValueError::new_err(format!("hash values of {width} bytes expected")));
        }
        match &mut v {
            Values::U32(v) => self.inner.update32(&words(hashes), v),
            Values::U64(v) => self.inner.update64(&words(hashes), v),
        }
        Ok(v.into_bytearray(py))
    }

    /// The values of many sets of `bytes` items (a list of lists), from
    /// empty, on every core: one bytearray of `len(sets) · num_perm`
    /// values. `None` when an item is not `bytes`.
    ///
    /// The items are read where they are, borrowed: the calling thread keeps
    /// the GIL while the pool's threads (which never touch a Python object)
    /// hash them, so no Python code can change them meanwhile. Copying them
    /// out to release the GIL, and reading the next sets while hashing the
    /// last, were both slower on two cores (bench/RESULTS.md).
    fn bulk_bytes<'py>(
        &self,
        py: Python<'py>,
        sets: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyByteArray>>> {
        let p = &self.inner;
        let row = p.len() * p.scheme().value_bytes();
        let sets: Vec<Bound<'py, PyAny>> = sets.try_iter()?.collect::<PyResult<_>>()?;
        let mut out = vec![0u8; sets.len() * row];
        let mut slices: Vec<&[u8]> = Vec::new();
        let mut bounds = vec![0usize];
        for set in &sets {
            if with_byte_slices(set, |items| slices.extend_from_slice(items)).is_none() {
                return Ok(None);
            }
            bounds.push(slices.len());
        }
        out.par_chunks_mut(row).enumerate().for_each(|(j, chunk)| {
            sign_into(p, &slices[bounds[j]..bounds[j + 1]], chunk);
        });
        Ok(Some(PyByteArray::new(py, &out)))
    }
}

/// The values of one set of items, from empty, as native-endian bytes.
fn sign_into(p: &Permutations, items: &[&[u8]], out: &mut [u8]) {
    if p.scheme() == Scheme::Affine32 {
        let mut v = p.empty32();
        p.update_bytes32(items, &mut v);
        for (c, x) in out.chunks_exact_mut(4).zip(v) {
            c.copy_from_slice(&x.to_ne_bytes());
        }
    } else {
        let mut v = p.empty64();
        p.update_bytes64(items, &mut v);
        for (c, x) in out.chunks_exact_mut(8).zip(v) {
            c.copy_from_slice(&x.to_ne_bytes());
        }
    }
}

/// `f` of the bytes of `blob`: a `bytes` object, or a C-contiguous numpy
/// array read where it lies (through `__array_interface__`, without a
/// copy). The bytes are used with the GIL held and `blob` referenced.
fn with_blob<R>(blob: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    if let Ok(bytes) = blob.downcast::<PyBytes>() {
        return f(bytes.as_bytes());
    }
    let bad = || PyValueError::new_err("expected bytes or a C-contiguous numpy array");
    let iface = blob.getattr("__array_interface__").map_err(|_| bad())?;
    if !iface.get_item("strides")?.is_none() {
        return Err(bad());
    }
    let (addr, _readonly): (usize, bool) = iface.get_item("data")?.extract()?;
    let shape: Vec<usize> = iface.get_item("shape")?.extract()?;
    let typestr: String = iface.get_item("typestr")?.extract()?;
    let itemsize: usize = typestr.get(2..).and_then(|n| n.parse().ok()).ok_or_else(bad)?;
    let len = shape.iter().product::<usize>() * itemsize;
    if len == 0 {
        return f(&[]);
    }
    // SAFETY: numpy's array interface says `len` bytes lie at `addr`,
    // contiguous (no strides); `blob` keeps them alive and, with the GIL
    // held and no Python code run while `f` reads them, unchanged.
    let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
    f(bytes)
}

/// The band tables of one `MinHashLSH`: entries by id, each keyed per band
/// by the big-endian bytes of its values (datasketch's band keys).
#[pyclass(module = "neardup._neardup")]
pub(crate) struct Bands {
    inner: BandIndex,
    /// Bytes per value (4 or 8; 0 for rows given as key bytes only).
    width: usize,
}

impl Bands {
    /// The band key rows of `blob`: rows of `row_values` native-endian
    /// values (the whole sketches), of which the first `bands · rows` are
    /// turned into big-endian key bytes, in parallel; or, with `native`
    /// false, rows of key bytes taken as they are.
    fn key_rows(&self, blob: &[u8], native: bool, row_values: Option<usize>) -> PyResult<Vec<u8>> {
        let stride = self.inner.bands() * self.inner.band_bytes();
        let in_stride = match (native, row_values) {
            (true, Some(v)) => v * self.width,
            _ => stride,
        };
        if in_stride < stride || !blob.len().is_multiple_of(in_stride) {
            return Err(PyValueError::new_err(format!(
                "{} bytes is not a whole number of {in_stride}-byte rows of at least {stride} bytes",
                blob.len()
            )));
        }
        if !native {
            return Ok(blob.to_vec());
        }
        let n = blob.len() / in_stride;
        let mut out = vec![0u8; n * stride];
        let width = self.width;
        let convert = |(dst, src): (&mut [u8], &[u8])| {
            let src = &src[..stride];
            match width {
                4 => {
                    for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                        d.copy_from_slice(&u32::from_ne_bytes(s.try_into().expect("4 bytes")).to_be_bytes());
                    }
                }
                8 => {
                    for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
                        d.copy_from_slice(&u64::from_ne_bytes(s.try_into().expect("8 bytes")).to_be_bytes());
                    }
                }
                _ => {
                    for (d, s) in dst.chunks_exact_mut(width).zip(src.chunks_exact(width)) {
                        d.copy_from_slice(s);
                        if cfg!(target_endian = "little") {
                            d.reverse();
                        }
                    }
                }
            }
        };
        if n < 1024 {
            out.chunks_exact_mut(stride).zip(blob.chunks_exact(in_stride)).for_each(convert);
        } else {
            out.par_chunks_exact_mut(stride).zip(blob.par_chunks_exact(in_stride)).for_each(convert);
        }
        Ok(out)
    }
}

#[pymethods]
impl Bands {
    /// `bands` bands of `rows` values of `width` bytes each.
    #[new]
    fn new(bands: usize, rows: usize, width: usize) -> PyResult<Bands> {
        if bands == 0 || rows == 0 || width == 0 {
            return Err(PyValueError::new_err("bands, rows and bytes per value must be positive"));
        }
        Ok(Bands { inner: BandIndex::new(bands, rows * width), width })
    }

    /// Adds each row of `blob` (`bytes`, or a C-contiguous numpy array read
    /// in place: the native-endian bytes of `row_values`
    /// values, default `bands · rows`, of which the first `bands · rows`
    /// count; with `native=False`, band key bytes as they are); their ids.
    #[pyo3(signature = (blob, native = true, row_values = None))]
    fn insert_many(
        &mut self,
        py: Python<'_>,
        blob: &Bound<'_, PyAny>,
        native: bool,
        row_values: Option<usize>,
    ) -> PyResult<Vec<u32>> {
        let rows = with_blob(blob, |b| self.key_rows(b, native, row_values))?;
        let inner = &mut self.inner;
        Ok(py.allow_threads(|| inner.insert_batch(&rows)))
    }

    /// Removes entry `id`; false if absent.
    fn remove(&mut self, id: u32) -> bool {
        self.inner.remove(id)
    }

    /// The ids sharing one of the first `bands` bands with each row of
    /// `blob` (native-endian values, `row_values` per row as in
    /// `insert_many`), found in parallel with the GIL released; with `keys`
    /// (a list indexed by id), those keys instead.
    #[pyo3(signature = (blob, bands, keys = None, row_values = None))]
    fn query_many<'py>(
        &self,
        py: Python<'py>,
        blob: &Bound<'py, PyAny>,
        bands: usize,
        keys: Option<&Bound<'py, PyList>>,
        row_values: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        if bands > self.inner.bands() {
            return Err(PyValueError::new_err("b must be less or equal to the number of hash tables"));
        }
        let rows = with_blob(blob, |b| self.key_rows(b, true, row_values))?;
        let inner = &self.inner;
        let found = py.allow_threads(|| inner.query_batch(&rows, bands));
        found
            .into_iter()
            .map(|ids| match keys {
                Some(keys) => {
                    let items: Vec<Bound<'py, PyAny>> =
                        ids.iter().map(|&i| keys.get_item(i as usize)).collect::<PyResult<_>>()?;
                    Ok(PyList::new(py, items)?)
                }
                None => PyList::new(py, ids),
            })
            .collect()
    }

    /// The ids in band `band`'s bucket `key` (key bytes).
    fn bucket(&self, band: usize, key: &[u8]) -> Vec<u32> {
        if band >= self.inner.bands() || key.len() != self.inner.band_bytes() {
            return Vec::new();
        }
        self.inner.bucket(band, key).collect()
    }

    /// Every bucket of band `band`: (key bytes, ids).
    fn buckets<'py>(&self, py: Python<'py>, band: usize) -> Vec<(Bound<'py, PyBytes>, Vec<u32>)> {
        self.inner.buckets(band).into_iter().map(|(k, ids)| (PyBytes::new(py, k), ids)).collect()
    }

    /// How many buckets band `band` has.
    fn bucket_count(&self, band: usize) -> usize {
        self.inner.buckets(band).len()
    }

    /// Entry `id`'s band keys (all bands' bytes), or None.
    fn get<'py>(&self, py: Python<'py>, id: u32) -> Option<Bound<'py, PyBytes>> {
        self.inner.get(id).map(|k| PyBytes::new(py, &k))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Bytes held, about.
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }
}

/// datasketch's `_optimal_param`: the (bands, rows) of at most `num_perm`
/// values that minimise the weighted false positive and negative mass at
/// `threshold` (the core's `Banding::optimal`).
#[pyfunction]
pub(crate) fn optimal_param(
    threshold: f64,
    num_perm: usize,
    fp_weight: f64,
    fn_weight: f64,
) -> (usize, usize) {
    let b = neardup::minhash::Banding::optimal(threshold, num_perm, fp_weight, fn_weight);
    (b.bands, b.rows)
}
