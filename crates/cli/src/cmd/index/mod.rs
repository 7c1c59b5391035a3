//! `neardup index build|add|query|stats`: a persistent index, as an index
//! file or a `neardup serve` data directory. One function per subcommand;
//! `add`, `query` and `stats` work on a [`Target`] (`crate::targets`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use neardup::detector::Detector;
use neardup::index::file::{IndexFile, Names};
use neardup::index::{RuleTables, TableIndex};
use neardup::meta::IndexMeta;
use neardup::minhash::Method;
use neardup::passage::PassageConfig;
use neardup::Sketch;
use neardup_store::Near;
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::args::{IndexArgs, IndexBuildArgs, IndexCommand, IndexQueryArgs, IndexStatsArgs};
use crate::datadir::is_data_dir;
use crate::fplist;
use crate::output::Output;
use crate::targets::{data, entries, file, library, open as target, Target};
use crate::UsageError;

pub fn run(args: IndexArgs) -> Result<ExitCode> {
    match args.command {
        IndexCommand::Build(a) => build(a)?,
        IndexCommand::Add(a) if a.passages => add_passages(&a)?,
        IndexCommand::Add(a) => {
            // A fingerprint list makes a new data directory a SimHash one.
            let implied = a.fingerprints.is_some().then_some(Method::Simhash);
            target(&a.index, &a.pipeline, false, Some(implied))?.add(&a)?
        }
        IndexCommand::Query(a) => query(a)?,
        IndexCommand::Stats(a) => stats(a)?,
        IndexCommand::Compact(a) => compact(&a.index)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn build(a: IndexBuildArgs) -> Result<()> {
    if builds_library(&a) {
        return build_library(&a);
    }
    check_build_args(&a)?;
    // --fingerprints, --passages, --k and --blocks make a SimHash index
    // file; else the pipeline given, or the default method's.
    let simhash_only = a.fingerprints.is_some() || a.passages || a.k.is_some() || a.layout.blocks.is_some();
    let implied = simhash_only.then_some(Method::Simhash);
    if a.fingerprints.is_none() && a.pipeline.load_for(implied)?.method() == Method::Minhash {
        return build_data_dir(&a);
    }
    let detector = if a.fingerprints.is_none() { Some(Detector::from(a.pipeline.load()?)) } else { None };
    let fingerprinter = detector.as_ref().and_then(Detector::fingerprinter);
    let cfg = a.passages.then(|| a.passage.over(PassageConfig::default()));
    let output = a.output.clone();
    let made = entries_of(&a, detector.as_ref(), cfg.as_ref())?;
    let meta = IndexMeta {
        pipeline: fingerprinter.as_ref().map(|f| f.config().clone()),
        passages: cfg,
        ..IndexMeta::default()
    };
    let bits = match (&fingerprinter, made.entries.first()) {
        (Some(f), _) => f.bits(),
        (None, Some(e)) => e.1.bits(),
        (None, None) => neardup::Bits::B64,
    };
    // The tables serve the rule's pass 0; the file also holds the tables
    // of its later passes (short documents at larger k), so that a query
    // by the rule builds nothing.
    let rule = file::rule(&meta, bits);
    let plan = neardup::dedup::Plan::new(&rule);
    let k = a.k.unwrap_or_else(|| plan.passes()[0].k);
    let mut b = TableIndex::builder().bits(bits).k(k).memory(a.layout.memory.0);
    if let Some(m) = a.layout.blocks {
        b = b.blocks(m);
    }
    let n = made.len();
    let with_features = fingerprinter.is_some();
    let later_entries: Vec<_> = if with_features && a.k.is_none() && plan.passes().len() > 1 {
        made.entries.iter().zip(&made.features).map(|(&(id, fp), &n)| (id, fp, n as usize)).collect()
    } else {
        Vec::new()
    };
    let index = b.build_from(made.entries).map_err(|e| UsageError(e.to_string()))?;
    // The later passes are searched only for short documents: they get the
    // memory pass 0 takes (a layout with fewer tables and more candidates
    // per probe), not the whole budget, which at k = 8 would choose a
    // hundred tables and ten times pass 0's size.
    let later = if later_entries.is_empty() {
        Vec::new()
    } else {
        let budget = (index.memory_bytes() as u64).clamp(64 << 20, a.layout.memory.0);
        later_tables(plan, bits, budget, later_entries)?
    };
    let file = IndexFile {
        columns: Vec::new(),
        deferred: Vec::new(),
        index,
        later,
        names: Some(Names::from_strings(&made.names)),
        features: with_features.then(|| made.features.into()),
        meta: meta.to_value(),
    };
    file.write(&output)?;
    note!(
        "neardup: indexed {n} entries into {} ({}); near duplicates by SimHash, {}",
        output.display(),
        file.index.layout(),
        rule
    );
    Ok(())
}

/// Whether `index build` makes a passage library: `--passages` with `-o` a
/// directory, or a new path (made a data directory) not named `*.ndx` (a
/// 0.x window index file, still written for scripts that name one).
fn builds_library(a: &IndexBuildArgs) -> bool {
    let ndx = a.output.extension().is_some_and(|e| e == "ndx");
    a.passages && (is_data_dir(&a.output) || (!a.output.exists() && !ndx))
}

/// `index build --passages INPUTS -o DIR`: a data directory's passage library.
fn build_library(a: &IndexBuildArgs) -> Result<()> {
    let made = !a.output.exists();
    std::fs::create_dir_all(&a.output)
        .with_context(|| format!("cannot make the directory {}", a.output.display()))?;
    let built = library::settings(&a.pipeline, a.passage.over(PassageConfig::default()))
        .and_then(|settings| library::build(&a.output, &a.input, settings));
    if built.is_err() && made {
        // Nothing half-made is left behind.
        let _ = std::fs::remove_dir_all(&a.output);
    }
    let n = built?;
    note!(
        "neardup: a passage library of {} in {} (check papers with `neardup report PAPER --against {}`, \
             serve it with `neardup serve --data {}`)",
        crate::output::count(n, "document"),
        a.output.join(neardup_store::library::LIBRARY_DIR).display(),
        a.output.display(),
        a.output.display()
    );
    Ok(())
}

/// `index add DIR --passages INPUTS`.
fn add_passages(a: &crate::args::IndexAddArgs) -> Result<()> {
    if !is_data_dir(&a.index) {
        return Err(UsageError(format!(
            "{}: --passages adds to a data directory's passage library; give a directory",
            a.index.display()
        ))
        .into());
    }
    let n = library::add(&a.index, &a.input, &a.pipeline, a.passage.over(PassageConfig::default()))?;
    note!(
        "neardup: added {} to the passage library of {}",
        crate::output::count(n, "document"),
        a.index.display()
    );
    Ok(())
}

/// The entries `index build` indexes: a fingerprint list's, or the
/// documents' (one per document, or one per passage with `--passages`).
fn entries_of(
    a: &IndexBuildArgs,
    detector: Option<&Detector>,
    cfg: Option<&PassageConfig>,
) -> Result<entries::Entries> {
    Ok(match (detector, detector.and_then(Detector::fingerprinter), cfg) {
        (Some(_), Some(f), Some(cfg)) => entries::from_passages(&a.input, f, cfg, 0)?,
        (Some(d), _, _) => entries::from_documents(&a.input, d, 0)?.into_fingerprints(),
        (None, _, _) => {
            entries::from_list(a.fingerprints.as_deref().expect("--fingerprints without a pipeline"), 0)?
        }
    })
}

/// Refuses flags that do not go together, and `-o` naming a data
/// directory.
fn check_build_args(a: &IndexBuildArgs) -> Result<()> {
    if !a.passages && a.passage.given() {
        return Err(UsageError("--window and --min-chars go with --passages".into()).into());
    }
    if a.keep_texts {
        return Err(UsageError(format!(
            "--keep-texts: a window index file ({}) keeps no texts; a passage library keeps them always: \
             give -o DIR (a directory, made if new)",
            a.output.display()
        ))
        .into());
    }
    if is_data_dir(&a.output) && !a.passages {
        return Err(UsageError(format!(
            "{} is a directory: -o names the index file to write; to fill a data directory, use `neardup index add {} …`",
            a.output.display(),
            a.output.display()
        ))
        .into());
    }
    Ok(())
}

/// The tables of the rule's later passes (short documents at larger k),
/// within `budget` bytes.
fn later_tables(
    plan: neardup::dedup::Plan,
    bits: neardup::Bits,
    budget: u64,
    entries: Vec<(u64, neardup::Fingerprint, usize)>,
) -> Result<Vec<TableIndex>> {
    let builder = TableIndex::builder().bits(bits).memory(budget);
    let tables = RuleTables::build(plan, &builder, entries).map_err(|e| UsageError(e.to_string()))?;
    Ok(tables.tables().cloned().collect())
}

/// `index build` with a MinHash pipeline: a new data directory at `-o`
/// (index files hold SimHash tables), filled as `index add` fills one.
fn build_data_dir(a: &IndexBuildArgs) -> Result<()> {
    if a.passages || a.k.is_some() || a.layout.blocks.is_some() {
        return Err(UsageError(
            "--passages, --k and --blocks build SimHash index files; a MinHash pipeline builds a data directory"
                .into(),
        )
        .into());
    }
    let out = &a.output;
    let named = a.pipeline.preset.is_some() || a.pipeline.config.is_some();
    if !named && out.extension().is_some_and(|e| e == "ndx") {
        return Err(UsageError(format!(
            "-o {} names an index file, which holds SimHash fingerprints, but the default method is MinHash, \
             whose index is a data directory: pass --preset default for a SimHash index file, or name a \
             directory (-o {}/)",
            out.display(),
            out.with_extension("").display()
        ))
        .into());
    }
    let empty_dir = out.is_dir() && std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
    if out.exists() && !empty_dir {
        return Err(UsageError(format!(
            "{} exists: a MinHash index is a data directory, and -o must name a new (or empty) one; to add to an existing one, use `neardup index add {} …`",
            out.display(),
            out.display()
        ))
        .into());
    }
    let existed = out.exists();
    let built = data::DataTarget::open(out, &a.pipeline, true, Some(Method::Minhash))
        .and_then(|t| t.add_from(&a.input, None).map(|()| t.radius()));
    let rule = match built {
        Ok(rule) => rule,
        Err(e) => {
            // A failed build leaves nothing behind: not a new directory, nor
            // a store in the empty one given.
            let _ = if existed {
                std::fs::remove_file(out.join(crate::datadir::STORE_FILE))
            } else {
                std::fs::remove_dir_all(out)
            };
            return Err(e);
        }
    };
    note!(
        "neardup: {} is a MinHash data directory; near duplicates by MinHash, {rule} (query it with `neardup \
         index query {} …`, serve it with `neardup serve --data {}`)",
        out.display(),
        out.display(),
        out.display()
    );
    Ok(())
}

/// One query: as shown in the output, its sketch, its feature count if known.
type Query = (Value, Sketch, Option<u32>);

/// `index compact DIR`: the store's free pages given back.
fn compact(dir: &Path) -> Result<()> {
    if !crate::datadir::is_data_dir(dir) {
        return Err(UsageError(format!(
            "{}: index compact takes a data directory (index files are written compact)",
            dir.display()
        ))
        .into());
    }
    let data = crate::datadir::DataDir::open_existing(dir, &crate::args::PipelineArgs::none())?;
    let (before, after, took) = data.compact()?;
    note!(
        "neardup: compacted {}: the store went from {before} to {after} bytes in {:.1} s",
        dir.display(),
        took.as_secs_f64()
    );
    data.close();
    Ok(())
}

/// Queries answered at once: read, asked on every core, written in order,
/// then the next block — a list or a corpus of queries is streamed, never
/// held.
const QUERY_BLOCK: usize = 1 << 16;

fn query(a: IndexQueryArgs) -> Result<()> {
    let mut target = target(&a.index, &a.pipeline, a.no_verify, None)?;
    let method = target.pipeline().map_or(Method::Simhash, |c| c.method);
    if a.fingerprint.is_empty() && a.text.is_empty() && a.fingerprints.is_none() && a.input.paths.is_empty() {
        return Err(UsageError(
            "nothing to query: give --text, --fingerprint, --fingerprints or document paths".into(),
        )
        .into());
    }
    if a.fingerprints.is_some() && method == Method::Minhash {
        return Err(UsageError(format!(
            "{} holds MinHash signatures; --fingerprints lists SimHash fingerprints: query by --text or documents",
            a.index.display()
        ))
        .into());
    }
    let near = Near::of(a.k, a.threshold).map_err(|e| UsageError(e.to_string()))?;
    target.prepare(a.k)?;
    if near == Near::Rule {
        note!("neardup: near duplicates by the index's rule: {}, {}", method.title(), target.radius());
    }
    let mut out = Output::open(a.output.as_deref())?;
    let target = &*target;
    let mut asked = 0usize;
    each_query_block(&a, target, &mut |block| {
        asked += block.len();
        answer_block(target, &block, near, &mut out)
    })?;
    if asked == 0 {
        return Err(
            UsageError("nothing to query: the lists and documents given hold no entries".into()).into()
        );
    }
    out.finish()?;
    Ok(())
}

/// Answers a block of queries on every core and writes their lines in
/// order.
fn answer_block(target: &dyn Target, block: &[Query], near: Near, out: &mut Output) -> Result<()> {
    let asked: Vec<(&Sketch, Option<u32>)> = block.iter().map(|(_, s, n)| (s, *n)).collect();
    let answers = target.query_many(&asked, near);
    let lines: Vec<Result<String>> = block
        .par_iter()
        .zip(answers)
        .map(|((q, s, _), res)| {
            let matches = res.map_err(|e| UsageError(format!("query {q}: {e}")))?;
            // A signature is not echoed (a kilobyte of hex per query).
            let v = Line { fingerprint: s.fingerprint(), matches: &matches, query: q };
            let mut line = serde_json::to_string(&v)?;
            line.push('\n');
            Ok(line)
        })
        .collect();
    for line in lines {
        out.writer().write_all(line?.as_bytes())?;
    }
    Ok(())
}

/// One answer's line, its fields in the order of a JSON object's sorted
/// keys (what `json!` wrote before): no map is built a line.
#[derive(serde::Serialize)]
struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<neardup::Fingerprint>,
    matches: &'a [Value],
    query: &'a Value,
}

/// The queries `index query` was given, in order, a block at a time:
/// `--fingerprint`s and `--text`s (signed by the index's pipeline), then a
/// `--fingerprints` list and documents, streamed.
fn each_query_block(
    a: &IndexQueryArgs,
    target: &dyn Target,
    sink: &mut dyn FnMut(Vec<Query>) -> Result<()>,
) -> Result<()> {
    let method = target.pipeline().map_or(Method::Simhash, |c| c.method);
    let pipeline = || -> Result<Detector> {
        match target.pipeline() {
            Some(c) => Ok(Detector::new(c.clone())?),
            None => Err(UsageError(format!(
                "{}: this index was built from fingerprints and knows no pipeline; query with --fingerprint(s)",
                a.index.display()
            ))
            .into()),
        }
    };
    let mut given: Vec<Query> = Vec::new();
    for h in &a.fingerprint {
        let f = Sketch::parse(h, method).map_err(|e| UsageError(e.to_string()))?;
        given.push((json!(h), f, None));
    }
    if !a.text.is_empty() {
        let detector = pipeline()?;
        for t in &a.text {
            let Ok((Some(sketch), n)) = detector.sign(t, false) else {
                return Err(UsageError(format!(
                    "--text {t:?} has no features (empty, or only punctuation): nothing to query"
                ))
                .into());
            };
            given.push((json!(t), sketch, Some(u32::try_from(n).unwrap_or(u32::MAX - 1))));
        }
    }
    // Documents are signed by the pipeline: a missing one is refused
    // before anything is answered.
    let detector = if a.input.paths.is_empty() { None } else { Some(pipeline()?) };
    if !given.is_empty() {
        sink(given)?;
    }
    if let Some(path) = &a.fingerprints {
        let mut block: Vec<Query> = Vec::new();
        fplist::stream(path, &mut |entries| {
            block.extend(entries.into_iter().map(|(id, fp)| (id, fp.into(), None)));
            if block.len() >= QUERY_BLOCK {
                sink(std::mem::take(&mut block))?;
            }
            Ok(())
        })?;
        if !block.is_empty() {
            sink(block)?;
        }
    }
    if let Some(detector) = &detector {
        entries::documents_in_chunks(&a.input, detector, 0, QUERY_BLOCK, &mut |docs| {
            let block: Vec<Query> = docs
                .entries
                .into_iter()
                .zip(docs.names)
                .zip(docs.features)
                .map(|(((_, s), name), n)| (json!(name), s, Some(n)))
                .collect();
            sink(block)
        })?;
    }
    Ok(())
}

fn stats(a: IndexStatsArgs) -> Result<()> {
    target(&a.index, &crate::args::PipelineArgs::none(), false, None)?.stats(a.json)
}
