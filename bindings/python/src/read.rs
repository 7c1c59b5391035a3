//! `neardup.read` and `neardup.plan_inputs`: the corpus reader every front
//! end shares (`neardup-io`), streaming records to Python.
//!
//! The files are read on a thread of their own, a chunk of records at a
//! time, so Python's loop and the reading (decompression, JSON parsing on
//! every core) overlap; dropping the reader stops the thread.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Mutex;

use neardup_io::{BadRecord, InputFormat, Item, ReadOptions};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

// `read`'s default `max_doc_bytes` is a literal (stubtest reads a constant
// expression as `...`); it is the reader's default.
const _: () = assert!(neardup_io::MAX_DOC_BYTES == 67108864);

/// Records handed over at once.
const CHUNK: usize = 256;
/// Chunks read ahead of Python's loop.
const AHEAD: usize = 8;

fn options(
    paths: Vec<PathBuf>,
    input_format: &str,
    text_field: Option<String>,
    id_field: Option<String>,
    allow_empty: bool,
    max_doc_bytes: u64,
    keep_raw: bool,
) -> PyResult<ReadOptions> {
    let format: InputFormat =
        input_format.parse().map_err(|e: neardup_io::Error| PyValueError::new_err(e.to_string()))?;
    let opts = ReadOptions { paths, format, text_field, id_field, allow_empty, max_doc_bytes, keep_raw };
    neardup_io::check_paths(&opts).map_err(|e| PyFileNotFoundError::new_err(e.to_string()))?;
    Ok(opts)
}

fn io_error(e: neardup_io::Error) -> PyErr {
    match e {
        neardup_io::Error::Usage(m) => PyValueError::new_err(m),
        e => PyOSError::new_err(e.to_string()),
    }
}

/// What the reading thread sends: records, or the error that stopped it.
type Chunk = Result<Vec<Item>, neardup_io::Error>;

/// The records of a corpus, in the order `neardup dedup` reads them.
#[pyclass(module = "neardup")]
pub(crate) struct Reader {
    /// The reading thread's channel (in a mutex only because a class
    /// must be `Sync`; it is taken out while waiting).
    rx: Mutex<Option<Receiver<Chunk>>>,
    chunk: std::vec::IntoIter<Item>,
    on_error: OnError,
    skipped: Vec<BadRecord>,
    files_cut_short: Vec<String>,
}

impl Reader {
    /// The next item, waiting for the reading thread (without the GIL).
    fn next_item(&mut self, py: Python<'_>) -> PyResult<Option<Item>> {
        loop {
            if let Some(item) = self.chunk.next() {
                return Ok(Some(item));
            }
            let Some(rx) = self.rx.get_mut().expect("the reader's lock").take() else { return Ok(None) };
            let (got, rx) = py.allow_threads(move || (rx.recv(), rx));
            match got {
                Ok(Ok(items)) => {
                    self.chunk = items.into_iter();
                    *self.rx.get_mut().expect("the reader's lock") = Some(rx);
                }
                Ok(Err(e)) => return Err(io_error(e)),
                Err(_) => return Ok(None),
            }
        }
    }

    /// The next record, or bad record under `on_error="keep"`; under
    /// `"fail"` a bad one raises `ValueError`, under `"skip"` it is
    /// counted.
    fn next_record(&mut self, py: Python<'_>) -> PyResult<Option<Item>> {
        while let Some(item) = self.next_item(py)? {
            match item {
                Ok(r) => return Ok(Some(Ok(r))),
                Err(bad) if self.on_error == OnError::Keep => return Ok(Some(Err(bad))),
                Err(bad) if self.on_error == OnError::Skip => {
                    if bad.rest_lost {
                        self.files_cut_short.push(bad.origin.clone());
                    }
                    self.skipped.push(bad);
                }
                Err(bad) => {
                    *self.rx.get_mut().expect("the reader's lock") = None;
                    let what = if bad.rest_lost { " (the rest of this file is lost)" } else { "" };
                    return Err(PyValueError::new_err(format!(
                        "{bad}{what}; pass on_error=\"skip\" to skip bad records"
                    )));
                }
            }
        }
        Ok(None)
    }
}

fn record_dict<'py>(py: Python<'py>, item: Item) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let r = match item {
        Ok(r) => r,
        Err(bad) => {
            d.set_item("origin", bad.origin)?;
            d.set_item("error", bad.message)?;
            d.set_item("rest_lost", bad.rest_lost)?;
            return Ok(d);
        }
    };
    d.set_item("id", json_id(py, r.id)?)?;
    d.set_item("text", r.text)?;
    d.set_item("origin", r.origin)?;
    if let Some(raw) = r.raw {
        d.set_item("raw", raw)?;
    }
    Ok(d)
}

/// An id as Python has it: a `str`, or an `int` for a number.
fn json_id(py: Python<'_>, id: serde_json::Value) -> PyResult<PyObject> {
    Ok(match id {
        serde_json::Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any().unbind(),
            (_, Some(u)) => u.into_pyobject(py)?.into_any().unbind(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any().unbind(),
        },
        other => other.to_string().into_pyobject(py)?.into_any().unbind(),
    })
}

#[pymethods]
impl Reader {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match self.next_record(py)? {
            Some(r) => Ok(Some(record_dict(py, r)?)),
            None => Ok(None),
        }
    }

    /// Up to `n` records as columns: a dict of lists `id`, `text`,
    /// `origin`, `raw` (None unless `keep_raw`) and `error` (None but for
    /// bad records under `on_error="keep"`, whose id and text are None).
    /// Empty lists at the end.
    fn columns<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyDict>> {
        let lists = [(); 5].map(|()| PyList::empty(py));
        let [ids, texts, origins, raws, errors] = &lists;
        for _ in 0..n {
            match self.next_record(py)? {
                None => break,
                Some(Ok(r)) => {
                    ids.append(json_id(py, r.id)?)?;
                    texts.append(r.text)?;
                    origins.append(r.origin)?;
                    raws.append(r.raw)?;
                    errors.append(py.None())?;
                }
                Some(Err(bad)) => {
                    ids.append(py.None())?;
                    texts.append(py.None())?;
                    origins.append(bad.origin)?;
                    raws.append(py.None())?;
                    errors.append(bad.message)?;
                }
            }
        }
        let d = PyDict::new(py);
        for (name, list) in ["id", "text", "origin", "raw", "error"].into_iter().zip(lists) {
            d.set_item(name, list)?;
        }
        Ok(d)
    }

    /// The bad records skipped so far (`on_error="skip"`), as
    /// `(origin, message, rest_lost)`; `rest_lost` says the file could not
    /// be read past that point.
    #[getter]
    fn skipped(&self) -> Vec<(String, String, bool)> {
        self.skipped.iter().map(|b| (b.origin.clone(), b.message.clone(), b.rest_lost)).collect()
    }

    /// Where files were cut short (the rest of each was lost), among the
    /// skipped records.
    #[getter]
    fn files_cut_short(&self) -> Vec<String> {
        self.files_cut_short.clone()
    }
}

/// `read(paths, input_format="auto", text_field=None, id_field=None,
/// allow_empty=False, max_doc_bytes=64 MiB, keep_raw=False,
/// on_error="fail")`: the records of files and directories, read as
/// `neardup dedup` reads them; an iterator of dicts `{"id", "text",
/// "origin"}` (and `"raw"`, the record's fields as JSON, with
/// `keep_raw`). A bad record raises `ValueError` (`on_error="fail"`), is
/// left out (`"skip"`), or comes as `{"origin", "error", "rest_lost"}`
/// (`"keep"`).
#[pyfunction]
#[pyo3(signature = (paths, input_format = "auto", text_field = None, id_field = None, allow_empty = false,
    max_doc_bytes = 67108864, keep_raw = false, on_error = "fail"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn read(
    paths: Vec<PathBuf>,
    input_format: &str,
    text_field: Option<String>,
    id_field: Option<String>,
    allow_empty: bool,
    max_doc_bytes: u64,
    keep_raw: bool,
    on_error: &str,
) -> PyResult<Reader> {
    let on_error = match on_error {
        "fail" => OnError::Fail,
        "skip" => OnError::Skip,
        "keep" => OnError::Keep,
        other => {
            return Err(PyValueError::new_err(format!(
                "on_error={other:?}: choose \"fail\", \"skip\" or \"keep\""
            )))
        }
    };
    let opts = options(paths, input_format, text_field, id_field, allow_empty, max_doc_bytes, keep_raw)?;
    let (tx, rx) = sync_channel::<Chunk>(AHEAD);
    std::thread::Builder::new()
        .name("neardup-read".into())
        .spawn(move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            let done = neardup_io::read_all(&opts, |item| -> Result<(), Stop> {
                chunk.push(item);
                if chunk.len() == CHUNK {
                    tx.send(Ok(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK))))
                        .map_err(|_| Stop::Dropped)?;
                }
                Ok(())
            });
            let _ = match done {
                Ok(()) => tx.send(Ok(chunk)),
                Err(Stop::Failed(e)) => tx.send(Ok(chunk)).and_then(|()| tx.send(Err(e))),
                Err(Stop::Dropped) => Ok(()),
            };
        })
        .map_err(|e| PyOSError::new_err(format!("cannot start the reading thread: {e}")))?;
    Ok(Reader {
        rx: Mutex::new(Some(rx)),
        chunk: Vec::new().into_iter(),
        on_error,
        skipped: Vec::new(),
        files_cut_short: Vec::new(),
    })
}

/// What a bad record does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnError {
    /// Raises `ValueError` naming it.
    Fail,
    /// Is left out, and listed in `Reader.skipped`.
    Skip,
    /// Comes out in its place, with its error.
    Keep,
}

/// Why the reading thread stopped early.
enum Stop {
    /// The reader was dropped.
    Dropped,
    /// Reading failed as a whole.
    Failed(neardup_io::Error),
}

impl From<neardup_io::Error> for Stop {
    fn from(e: neardup_io::Error) -> Stop {
        Stop::Failed(e)
    }
}

/// `plan_inputs(paths, input_format="auto", text_field=None,
/// id_field=None)`: the files `read` reads, in its order, as `(path,
/// format, compression)`; `format` is what `input_format` to read that
/// file alone with. A directory entry that cannot be listed raises
/// `OSError`.
#[pyfunction]
#[pyo3(signature = (paths, input_format = "auto", text_field = None, id_field = None))]
pub(crate) fn plan_inputs(
    paths: Vec<PathBuf>,
    input_format: &str,
    text_field: Option<String>,
    id_field: Option<String>,
) -> PyResult<Vec<(String, &'static str, &'static str)>> {
    let opts = options(paths, input_format, text_field, id_field, false, neardup_io::MAX_DOC_BYTES, false)?;
    let mut out = Vec::new();
    for input in neardup_io::plan(&opts).map_err(io_error)? {
        let input = input.map_err(|bad| PyOSError::new_err(bad.to_string()))?;
        out.push((input.name(), input.format.name(), input.compression.name()));
    }
    Ok(out)
}
