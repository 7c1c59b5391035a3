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
use crate::cleaning::{first_pass, prepare, rewrite, write_jsonl, write_summary, Cleaned};
use crate::output::count;
use crate::records::ErrorPolicy;
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
    args.clean.input.keep_raw = true;
    let c = &args.clean;

    // Pass 1: count every unit.
    let errors = ErrorPolicy::new(c.input.on_error);
    let mut counting = job.counting(c.memory.0 / 2, prep.tmp.clone())?;
    let (total, bytes_in) = first_pass(c, &errors, "counting units", |batch| {
        let units: Vec<DocUnits> = batch.par_iter().map(|r| job.units(&r.text)).collect();
        units.iter().try_for_each(|u| counting.add(u))?;
        Ok(())
    })?;
    let count_secs = start.elapsed().as_secs_f64();
    let mut cleaner = counting.finish()?;

    // Pass 2: clean each record in order.
    let t = Instant::now();
    let mut bytes_removed = 0u64;
    let (n, kept_path) = rewrite(c, &prep, "removing boilerplate", |r| {
        let cleaned = cleaner.clean_next(&r.text, || job.units(&r.text))?;
        bytes_removed += cleaned.removed.iter().map(|s| s.len() as u64).sum::<u64>();
        Ok(match cleaned {
            c if c.dropped => Cleaned::Dropped,
            c if c.removed.is_empty() => Cleaned::Unchanged,
            c => Cleaned::Changed(c.text.into_owned()),
        })
    })?;
    let removed = cleaner.removed_units();
    write_jsonl(&args.clean, "removed.jsonl", &removed)?;
    let secs = start.elapsed().as_secs_f64();
    let occurrences = removed.iter().map(|u| u.removed).sum::<u64>();
    let summary = json!({
        "unit": job.unit().to_string(),
        "rule": match rule { Rule::MinDocs(n) => json!({"min_docs": n}), Rule::Repeats => json!("repeats") },
        "records_read": total,
        "skipped": errors.skipped(),
        "files_cut_short": errors.cut_short(),
        "documents": n.documents,
        "kept": n.kept,
        "changed": n.changed,
        "dropped_too_short": n.dropped,
        "min_chars": c.min_chars,
        "min_words": args.min_words,
        "units_removed": removed.len(),
        "occurrences_removed": occurrences,
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
        "neardup: {}, {} cleaned, {} dropped as too short; {} removed ({occurrences} occurrences, {bytes_removed} bytes) in {secs:.2} s; kept records in {}",
        count(n.documents, "document"),
        n.changed,
        n.dropped,
        count(removed.len() as u64, "repeated unit"),
        kept_path.display()
    );
    prep.done();
    Ok(ExitCode::SUCCESS)
}
