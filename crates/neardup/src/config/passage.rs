//! [`PassageConfig`]: how documents are cut into passages (the settings of
//! [`crate::passage`], kept in index files beside the pipeline).

use serde::{Deserialize, Serialize};

/// How documents are cut into passages. Defaults: windows of 2 sentences,
/// at least 40 characters; sentences longer than 400 characters are cut
/// (measured: `bench/report_accuracy.py`, docs/QUALITY.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassageConfig {
    /// Sentences per window (at least 1).
    pub window: usize,
    /// A window shorter than this many characters takes in more sentences.
    pub min_chars: usize,
    /// Sentences longer than this many characters are cut (at a space when
    /// there is one), so a text without punctuation still gets passages.
    pub max_sentence_chars: usize,
}

impl Default for PassageConfig {
    fn default() -> PassageConfig {
        PassageConfig { window: 2, min_chars: 40, max_sentence_chars: 400 }
    }
}
