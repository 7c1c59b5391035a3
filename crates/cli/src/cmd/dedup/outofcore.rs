//! `dedup --fingerprints` out of core: a list of 64-bit fingerprints is
//! read into temporary files and deduplicated by the core's [`OutOfCore`] (pairs a table at a time through partition files,
//! union-find at 4 bytes a record, components through external sorts).
//! The outputs are those of the in-memory batch, byte for byte:
//! clusters.jsonl as the clusters come (ids and fingerprints read back by
//! position), kept.jsonl in one more read of the list's files.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use neardup::dedup::{OutOfCore, SpillColumn};
use neardup::{Bits, Radius};
use serde_json::{json, Value};

use super::{write_summary, Counts, FoundCounts, Spill, Spilled, Stages};
use crate::args::DedupArgs;
use crate::fplist::{self, SpilledIds};
use crate::kept::{KeptFormat, KeptWriter};
use crate::output::{count, Output};
use crate::UsageError;

/// Whether this run goes out of core: a file (not standard input) of
/// 64-bit fingerprints, in batch, with no flag the out-of-core path does
/// not take (`--online`, `--pairs`, `--against`, `--resume`). It is the
/// path for every such list, not only for those larger than memory: its
/// outputs are the in-memory batch's byte for byte, at less memory and no
/// more time (10^7 records: 9.2 s in 245 MB against 12.8 s in 2.1 GB;
/// bench/RESULTS.md). `NEARDUP_LIST_IN_MEMORY=1` takes the in-memory batch
/// instead (what the tests and `bench/outofcore.sh` compare with).
pub(super) fn wanted(args: &DedupArgs) -> bool {
    let Some(path) = &args.fingerprints else { return false };
    path.as_os_str() != "-"
        && !args.online
        && !args.pairs
        && args.against.is_none()
        && !args.resume
        && std::env::var_os("NEARDUP_LIST_IN_MEMORY").is_none_or(|v| v.is_empty() || v == "0")
        && fplist::first_width(path) == Some(Bits::B64)
}

/// Runs the dedup out of core and writes every output.
pub(super) fn run(
    args: &DedupArgs,
    spill: &Spill,
    kept_format: &KeptFormat,
    stages: &mut Stages,
    start: Instant,
) -> Result<ExitCode> {
    let path = args.fingerprints.as_ref().expect("--fingerprints");
    let bytes_in = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let list =
        stages.time("read fingerprints", || fplist::read_spilled(path, &spill.dir, spill.shares.records))?;
    let (fps, ids) = (&list.fingerprints, &list.ids);
    let n = fps.len();
    let radius = args.k.map_or_else(|| Radius::classic(Bits::B64), Radius::fixed);
    radius.validate(Bits::B64).map_err(UsageError)?;
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out = Output::open(Some(&args.output.join("clusters.jsonl")))?;
    let mut bridge = Bridge::default();
    let found = stages.time("find near duplicates (out of core)", || {
        let dedup = OutOfCore::new(radius.clone(), &spill.dir)
            .memory(args.memory.0)
            .clusters(args.clusters.into())
            .blocks(args.blocks);
        let mut written = 0usize;
        let found = dedup.run(fps, &mut |c| {
            written += 1;
            *sizes.entry(c.members.len()).or_default() += 1;
            bridge.pass(write_cluster(&mut out, written, c, fps, ids))
        });
        std::mem::take(&mut bridge).finish(found)
    })?;
    out.finish()?;
    let kept_path = stages.time("write", || write_kept(args, kept_format, fps, ids, &found))?;
    let kept = (n - found.removed) as u64;
    let secs = start.elapsed().as_secs_f64();
    let mut rule = serde_json::to_value(&radius).expect("a radius serializes");
    rule["method"] = json!("simhash");
    rule["out_of_core"] = json!({
        "partitions": found.partitions,
        "union_find_mapped": found.mapped,
        "spilled_bytes": found.spilled_bytes,
    });
    let counts = Counts {
        documents: n,
        records_read: n as u64,
        cut_short: Vec::new(),
        kept,
        input_bytes: bytes_in,
        seconds: secs,
    };
    let clusters =
        FoundCounts { sizes, clusters: found.clusters, near_index: 0, layout: found.layout.clone() };
    let spilled = Spilled { records: fps.spilled_bytes() + ids.spilled_bytes(), signatures: 0 };
    write_summary(args, None, rule, &clusters, stages, &counts, spill, spilled, None)?;
    note!(
        "neardup: near duplicates by SimHash, {radius} (out of core: {}, {} partitions a table)",
        found.layout,
        found.partitions
    );
    note!(
        "neardup: {}, {kept} kept, {} removed in {} ({secs:.2} s); kept records in {}, clusters in clusters.jsonl, counts in summary.json",
        count(n as u64, "document"),
        found.removed,
        count(found.clusters as u64, "cluster"),
        kept_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// One line of clusters.jsonl: cluster number `written`, its members with
/// their distances to the representative.
fn write_cluster(
    out: &mut Output,
    written: usize,
    c: &neardup::dedup::Cluster,
    fps: &SpillColumn,
    ids: &SpilledIds,
) -> Result<()> {
    let kept = fingerprint(fps, c.kept as usize)?;
    let mut members = Vec::with_capacity(c.members.len());
    for &m in &c.members {
        let d = (kept ^ fingerprint(fps, m as usize)?).count_ones();
        members.push(json!({ "id": ids.get(m as usize)?, "distance": d }));
    }
    let v = json!({
        "cluster": written,
        "representative": ids.get(c.kept as usize)?,
        "size": c.members.len(),
        "members": members,
    });
    serde_json::to_writer(&mut *out.writer(), &v)?;
    out.writer().write_all(b"\n")?;
    Ok(())
}

/// Fingerprint `i` of the column (a positioned read once spilled).
fn fingerprint(fps: &SpillColumn, i: usize) -> Result<u64> {
    let mut buf = [0u32; 2];
    let v = fps.get(i, &mut buf)?;
    Ok(u64::from(v[0]) | u64::from(v[1]) << 32)
}

/// kept.jsonl: each kept entry as the in-memory batch writes it, in one
/// read of the fingerprints and ids.
fn write_kept(
    args: &DedupArgs,
    format: &KeptFormat,
    fps: &SpillColumn,
    ids: &SpilledIds,
    found: &neardup::dedup::OutOfCoreResult,
) -> Result<std::path::PathBuf> {
    let mut out = KeptWriter::open(&args.output, "kept", format)?;
    let mut reader = ids.reader()?;
    let mut bridge = Bridge::default();
    let mut line = String::new();
    let read = fps.chunks(|first, values| {
        let mut each = || -> Result<()> {
            for (j, v) in values.chunks_exact(2).enumerate() {
                let id = reader.next_id()?;
                if found.is_removed(first + j) {
                    continue;
                }
                let fp = u64::from(v[0]) | u64::from(v[1]) << 32;
                line.clear();
                match &id {
                    Value::Number(num) => {
                        use std::fmt::Write;
                        write!(line, "{{\"fingerprint\":\"{fp:016x}\",\"id\":{num}}}").expect("a string");
                    }
                    _ => line.push_str(&json!({ "id": id, "fingerprint": format!("{fp:016x}") }).to_string()),
                }
                out.push(&line)?;
            }
            Ok(())
        };
        bridge.pass(each())
    });
    bridge.finish(read)?;
    Ok(out.finish()?)
}

/// Carries this command's error out of a callback of the core (whose
/// callbacks return the core's errors): the callback stops the core's
/// loop, and the error comes back whole at [`finish`](Self::finish).
#[derive(Default)]
struct Bridge(Option<anyhow::Error>);

impl Bridge {
    /// The callback's result, as the core takes it.
    fn pass(&mut self, r: Result<()>) -> neardup::Result<()> {
        r.map_err(|e| {
            self.0 = Some(e);
            neardup::Error::Config("stopped by the caller".into())
        })
    }

    /// The core's result, or the callback's error that stopped it; the
    /// core's configuration errors are usage errors.
    fn finish<T>(self, r: neardup::Result<T>) -> Result<T> {
        match (self.0, r) {
            (Some(e), _) => Err(e),
            (None, Err(neardup::Error::Config(m))) => Err(UsageError(m).into()),
            (None, r) => Ok(r?),
        }
    }
}
