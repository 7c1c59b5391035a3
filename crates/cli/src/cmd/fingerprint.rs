//! `neardup fingerprint`: documents in, fingerprints out.

use std::process::ExitCode;

use anyhow::Result;
use rayon::prelude::*;
use serde_json::json;

use super::{batches, ErrorPolicy};
use crate::args::{FingerprintArgs, OutputFormat};
use crate::input::{self, BadRecord};
use crate::output::Output;

pub fn run(args: FingerprintArgs) -> Result<ExitCode> {
    let fp = args.pipeline.load()?;
    let allow_empty = args.input.allow_empty;
    if args.features && args.format != OutputFormat::Jsonl {
        return Err(crate::UsageError("--features needs --format jsonl".into()).into());
    }
    let mut out = Output::open(args.output.as_deref())?;
    let errors = ErrorPolicy::new(args.input.on_error);
    let pb = crate::progress::bar(input::total_bytes(&args.input), "fingerprinting");
    let total = batches(&args.input, &errors, &pb, |batch| {
        let results: Vec<_> = batch
            .par_iter()
            .map(|r| if allow_empty { Ok(fp.fingerprint(&r.text)) } else { fp.try_fingerprint(&r.text) })
            .collect();
        let w = out.writer();
        for (r, res) in batch.iter().zip(results) {
            match res {
                Ok(f) => match args.format {
                    OutputFormat::Jsonl => {
                        let mut v = json!({ "id": r.id, "fingerprint": f });
                        if args.features {
                            v["features"] = json!(fp.features(&r.text));
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
                Err(e) => errors.bad(&BadRecord { origin: r.origin.clone(), message: e.to_string() })?,
            }
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    out.finish()?;
    errors.summary(total);
    Ok(ExitCode::SUCCESS)
}
