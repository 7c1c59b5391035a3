//! `dedup NEW… --against INDEX`: the index (an index file or a data
//! directory) gives the pipeline and is asked, for every new document,
//! for its nearest indexed document; the core merges these matches into
//! the clusters ([`DedupResult::against`](neardup::dedup::DedupResult::against)).
//! With `--save-index`, the kept new documents are added to the index at
//! once.

use crate::args::DedupMethod;
use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use neardup::dedup::{Closeness, DedupRecords, IndexMatch};
use neardup::detector::Detector;
use neardup::minhash::Method;
use neardup::similarity::round4;
use neardup::Sketch;
use neardup_store::Near;
use serde_json::Value;

use crate::args::DedupArgs;
use crate::targets::entries::{id_text, Entries};
use crate::targets::{open_against, Target};
use crate::UsageError;

/// New documents asked of the index at once.
const QUERY_CHUNK: u32 = 65_536;

/// The index a dedup runs against.
pub struct Against {
    path: PathBuf,
    target: Box<dyn Target>,
    near: Near,
    method: Method,
}

impl Against {
    /// Opens `--against`, if given.
    pub fn open(args: &DedupArgs) -> Result<Option<Against>> {
        let Some(path) = &args.against else { return Ok(None) };
        let target = open_against(path, &args.pipeline, args.k)?;
        let Some(config) = target.pipeline() else {
            return Err(UsageError(format!(
                "{}: this index was built from fingerprints and knows no pipeline, so new documents \
                 cannot be fingerprinted alike; build it from documents",
                path.display()
            ))
            .into());
        };
        let method = config.method;
        let near = match (args.k, args.threshold) {
            (Some(k), _) => Near::Within(k),
            (None, Some(t)) => Near::AtLeast(t),
            (None, None) => Near::Rule,
        };
        Ok(Some(Against { path: path.clone(), target, near, method }))
    }

    /// The index's pipeline, with the run's --k or --threshold; a --method
    /// (or a --k or --threshold of the other method) is a usage error
    /// that names the index.
    pub fn detector(&self, args: &DedupArgs) -> Result<Detector> {
        let config = self.target.pipeline().expect("checked by open").clone();
        let index = Detector::new(config).map_err(|e| UsageError(format!("{}: {e}", self.path.display())))?;
        Detector::for_dedup(Some(index), args.method.and_then(DedupMethod::near), args.k, args.threshold)
            .map_err(|e| {
                UsageError(format!(
                    "{} holds {} sketches, and the new documents are signed by its pipeline: {e}",
                    self.path.display(),
                    self.method.title()
                ))
                .into()
            })
    }

    /// For each new record near an indexed document, the nearest such (by
    /// the index's rule, or the run's --k or --threshold), asked in chunks
    /// on every core.
    pub fn matches(&self, records: &DedupRecords) -> Result<BTreeMap<u32, IndexMatch>> {
        let mut found = BTreeMap::new();
        let n = records.len() as u32;
        let mut first = 0;
        while first < n {
            let end = n.min(first + QUERY_CHUNK);
            let mut asked: Vec<(u32, Sketch, Option<u32>)> = Vec::new();
            for i in first..end {
                if let Some(s) = records.sketch(i)? {
                    asked.push((i, s, Some(u32::try_from(records.features(i)).unwrap_or(u32::MAX - 1))));
                }
            }
            let queries: Vec<(&Sketch, Option<u32>)> = asked.iter().map(|(_, s, n)| (s, *n)).collect();
            for ((i, _, _), res) in asked.iter().zip(self.target.query_many(&queries, self.near)) {
                let matches = res.map_err(|e| anyhow::anyhow!("{}: {e}", self.path.display()))?;
                if let Some(m) = matches.first() {
                    found.insert(*i, self.index_match(m)?);
                }
            }
            first = end;
        }
        Ok(found)
    }

    /// A match as the index gave it (`{"id", "distance"[, "similarity"]}`);
    /// one without its method's closeness is an error, never a 0.
    fn index_match(&self, m: &Value) -> Result<IndexMatch> {
        let id = id_text(&m["id"]);
        let missing = |what: &str| anyhow::anyhow!("{}: a match without {what}: {m}", self.path.display());
        let closeness = match self.method {
            Method::Simhash => {
                let d = m["distance"].as_u64().and_then(|d| u32::try_from(d).ok());
                Closeness::Distance(d.ok_or_else(|| missing("a distance"))?)
            }
            Method::Minhash => Closeness::Similarity(round4(
                m["similarity"].as_f64().ok_or_else(|| missing("a similarity"))?,
            )),
        };
        Ok(IndexMatch { id, closeness })
    }

    /// Adds the kept new documents (`kept`: position and id) to the index
    /// at once; documents without a sketch are left out.
    pub fn save(&mut self, records: &DedupRecords, kept: &[(u32, String)]) -> Result<usize> {
        let mut made = Entries::default();
        for (i, id) in kept {
            if let Some(s) = records.sketch(*i)? {
                made.entries.push((u64::from(*i), s));
                made.names.push(id.clone());
                made.features.push(u32::try_from(records.features(*i)).unwrap_or(u32::MAX));
            }
        }
        let n = made.len();
        self.target.add_entries(made)?;
        Ok(n)
    }
}
