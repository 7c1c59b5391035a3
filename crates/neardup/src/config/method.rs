//! How a pipeline compares documents ([`Method`]) and what determines a
//! MinHash signature beside the text stages ([`MinHashConfig`]): data, read
//! by the configuration and by both methods.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The default number of values in a signature.
pub const DEFAULT_PERMUTATIONS: usize = 128;

/// The largest number of values in a signature.
pub const MAX_PERMUTATIONS: usize = 4096;

/// How a pipeline compares documents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// A 64- or 128-bit SimHash fingerprint, near duplicates within a
    /// Hamming radius (the default).
    #[default]
    Simhash,
    /// A MinHash signature, near duplicates above a Jaccard threshold.
    Minhash,
}

impl Method {
    /// Whether this is the default, SimHash (configurations leave it out).
    pub fn is_simhash(&self) -> bool {
        *self == Method::Simhash
    }

    /// The verification `dedup` and `eval` run unless told otherwise:
    /// SimHash's candidate pairs by the Jaccard similarity of their word
    /// 3-shingles at [`SIMHASH_VERIFY`](super::presets::SIMHASH_VERIFY);
    /// none for MinHash, whose estimate already is a Jaccard similarity.
    pub fn default_verify(self) -> Option<super::lsh::Threshold> {
        match self {
            Method::Simhash => Some(
                super::lsh::Threshold::new(super::presets::SIMHASH_VERIFY).expect("a threshold in (0, 1]"),
            ),
            Method::Minhash => None,
        }
    }
}

impl Method {
    /// The method's name as prose writes it: `SimHash` or `MinHash` (the
    /// [`Display`](std::fmt::Display) form is the configuration's
    /// `simhash`/`minhash`).
    pub fn title(self) -> &'static str {
        match self {
            Method::Simhash => "SimHash",
            Method::Minhash => "MinHash",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Method::Simhash => "simhash",
            Method::Minhash => "minhash",
        })
    }
}

impl std::str::FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Method> {
        match s {
            "simhash" => Ok(Method::Simhash),
            "minhash" => Ok(Method::Minhash),
            _ => Err(Error::Config(format!("method must be simhash or minhash, not {s:?}"))),
        }
    }
}

/// What determines a signature, beside the text stages: how many values
/// and the hash seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinHashConfig {
    /// Values per signature (K). By default, 128.
    #[serde(default = "default_permutations")]
    pub permutations: usize,
    /// The seed of the feature hash. By default, 0.
    #[serde(default)]
    pub seed: u64,
}

fn default_permutations() -> usize {
    DEFAULT_PERMUTATIONS
}

impl Default for MinHashConfig {
    fn default() -> Self {
        MinHashConfig { permutations: DEFAULT_PERMUTATIONS, seed: 0 }
    }
}

impl MinHashConfig {
    /// Whether the settings are usable.
    ///
    /// # Errors
    ///
    /// A number of values outside 1..=[`MAX_PERMUTATIONS`].
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.permutations == 0 || self.permutations > MAX_PERMUTATIONS {
            return Err(format!(
                "minhash.permutations must be between 1 and {MAX_PERMUTATIONS}, not {}",
                self.permutations
            ));
        }
        Ok(())
    }
}
