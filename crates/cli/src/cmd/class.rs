//! `neardup class PAPERS… [--against DIR]`: a class of papers checked
//! against each other and a passage library, a row per paper (the check
//! itself is the core's [`neardup::report::ClassReport`]).

use std::process::ExitCode;

use anyhow::Result;
use neardup::passage::{Aligner, Library, LibraryKeys};
use neardup::report::{Against, ClassLibrary, ClassReport};
use neardup::Fingerprinter;
use neardup_store::passages::Passages;

use crate::args::{ClassArgs, ClassFormat};
use crate::output::Output;
use crate::records::{batches, ErrorPolicy};
use crate::targets::entries::id_text;
use crate::UsageError;

pub fn run(args: ClassArgs) -> Result<ExitCode> {
    let papers = read_papers(&args)?;
    if papers.is_empty() {
        return Err(UsageError("no papers to check: give files, a folder or records".into()).into());
    }
    let passages = match &args.against {
        Some(dir) => Some(open_library(dir, args.no_verify)?),
        None => None,
    };
    let library = passages.as_ref().and_then(Passages::library);
    let aligner = match library {
        Some(l) => l.aligner().clone(),
        None => Aligner::new(Fingerprinter::preset("default")?),
    };
    let keys = library.map_or_else(LibraryKeys::default, |l| l.keys());
    let ask = Against {
        max_sources: args.max_sources,
        exclusions: args.exclusions.exclusions(),
        ..Against::default()
    };
    let pb = crate::progress::count_bar(papers.len() as u64, "checking papers");
    let name = args.against.as_ref().map(|d| d.display().to_string()).unwrap_or_default();
    let with = library.map(|l| ClassLibrary { library: l as &dyn Library, name: &name });
    let class = ClassReport::check(&aligner, keys, papers, with, &ask, &|| pb.inc(1))?;
    pb.finish_and_clear();
    let mut out = Output::open(args.output.as_deref())?;
    match args.format {
        ClassFormat::Text => class.write_text(out.writer())?,
        ClassFormat::Csv => out.writer().write_all(class.to_csv().as_bytes())?,
        ClassFormat::Json => class.write_json(out.writer())?,
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// The papers, (id, text): files by their paths, records by their ids.
fn read_papers(args: &ClassArgs) -> Result<Vec<(String, String)>> {
    let errors = ErrorPolicy::new(args.input.on_error);
    let pb = crate::progress::bar(|| crate::input::total_bytes(&args.input), "reading papers");
    let mut papers = Vec::new();
    let total = batches(&args.input, &errors, &pb, |batch| {
        papers.extend(batch.drain(..).map(|r| (id_text(&r.id), r.text)));
        Ok(())
    })?;
    pb.finish_and_clear();
    errors.summary(total);
    Ok(papers)
}

/// The passage library of `dir` (a 0.x window index cannot join a class).
fn open_library(dir: &std::path::Path, no_verify: bool) -> Result<Passages> {
    let none = || {
        UsageError(format!(
            "{}: no passage library here; build one with `neardup index build --passages INPUTS -o {}`",
            dir.display(),
            dir.display()
        ))
    };
    if !crate::datadir::is_data_dir(dir) {
        return Err(none().into());
    }
    let passages = Passages::open(dir, !no_verify)?.ok_or_else(none)?;
    if passages.library().is_none() {
        return Err(UsageError(format!(
            "{}: its passages are a window index of neardup 0.x; rebuild them as a library with \
             `neardup index build --passages INPUTS -o {}`",
            dir.display(),
            dir.display()
        ))
        .into());
    }
    Ok(passages)
}
