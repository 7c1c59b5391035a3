//! `neardup substrings`: the core's substring dedup (`neardup::clean::
//! substrings`) over the input files — write the corpus, find the repeats
//! with suffix arrays, then cut each record's spans — and the outputs:
//! kept records, removed spans, summary.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use neardup::clean::substrings::{cut, Corpus, KeepSpan, Measure, Removal, Substrings};
use serde_json::json;

use crate::args::SubstringsArgs;
use crate::cleaning::{first_pass, prepare, rewrite, write_summary, Cleaned, Rewritten};
use crate::output::{count, Output};
use crate::records::ErrorPolicy;
use crate::UsageError;

pub fn run(mut args: SubstringsArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let usage = |e: neardup::Error| match e {
        neardup::Error::Config(m) => UsageError(m),
        e => UsageError(e.to_string()),
    };
    let measure = Measure::of(args.min_bytes, args.min_tokens).map_err(usage)?;
    let keep: KeepSpan = args.keep.parse().map_err(usage)?;
    let job = Substrings::new(measure).keep(keep);
    job.validate().map_err(usage)?;
    let prep = prepare(&args.clean, "substrings")?;
    args.clean.input.keep_raw = true;
    let c = &args.clean;

    // Pass 1: the corpus as symbols.
    let errors = ErrorPolicy::new(c.input.on_error);
    let (corpus, total, bytes_in, text_bytes) = read_corpus(&job, c, &prep, &errors)?;
    let read_secs = start.elapsed().as_secs_f64();

    // The repeats.
    let t = Instant::now();
    let pb = crate::progress::stage("finding repeated spans (suffix arrays)");
    let removal = job.find(&corpus, c.memory.0, &prep.tmp);
    pb.finish_and_clear();
    let (removal, find_secs) = (removal?, t.elapsed().as_secs_f64());

    // Pass 2: cut each record's spans; each span goes to removed.jsonl.
    let t = Instant::now();
    let (n, kept_path, spans_removed, bytes_removed) = cut_spans(c, &prep, &corpus, &removal)?;
    let secs = start.elapsed().as_secs_f64();
    let (measure_name, min) = match measure {
        Measure::Bytes(b) => ("min_bytes", b),
        Measure::Tokens(t) => ("min_tokens", t),
    };
    let summary = json!({
        measure_name: min,
        "keep": args.keep,
        "records_read": total,
        "skipped": errors.skipped(),
        "files_cut_short": errors.cut_short(),
        "documents": n.documents,
        "kept": n.kept,
        "changed": n.changed,
        "dropped_too_short": n.dropped,
        "min_chars": c.min_chars,
        "spans_removed": spans_removed,
        "bytes_removed": bytes_removed,
        "text_bytes": text_bytes,
        "input_bytes": bytes_in,
        "suffix_arrays": removal.parts(),
        "seconds": { "total": secs, "read": read_secs, "find": find_secs, "cut": t.elapsed().as_secs_f64() },
        "mb_per_second": text_bytes as f64 / 1e6 / secs,
        "memory": { "budget": c.memory.0, "tmp_dir": prep.tmp.display().to_string() },
    });
    write_summary(&args.clean, &summary)?;
    errors.summary(total);
    note!(
        "neardup: {}, {} cut, {} dropped as too short; {} removed ({bytes_removed} of {text_bytes} bytes) in {secs:.2} s; kept records in {}",
        count(n.documents, "document"),
        n.changed,
        n.dropped,
        count(spans_removed, "repeated span"),
        kept_path.display()
    );
    prep.done();
    Ok(ExitCode::SUCCESS)
}

/// The first pass: every record's text into the corpus. Returns it, the
/// records read, their input bytes and their text bytes.
fn read_corpus(
    job: &Substrings,
    c: &crate::args::CleanArgs,
    prep: &crate::cleaning::Prepared,
    errors: &ErrorPolicy,
) -> Result<(Corpus, u64, u64, u64)> {
    let mut corpus = job.corpus(&prep.tmp)?;
    let mut text_bytes = 0u64;
    let (total, bytes_in) = first_pass(c, errors, "reading the corpus", |batch| {
        for r in batch {
            text_bytes += r.text.len() as u64;
            corpus.push(&r.text)?;
        }
        Ok(())
    })?;
    Ok((corpus.finish()?, total, bytes_in, text_bytes))
}

/// The second pass: each record's repeated spans cut (each written to
/// removed.jsonl), in order. Returns the counts, the kept file, the spans
/// and bytes removed.
fn cut_spans(
    c: &crate::args::CleanArgs,
    prep: &crate::cleaning::Prepared,
    corpus: &Corpus,
    removal: &Removal,
) -> Result<(Rewritten, std::path::PathBuf, u64, u64)> {
    let mut side = Output::open(Some(&c.output.join("removed.jsonl")))?;
    let (mut doc, mut spans_removed, mut bytes_removed) = (0usize, 0u64, 0u64);
    let (n, kept_path) = rewrite(c, prep, "removing repeated spans", |r| {
        let spans = removal.spans(corpus, doc, &r.text).map_err(|e| anyhow::anyhow!("{}: {e}", r.origin))?;
        doc += 1;
        if spans.is_empty() {
            return Ok(Cleaned::Unchanged);
        }
        for s in &spans {
            spans_removed += 1;
            bytes_removed += s.len() as u64;
            let line = json!({ "id": r.id, "start": s.start, "end": s.end, "text": &r.text[s.clone()] });
            serde_json::to_writer(&mut *side.writer(), &line)?;
            side.writer().write_all(b"\n")?;
        }
        let cleaned = cut(&r.text, &spans);
        Ok(if cleaned.chars().filter(|c| !c.is_whitespace()).count() < c.min_chars {
            Cleaned::Dropped
        } else {
            Cleaned::Changed(cleaned)
        })
    })?;
    side.finish()?;
    Ok((n, kept_path, spans_removed, bytes_removed))
}
