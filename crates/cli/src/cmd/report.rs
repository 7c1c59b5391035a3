//! `neardup report A B` and `neardup report A --against INDEX`: which
//! passages of A are copied, as text, JSON or one self-contained HTML page
//! (the reports themselves are the core's [`neardup::report`]).

use std::process::ExitCode;

use anyhow::Result;
use neardup::meta::IndexMeta;
use neardup::passage::{AlignSettings, Aligner, PassageConfig, PassageIndex};
use neardup::report::{Against, Report};
use neardup::Radius;
use neardup_store::passages::Passages;

use crate::args::{ReportArgs, ReportFormat};
use crate::input::read_document;
use crate::output::Output;
use crate::UsageError;

fn read(path: &std::path::Path, max: u64) -> Result<String> {
    match read_document(path, max, false) {
        Ok(r) => Ok(r.text),
        Err(b) if b.message.starts_with("empty document") => {
            anyhow::bail!("{}: empty document (no text, or only whitespace): nothing to report on", b.origin)
        }
        Err(b) => anyhow::bail!("{}: {}", b.origin, b.message),
    }
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    // clap's `requires` does not hold beside B's `conflicts_with`.
    if args.b.is_some() {
        let given = [
            ("-k", args.k.is_some()),
            ("--exclude", !args.exclude.is_empty()),
            ("--no-verify", args.no_verify),
        ];
        if let Some((flag, _)) = given.iter().find(|g| g.1) {
            return Err(
                UsageError(format!("{flag} applies to --against INDEX only, not to two texts")).into()
            );
        }
    }
    let report = match (&args.b, &args.against) {
        (Some(b), _) => pair_report(&args, b)?,
        (None, Some(index)) => index_report(&args, index)?,
        (None, None) => unreachable!("clap requires B or --against"),
    };
    let mut out = Output::open(args.output.as_deref())?;
    match args.format {
        ReportFormat::Text => report.write_text(out.writer())?,
        ReportFormat::Json => {
            serde_json::to_writer_pretty(&mut *out.writer(), &report.to_json())?;
            writeln!(out.writer())?;
        }
        ReportFormat::Html => out.writer().write_all(report.to_html().as_bytes())?,
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn pair_report(args: &ReportArgs, b_path: &std::path::Path) -> Result<Report> {
    let a = read(&args.a, args.max_doc_bytes.0)?;
    let b = read(b_path, args.max_doc_bytes.0)?;
    let aligner = Aligner::new(args.pipeline.load()?)
        .passages(args.passage.over(PassageConfig::default()))
        .settings_from(alignment(args));
    let (a_name, b_name) = (args.a.display().to_string(), b_path.display().to_string());
    Ok(Report::pair(&aligner, (&a_name, a), (&b_name, b), &args.exclusions.exclusions()))
}

fn index_report(args: &ReportArgs, path: &std::path::Path) -> Result<Report> {
    let in_file = |e: neardup::Error| match e {
        neardup::Error::Config(m) => UsageError(format!("{}: {m}", path.display())).into(),
        e => anyhow::anyhow!("{}: {e}", path.display()),
    };
    if crate::datadir::is_data_dir(path) {
        return data_dir_report(args, path);
    }
    let file = crate::targets::open_file(path, args.no_verify)?;
    crate::targets::check_pipeline(&IndexMeta::of(&file).map_err(in_file)?, &args.pipeline)?;
    let index = PassageIndex::open(file).map_err(in_file)?;
    check_windows(args, path, &index)?;
    let a = read(&args.a, args.max_doc_bytes.0)?;
    Report::against(&index, &path.display().to_string(), &args.a.display().to_string(), a, &against(args))
        .map_err(in_file)
}

/// How A is aligned with a source.
fn alignment(args: &ReportArgs) -> AlignSettings {
    AlignSettings {
        seed_words: args.seed_words,
        max_gap: args.max_gap,
        min_words: args.min_words,
        ..AlignSettings::default()
    }
}

/// What `--against` asks for.
fn against(args: &ReportArgs) -> Against {
    Against {
        radius: args.k.map(Radius::fixed),
        exclude: args.exclude.clone(),
        min_windows: args.min_windows,
        max_sources: args.max_sources,
        max_candidates: args.max_candidates,
        alignment: alignment(args),
        exclusions: args.exclusions.exclusions(),
    }
}

/// `--against DIR`: the passages a data directory keeps, with its
/// documents' texts when kept (what `neardup serve` reports from).
fn data_dir_report(args: &ReportArgs, dir: &std::path::Path) -> Result<Report> {
    let Some(passages) = Passages::open(dir, !args.no_verify)? else {
        return Err(UsageError(format!(
            "{}: this data directory keeps no passages; build them with \
             `neardup index build --passages INPUTS -o {}`",
            dir.display(),
            dir.display()
        ))
        .into());
    };
    let meta = IndexMeta { pipeline: Some(passages.pipeline().clone()), ..IndexMeta::default() };
    crate::targets::check_pipeline(&meta, &args.pipeline)?;
    if let Some(index) = passages.index() {
        check_windows(args, dir, index)?;
    }
    let a = read(&args.a, args.max_doc_bytes.0)?;
    Ok(passages.report(&args.a.display().to_string(), a, &against(args))?)
}

/// --window and --min-chars, when given, must be the index's.
fn check_windows(args: &ReportArgs, path: &std::path::Path, index: &PassageIndex) -> Result<()> {
    let cfg = index.config();
    if args.passage.given() && args.passage.over(cfg) != cfg {
        return Err(UsageError(format!(
            "{}: its passages are windows of {} sentences (at least {} characters), fixed when it was built; \
             drop --window/--min-chars or rebuild the index",
            path.display(),
            cfg.window,
            cfg.min_chars
        ))
        .into());
    }
    Ok(())
}
