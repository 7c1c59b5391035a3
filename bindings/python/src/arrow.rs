//! pyarrow arrays read in place through the Arrow C Data Interface: each
//! array (each chunk of a chunked array) is exported with
//! `__arrow_c_array__()` as a pair of PyCapsules holding an `ArrowSchema`
//! and an `ArrowArray`; the buffers are read while the capsules (which
//! release the array when they are collected) are held, so no Python str
//! is made per text.
//!
//! Only `string`/`large_string` (formats `u`/`U`), `binary`/`large_binary`
//! (`z`/`Z`) and `int32`/`int64` (`i`/`l`) arrays and chunked arrays of
//! them are read this way;
//! [`StringColumn::read`] answers `None` for anything else.

use std::ffi::{c_char, c_void, CStr};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `struct ArrowSchema` of the Arrow C Data Interface.
#[repr(C)]
struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the Arrow C Data Interface.
#[repr(C)]
struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

/// One exported array: its format string, the array struct, and the
/// capsules that own both (held while the buffers are read).
struct Exported<'py> {
    format: String,
    array: *const FfiArray,
    _capsules: Bound<'py, PyAny>,
}

/// Exports `array` (a pyarrow Array) through `__arrow_c_array__`.
fn export<'py>(array: &Bound<'py, PyAny>) -> PyResult<Exported<'py>> {
    let capsules = array.call_method0("__arrow_c_array__")?;
    let (schema, data): (Bound<'py, PyAny>, Bound<'py, PyAny>) = capsules.extract()?;
    let pointer = |capsule: &Bound<'py, PyAny>, name: &CStr| -> PyResult<*mut c_void> {
        // SAFETY: PyCapsule_GetPointer checks the object is a capsule of
        // that name and returns null (with a Python error set) otherwise.
        let p = unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), name.as_ptr()) };
        if p.is_null() {
            return Err(PyErr::take(array.py())
                .unwrap_or_else(|| PyValueError::new_err("__arrow_c_array__ gave no capsule")));
        }
        Ok(p)
    };
    let schema_ptr = pointer(&schema, c"arrow_schema")?.cast::<FfiSchema>();
    let array_ptr = pointer(&data, c"arrow_array")?.cast::<FfiArray>();
    // SAFETY: the capsule holds a valid ArrowSchema (the producer's
    // contract) whose `format` is a NUL-terminated string, alive while the
    // capsule is.
    let format = unsafe {
        let s = &*schema_ptr;
        if s.release.is_none() || s.format.is_null() {
            return Err(PyValueError::new_err("__arrow_c_array__ gave a released schema"));
        }
        CStr::from_ptr(s.format).to_string_lossy().into_owned()
    };
    // SAFETY: as above, for the ArrowArray.
    if unsafe { (*array_ptr).release.is_none() } {
        return Err(PyValueError::new_err("__arrow_c_array__ gave a released array"));
    }
    Ok(Exported { format, array: array_ptr, _capsules: capsules })
}

impl Exported<'_> {
    fn array(&self) -> &FfiArray {
        // SAFETY: checked non-released in `export`; the capsules own it and
        // live as long as `self`.
        unsafe { &*self.array }
    }

    /// Buffer `i` (null when absent), if the array has that many.
    fn buffer(&self, i: usize) -> *const u8 {
        let a = self.array();
        if (i as i64) >= a.n_buffers || a.buffers.is_null() {
            return std::ptr::null();
        }
        // SAFETY: `buffers` points to `n_buffers` pointers (the interface's
        // contract) and i < n_buffers.
        unsafe { (*a.buffers.add(i)).cast::<u8>() }
    }
}

/// One Arrow array of strings, as raw buffers.
struct Chunk {
    /// `offset + len + 1` offsets, each `width` bytes, little-endian.
    offsets: *const u8,
    width: usize,
    data: *const u8,
    /// The last offset: the bytes of `data` the offsets may name.
    data_len: usize,
    /// The validity bitmap (null: no nulls) and the array's offset into it.
    validity: *const u8,
    offset: usize,
    len: usize,
}

/// A pyarrow string column (array or chunked array) held in place.
pub(crate) struct StringColumn<'py> {
    /// The exported arrays, kept alive (their buffers are what the
    /// pointers read).
    _exported: Vec<Exported<'py>>,
    chunks: Vec<Chunk>,
}

impl<'py> StringColumn<'py> {
    /// `Some` for a pyarrow `string`/`large_string` Array or ChunkedArray,
    /// `None` for anything else. Malformed buffers are `ValueError`s.
    pub(crate) fn read(obj: &Bound<'py, PyAny>) -> PyResult<Option<StringColumn<'py>>> {
        StringColumn::read_of(obj, &["string", "large_string"])
    }

    /// `Some` for a pyarrow `binary`/`large_binary` Array or ChunkedArray
    /// (read with [`bytes`](Self::bytes)), `None` for anything else.
    pub(crate) fn read_binary(obj: &Bound<'py, PyAny>) -> PyResult<Option<StringColumn<'py>>> {
        StringColumn::read_of(obj, &["binary", "large_binary"])
    }

    fn read_of(obj: &Bound<'py, PyAny>, types: &[&str]) -> PyResult<Option<StringColumn<'py>>> {
        let Some(ty) = arrow_type(obj)? else { return Ok(None) };
        if !types.contains(&ty.as_str()) {
            return Ok(None);
        }
        let arrays: Vec<Bound<'py, PyAny>> = if obj.hasattr("chunks")? {
            obj.getattr("chunks")?.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![obj.clone()]
        };
        let mut chunks = Vec::with_capacity(arrays.len());
        let mut exported = Vec::with_capacity(arrays.len());
        for a in &arrays {
            let e = export(a)?;
            chunks.push(Chunk::of(&e)?);
            exported.push(e);
        }
        Ok(Some(StringColumn { _exported: exported, chunks }))
    }

    /// Every item in order: `Ok(None)` for a null, `Err` for an item whose
    /// bytes are not UTF-8 or whose offsets are malformed.
    pub(crate) fn items(&self) -> impl Iterator<Item = Result<Option<&str>, String>> + '_ {
        self.chunks.iter().flat_map(|c| (0..c.len).map(move |i| c.get(i)))
    }

    /// Every item's bytes in order (for a binary column): `Ok(None)` for a
    /// null, `Err` for malformed offsets.
    pub(crate) fn bytes(&self) -> impl Iterator<Item = Result<Option<&[u8]>, String>> + '_ {
        self.chunks.iter().flat_map(|c| (0..c.len).map(move |i| c.get_bytes(i)))
    }
}

impl Chunk {
    fn of(e: &Exported<'_>) -> PyResult<Chunk> {
        let malformed = |what: &str| PyValueError::new_err(format!("malformed Arrow string array: {what}"));
        let width = match e.format.as_str() {
            "u" | "z" => 4,
            "U" | "Z" => 8,
            f => return Err(malformed(&format!("format {f:?}, not a string array"))),
        };
        let a = e.array();
        let (len, offset) = match (usize::try_from(a.length), usize::try_from(a.offset)) {
            (Ok(l), Ok(o)) => (l, o),
            _ => return Err(malformed("negative length or offset")),
        };
        let empty = std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const();
        let offsets = e.buffer(1);
        let data = e.buffer(2);
        if len == 0 {
            return Ok(Chunk {
                offsets: empty,
                width,
                data: empty,
                data_len: 0,
                validity: std::ptr::null(),
                offset,
                len,
            });
        }
        if offsets.is_null() {
            return Err(malformed("no offsets buffer"));
        }
        let mut chunk = Chunk {
            offsets,
            width,
            data: if data.is_null() { empty } else { data },
            data_len: 0,
            validity: if a.null_count == 0 { std::ptr::null() } else { e.buffer(0) },
            offset,
            len,
        };
        // The interface promises `offset + len + 1` offsets and data up to
        // the last of them; an empty data buffer may be null.
        let last = chunk.offset_at(offset + len);
        chunk.data_len = usize::try_from(last).map_err(|_| malformed("negative offsets"))?;
        if data.is_null() && chunk.data_len > 0 {
            return Err(malformed("no data buffer"));
        }
        Ok(chunk)
    }

    fn offset_at(&self, j: usize) -> i64 {
        debug_assert!(
            j <= self.offset + self.len,
            "offset {j} past the array's {} + 1",
            self.offset + self.len
        );
        // SAFETY: the C Data Interface guarantees `offset + len + 1`
        // offsets of `width` bytes for a string array; j <= offset + len.
        unsafe {
            let p = self.offsets.add(j * self.width);
            if self.width == 4 {
                i64::from(i32::from_le_bytes(std::ptr::read_unaligned(p.cast::<[u8; 4]>())))
            } else {
                i64::from_le_bytes(std::ptr::read_unaligned(p.cast::<[u8; 8]>()))
            }
        }
    }

    fn get(&self, i: usize) -> Result<Option<&str>, String> {
        match self.get_bytes(i)? {
            None => Ok(None),
            Some(bytes) => std::str::from_utf8(bytes).map(Some).map_err(|e| format!("not valid UTF-8 ({e})")),
        }
    }

    fn get_bytes(&self, i: usize) -> Result<Option<&[u8]>, String> {
        // The reads below are sound only inside the array: checked here
        // rather than left to every caller.
        if i >= self.len {
            return Err(format!("row {i} is past the array's {} rows", self.len));
        }
        let j = self.offset + i;
        if !self.validity.is_null() {
            // SAFETY: the interface guarantees a bitmap of offset + len bits.
            if unsafe { *self.validity.add(j / 8) } >> (j % 8) & 1 == 0 {
                return Ok(None);
            }
        }
        let (start, end) = (self.offset_at(j), self.offset_at(j + 1));
        if start < 0 || end < start || end as u64 > self.data_len as u64 {
            return Err("malformed Arrow offsets".to_owned());
        }
        // SAFETY: start..end lies inside the data buffer (checked above
        // against the last offset, which the buffer holds).
        let bytes =
            unsafe { std::slice::from_raw_parts(self.data.add(start as usize), (end - start) as usize) };
        Ok(Some(bytes))
    }
}

/// The Arrow type name of a pyarrow Array/ChunkedArray (`str(x.type)`), or
/// `None` for anything that is not one.
fn arrow_type(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let module = obj.get_type().module().map_or_else(|_| String::new(), |m| m.to_string());
    if !module.starts_with("pyarrow") || !obj.hasattr("type")? {
        return Ok(None);
    }
    if !obj.hasattr("buffers")? && !obj.hasattr("chunks")? {
        return Ok(None);
    }
    Ok(Some(obj.getattr("type")?.str()?.to_string()))
}

/// A little-endian primitive Arrow value.
pub(crate) trait Primitive: Copy {
    /// The Arrow type names this reads (`str(array.type)`).
    const TYPES: &'static [&'static str];
    /// Its Arrow C Data Interface format string.
    const FORMAT: &'static str;
    /// Bytes per value.
    const WIDTH: usize;
    /// The value at the start of `b` (`WIDTH` bytes).
    fn from_le(b: &[u8]) -> Self;
}

impl Primitive for i64 {
    const TYPES: &'static [&'static str] = &["int64"];
    const FORMAT: &'static str = "l";
    const WIDTH: usize = 8;
    fn from_le(b: &[u8]) -> i64 {
        i64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
    }
}

impl Primitive for i32 {
    const TYPES: &'static [&'static str] = &["int32"];
    const FORMAT: &'static str = "i";
    const WIDTH: usize = 4;
    fn from_le(b: &[u8]) -> i32 {
        i32::from_le_bytes(b[..4].try_into().expect("4 bytes"))
    }
}

/// The values of a pyarrow primitive Array or ChunkedArray of type `T`,
/// copied out; `arg` names it in errors (wrong type, a null).
pub(crate) fn read_primitive<T: Primitive>(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<Vec<T>> {
    let ty = arrow_type(obj)?
        .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err(format!("{arg} must be a pyarrow array")))?;
    if !T::TYPES.contains(&ty.as_str()) {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{arg} must be a pyarrow {} array, not {ty}",
            T::TYPES[0]
        )));
    }
    let arrays: Vec<Bound<'_, PyAny>> = if obj.hasattr("chunks")? {
        obj.getattr("chunks")?.try_iter()?.collect::<PyResult<_>>()?
    } else {
        vec![obj.clone()]
    };
    let mut out = Vec::new();
    for a in &arrays {
        let e = export(a)?;
        if e.format != T::FORMAT {
            return Err(PyValueError::new_err(format!(
                "{arg}: Arrow format {:?}, not {:?}",
                e.format,
                T::FORMAT
            )));
        }
        let f = e.array();
        let (len, offset) = match (usize::try_from(f.length), usize::try_from(f.offset)) {
            (Ok(l), Ok(o)) => (l, o),
            _ => return Err(PyValueError::new_err(format!("{arg}: malformed Arrow array"))),
        };
        if len == 0 {
            continue;
        }
        // null_count -1 means "not computed": count the bitmap's zeros.
        let validity = e.buffer(0);
        let nulls = match f.null_count {
            n if n > 0 => n as usize,
            n if n < 0 && !validity.is_null() => (offset..offset + len)
                // SAFETY: the interface guarantees a bitmap of offset + len bits.
                .filter(|&j| unsafe { *validity.add(j / 8) } >> (j % 8) & 1 == 0)
                .count(),
            _ => 0,
        };
        if nulls > 0 {
            return Err(PyValueError::new_err(format!("{arg} holds {nulls} null(s)")));
        }
        let data = e.buffer(1);
        if data.is_null() {
            return Err(PyValueError::new_err(format!("{arg}: an Arrow array without data")));
        }
        // SAFETY: the interface guarantees `offset + len` values of WIDTH
        // bytes in the data buffer, kept alive by the capsules in `e`.
        let bytes = unsafe { std::slice::from_raw_parts(data.add(offset * T::WIDTH), len * T::WIDTH) };
        out.extend(bytes.chunks_exact(T::WIDTH).map(T::from_le));
    }
    Ok(out)
}
