//! `neardup boilerplate`: the core's two passes (`neardup::clean::
//! Boilerplate`) over the input files — count the units, then clean each
//! record in input order — and the outputs: kept records, removed units,
//! summary.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use neardup::clean::{Boilerplate, DocUnits, Rule};
use rayon::prelude::*;
use serde_json::json;

use crate::args::BoilerplateArgs;
use crate::cleaning::{prepare, with_text, write_jsonl, write_summary};
use crate::kept::KeptWriter;
use crate::output::count;
use crate::records::{batches, ErrorPolicy};
use crate::UsageError;

pub fn run(mut args: BoilerplateArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let rule = if args.repeats { Rule::Repeats } else { Rule::MinDocs(args.min_docs) };
    let job =
        Boilerplate::new(args.unit).rule(rule).min_chars(args.clean.min_chars).min_words(args.min_words);
    job.validate().map_err(|e| match e {
        neardup::Error::Config(m) => UsageError(m),
        e => UsageError(e.to_string()),
    })?;
    let prep = prepare(&args.clean, "boilerplate")?;
    let c = &mut args.clean;
    c.input.keep_raw = true;
    let c = &args.clean;
    let field = c.input.text_field.clone().unwrap_or_else(|| "text".into());

    // Pass 1: count every unit.
    let errors = ErrorPolicy::new(c.input.on_error);
    let pb = crate::progress::bar(|| crate::input::total_bytes(&c.input), "counting units");
    let mut counting = job.counting(c.memory.0 / 2, prep.tmp.clone())?;
    let mut bytes_in = 0u64;
    let total = batches(&c.input, &errors, &pb, |batch| {
        let units: Vec<DocUnits> = batch.par_iter().map(|r| job.units(&r.text)).collect();
        for (r, u) in batch.iter().zip(&units) {
            bytes_in += r.raw_len;
            counting.add(u)?;
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    let count_secs = start.elapsed().as_secs_f64();
    let mut cleaner = counting.finish()?;

    // Pass 2: clean each record in order.
    let t = Instant::now();
    let quiet = ErrorPolicy::quiet();
    let pb = crate::progress::bar(|| crate::input::total_bytes(&c.input), "removing boilerplate");
    let mut out = KeptWriter::open(&c.output, "kept", &prep.format)?;
    let (mut kept, mut dropped, mut changed, mut bytes_removed, mut documents) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    batches(&c.input, &quiet, &pb, |batch| {
        for r in batch.drain(..) {
            documents += 1;
            let cleaned = cleaner.clean_next(&r.text, || job.units(&r.text))?;
            bytes_removed += cleaned.removed.iter().map(|s| s.len() as u64).sum::<u64>();
            if cleaned.dropped {
                dropped += 1;
                continue;
            }
            kept += 1;
            if cleaned.removed.is_empty() {
                out.push(r.raw.as_deref().unwrap_or(&with_text(None, &r.id, &field, &r.text)?))?;
            } else {
                changed += 1;
                out.push(&with_text(r.raw.as_deref(), &r.id, &field, &cleaned.text)?)?;
            }
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    let kept_path = out.finish()?;
    let removed = cleaner.removed_units();
    write_jsonl(&args.clean, "removed.jsonl", &removed)?;
    let secs = start.elapsed().as_secs_f64();
    let summary = json!({
        "unit": job.unit().to_string(),
        "rule": match rule { Rule::MinDocs(n) => json!({"min_docs": n}), Rule::Repeats => json!("repeats") },
        "records_read": total,
        "skipped": errors.skipped(),
        "files_cut_short": errors.cut_short(),
        "documents": documents,
        "kept": kept,
        "changed": changed,
        "dropped_too_short": dropped,
        "min_chars": c.min_chars,
        "min_words": args.min_words,
        "units_removed": removed.len(),
        "occurrences_removed": removed.iter().map(|u| u.removed).sum::<u64>(),
        "bytes_removed": bytes_removed,
        "input_bytes": bytes_in,
        "seconds": { "total": secs, "count": count_secs, "clean": t.elapsed().as_secs_f64() },
        "mb_per_second": bytes_in as f64 / 1e6 / secs,
        "memory": { "budget": c.memory.0, "tmp_dir": prep.tmp.display().to_string(), "spilled_bytes": cleaner.spilled_bytes() },
    });
    write_summary(&args.clean, &summary)?;
    errors.summary(total);
    for u in removed.iter().take(c.show) {
        let mut text: String = u.text.chars().take(70).collect::<String>().replace('\n', " ");
        if u.text.chars().count() > 70 {
            text.push('…');
        }
        note!("  removed {:>7}×  {}", u.removed, text);
    }
    note!(
        "neardup: {}, {changed} cleaned, {dropped} dropped as too short; {} removed ({} occurrences, {bytes_removed} bytes) in {secs:.2} s; kept records in {}",
        count(documents, "document"),
        count(removed.len() as u64, "repeated unit"),
        removed.iter().map(|u| u.removed).sum::<u64>(),
        kept_path.display()
    );
    prep.done();
    Ok(ExitCode::SUCCESS)
}
