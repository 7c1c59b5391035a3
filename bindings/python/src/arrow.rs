//! pyarrow string arrays read in place: the offsets, data and validity
//! buffers are read through their addresses while the array (which owns
//! them) is held, so no Python str is made per text.
//!
//! Only `string` and `large_string` arrays and chunked arrays of them are
//! read this way; [`StringColumn::read`] answers `None` for anything else.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// One Arrow array of strings, as raw buffers.
struct Chunk {
    /// `len + 1` offsets, each `width` bytes, little-endian.
    offsets: *const u8,
    width: usize,
    data: *const u8,
    data_len: usize,
    /// The validity bitmap and the array's bit offset into it.
    validity: Option<*const u8>,
    offset: usize,
    len: usize,
}

/// A pyarrow string column (array or chunked array) held in place.
pub(crate) struct StringColumn<'py> {
    /// The arrays, kept alive (their buffers are what the pointers read).
    _arrays: Vec<Bound<'py, PyAny>>,
    chunks: Vec<Chunk>,
}

impl<'py> StringColumn<'py> {
    /// `Some` for a pyarrow `string`/`large_string` Array or ChunkedArray,
    /// `None` for anything else. Malformed buffers are `ValueError`s.
    pub(crate) fn read(obj: &Bound<'py, PyAny>) -> PyResult<Option<StringColumn<'py>>> {
        let Some(ty) = arrow_type(obj)? else { return Ok(None) };
        if ty != "string" && ty != "large_string" {
            return Ok(None);
        }
        let arrays: Vec<Bound<'py, PyAny>> = if obj.hasattr("chunks")? {
            obj.getattr("chunks")?.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![obj.clone()]
        };
        let mut chunks = Vec::with_capacity(arrays.len());
        for a in &arrays {
            chunks.push(Chunk::of(a, if ty == "string" { 4 } else { 8 })?);
        }
        Ok(Some(StringColumn { _arrays: arrays, chunks }))
    }

    /// Every item in order: `Ok(None)` for a null, `Err` for an item whose
    /// bytes are not UTF-8 or whose offsets are malformed.
    pub(crate) fn items(&self) -> impl Iterator<Item = Result<Option<&str>, String>> + '_ {
        self.chunks.iter().flat_map(|c| (0..c.len).map(move |i| c.get(i)))
    }
}

impl Chunk {
    fn of(array: &Bound<'_, PyAny>, width: usize) -> PyResult<Chunk> {
        let len: usize = array.len()?;
        let offset: usize = array.getattr("offset")?.extract()?;
        let buffers: Vec<Bound<'_, PyAny>> = array.call_method0("buffers")?.extract()?;
        let buffer = |i: usize| -> PyResult<Option<(*const u8, usize)>> {
            match buffers.get(i) {
                Some(b) if !b.is_none() => {
                    let address: usize = b.getattr("address")?.extract()?;
                    let size: usize = b.getattr("size")?.extract()?;
                    Ok(Some((address as *const u8, size)))
                }
                _ => Ok(None),
            }
        };
        let malformed = |what: &str| PyValueError::new_err(format!("malformed Arrow string array: {what}"));
        let validity = buffer(0)?;
        if let Some((_, size)) = validity {
            if size * 8 < offset + len {
                return Err(malformed("validity bitmap too short"));
            }
        }
        let empty: (*const u8, usize) = (std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const(), 0);
        let (offsets, data) = match (buffer(1)?, buffer(2)?) {
            (Some(o), d) => (o, d.unwrap_or(empty)),
            (None, _) if len == 0 => (empty, empty),
            (None, _) => return Err(malformed("no offsets buffer")),
        };
        if len > 0 && offsets.1 < (offset + len + 1) * width {
            return Err(malformed("offsets buffer too short"));
        }
        Ok(Chunk {
            offsets: offsets.0,
            width,
            data: data.0,
            data_len: data.1,
            validity: validity.map(|v| v.0),
            offset,
            len,
        })
    }

    fn offset_at(&self, j: usize) -> i64 {
        // SAFETY: `of` checked that the offsets buffer holds
        // `(offset + len + 1) * width` bytes; j <= offset + len.
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
        let j = self.offset + i;
        if let Some(bits) = self.validity {
            // SAFETY: `of` checked the bitmap covers offset + len bits.
            if unsafe { *bits.add(j / 8) } >> (j % 8) & 1 == 0 {
                return Ok(None);
            }
        }
        let (start, end) = (self.offset_at(j), self.offset_at(j + 1));
        if start < 0 || end < start || end as u64 > self.data_len as u64 {
            return Err("malformed Arrow offsets".to_owned());
        }
        // SAFETY: start..end lies inside the data buffer (checked above).
        let bytes =
            unsafe { std::slice::from_raw_parts(self.data.add(start as usize), (end - start) as usize) };
        std::str::from_utf8(bytes).map(Some).map_err(|e| format!("not valid UTF-8 ({e})"))
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
    /// Bytes per value.
    const WIDTH: usize;
    /// The value at the start of `b` (`WIDTH` bytes).
    fn from_le(b: &[u8]) -> Self;
}

impl Primitive for i64 {
    const TYPES: &'static [&'static str] = &["int64"];
    const WIDTH: usize = 8;
    fn from_le(b: &[u8]) -> i64 {
        i64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
    }
}

impl Primitive for i32 {
    const TYPES: &'static [&'static str] = &["int32"];
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
        let len: usize = a.len()?;
        if len == 0 {
            continue;
        }
        let nulls: usize = a.getattr("null_count")?.extract()?;
        if nulls > 0 {
            return Err(PyValueError::new_err(format!("{arg} holds {nulls} null(s)")));
        }
        let offset: usize = a.getattr("offset")?.extract()?;
        let buffers: Vec<Bound<'_, PyAny>> = a.call_method0("buffers")?.extract()?;
        let data = buffers
            .get(1)
            .filter(|b| !b.is_none())
            .ok_or_else(|| PyValueError::new_err(format!("{arg}: an Arrow array without data")))?;
        let address: usize = data.getattr("address")?.extract()?;
        let size: usize = data.getattr("size")?.extract()?;
        if size < (offset + len) * T::WIDTH {
            return Err(PyValueError::new_err(format!("{arg}: malformed Arrow array (data too short)")));
        }
        // SAFETY: the buffer holds `size` bytes (checked above) and is
        // kept alive by `a` while this slice is read.
        let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, size) };
        out.extend(
            bytes[offset * T::WIDTH..(offset + len) * T::WIDTH].chunks_exact(T::WIDTH).map(T::from_le),
        );
    }
    Ok(out)
}
