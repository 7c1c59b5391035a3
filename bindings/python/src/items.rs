//! Reading Python list items and str bytes in place, with the GIL held:
//! built for one Python version (without the `abi3` feature) as CPython's
//! own macros read them, under the stable ABI with one C call each.

use pyo3::ffi;

/// Item `i` of a list, borrowed; NULL (with an IndexError set) past its
/// end under the stable ABI.
///
/// # Safety
///
/// The GIL is held, `list` is a live list and `i` is below its length.
#[cfg(not(feature = "abi3"))]
pub(crate) unsafe fn list_item(list: *mut ffi::PyObject, i: usize) -> *mut ffi::PyObject {
    // SAFETY: the caller's.
    unsafe { ffi::PyList_GET_ITEM(list, i as ffi::Py_ssize_t) }
}

/// Item `i` of a list, borrowed; NULL (with an IndexError set) past its
/// end.
///
/// # Safety
///
/// The GIL is held and `list` is a live list.
#[cfg(feature = "abi3")]
pub(crate) unsafe fn list_item(list: *mut ffi::PyObject, i: usize) -> *mut ffi::PyObject {
    // SAFETY: the caller's; the index is checked.
    unsafe { ffi::PyList_GetItem(list, i as ffi::Py_ssize_t) }
}

/// How many items ahead [`prefetch_item`] is asked for: enough to hide a
/// miss to memory behind the hashing of the items between.
pub(crate) const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to fetch the first two cache lines of item `i` of a list
/// (a str's header and, for a short ASCII str, its characters): reading a
/// list of strs otherwise waits on a cache miss per item. Does nothing
/// under the stable ABI or off x86-64.
///
/// # Safety
///
/// The GIL is held, `list` is a live list and `i` is below its length.
#[allow(unused_variables)]
pub(crate) unsafe fn prefetch_item(list: *mut ffi::PyObject, i: usize) {
    #[cfg(all(not(feature = "abi3"), target_arch = "x86_64"))]
    // SAFETY: the caller's; a prefetch never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let item = ffi::PyList_GET_ITEM(list, i as ffi::Py_ssize_t).cast::<i8>();
        _mm_prefetch::<_MM_HINT_T0>(item);
        // A str's characters start 40–48 bytes in: often on the next line.
        _mm_prefetch::<_MM_HINT_T0>(item.wrapping_add(64));
    }
}

/// The UTF-8 bytes of a str, borrowed from it; None (with an error set)
/// when it has no UTF-8 form (a lone surrogate).
///
/// # Safety
///
/// The GIL is held and `s` is a live str; the bytes live as long as it
/// and must not outlive it.
pub(crate) unsafe fn str_utf8<'a>(s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    #[cfg(not(feature = "abi3"))]
    // SAFETY: `s` is a live str; a compact ASCII str's characters are its
    // UTF-8 bytes, stored after its header, `GET_LENGTH` of them.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT_ASCII(s) != 0 {
            let len = ffi::PyUnicode_GET_LENGTH(s) as usize;
            return Some(std::slice::from_raw_parts(ffi::_PyUnicode_COMPACT_DATA(s).cast::<u8>(), len));
        }
    }
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live str; its cached UTF-8 form is `len` bytes at
    // `data` and lives as long as it.
    unsafe {
        let data = ffi::PyUnicode_AsUTF8AndSize(s, &mut len);
        (!data.is_null()).then(|| std::slice::from_raw_parts(data.cast::<u8>(), len as usize))
    }
}
