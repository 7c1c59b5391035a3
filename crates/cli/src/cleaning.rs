//! What `boilerplate` and `substrings` share: checks before a run that
//! reads its input twice, records written back with a changed text (every
//! other field as it was, in its order), summary.json.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::args::CleanArgs;
use crate::input::Record;
use crate::kept::{KeptFormat, KeptWriter};
use crate::output::Output;
use crate::records::{batches, ErrorPolicy};
use crate::UsageError;

/// What a cleaning run settled before reading.
pub struct Prepared {
    /// How kept records are written.
    pub format: KeptFormat,
    /// Where what does not fit in memory goes.
    pub tmp: PathBuf,
    /// The output directory, removed again if it was made and the run
    /// fails before anything is in it (see [`Prepared::done`]).
    pub out: crate::output::OutputDir,
}

impl Prepared {
    /// The run succeeded: its output directory stays.
    pub fn done(self) {
        self.out.keep();
    }
}

/// What the second pass makes of one record.
pub enum Cleaned {
    /// Kept as it was.
    Unchanged,
    /// Kept with this text.
    Changed(String),
    /// Left out: too little text was left.
    Dropped,
}

/// The second pass's counts.
#[derive(Debug, Default)]
pub struct Rewritten {
    /// Records read.
    pub documents: u64,
    /// Records written to kept.*.
    pub kept: u64,
    /// Of those, records whose text changed.
    pub changed: u64,
    /// Records left out.
    pub dropped: u64,
}

/// The first pass: reads every record (bad ones reported by `errors`)
/// and hands each batch to `each`. Returns the records read and their
/// input bytes.
///
/// # Errors
///
/// A bad record under `--on-error fail`, or what `each` returns.
pub fn first_pass(
    args: &CleanArgs,
    errors: &ErrorPolicy,
    label: &str,
    mut each: impl FnMut(&[Record]) -> Result<()>,
) -> Result<(u64, u64)> {
    let pb = crate::progress::bar(|| crate::input::total_bytes(&args.input), label);
    let mut bytes_in = 0u64;
    let total = batches(&args.input, errors, &pb, |batch| {
        bytes_in += batch.iter().map(|r| r.raw_len).sum::<u64>();
        each(batch)
    })?;
    pb.finish_and_clear();
    Ok((total, bytes_in))
}

/// The second pass: reads the input again (its bad records were reported
/// by the first), asks `clean` what becomes of each record, in order, and
/// writes the kept ones to kept.* (every other field as it was).
///
/// # Errors
///
/// What `clean` returns, or writing fails.
pub fn rewrite(
    args: &CleanArgs,
    prep: &Prepared,
    label: &str,
    mut clean: impl FnMut(&Record) -> Result<Cleaned>,
) -> Result<(Rewritten, PathBuf)> {
    let field = args.input.text_field.clone().unwrap_or_else(|| "text".into());
    let pb = crate::progress::bar(|| crate::input::total_bytes(&args.input), label);
    let mut out = KeptWriter::open(&args.output, "kept", &prep.format)?;
    let mut n = Rewritten::default();
    batches(&args.input, &ErrorPolicy::quiet(), &pb, |batch| {
        for r in batch.drain(..) {
            n.documents += 1;
            match clean(&r)? {
                Cleaned::Dropped => n.dropped += 1,
                Cleaned::Unchanged => {
                    n.kept += 1;
                    out.push(r.raw.as_deref().unwrap_or(&with_text(None, &r.id, &field, &r.text)?))?;
                }
                Cleaned::Changed(text) => {
                    n.kept += 1;
                    n.changed += 1;
                    out.push(&with_text(r.raw.as_deref(), &r.id, &field, &text)?)?;
                }
            }
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    Ok((n, out.finish()?))
}

/// Checks the inputs (files: the run reads them twice), makes the output
/// folder, removes an earlier run's summary.json, checks --tmp-dir.
///
/// # Errors
///
/// Standard input, a missing path, an unwritable folder.
pub fn prepare(args: &CleanArgs, command: &str) -> Result<Prepared> {
    if args.input.paths.is_empty() || args.input.paths.iter().any(|p| p.as_os_str() == "-") {
        return Err(UsageError(format!(
            "{command} reads its input twice (first to count, then to clean): name files or folders, \
             not standard input"
        ))
        .into());
    }
    crate::input::check_paths(&args.input)?;
    let out = crate::output::OutputDir::create(&args.output)?;
    let summary = args.output.join("summary.json");
    match std::fs::remove_file(&summary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e)
                .with_context(|| format!("{}: cannot remove the earlier run's file", summary.display()))
        }
        _ => {}
    }
    let tmp = args.tmp_dir.clone().unwrap_or_else(|| args.output.clone());
    tempfile::tempfile_in(&tmp).with_context(|| {
        format!("{}: cannot write a temporary file in this folder (--tmp-dir)", tmp.display())
    })?;
    Ok(Prepared { format: crate::kept::choose(args.output_format, &args.input)?, tmp, out })
}

/// A JSON object's members in their order, values as they were written.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Members, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Members, A::Error> {
                let mut v = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, Box<RawValue>>()? {
                    v.push((k, val));
                }
                Ok(Members(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// The record `raw` (one JSON object; `None`: a record read from plain
/// text, written as `{"id", "text"}`) with its `field` set to `text`;
/// every other member as it was, in its place.
///
/// # Errors
///
/// `raw` is not a JSON object (it always is: the readers made it).
pub fn with_text(raw: Option<&str>, id: &Value, field: &str, text: &str) -> Result<String> {
    let Some(raw) = raw else {
        return Ok(json!({ "id": id, field: text }).to_string());
    };
    let Members(members) = serde_json::from_str(raw).context("a record read back")?;
    let mut out = String::with_capacity(raw.len());
    out.push('{');
    let mut found = false;
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(k)?);
        out.push(':');
        if k == field && !found {
            found = true;
            out.push_str(&serde_json::to_string(text)?);
        } else {
            out.push_str(v.get());
        }
    }
    if !found {
        if !members.is_empty() {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(field)?);
        out.push(':');
        out.push_str(&serde_json::to_string(text)?);
    }
    out.push('}');
    Ok(out)
}

/// Writes `OUT/name` as JSON lines, atomically.
///
/// # Errors
///
/// Writing fails.
pub fn write_jsonl<T: serde::Serialize>(
    args: &CleanArgs,
    name: &str,
    rows: impl IntoIterator<Item = T>,
) -> Result<()> {
    let mut out = Output::open(Some(&args.output.join(name)))?;
    for r in rows {
        serde_json::to_writer(&mut *out.writer(), &r)?;
        out.writer().write_all(b"\n")?;
    }
    out.finish()
}

/// Writes summary.json, the mark of a finished run.
///
/// # Errors
///
/// Writing fails.
pub fn write_summary(args: &CleanArgs, summary: &Value) -> Result<()> {
    let mut out = Output::open(Some(&args.output.join("summary.json")))?;
    serde_json::to_writer_pretty(&mut *out.writer(), summary)?;
    out.writer().write_all(b"\n")?;
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_changes_and_nothing_else() {
        let raw = r#"{"url":"u","text":"old \u00e9","meta":{"a":[1,2.50]},"n":1}"#;
        let got = with_text(Some(raw), &json!(1), "text", "new \"t\"").unwrap();
        assert_eq!(got, r#"{"url":"u","text":"new \"t\"","meta":{"a":[1,2.50]},"n":1}"#);
        assert_eq!(with_text(None, &json!("f.txt"), "text", "x").unwrap(), r#"{"id":"f.txt","text":"x"}"#);
    }
}
