//! Python arguments to Rust values, with errors that name the argument or
//! the item (`texts[4]`, `fingerprints[2]`) and say what to do.

use std::borrow::Cow;
use std::fmt;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// What an argument is called in an error message. Built for every item of
/// a batch but formatted only on error (a `format!` per item would cost an
/// allocation per text).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Name<'a> {
    /// A whole argument: `text`, `fingerprint`, `a`.
    Arg(&'a str),
    /// One item of a batch argument: `texts[4]`.
    Item(&'a str, usize),
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Arg(a) => f.write_str(a),
            Name::Item(a, i) => write!(f, "{a}[{i}]"),
        }
    }
}

/// The Python type name of `v`, for messages.
pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A str argument, borrowed where Python allows it; a `TypeError` naming the
/// item and what it got, or a `ValueError` for a str that is not valid
/// Unicode (a lone surrogate).
pub(crate) fn as_text<'a>(v: &'a Bound<'_, PyAny>, name: Name<'_>) -> PyResult<Cow<'a, str>> {
    match v.downcast::<PyString>() {
        Ok(s) => s.to_cow().map_err(|_| {
            PyValueError::new_err(format!(
                "{name} is not valid Unicode (it holds a lone surrogate, e.g. from \
                 decoding with errors='surrogateescape'); re-encode it with \
                 errors='replace' first"
            ))
        }),
        Err(_) => {
            let ty = type_name(v);
            let hint = match ty.as_str() {
                "bytes" | "bytearray" => "; decode it first (e.g. b.decode('utf-8'))",
                "NoneType" => "; drop or fill missing texts first",
                _ => "",
            };
            Err(PyTypeError::new_err(format!("{name} must be str, not {ty}{hint}")))
        }
    }
}

/// Refuses one str where a batch of texts belongs (iterating it would
/// fingerprint each character).
pub(crate) fn not_one_str(v: &Bound<'_, PyAny>, arg: &str) -> PyResult<()> {
    if v.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{arg} must be a list (or iterable) of str, not one str; wrap it: [text]"
        )));
    }
    Ok(())
}

/// A fingerprint argument: a non-negative int of at most 128 bits.
pub(crate) fn as_fingerprint(v: &Bound<'_, PyAny>, name: Name<'_>) -> PyResult<u128> {
    // u64 first: one C call; u128 goes through a slower path under abi3.
    if let Ok(x) = v.extract::<u64>() {
        return Ok(u128::from(x));
    }
    v.extract::<u128>().map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be a fingerprint: an int from 0 to 2**128 - 1, not {}",
            short_repr(v)
        ))
    })
}

/// `repr(v)`, cut to 40 characters.
fn short_repr(v: &Bound<'_, PyAny>) -> String {
    let r = v.repr().map_or_else(|_| type_name(v), |r| r.to_string());
    if r.chars().count() > 40 {
        format!("{}…", r.chars().take(40).collect::<String>())
    } else {
        r
    }
}

/// The texts of a batch argument: a pyarrow string array read in place, or
/// any iterable of str copied out (one str is refused).
pub(crate) enum Texts<'py> {
    /// Read from Arrow buffers, which the borrowed array keeps alive.
    Arrow(crate::arrow::StringColumn<'py>),
    /// Copied from Python str objects.
    Owned(Vec<String>),
}

impl<'py> Texts<'py> {
    /// Reads `texts` (called `arg` in messages).
    pub(crate) fn read(texts: &Bound<'py, PyAny>, arg: &str) -> PyResult<Texts<'py>> {
        not_one_str(texts, arg)?;
        if let Some(col) = crate::arrow::StringColumn::read(texts)? {
            return Ok(Texts::Arrow(col));
        }
        // Other Arrow arrays (binary, dictionary, …) become Python lists,
        // whose items then get the usual errors.
        let items =
            if texts.hasattr("to_pylist")? { texts.call_method0("to_pylist")? } else { texts.clone() };
        let mut owned = Vec::with_capacity(items.len().unwrap_or(0));
        for (i, item) in items.try_iter()?.enumerate() {
            owned.push(as_text(&item?, Name::Item(arg, i))?.into_owned());
        }
        Ok(Texts::Owned(owned))
    }

    /// The texts as `&str`; Arrow nulls and invalid UTF-8 are errors naming
    /// their position.
    pub(crate) fn strs(&self, arg: &str) -> PyResult<Vec<&str>> {
        match self {
            Texts::Owned(v) => Ok(v.iter().map(String::as_str).collect()),
            Texts::Arrow(col) => col
                .items()
                .enumerate()
                .map(|(i, item)| match item {
                    Ok(Some(s)) => Ok(s),
                    Ok(None) => Err(PyTypeError::new_err(format!(
                        "{arg}[{i}] must be str, not NoneType (a null in the Arrow array: \
                         drop or fill nulls first)"
                    ))),
                    Err(e) => Err(PyValueError::new_err(format!("{arg}[{i}]: {e}"))),
                })
                .collect(),
        }
    }
}
