//! Reading records: plain text, lines, JSONL, CSV and Parquet, decompressed
//! on the way ([`crate::compressed`]).
//!
//! Every record that cannot be read becomes a [`BadRecord`] naming where it
//! is (`FILE` or `FILE:LINE`) and what to do; the caller decides whether it
//! stops the run.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use serde_json::Value;

use crate::compressed::{self, Compression};
use crate::plan::{auto_format, plan, Input};
use crate::{Error, InputFormat, ReadOptions};

/// One document.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The id: the id field's value (a string or a number), or where the
    /// document came from.
    pub id: Value,
    /// The text.
    pub text: String,
    /// Where it came from, for messages: `FILE`, `FILE:LINE` or
    /// `FILE:row N`.
    pub origin: String,
    /// How many input bytes it took (for progress bars).
    pub raw_len: u64,
    /// The record as one JSON object with all its fields, when the caller
    /// asked for it ([`ReadOptions::keep_raw`]): what `dedup` writes to
    /// `kept.jsonl`.
    pub raw: Option<String>,
}

impl Record {
    /// The record as one JSON object, as kept records are written: its
    /// fields as read ([`Record::raw`]), or `{"id", "text"}` for a text or
    /// a line, which has no fields of its own. Takes `raw`.
    pub fn take_json(&mut self) -> String {
        self.raw.take().unwrap_or_else(|| serde_json::json!({ "id": self.id, "text": self.text }).to_string())
    }

    /// With [`Record::raw`] made from the id and text when `keep` (a text
    /// or a line, which has no fields of its own).
    fn with_raw(mut self, keep: bool) -> Record {
        if keep && self.raw.is_none() {
            self.raw = Some(self.take_json());
        }
        self
    }
}

/// A record that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    /// `FILE` or `FILE:LINE`.
    pub origin: String,
    /// What is wrong and what to do.
    pub message: String,
    /// The file could not be read past this point (cut short, damaged, an
    /// I/O error): not one bad record but the loss of the rest of the file.
    pub rest_lost: bool,
}

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}

/// A record or the reason there is none.
pub type Item = std::result::Result<Record, BadRecord>;

/// Reads every record of every input ([`plan`]), in order, handing each
/// to `sink`.
///
/// # Errors
///
/// A path that names nothing, or whatever `sink` returns.
pub fn read_all<E: From<Error>>(
    opts: &ReadOptions,
    mut sink: impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    for input in plan(opts)? {
        match input {
            Ok(input) => read_input(&input, opts, &mut sink)?,
            Err(bad) => sink(Err(bad))?,
        }
    }
    Ok(())
}

/// Reads the records of one planned input, in order, handing each to
/// `sink`. `opts.paths` and `opts.format` are not looked at: the input
/// says what to read and how.
///
/// # Errors
///
/// Whatever `sink` returns.
pub fn read_input<E: From<Error>>(
    input: &Input,
    opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    let name = input.name();
    if let (Some(p), InputFormat::Parquet) = (&input.path, input.format) {
        return read_parquet(p, opts, sink);
    }
    let opened: io::Result<Box<dyn Read + Send>> = match &input.path {
        None => Ok(Box::new(io::stdin())),
        Some(p) => File::open(p).map(|f| Box::new(f) as Box<dyn Read + Send>),
    };
    let (reader, compression) = match opened.and_then(compressed::decoded) {
        Ok(r) => r,
        Err(e) => {
            return sink(Err(BadRecord {
                rest_lost: false,
                origin: name,
                message: format!("cannot open: {e}"),
            }))
        }
    };
    let format = match input.format {
        InputFormat::Auto => auto_format(None, opts),
        f => f,
    };
    let whole = format == InputFormat::Text || format.is_document();
    if let (Some(p), true, Compression::None) = (&input.path, whole, compression) {
        if let Ok(m) = std::fs::metadata(p) {
            if m.len() > opts.max_doc_bytes {
                return sink(Err(too_big(&name, Some(m.len()), opts.max_doc_bytes)));
            }
        }
    }
    read_from(reader, &name, format, opts, sink)
}

#[cfg(feature = "parquet")]
fn read_parquet<E: From<Error>>(
    p: &Path,
    opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    crate::parquet::read(p, opts, sink)
}

#[cfg(not(feature = "parquet"))]
fn read_parquet<E: From<Error>>(
    p: &Path,
    _opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    sink(Err(BadRecord {
        rest_lost: false,
        origin: p.display().to_string(),
        message: "a Parquet file, and this neardup was built without the `parquet` feature; \
                  rebuild with it (the default) or convert the file to JSONL"
            .into(),
    }))
}

/// Reads the records of one input, `name` (for messages), in `format`
/// (`Auto` reads one text), handing each to `sink`.
///
/// # Errors
///
/// Whatever `sink` returns.
pub fn read_from<E>(
    reader: Box<dyn Read>,
    name: &str,
    format: InputFormat,
    opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    match format {
        InputFormat::Text | InputFormat::Auto => sink(
            read_text(reader, name, opts.max_doc_bytes, opts.allow_empty).map(|r| r.with_raw(opts.keep_raw)),
        ),
        InputFormat::Lines | InputFormat::Jsonl => read_lines(reader, name, format, opts, sink),
        InputFormat::Csv => read_csv(reader, name, opts, sink),
        InputFormat::Parquet => sink(Err(BadRecord {
            rest_lost: false,
            origin: name.to_owned(),
            message: "Parquet is read from files, not from standard input; name the file".into(),
        })),
        InputFormat::Docx | InputFormat::Pdf | InputFormat::Html | InputFormat::Markdown => {
            let item = read_bytes(reader, name, opts.max_doc_bytes).and_then(|bytes| {
                let raw_len = bytes.len() as u64;
                let text = document_text(format, bytes, name, opts.max_doc_bytes, opts.allow_empty)?;
                Ok(Record {
                    id: Value::String(name.to_owned()),
                    text,
                    origin: name.to_owned(),
                    raw_len,
                    raw: None,
                })
            });
            sink(item.map(|r| r.with_raw(opts.keep_raw)))
        }
    }
}

/// Reads a whole input of at most `max` bytes.
fn read_bytes(reader: Box<dyn Read>, name: &str, max: u64) -> std::result::Result<Vec<u8>, BadRecord> {
    let mut bytes = Vec::new();
    if let Err(e) = reader.take(max + 1).read_to_end(&mut bytes) {
        return Err(BadRecord {
            rest_lost: false,
            origin: name.to_owned(),
            message: format!("cannot read: {e}"),
        });
    }
    if bytes.len() as u64 > max {
        return Err(too_big(name, None, max));
    }
    Ok(bytes)
}

/// The text of a document in `format` (.docx, .pdf, .html, .md), checked
/// as any text is (not blank).
pub(crate) fn document_text(
    format: InputFormat,
    bytes: Vec<u8>,
    origin: &str,
    max: u64,
    allow_empty: bool,
) -> std::result::Result<String, BadRecord> {
    use crate::documents::{extract, Limits};
    let kind = format.document().expect("a document format");
    let bad = |message: String| BadRecord { rest_lost: false, origin: origin.to_owned(), message };
    let limits = Limits { max_text_bytes: max, deadline: None }.within(crate::PARSE_TIMEOUT);
    let text = extract(kind, &bytes, &limits).map_err(|e| bad(e.to_string()))?;
    if !allow_empty && text.trim().is_empty() {
        return Err(bad(format!("{} with no text; {EMPTY}", kind.title())));
    }
    Ok(text)
}

/// What an empty document is told.
pub const EMPTY: &str =
    "empty document (no text, or only whitespace); pass --allow-empty (Python: allow_empty=True) to fingerprint it anyway";

/// A document over the size limit; `len` is its size when known (a stream
/// is read only up to the limit).
pub(crate) fn too_big(origin: &str, len: Option<u64>, max: u64) -> BadRecord {
    let size = match len {
        Some(n) => crate::units(n),
        None => format!("more than {}", crate::units(max)),
    };
    BadRecord {
        rest_lost: false,
        origin: origin.to_owned(),
        message: format!(
            "document is {size}, over the limit of {}; raise --max-doc-bytes (Python: max_doc_bytes=) or split the document",
            crate::units(max)
        ),
    }
}

/// Checks that `bytes` are UTF-8 text, not binary, and not blank.
fn to_text(bytes: Vec<u8>, origin: &str, allow_empty: bool) -> std::result::Result<String, BadRecord> {
    let bad = |message: String| BadRecord { rest_lost: false, origin: origin.to_owned(), message };
    if let Some(pos) = bytes.iter().take(8192).position(|&b| b == 0) {
        return Err(bad(format!(
            "looks binary (NUL byte at offset {pos}); neardup reads UTF-8 text: extract the text first"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        bad(format!(
            "invalid UTF-8 at byte {}; convert the input to UTF-8 (e.g. `iconv -f GB18030 -t UTF-8`)",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if !allow_empty && text.trim().is_empty() {
        return Err(bad(EMPTY.into()));
    }
    Ok(text)
}

fn read_text(reader: Box<dyn Read>, name: &str, max: u64, allow_empty: bool) -> Item {
    let bytes = read_bytes(reader, name, max)?;
    let raw_len = bytes.len() as u64;
    let text = to_text(bytes, name, allow_empty)?;
    Ok(Record { id: Value::String(name.to_owned()), text, origin: name.to_owned(), raw_len, raw: None })
}

/// Reads one whole document from a file or `-` (stdin), with the same
/// checks as `fingerprint` (UTF-8, not binary, size, not blank): plain
/// text, or a .docx, .pdf, .html or .md file (by its name or, for PDFs and
/// zips, its first bytes) read as a document.
pub fn read_document(path: &Path, max: u64, allow_empty: bool) -> Item {
    let name = path.display().to_string();
    let opened: io::Result<Box<dyn Read + Send>> = if path.as_os_str() == "-" {
        Ok(Box::new(io::stdin()))
    } else {
        File::open(path).map(|f| Box::new(f) as Box<dyn Read + Send>)
    };
    let (reader, compression) = match opened.and_then(compressed::decoded) {
        Ok(r) => r,
        Err(e) => {
            return Err(BadRecord { rest_lost: false, origin: name, message: format!("cannot open: {e}") })
        }
    };
    let bytes = read_bytes(reader, &name, max)?;
    // A document by its name (inside its compression) or its first bytes;
    // otherwise UTF-8 text.
    let inner = if compression == Compression::None { path } else { compressed::inner_name(path) };
    let format = crate::plan::document_format(inner, &bytes);
    let raw_len = bytes.len() as u64;
    let text = match format {
        Some(format) => document_text(format, bytes, &name, max, allow_empty)?,
        None => to_text(bytes, &name, allow_empty)?,
    };
    Ok(Record { id: Value::String(name.clone()), text, origin: name, raw_len, raw: None })
}

enum LineRead {
    Eof,
    Complete,
    TooLong(u64),
}

/// Reads one line into `buf` (without the newline), keeping at most `max`
/// bytes: a longer line is consumed and reported, never held in memory.
fn read_line_limited(r: &mut impl BufRead, buf: &mut Vec<u8>, max: u64) -> io::Result<LineRead> {
    buf.clear();
    let mut total: u64 = 0;
    let mut any = false;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        total += take as u64;
        if total <= max + 1 {
            buf.extend_from_slice(&chunk[..take]);
        }
        r.consume(take);
        if done {
            break;
        }
    }
    if !any {
        return Ok(LineRead::Eof);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    if total > max + 1 {
        return Ok(LineRead::TooLong(total));
    }
    Ok(LineRead::Complete)
}

/// JSON lines parsed at once, on every core: parsing is most of reading
/// a JSONL corpus, and the reader thread alone would hold back the work.
const PARSE_LINES: usize = 512;
const PARSE_BYTES: usize = 1 << 20;

fn read_lines<E>(
    reader: Box<dyn Read>,
    name: &str,
    format: InputFormat,
    opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    use rayon::prelude::*;
    let mut r = BufReader::with_capacity(1 << 16, reader);
    let mut buf = Vec::new();
    let mut lineno = 0u64;
    // JSON lines waiting to be parsed: (line, its number).
    let mut pending: Vec<(Vec<u8>, u64)> = Vec::new();
    let mut pending_bytes = 0usize;
    let flush =
        |pending: &mut Vec<(Vec<u8>, u64)>, sink: &mut dyn FnMut(Item) -> Result<(), E>| -> Result<(), E> {
            let items: Vec<Item> = std::mem::take(pending)
                .into_par_iter()
                .map(|(line, no)| {
                    let raw_len = line.len() as u64 + 1;
                    parse_jsonl(line, format!("{name}:{no}"), opts).map(|r| Record { raw_len, ..r })
                })
                .collect();
            items.into_iter().try_for_each(sink)
        };
    loop {
        lineno += 1;
        let origin = || format!("{name}:{lineno}");
        let read = read_line_limited(&mut r, &mut buf, opts.max_doc_bytes);
        // Whatever is not a JSON line to parse goes after the lines before it.
        let queue = format == InputFormat::Jsonl
            && matches!(read, Ok(LineRead::Complete))
            && !buf.iter().all(u8::is_ascii_whitespace);
        if !queue && !pending.is_empty() {
            flush(&mut pending, sink)?;
            pending_bytes = 0;
        }
        match read {
            Ok(LineRead::Eof) => return Ok(()),
            Ok(LineRead::TooLong(n)) => sink(Err(too_big(&origin(), Some(n), opts.max_doc_bytes)))?,
            Ok(LineRead::Complete) => {
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue; // a blank line is no record
                }
                if queue {
                    pending_bytes += buf.len();
                    // A copy of its exact size: `buf` keeps its capacity
                    // for the next line (taking it made each line grow a
                    // new buffer from nothing, a realloc per doubling).
                    pending.push((buf.clone(), lineno));
                    if pending.len() >= PARSE_LINES || pending_bytes >= PARSE_BYTES {
                        flush(&mut pending, sink)?;
                        pending_bytes = 0;
                    }
                    continue;
                }
                let raw_len = buf.len() as u64 + 1;
                let item = to_text(std::mem::take(&mut buf), &origin(), true).map(|text| {
                    Record { id: Value::String(origin()), text, origin: origin(), raw_len, raw: None }
                        .with_raw(opts.keep_raw)
                });
                sink(item)?;
            }
            Err(e) => {
                sink(Err(BadRecord {
                    rest_lost: true,
                    origin: origin(),
                    message: format!("cannot read: {e}"),
                }))?;
                return Ok(());
            }
        }
    }
}

fn parse_jsonl(line: Vec<u8>, origin: String, opts: &ReadOptions) -> Item {
    let bad = |message: String| BadRecord { rest_lost: false, origin: origin.clone(), message };
    // Validated with SIMD (most of a line is its text); the standard
    // library says where a bad byte is.
    let line = if simdutf8::basic::from_utf8(&line).is_ok() {
        // SAFETY: the bytes were just validated as UTF-8.
        unsafe { String::from_utf8_unchecked(line) }
    } else {
        let at = std::str::from_utf8(&line).err().map_or(0, |e| e.valid_up_to());
        return Err(bad(format!("invalid UTF-8 at byte {at} of the line; convert the input to UTF-8")));
    };
    // As a map, not a `Value`: with serde_json's raw_value feature (which
    // axum turns on), a `Value` object whose first key is serde_json's
    // private RawValue token would be read as raw JSON text (a fuzzer found
    // a CSV header of that name that made kept.jsonl unreadable).
    let mut obj: serde_json::Map<String, Value> = match serde_json::from_str(&line) {
        Ok(obj) => obj,
        Err(e) => {
            return Err(bad(match serde_json::from_str::<Value>(&line) {
                Ok(value) => format!("expected a JSON object, found {}", kind(&value)),
                Err(_) => format!("malformed JSON ({e}); each line must be one JSON object"),
            }))
        }
    };
    let text_field = opts.text_field.as_deref().unwrap_or("text");
    let text = match obj.remove(text_field) {
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(bad(format!("field {text_field:?} is {}, not a string", kind(&other))));
        }
        None => {
            let fields: Vec<&str> = obj.keys().map(String::as_str).take(10).collect();
            return Err(bad(format!(
                "no field {text_field:?} (fields: {}); name the text field with --text-field (Python: text_field=)",
                fields.join(", ")
            )));
        }
    };
    let id = match (opts.id_field.as_deref(), obj.remove(opts.id_field.as_deref().unwrap_or("id"))) {
        (_, Some(v @ (Value::String(_) | Value::Number(_)))) => v,
        (_, Some(other)) => {
            let f = opts.id_field.as_deref().unwrap_or("id");
            return Err(bad(format!("field {f:?} is {}; ids must be strings or numbers", kind(&other))));
        }
        (Some(f), None) => return Err(bad(format!("no field {f:?}; check --id-field (Python: id_field=)"))),
        (None, None) => Value::String(origin.clone()),
    };
    if !opts.allow_empty && text.trim().is_empty() {
        return Err(bad(EMPTY.into()));
    }
    let raw = opts.keep_raw.then_some(line);
    Ok(Record { id, text, origin, raw_len: 0, raw })
}

fn read_csv<E>(
    reader: Box<dyn Read>,
    name: &str,
    opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    let quotes = Rc::new(Cell::new(0u64));
    let counted = QuoteCounter { inner: reader, quotes: Rc::clone(&quotes) };
    let mut r =
        csv::ReaderBuilder::new().flexible(false).from_reader(BufReader::with_capacity(1 << 16, counted));
    let columns = match r.headers() {
        Ok(h) => CsvColumns::find(h, opts),
        Err(e) => Err(format!("cannot read the CSV header ({e}); the first row must name the columns")),
    };
    let columns = match columns {
        Ok(c) => c,
        Err(message) => {
            return sink(Err(BadRecord { rest_lost: false, origin: format!("{name}:1"), message }))
        }
    };
    // Each row goes to the sink when the next one has been read: the csv
    // crate takes a quote that is never closed as a field running to the end
    // of the input, which only the end of the input shows.
    let (mut rec, mut held) = (csv::StringRecord::new(), csv::StringRecord::new());
    let mut held_origin: Option<String> = None;
    loop {
        let origin = format!("{name}:{}", r.position().line());
        match r.read_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {
                if let Some(o) = held_origin.take() {
                    sink(columns.record(&held, o, opts))?;
                }
                std::mem::swap(&mut rec, &mut held);
                held_origin = Some(origin);
            }
            Err(e) => {
                if let Some(o) = held_origin.take() {
                    sink(columns.record(&held, o, opts))?;
                }
                let fatal = matches!(e.kind(), csv::ErrorKind::Io(_));
                sink(Err(BadRecord { rest_lost: fatal, origin, message: csv_error_message(&e) }))?;
                if fatal {
                    return Ok(());
                }
            }
        }
    }
    if let Some(origin) = held_origin {
        let runs_to_the_end = held.iter().next_back().is_some_and(|f| f.contains('\n'));
        if quotes.get() % 2 == 1 && runs_to_the_end {
            let message = "a quoted field opened in this row is never closed, so it runs to the end of \
                           the input; close the quote (a quote inside a quoted field is written \"\")"
                .to_string();
            return sink(Err(BadRecord { rest_lost: false, origin, message }));
        }
        sink(columns.record(&held, origin, opts))?;
    }
    Ok(())
}

/// Counts the quote characters a CSV reader reads: an odd count at the end
/// means a quote was left open (or a bare quote sits inside an unquoted
/// field, which the csv crate reads as text).
struct QuoteCounter {
    inner: Box<dyn Read>,
    quotes: Rc<Cell<u64>>,
}

impl Read for QuoteCounter {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let found = buf[..n].iter().filter(|&&b| b == b'"').count() as u64;
        self.quotes.set(self.quotes.get() + found);
        Ok(n)
    }
}

/// The columns of a CSV input that matter: the header, the text column and
/// the id column (`--id-field`, else a column named `id`, else none).
struct CsvColumns {
    headers: csv::StringRecord,
    text: usize,
    id: Option<usize>,
}

impl CsvColumns {
    /// The columns named by `--text-field` (default `text`) and
    /// `--id-field`, or what to tell the user when one is missing.
    fn find(headers: &csv::StringRecord, opts: &ReadOptions) -> std::result::Result<CsvColumns, String> {
        let text_field = opts.text_field.as_deref().unwrap_or("text");
        let Some(text) = headers.iter().position(|h| h == text_field) else {
            let cols: Vec<&str> = headers.iter().take(10).collect();
            return Err(format!(
                "no column {text_field:?} (columns: {}); name the text column with --text-field (Python: text_field=)",
                cols.join(", ")
            ));
        };
        let id = match opts.id_field.as_deref() {
            Some(f) => Some(
                headers
                    .iter()
                    .position(|h| h == f)
                    .ok_or_else(|| format!("no column {f:?}; check --id-field (Python: id_field=)"))?,
            ),
            None => headers.iter().position(|h| h == "id"),
        };
        Ok(CsvColumns { headers: headers.clone(), text, id })
    }

    /// One row as a record, or why it is refused (too big, empty text).
    fn record(&self, rec: &csv::StringRecord, origin: String, opts: &ReadOptions) -> Item {
        let raw_len = rec.as_slice().len() as u64 + rec.len() as u64;
        if raw_len > opts.max_doc_bytes {
            return Err(too_big(&origin, Some(raw_len), opts.max_doc_bytes));
        }
        let text = rec.get(self.text).unwrap_or("").to_owned();
        if !opts.allow_empty && text.trim().is_empty() {
            return Err(BadRecord { rest_lost: false, origin, message: EMPTY.into() });
        }
        let id = match self.id.and_then(|c| rec.get(c)) {
            Some(v) => Value::String(v.to_owned()),
            None => Value::String(origin.clone()),
        };
        let raw = opts.keep_raw.then(|| {
            let obj: serde_json::Map<String, Value> = self
                .headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_owned(), Value::String(v.to_owned())))
                .collect();
            Value::Object(obj).to_string()
        });
        Ok(Record { id, text, origin, raw_len, raw })
    }
}

/// What to tell the user about a row the CSV reader refused.
fn csv_error_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => {
            "invalid UTF-8; convert the input to UTF-8 (e.g. `iconv -f GB18030 -t UTF-8`)".to_string()
        }
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("{len} fields where the header has {expected_len}; quote fields that contain commas")
        }
        _ => format!("malformed CSV: {e}"),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
