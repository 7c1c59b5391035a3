//! Parquet: records read a batch of rows at a time (memory bounded by a
//! row group's column chunks, whatever the file's size), with all their
//! columns kept as JSON; and `kept.parquet` written back in the input's
//! schema from those JSON records.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as Codec, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::Value;

use crate::read::too_big;
use crate::{BadRecord, Error, Item, ReadOptions, Record, EMPTY};

/// `Result` with this crate's error.
type PResult<T> = std::result::Result<T, Error>;

/// Names what failed in an Arrow or Parquet error.
trait Context<T> {
    fn context(self, what: &str) -> PResult<T>;
}

impl<T, X: std::fmt::Display> Context<T> for std::result::Result<T, X> {
    fn context(self, what: &str) -> PResult<T> {
        self.map_err(|e| Error::Parquet(format!("{what}: {e}")))
    }
}

/// Rows per batch read.
const BATCH_ROWS: usize = 1024;

/// Opens a Parquet file's reader, or says why it is not one.
fn open(p: &Path) -> std::result::Result<ParquetRecordBatchReaderBuilder<File>, String> {
    let file = File::open(p).map_err(|e| format!("cannot open: {e}"))?;
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| {
        format!(
            "not a readable Parquet file ({e}); a truncated or unfinished file has no footer: fetch it again"
        )
    })
}

/// A text column, whichever of Arrow's string types it is.
enum Strings<'a> {
    Utf8(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
}

impl<'a> Strings<'a> {
    fn of(a: &'a ArrayRef) -> Option<Strings<'a>> {
        Some(match a.data_type() {
            DataType::Utf8 => Strings::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => Strings::Large(a.as_string::<i64>()),
            DataType::Utf8View => Strings::View(a.as_string_view()),
            _ => return None,
        })
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Strings::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// An id column's value at row `i` (strings and integers).
fn id_value(a: &ArrayRef, i: usize) -> Option<Value> {
    use arrow_array::types::*;
    if a.is_null(i) {
        return None;
    }
    Some(match a.data_type() {
        DataType::Int8 => a.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => a.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i).into(),
        _ => Value::String(Strings::of(a)?.get(i)?.to_owned()),
    })
}

fn is_id_type(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The text column and the id column (if any) of a file of `schema`, or
/// what to tell the user when one is missing or of the wrong type.
fn columns(schema: &SchemaRef, opts: &ReadOptions) -> std::result::Result<(usize, Option<usize>), String> {
    let text_field = opts.text_field();
    let Ok(text_col) = schema.index_of(text_field) else {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).take(10).collect();
        return Err(format!(
            "no column {text_field:?} (columns: {}); name the text column with --text-field (Python: text_field=)",
            names.join(", ")
        ));
    };
    if Strings::of(&arrow_array::new_empty_array(schema.field(text_col).data_type())).is_none() {
        return Err(format!(
            "column {text_field:?} is {}, not a string column; name the text column with --text-field (Python: text_field=)",
            schema.field(text_col).data_type()
        ));
    }
    let id_col = match opts.id_field.as_deref() {
        Some(f) => Some(
            schema
                .index_of(f)
                .map_err(|_| format!("no column {f:?}; check --id-field (Python: id_field=)"))?,
        ),
        None => schema.index_of("id").ok(),
    };
    if let Some(c) = id_col {
        let t = schema.field(c).data_type();
        if !is_id_type(t) {
            let f = schema.field(c).name();
            return Err(format!("column {f:?} is {t}; ids must be strings or integers (--id-field)"));
        }
    }
    Ok((text_col, id_col))
}

/// Reads the records of the Parquet file `p`: the text from
/// `--text-field` (default `text`), the id from `--id-field` (default `id`
/// if there is one, else `FILE:row N`); each record's origin is `FILE:row N`.
///
/// # Errors
///
/// Whatever `sink` returns.
pub fn read<E: From<Error>>(
    p: &Path,
    opts: &ReadOptions,
    sink: &mut impl FnMut(Item) -> Result<(), E>,
) -> Result<(), E> {
    let name = p.display().to_string();
    let builder = match open(p) {
        Ok(b) => b,
        Err(message) => return sink(Err(BadRecord { rest_lost: false, origin: name, message })),
    };
    let text_field = opts.text_field();
    let bad = |message: String| Err(BadRecord { rest_lost: false, origin: name.clone(), message });
    let (text_col, id_col) = match columns(builder.schema(), opts) {
        Ok(c) => c,
        Err(message) => return sink(bad(message)),
    };
    let reader = match builder.with_batch_size(BATCH_ROWS).build() {
        Ok(r) => r,
        Err(e) => return sink(bad(format!("cannot read: {e}"))),
    };
    let mut row = 0u64;
    for batch in reader {
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                let origin = format!("{name}:row {}", row + 1);
                let message = format!(
                    "cannot read: corrupt Parquet data ({e}); the rows before this one were read, the \
                     rest of the file is lost: fetch it again"
                );
                return sink(Err(BadRecord { rest_lost: true, origin, message }));
            }
        };
        let raws = if opts.keep_raw { Some(json_lines(&batch)?) } else { None };
        let texts = Strings::of(batch.column(text_col)).expect("checked to be strings");
        for i in 0..batch.num_rows() {
            row += 1;
            let origin = format!("{name}:row {row}");
            let Some(text) = texts.get(i) else {
                sink(Err(BadRecord {
                    rest_lost: false,
                    origin,
                    message: format!("{text_field:?} is null"),
                }))?;
                continue;
            };
            let raw_len = text.len() as u64;
            if raw_len > opts.max_doc_bytes {
                sink(Err(too_big(&origin, Some(raw_len), opts.max_doc_bytes)))?;
                continue;
            }
            if !opts.allow_empty && text.trim().is_empty() {
                sink(Err(BadRecord { rest_lost: false, origin, message: EMPTY.into() }))?;
                continue;
            }
            let id = id_col
                .and_then(|c| id_value(batch.column(c), i))
                .unwrap_or_else(|| Value::String(origin.clone()));
            let raw = raws.as_ref().map(|r| r[i].clone());
            sink(Ok(Record { id, text: text.to_owned(), origin, raw_len, raw }))?;
        }
    }
    Ok(())
}

/// The rows of `batch` as JSON objects, one string each (nulls left out).
fn json_lines(batch: &RecordBatch) -> PResult<Vec<String>> {
    let mut w = arrow_json::LineDelimitedWriter::new(Vec::new());
    w.write(batch).context("a Parquet row as JSON")?;
    w.finish().context("a Parquet row as JSON")?;
    let bytes = w.into_inner();
    let text = String::from_utf8(bytes).context("a Parquet row as JSON")?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// The schema shared by the Parquet inputs among `inputs`, `None` if
/// there are none.
///
/// # Errors
///
/// Two Parquet inputs with different schemas ([`Error::Usage`]), or one
/// that cannot be read.
pub fn common_schema(inputs: &[crate::Input]) -> PResult<Option<SchemaRef>> {
    let mut found: Option<(SchemaRef, PathBuf)> = None;
    for input in inputs.iter().filter(|i| i.format == crate::InputFormat::Parquet) {
        let Some(f) = &input.path else { continue };
        let schema = open(f).map_err(|m| Error::Parquet(format!("{}: {m}", f.display())))?.schema().clone();
        match &found {
            None => found = Some((schema, f.clone())),
            Some((s, first)) if s.fields() != schema.fields() => {
                return Err(Error::Usage(format!(
                    "{} and {} have different schemas, so the kept rows cannot share one Parquet \
                     file; pass --output-format jsonl (every column is kept as JSON)",
                    first.display(),
                    f.display()
                )))
            }
            Some(_) => {}
        }
    }
    Ok(found.map(|(s, _)| s))
}

/// Rows per row group written.
const WRITE_ROWS: usize = 8192;

/// Writes records given as JSON objects (what [`read`] keeps of each row,
/// possibly with a changed text) into a Parquet file of `schema`.
pub struct ParquetWriter {
    writer: ArrowWriter<File>,
    decoder: arrow_json::reader::Decoder,
}

impl ParquetWriter {
    /// A writer into `file` (zstd-compressed columns).
    ///
    /// # Errors
    ///
    /// The schema cannot be written.
    pub fn new(file: File, schema: SchemaRef) -> PResult<ParquetWriter> {
        let props = WriterProperties::builder()
            .set_compression(Codec::ZSTD(ZstdLevel::try_new(3).expect("a zstd level")))
            .set_max_row_group_row_count(Some(WRITE_ROWS * 16))
            .build();
        let writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props)).context("kept.parquet")?;
        let decoder = arrow_json::ReaderBuilder::new(schema)
            .with_batch_size(WRITE_ROWS)
            .build_decoder()
            .context("kept.parquet: the input's schema as JSON")?;
        Ok(ParquetWriter { writer, decoder })
    }

    /// Adds one record, a JSON object.
    ///
    /// # Errors
    ///
    /// The record does not fit the schema, or writing fails.
    pub fn push(&mut self, json: &str) -> PResult<()> {
        let mut buf = json.as_bytes();
        while !buf.is_empty() {
            let n =
                self.decoder.decode(buf).context("kept.parquet: a record does not fit the input's schema")?;
            buf = &buf[n..];
            if !buf.is_empty() || self.decoder.len() >= WRITE_ROWS {
                self.flush()?;
            }
        }
        self.decoder.decode(b"\n").context("kept.parquet")?;
        if self.decoder.len() >= WRITE_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> PResult<()> {
        if let Some(batch) = self.decoder.flush().context("kept.parquet")? {
            self.writer.write(&batch).context("kept.parquet")?;
        }
        Ok(())
    }

    /// Writes the rest and the footer; returns the file.
    ///
    /// # Errors
    ///
    /// Writing fails.
    pub fn finish(mut self) -> PResult<File> {
        self.flush()?;
        self.writer.into_inner().context("kept.parquet: the footer")
    }
}
