//! `neardup pairs`: every pair of fingerprints within k bits.

use std::process::ExitCode;

use anyhow::Result;
use neardup::index::pairs::PairsOptions;

use crate::args::{PairsArgs, PairsFormat};
use crate::fplist;
use crate::output::Output;

pub fn run(args: PairsArgs) -> Result<ExitCode> {
    let (words, ids) = fplist::read(&args.file)?;
    let opts = PairsOptions { blocks: args.blocks, memory: args.memory.0 };
    let ap = words.all_pairs(args.k, opts)?;
    let mut out = Output::open(args.output.as_deref())?;
    let w = out.writer();
    let mut err = Ok(());
    ap.for_each_pair(|i, j, d| {
        if err.is_err() {
            return;
        }
        let (i, j) = (i as usize, j as usize);
        err = match args.format {
            PairsFormat::Tsv => writeln!(w, "{}\t{}\t{d}", ids.text(i), ids.text(j)),
            PairsFormat::Jsonl => {
                let v = serde_json::json!({ "a": ids.get(i), "b": ids.get(j), "distance": d });
                serde_json::to_writer(&mut *w, &v)
                    .map_err(std::io::Error::from)
                    .and_then(|_| w.write_all(b"\n"))
            }
        };
    });
    err?;
    out.finish()?;
    if args.stats {
        note!(
            "neardup: {} fingerprints ({} distinct), {} pairs within {} (layout: {})",
            words.len(),
            ap.groups(),
            ap.pair_count(),
            args.k,
            ap.layout.map(|l| l.to_string()).unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}
