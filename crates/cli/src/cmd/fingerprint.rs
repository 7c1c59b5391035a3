//! `neardup fingerprint`: documents in, fingerprints out.

use std::process::ExitCode;

use anyhow::Result;
use neardup::{Fingerprint, Fingerprinter};
use rayon::prelude::*;
use serde_json::json;

use crate::args::{FingerprintArgs, OutputFormat};
use crate::input::{self, BadRecord};
use crate::output::Output;
use crate::records::{batches, ErrorPolicy};

pub fn run(args: FingerprintArgs) -> Result<ExitCode> {
    let fingerprinter = args.pipeline.load()?;
    let allow_empty = args.input.allow_empty;
    if args.features && args.format != OutputFormat::Jsonl {
        return Err(crate::UsageError("--features needs --format jsonl".into()).into());
    }
    let mut out = Output::open(args.output.as_deref())?;
    let errors = ErrorPolicy::new(args.input.on_error);
    let pb = crate::progress::bar(|| input::total_bytes(&args.input), "fingerprinting");
    let total = batches(&args.input, &errors, &pb, |batch| {
        let results: Vec<_> = batch
            .par_iter()
            .map(|r| fingerprint_one(&fingerprinter, &r.text, allow_empty, args.features))
            .collect();
        let w = out.writer();
        for (r, res) in batch.iter().zip(results) {
            match res {
                Ok((f, features)) => match args.format {
                    OutputFormat::Jsonl => {
                        let mut v = json!({ "id": r.id, "fingerprint": f });
                        if let Some(features) = features {
                            v["features"] = json!(features);
                        }
                        serde_json::to_writer(&mut *w, &v)?;
                        w.write_all(b"\n")?;
                    }
                    OutputFormat::Tsv => {
                        let id = match &r.id {
                            serde_json::Value::String(s) => s.replace(['\t', '\n'], " "),
                            v => v.to_string(),
                        };
                        writeln!(w, "{id}\t{f}")?;
                    }
                },
                Err(e) => errors.bad(&BadRecord {
                    rest_lost: false,
                    origin: r.origin.clone(),
                    message: e.to_string(),
                })?,
            }
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    out.finish()?;
    errors.summary(total);
    Ok(ExitCode::SUCCESS)
}

/// Features that voted, with their weights, in voting order.
type Features = Vec<(String, f64)>;

/// The fingerprint of one document and, when asked for, the features that
/// voted (from the same run of the pipeline).
fn fingerprint_one(
    fingerprinter: &Fingerprinter,
    text: &str,
    allow_empty: bool,
    with_features: bool,
) -> neardup::Result<(Fingerprint, Option<Features>)> {
    if with_features {
        let ex = fingerprinter.explain(text);
        if ex.features.is_empty() && !allow_empty {
            return Err(neardup::Error::EmptyDocument);
        }
        let features = ex.features.into_iter().map(|f| (f.feature, f.weight)).collect();
        return Ok((ex.fingerprint, Some(features)));
    }
    let f =
        if allow_empty { fingerprinter.fingerprint(text) } else { fingerprinter.try_fingerprint(text)? };
    Ok((f, None))
}
