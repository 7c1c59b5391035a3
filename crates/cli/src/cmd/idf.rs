//! `neardup idf build`: learn an IDF table from a corpus.

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::{bail, Result};
use rayon::prelude::*;

use crate::args::{IdfArgs, IdfCommand};
use crate::input;
use crate::output::Output;
use crate::records::{batches, ErrorPolicy};

pub fn run(args: IdfArgs) -> Result<ExitCode> {
    let IdfCommand::Build { input: input_args, pipeline, output, min_df } = args.command;
    let fingerprinter = pipeline.load()?;
    let errors = ErrorPolicy::new(input_args.on_error);
    let pb = crate::progress::bar(|| input::total_bytes(&input_args), "counting");
    let mut df: HashMap<String, u64> = HashMap::new();
    let mut docs = 0u64;
    let total = batches(&input_args, &errors, &pb, |batch| {
        let sets: Vec<Vec<String>> = batch
            .par_iter()
            .map(|r| {
                let mut t = fingerprinter.tokens(&r.text);
                t.sort_unstable();
                t.dedup();
                t
            })
            .collect();
        for set in sets {
            docs += 1;
            for t in set {
                *df.entry(t).or_insert(0) += 1;
            }
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    if docs == 0 {
        bail!("no documents were read, so there is nothing to learn from");
    }
    let n = docs as f64;
    let mut rows: Vec<(String, f64)> =
        df.into_iter().filter(|&(_, d)| d >= min_df).map(|(w, d)| (w, (n / d as f64).ln())).collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out = Output::open(Some(&output))?;
    let w = out.writer();
    for (word, idf) in &rows {
        // Tokens never hold whitespace except shingles, which IDF tables do not key.
        writeln!(w, "{word} {idf:.6}")?;
    }
    out.finish()?;
    errors.summary(total);
    note!(
        "neardup: wrote {} from {} to {}",
        crate::output::count(rows.len() as u64, "word"),
        crate::output::count(docs, "document"),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}
