//! `neardup substrings`: the core's substring dedup (`neardup::clean::
//! substrings`) over the input files — write the corpus, find the repeats
//! with suffix arrays, then cut each record's spans — and the outputs:
//! kept records, removed spans, summary.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use neardup::clean::substrings::{cut, KeepSpan, Measure, Substrings};
use serde_json::json;

use crate::args::SubstringsArgs;
use crate::cleaning::{prepare, with_text, write_summary};
use crate::kept::KeptWriter;
use crate::output::{count, Output};
use crate::records::{batches, ErrorPolicy};
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
    let field = c.input.text_field.clone().unwrap_or_else(|| "text".into());

    // Pass 1: the corpus as symbols.
    let errors = ErrorPolicy::new(c.input.on_error);
    let pb = crate::progress::bar(|| crate::input::total_bytes(&c.input), "reading the corpus");
    let mut corpus = job.corpus(&prep.tmp)?;
    let mut bytes_in = 0u64;
    let mut text_bytes = 0u64;
    let total = batches(&c.input, &errors, &pb, |batch| {
        for r in batch.iter() {
            bytes_in += r.raw_len;
            text_bytes += r.text.len() as u64;
            corpus.push(&r.text)?;
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    let corpus = corpus.finish()?;
    let read_secs = start.elapsed().as_secs_f64();

    // The repeats.
    let t = Instant::now();
    let pb = crate::progress::stage("finding repeated spans (suffix arrays)");
    let removal = job.find(&corpus, c.memory.0, &prep.tmp);
    pb.finish_and_clear();
    let removal = removal?;
    let find_secs = t.elapsed().as_secs_f64();

    // Pass 2: cut each record's spans.
    let t = Instant::now();
    let quiet = ErrorPolicy::quiet();
    let pb = crate::progress::bar(|| crate::input::total_bytes(&c.input), "removing repeated spans");
    let mut out = KeptWriter::open(&c.output, "kept", &prep.format)?;
    let mut side = Output::open(Some(&c.output.join("removed.jsonl")))?;
    let (mut doc, mut kept, mut dropped, mut changed, mut spans_removed, mut bytes_removed) =
        (0usize, 0u64, 0u64, 0u64, 0u64, 0u64);
    batches(&c.input, &quiet, &pb, |batch| {
        for r in batch.drain(..) {
            let spans =
                removal.spans(&corpus, doc, &r.text).map_err(|e| anyhow::anyhow!("{}: {e}", r.origin))?;
            doc += 1;
            if spans.is_empty() {
                kept += 1;
                out.push(r.raw.as_deref().unwrap_or(&with_text(None, &r.id, &field, &r.text)?))?;
                continue;
            }
            for s in &spans {
                spans_removed += 1;
                bytes_removed += s.len() as u64;
                let line = json!({ "id": r.id, "start": s.start, "end": s.end, "text": &r.text[s.clone()] });
                serde_json::to_writer(&mut *side.writer(), &line)?;
                side.writer().write_all(b"\n")?;
            }
            let cleaned = cut(&r.text, &spans);
            if cleaned.chars().filter(|c| !c.is_whitespace()).count() < c.min_chars {
                dropped += 1;
                continue;
            }
            kept += 1;
            changed += 1;
            out.push(&with_text(r.raw.as_deref(), &r.id, &field, &cleaned)?)?;
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    let kept_path = out.finish()?;
    side.finish()?;
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
        "documents": doc,
        "kept": kept,
        "changed": changed,
        "dropped_too_short": dropped,
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
        "neardup: {}, {changed} cut, {dropped} dropped as too short; {} removed ({bytes_removed} of {text_bytes} bytes) in {secs:.2} s; kept records in {}",
        count(doc as u64, "document"),
        count(spans_removed, "repeated span"),
        kept_path.display()
    );
    prep.done();
    Ok(ExitCode::SUCCESS)
}
