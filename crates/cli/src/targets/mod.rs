//! What `index add|query|stats` and `dedup --against` work on: a
//! [`Target`], an index file ([`file::FileTarget`]) or a data directory
//! ([`data::DataTarget`]); and the entries they are given ([`entries`]);
//! a data directory's passage library ([`library`]).

pub(crate) mod data;
pub(crate) mod entries;
pub(crate) mod file;
pub(crate) mod library;

use std::path::Path;

use anyhow::Result;
use neardup::minhash::Method;
use neardup::{PipelineConfig, Sketch};
use neardup_store::Near;
use rayon::prelude::*;
use serde_json::Value;

use crate::args::IndexAddArgs;
use crate::datadir::is_data_dir;

pub use file::{check_pipeline, open as open_file};

/// What `index add|query|stats` (and `dedup --against`) work on.
pub(crate) trait Target: Sync {
    /// The pipeline that made the entries, if the index knows it.
    fn pipeline(&self) -> Option<&PipelineConfig>;

    /// Adds documents or a fingerprint list.
    fn add(&mut self, args: &IndexAddArgs) -> Result<()>;

    /// Adds entries signed by the index's own pipeline, at once: an index
    /// file is rewritten (a new file renamed over it), a data directory
    /// commits them in one transaction.
    fn add_entries(&mut self, made: entries::Entries<Sketch>) -> Result<()>;

    /// Prepares for queries by `k` (`None`: the index's radius rule).
    fn prepare(&mut self, k: Option<u32>) -> Result<()>;

    /// The matches of one query as `{"id", "distance"}` (and
    /// `"similarity"` for MinHash), nearest first: as `near` says, by the
    /// rule for a document of `features` features.
    fn query(&self, sketch: &Sketch, features: Option<u32>, near: Near) -> Result<Vec<Value>, String>;

    /// [`query`](Self::query) for each of `queries` (sketch, features), in
    /// order: over rayon's threads unless the target has a batched form.
    fn query_many(&self, queries: &[(&Sketch, Option<u32>)], near: Near) -> Vec<Result<Vec<Value>, String>> {
        queries.par_iter().map(|&(s, n)| self.query(s, n, near)).collect()
    }

    /// The rule queries without a k or threshold get, as `neardup` prints it.
    fn radius(&self) -> String;

    /// Prints sizes and settings.
    fn stats(&self, json: bool) -> Result<()>;
}

/// Opens the index a dedup runs against: an index file or a data
/// directory that exists (a --preset or --config given must be its
/// pipeline), prepared for queries by the rule (`k`: at that radius).
pub(crate) fn open_against(
    path: &Path,
    pipeline: &crate::args::PipelineArgs,
    k: Option<u32>,
) -> Result<Box<dyn Target>> {
    let mut t = open(path, pipeline, false, None)?;
    t.prepare(k)?;
    Ok(t)
}

/// Opens `path` as a data directory (a directory) or an index file.
/// `create`: an empty directory becomes a data directory, of the method
/// given (the default one if `None`) when no pipeline is.
pub(crate) fn open(
    path: &Path,
    pipeline: &crate::args::PipelineArgs,
    no_verify: bool,
    create: Option<Option<Method>>,
) -> Result<Box<dyn Target>> {
    if !path.exists() {
        let what = if create.is_some() {
            format!(
                "a data directory (`mkdir {}` first: an empty directory becomes one) or an index file from `neardup index build`",
                path.display()
            )
        } else {
            "an index file from `neardup index build` or a data directory".to_string()
        };
        return Err(anyhow::anyhow!("{} does not exist: give {what}", path.display()));
    }
    Ok(if is_data_dir(path) {
        Box::new(data::DataTarget::open(path, pipeline, create.is_some(), create.flatten())?)
    } else {
        Box::new(file::FileTarget::open(path, pipeline, no_verify)?)
    })
}
