//! [`PipelineConfig`]: the data that fully determines a fingerprint.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod lsh;
pub mod method;
pub mod passage;
pub mod presets;
pub mod vote;

pub use lsh::LshConfig;
pub use method::{Method, MinHashConfig};
pub use passage::PassageConfig;
pub use vote::{BitOrder, Ties, VoteConfig};

use crate::error::{Error, Result};
use crate::filter::FilterConfig;
use crate::fingerprint::Bits;
use crate::hash::HashConfig;
use crate::normalize::NormalizerConfig;
use crate::radius::Radius;
use crate::select::SelectConfig;
use crate::tokenize::TokenizerConfig;
use crate::weight::{WeightConfig, BUILTIN_IDF};

pub use crate::fingerprint::FORMAT_VERSION;

/// A whole pipeline, as data: normalize → tokenize → filter → weight →
/// select → hash → vote.
///
/// Two fingerprints are comparable only when their configurations are
/// equal. Index files and stores record the configuration with
/// [`FORMAT_VERSION`] and refuse to mix.
///
/// Serialized as TOML (the form `neardup config show` prints) or JSON:
///
/// ```toml
/// format_version = 1
/// bits = 64
/// normalize = [{ type = "nfkc" }, { type = "lowercase" }]
/// filters = [{ type = "punctuation" }]
/// weight = { type = "tf" }
/// select = { type = "all" }
/// hash = "xxh3"
///
/// [tokenizer]
/// type = "shingles"
/// n = 3
/// over = { type = "words", hmm = false }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// The format version this configuration was written for. By default,
    /// this is [`FORMAT_VERSION`].
    #[serde(default = "current_version")]
    pub format_version: u32,
    /// Fingerprint width. By default, this is 64.
    #[serde(default)]
    pub bits: Bits,
    /// Normalizers, applied in order. By default, this is empty.
    #[serde(default)]
    pub normalize: Vec<NormalizerConfig>,
    /// Filters; a token is kept when every filter keeps it. By default,
    /// this is empty.
    #[serde(default)]
    pub filters: Vec<FilterConfig>,
    /// How distinct features are weighted. By default, this is `tf`.
    #[serde(default = "default_weight")]
    pub weight: WeightConfig,
    /// Which features vote. By default, this is `all`.
    #[serde(default = "default_select")]
    pub select: SelectConfig,
    /// The feature hash. By default, this is `xxh3`.
    #[serde(default)]
    pub hash: HashConfig,
    /// How lane sums become bits: ties and bit order. By default, the
    /// classic rule (a lane above zero gives 1, bit `j` is lane `j`), and
    /// configurations leave it out.
    #[serde(default, skip_serializing_if = "VoteConfig::is_default")]
    pub vote: VoteConfig,
    /// The tokenizer.
    pub tokenizer: TokenizerConfig,
    /// The near-duplicate rule: how many bits two fingerprints of this
    /// pipeline may differ in, by document length. It does not change a
    /// fingerprint (nor [`id`](Self::id)). By default, this is unset:
    /// [`radius`](Self::radius) then gives the rule of the preset with
    /// the same stages, or the classic k = 3 (64 bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius: Option<Radius>,
    /// How documents are compared: `simhash` (a fingerprint) or `minhash`
    /// (a signature; weight and select then do not apply). By default,
    /// this is `simhash`, and configurations leave it out.
    #[serde(default, skip_serializing_if = "Method::is_simhash")]
    pub method: Method,
    /// The signature's settings, for `method = "minhash"`. By default,
    /// unset: 128 values, seed 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minhash: Option<MinHashConfig>,
    /// The near-duplicate rule of a MinHash pipeline (threshold, banding);
    /// like [`radius`](Self::radius) it does not change a signature. By
    /// default, unset: threshold 0.5, banding chosen from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsh: Option<LshConfig>,
}

fn current_version() -> u32 {
    FORMAT_VERSION
}
fn default_weight() -> WeightConfig {
    WeightConfig::Tf
}
fn default_select() -> SelectConfig {
    SelectConfig::All
}

impl PipelineConfig {
    /// Parses a TOML configuration. Relative file paths in it stay relative
    /// to the current directory; [`load`](Self::load) resolves them against
    /// the file's folder.
    ///
    /// # Errors
    ///
    /// Syntax errors and unknown fields, with line and column, and invalid
    /// values (see [`validate`](Self::validate)).
    pub fn from_toml(text: &str) -> Result<PipelineConfig> {
        Self::from_toml_at(text, Path::new("<config>"))
    }

    /// Parses a JSON configuration.
    ///
    /// # Errors
    ///
    /// As [`from_toml`](Self::from_toml).
    pub fn from_json(text: &str) -> Result<PipelineConfig> {
        Self::from_json_at(text, Path::new("<config>"))
    }

    fn from_toml_at(text: &str, path: &Path) -> Result<PipelineConfig> {
        let c: PipelineConfig = toml::from_str(text).map_err(|e| Error::ConfigSyntax {
            path: path.to_owned(),
            message: e.to_string().trim().to_owned(),
        })?;
        c.validate()?;
        Ok(c)
    }

    fn from_json_at(text: &str, path: &Path) -> Result<PipelineConfig> {
        let c: PipelineConfig = serde_json::from_str(text)
            .map_err(|e| Error::ConfigSyntax { path: path.to_owned(), message: e.to_string() })?;
        c.validate()?;
        Ok(c)
    }

    /// Reads a configuration file: JSON if its name ends in `.json`, TOML
    /// otherwise. Relative paths inside (stop-word files, IDF tables) are
    /// resolved against the file's folder and stored absolute.
    ///
    /// # Errors
    ///
    /// The file cannot be read, does not parse, or is invalid.
    pub fn load(path: impl AsRef<Path>) -> Result<PipelineConfig> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = String::from_utf8(bytes).map_err(|_| Error::ConfigSyntax {
            path: path.to_owned(),
            message: "the file is not UTF-8".into(),
        })?;
        let mut c = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            Self::from_json_at(&text, path)?
        } else {
            Self::from_toml_at(&text, path)?
        };
        let base = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
        if let Some(base) = base {
            let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_owned());
            c.resolve_paths(&base);
        }
        Ok(c)
    }

    fn resolve_paths(&mut self, base: &Path) {
        let abs = |p: &Path| -> PathBuf {
            if p.is_relative() {
                base.join(p)
            } else {
                p.to_owned()
            }
        };
        for f in &mut self.filters {
            if let FilterConfig::Stopwords { files, .. } = f {
                for file in files.iter_mut() {
                    *file = abs(file);
                }
            }
        }
        if let WeightConfig::Tfidf { idf, .. } = &mut self.weight {
            if idf != BUILTIN_IDF {
                *idf = abs(Path::new(idf)).to_string_lossy().into_owned();
            }
        }
    }

    /// Checks the values that the types cannot.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] saying which value is wrong and what is allowed.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if self.format_version > FORMAT_VERSION || self.format_version == 0 {
            return bad(format!(
                "format_version {} is not supported: this neardup reads format {FORMAT_VERSION}; \
                 upgrade neardup or write the configuration for format {FORMAT_VERSION}",
                self.format_version
            ));
        }
        self.tokenizer.validate().map_err(Error::Config)?;
        if self.tokenizer.is_bytes()
            && (!self.filters.is_empty() || self.weight != WeightConfig::Tf || !self.select.is_all())
        {
            return bad("byte-grams features are byte windows, not words: they take no filters, \
                        and weight must be tf and select all (a repeated window votes with its count)"
                .into());
        }
        self.select.validate().map_err(Error::Config)?;
        if !self.hash.supports(self.bits) {
            return bad(format!(
                "hash {} has no {}-bit form; use bits = 64 or another hash",
                self.hash.name(),
                self.bits
            ));
        }
        if let WeightConfig::Textrank { window, damping, iterations } = &self.weight {
            if *window < 2 || !(0.0..1.0).contains(damping) || *iterations == 0 {
                return bad(format!(
                    "textrank needs window ≥ 2, 0 ≤ damping < 1 and iterations ≥ 1, \
                     not window = {window}, damping = {damping}, iterations = {iterations}"
                ));
            }
        }
        if let WeightConfig::Tfidf { unknown: crate::weight::UnknownIdf::Value(v), .. } = &self.weight {
            if !v.is_finite() {
                return bad(format!("tfidf unknown must be a finite number, not {v}"));
            }
        }
        if let Some(r) = &self.radius {
            r.validate(self.bits).map_err(Error::Config)?;
        }
        self.validate_method()
    }

    /// The method's own settings, and no settings of the other method.
    fn validate_method(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        match self.method {
            Method::Simhash => {
                if self.minhash.is_some() || self.lsh.is_some() {
                    return bad("[minhash] and [lsh] are settings of method = \"minhash\"; \
                                this pipeline's method is simhash"
                        .into());
                }
            }
            Method::Minhash => {
                if self.weight != WeightConfig::Tf || !self.select.is_all() {
                    return bad(
                        "method = \"minhash\" compares feature sets: weight must be tf and select all \
                                (weights and selection do not apply)"
                            .into(),
                    );
                }
                if !self.vote.is_default() {
                    return bad("vote is a setting of SimHash's vote; a MinHash pipeline has none".into());
                }
                if self.tokenizer.is_bytes() {
                    return bad(
                        "byte-grams is a SimHash tokenizer; for MinHash over text use char-ngrams".into()
                    );
                }
                if self.radius.is_some() {
                    return bad(
                        "[radius] is SimHash's rule; a MinHash pipeline's rule is [lsh] threshold".into()
                    );
                }
                let mh = self.minhash.clone().unwrap_or_default();
                mh.validate().map_err(Error::Config)?;
                self.lsh.clone().unwrap_or_default().validate(mh.permutations).map_err(Error::Config)?;
            }
        }
        Ok(())
    }

    /// The configuration as TOML. A MinHash pipeline leaves out the
    /// SimHash settings it does not use (`bits`, `hash`, `weight`,
    /// `select`) while they hold their defaults, so what a person reads is
    /// what the signature depends on; the TOML reads back to an equal
    /// configuration either way.
    pub fn to_toml(&self) -> String {
        let mut table = toml::Table::try_from(self).expect("a PipelineConfig always serializes");
        if self.method == Method::Minhash {
            let defaults =
                PipelineConfig::from_toml("method = \"minhash\"\ntokenizer = { type = \"words\" }")
                    .expect("the minimal MinHash configuration is valid");
            for (key, unused) in [
                ("bits", self.bits == defaults.bits),
                ("hash", self.hash == defaults.hash),
                ("weight", self.weight == defaults.weight),
                ("select", self.select == defaults.select),
            ] {
                if unused {
                    table.remove(key);
                }
            }
        }
        toml::to_string(&table).expect("a TOML table always serializes")
    }

    /// The configuration as compact JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a PipelineConfig always serializes")
    }

    /// A stable 64-bit identifier of the fingerprint function (XXH3 of the
    /// compact JSON of every field but [`radius`](Self::radius)):
    /// configurations that make the same fingerprints have equal ids.
    pub fn id(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(self.stages().to_json().as_bytes())
    }

    /// This configuration without its radius: what determines the
    /// fingerprints.
    pub fn stages(&self) -> PipelineConfig {
        PipelineConfig { radius: None, lsh: None, ..self.clone() }
    }

    /// Whether `other` makes the same fingerprints (equal but perhaps for
    /// the radius): what stores and index files check.
    pub fn same_fingerprints(&self, other: &PipelineConfig) -> bool {
        self.stages() == other.stages()
    }

    /// The near-duplicate rule of this pipeline: its own
    /// [`radius`](Self::radius) if set, else the rule of the preset whose
    /// stages make the same fingerprints (so configurations stored before
    /// pipelines carried a radius keep their preset's rule), else
    /// [`Radius::classic`].
    pub fn radius(&self) -> Radius {
        self.radius
            .clone()
            .or_else(|| presets::radius_of_same_stages(self))
            .unwrap_or_else(|| Radius::classic(self.bits))
    }
}

#[cfg(test)]
mod tests {
    use super::presets;
    use super::*;

    #[test]
    fn every_preset_round_trips_through_toml_and_json() {
        for name in presets::NAMES.iter().chain(&presets::MINHASH_NAMES) {
            let c = presets::config(name).unwrap();
            assert_eq!(PipelineConfig::from_toml(&c.to_toml()).unwrap(), c, "{name}");
            assert_eq!(PipelineConfig::from_json(&c.to_json()).unwrap(), c, "{name}");
        }
        // A MinHash pipeline shows only what its signatures depend on.
        let shown = presets::config("minhash").unwrap().to_toml();
        for unused in ["\nbits =", "\nhash =", "[weight]", "[select]"] {
            assert!(!shown.contains(unused), "{unused} in {shown}");
        }
        assert!(shown.starts_with("format_version = 1\nmethod = \"minhash\"\n"), "{shown}");
        assert!(presets::config("default").unwrap().to_toml().contains("bits = 64\nhash = \"xxh3\""));
    }

    #[test]
    fn cppjieba_configurations_written_before_the_version_keep_their_words() {
        use crate::tokenize::{CppjiebaVersion, TokenizerConfig};
        let (new, old) = (presets::config("yanyiwu").unwrap(), presets::config("yanyiwu-nodejieba").unwrap());
        // `yanyiwu-nodejieba` is `yanyiwu` as it was written before: no
        // `version`, so the stored configurations of that time read as it.
        let old_json = old.to_json();
        assert!(!old_json.contains("\"version\""), "{old_json}");
        assert!(new.to_toml().contains("version = \"5.6.7\""), "{}", new.to_toml());
        assert_ne!(new.id(), old.id());
        let written_before =
            TokenizerConfig::Cppjieba { hmm: true, version: CppjiebaVersion::Nodejieba3_5_8 };
        let parsed: TokenizerConfig = serde_json::from_str(r#"{"type": "cppjieba", "hmm": true}"#).unwrap();
        assert_eq!(parsed, written_before);
        assert_eq!(PipelineConfig::from_json(&old_json).unwrap(), old);
        for name in presets::NAMES.iter().chain(&presets::MINHASH_NAMES) {
            assert_eq!(presets::name_of(&presets::config(name).unwrap()), Some(*name));
        }
        let custom = PipelineConfig { bits: crate::Bits::B128, ..presets::config("keywords").unwrap() };
        assert_eq!(presets::name_of(&custom), None);
        assert_eq!(presets::label(&custom), format!("{:016x}", custom.id()));
    }

    #[test]
    fn a_method_takes_only_its_own_settings() {
        let words = "tokenizer = { type = \"words\" }\n";
        let minhash = PipelineConfig::from_toml(&format!("method = \"minhash\"\n{words}")).unwrap();
        assert_eq!(minhash.method, Method::Minhash);
        // The threshold is the rule, not the signature: it leaves the id alone.
        let stricter = PipelineConfig { lsh: Some(LshConfig::at(0.8)), ..minhash.clone() };
        assert_eq!(stricter.id(), minhash.id());
        assert_ne!(minhash.id(), PipelineConfig { method: Method::Simhash, ..minhash.clone() }.id());
        for (toml, says) in [
            (format!("{words}[lsh]\nthreshold = 0.5\n"), "settings of method = \"minhash\""),
            (
                format!("method = \"minhash\"\nweight = {{ type = \"uniform\" }}\n{words}"),
                "weight must be tf",
            ),
            (format!("method = \"minhash\"\n{words}[minhash]\npermutations = 0\n"), "between 1 and 4096"),
            (format!("method = \"minhash\"\n{words}[lsh]\nthreshold = 1.5\n"), "(0, 1]"),
            (format!("method = \"minhash\"\n{words}[lsh]\nbands = 20\nrows = 7\n"), "do not fit"),
            (format!("method = \"minhash\"\n{words}[radius]\nk = 3\n"), "[lsh] threshold"),
            (format!("method = \"minhush\"\n{words}"), "minhush"),
        ] {
            let e = PipelineConfig::from_toml(&toml).unwrap_err().to_string();
            assert!(e.contains(says), "{toml}: {e}");
        }
    }

    #[test]
    fn byte_grams_and_the_vote_rule_are_simhash_settings_with_their_limits() {
        let ferd = presets::config("ferd").unwrap();
        let shown = ferd.to_toml();
        assert!(shown.contains("type = \"byte-grams\"") && shown.contains("ties = \"one\""), "{shown}");
        // The classic rule is left out, so no other preset's id changed.
        assert!(!presets::config("default").unwrap().to_toml().contains("vote"));
        let bytes = "tokenizer = { type = \"byte-grams\", n = 2 }\n";
        let c = PipelineConfig::from_toml(bytes).unwrap();
        assert_eq!(c.tokenizer.byte_grams().unwrap().skip_first, 0);
        for (toml, says) in [
            (format!("{bytes}filters = [{{ type = \"punctuation\" }}]\n"), "take no filters"),
            (format!("{bytes}weight = {{ type = \"uniform\" }}\n"), "weight must be tf"),
            (format!("method = \"minhash\"\n{bytes}"), "byte-grams is a SimHash tokenizer"),
            ("tokenizer = { type = \"byte-grams\", n = 0 }\n".into(), "n ≥ 1"),
            (
                "tokenizer = { type = \"shingles\", n = 2, over = { type = \"byte-grams\", n = 2 } }\n"
                    .into(),
                "shingles over byte-grams",
            ),
            (
                "method = \"minhash\"\nvote = { ties = \"one\" }\ntokenizer = { type = \"words\" }\n".into(),
                "MinHash pipeline has none",
            ),
        ] {
            let e = PipelineConfig::from_toml(&toml).unwrap_err().to_string();
            assert!(e.contains(says), "{toml}: {e}");
        }
    }

    #[test]
    fn errors_say_where_and_what() {
        let e =
            PipelineConfig::from_toml("bits = 64\n[tokenizer]\ntype = \"wordz\"\n").unwrap_err().to_string();
        assert!(e.contains("wordz") && e.contains("line"), "{e}");
        let e =
            PipelineConfig::from_toml("bits = 63\ntokenizer = { type = \"words\" }").unwrap_err().to_string();
        assert!(e.contains("64 or 128"), "{e}");
        let e = PipelineConfig::from_toml("bits = 128\nhash = \"lookup3\"\ntokenizer = { type = \"words\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lookup3"), "{e}");
        let e = PipelineConfig::from_toml("format_version = 99\ntokenizer = { type = \"words\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("upgrade"), "{e}");
        let e = PipelineConfig::from_toml("tokenizer = { type = \"words\" }\ncolour = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn the_radius_is_carried_but_not_part_of_the_fingerprint_function() {
        let d = presets::config("default").unwrap();
        assert_eq!(d.radius(), presets::recommended_radius("default", Bits::B64).unwrap());
        assert!(d.to_toml().contains("[radius]"), "{}", d.to_toml());
        // Stored before pipelines carried a radius: the preset's rule still.
        let old = d.stages();
        assert_eq!(old.radius(), d.radius());
        assert_eq!(old.id(), d.id());
        assert!(old.same_fingerprints(&d) && old != d);
        let own = PipelineConfig::from_toml("tokenizer = { type = \"words\" }\nradius = { k = 5 }").unwrap();
        assert_eq!(own.radius(), Radius::fixed(5));
        assert_eq!(
            PipelineConfig::from_toml("tokenizer = { type = \"words\" }").unwrap().radius(),
            Radius::fixed(3)
        );
        let e =
            PipelineConfig::from_toml("tokenizer = { type = \"words\" }\nradius = { k = 65 }").unwrap_err();
        assert!(e.to_string().contains("more than the 64 bits"), "{e}");
    }

    #[test]
    fn minimal_config_gets_documented_defaults() {
        let c = PipelineConfig::from_toml("tokenizer = { type = \"words\" }").unwrap();
        assert_eq!(c.bits, Bits::B64);
        assert_eq!(c.hash, HashConfig::Xxh3);
        assert_eq!(c.weight, WeightConfig::Tf);
        assert_eq!(c.select, SelectConfig::All);
        assert_eq!(c.format_version, FORMAT_VERSION);
    }
}
