//! [`IndexMeta`]: what neardup's own tools (the CLI, the service's
//! snapshots, Python's `Index`) keep in an index file's metadata section.
//!
//! The index file format sits below the text layer and stores this as an
//! opaque JSON value ([`IndexFile::meta`]); this type gives it meaning.

use serde::{Deserialize, Serialize};

use crate::config::PassageConfig;
use crate::config::PipelineConfig;
use crate::error::{Error, Result};
use crate::index::file::IndexFile;

/// The version of [`IndexMeta`]'s form: 2 added [`IndexMeta::texts`]
/// (written only by files that keep texts; others stay version 1, and
/// their bytes as they were).
pub const META_VERSION: u32 = 2;

/// The pipeline that made an index's fingerprints, and how documents were
/// cut into passages when its entries are passage windows.
///
/// ```
/// use neardup::index::{file::IndexFile, TableIndex};
/// use neardup::meta::IndexMeta;
/// use neardup::Fingerprinter;
///
/// let fingerprinter = Fingerprinter::preset("default")?;
/// let mut file = IndexFile::new(TableIndex::builder().build()?);
/// file.meta = IndexMeta { pipeline: Some(fingerprinter.config().clone()), ..IndexMeta::default() }.to_value();
/// let meta = IndexMeta::of(&file)?;
/// meta.check_pipeline(fingerprinter.config())?;
/// assert!(meta.check_pipeline(Fingerprinter::preset("keywords")?.config()).is_err());
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexMeta {
    /// The version of this form (at most [`META_VERSION`]; absent in files
    /// written before it existed, which are of version 1).
    #[serde(default = "first", skip_serializing_if = "is_first")]
    pub version: u32,
    /// The pipeline, when the entries were made from texts.
    #[serde(default)]
    pub pipeline: Option<PipelineConfig>,
    /// Passage settings, when the entries are passage windows (named
    /// `ID#START-END`, byte offsets into the document).
    #[serde(default)]
    pub passages: Option<PassageConfig>,
    /// The indexed documents' texts are kept beside the index (a passage
    /// index's `DIR/passages.texts.redb`, `--keep-texts`): without them
    /// the index is incomplete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub texts: bool,
}

fn first() -> u32 {
    1
}

fn is_first(v: &u32) -> bool {
    *v == 1
}

impl IndexMeta {
    /// The metadata of an opened file (empty when it has none).
    ///
    /// # Errors
    ///
    /// Metadata of a newer form, or one that does not parse.
    pub fn of(file: &IndexFile) -> Result<IndexMeta> {
        let Some(v) = &file.meta else { return Ok(IndexMeta::default()) };
        let meta: IndexMeta = serde_json::from_value(v.clone()).map_err(|e| {
            Error::Config(format!("the index's metadata does not parse ({e}): rebuild the index"))
        })?;
        if meta.version > META_VERSION {
            return Err(Error::Config(format!(
                "the index's metadata is of version {}; this neardup reads {META_VERSION}: upgrade neardup",
                meta.version
            )));
        }
        Ok(meta)
    }

    /// As a file's metadata value (`None` when there is nothing to say).
    pub fn to_value(&self) -> Option<serde_json::Value> {
        if self.pipeline.is_none() && self.passages.is_none() && !self.texts {
            return None;
        }
        // Version 2 only where it says more than version 1 could (other
        // files' bytes stay as they were).
        let version = if self.texts { self.version.max(2) } else { self.version };
        Some(serde_json::to_value(IndexMeta { version, ..self.clone() }).expect("metadata serializes"))
    }

    /// Fails unless `wanted` makes the fingerprints the index was built
    /// with (an index that records no pipeline accepts any).
    ///
    /// # Errors
    ///
    /// [`Error::ConfigMismatch`] with both pipelines' ids.
    pub fn check_pipeline(&self, wanted: &PipelineConfig) -> Result<()> {
        match &self.pipeline {
            Some(c) if !c.same_fingerprints(wanted) => Err(Error::ConfigMismatch {
                stored: crate::presets::label(c),
                wanted: crate::presets::label(wanted),
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    /// A mismatch names both pipelines' presets: an index built with the
    /// `yanyiwu` of before cppjieba v5.6.7 is `yanyiwu-nodejieba`'s.
    #[test]
    fn a_pipeline_mismatch_names_the_presets() {
        let old = presets::config("yanyiwu-nodejieba").unwrap();
        let meta = IndexMeta { pipeline: Some(old), ..Default::default() };
        let e = meta.check_pipeline(&presets::config("yanyiwu").unwrap()).unwrap_err().to_string();
        assert!(
            e.contains("(preset yanyiwu-nodejieba) but") && e.contains("(preset yanyiwu) is in use"),
            "{e}"
        );
        assert!(meta.check_pipeline(&presets::config("yanyiwu-nodejieba").unwrap()).is_ok());
    }
}
