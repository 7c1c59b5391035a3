//! Inverse-document-frequency tables.

use rustc_hash::FxHashMap as HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The name of the IDF table bundled with jieba.
pub const BUILTIN_IDF: &str = "jieba";

static JIEBA_IDF_GZ: &[u8] = include_bytes!("../../data/jieba_idf.txt.gz");
static JIEBA_IDF: OnceLock<Arc<IdfTable>> = OnceLock::new();

/// The IDF of a feature that is not in the table: `"median"`, `"mean"` or
/// a number in a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UnknownIdf {
    /// This value.
    Value(f64),
    /// A statistic of the table.
    Rule(IdfRule),
}

impl<'de> Deserialize<'de> for UnknownIdf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<UnknownIdf, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = UnknownIdf;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#"a number, "median" or "mean""#)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<UnknownIdf, E> {
                Ok(UnknownIdf::Value(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<UnknownIdf, E> {
                Ok(UnknownIdf::Value(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<UnknownIdf, E> {
                Ok(UnknownIdf::Value(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<UnknownIdf, E> {
                match v {
                    "median" => Ok(UnknownIdf::Rule(IdfRule::Median)),
                    "mean" => Ok(UnknownIdf::Rule(IdfRule::Mean)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Default for UnknownIdf {
    fn default() -> UnknownIdf {
        UnknownIdf::Rule(IdfRule::Median)
    }
}

/// A statistic of an IDF table (see [`UnknownIdf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdfRule {
    /// `sorted(values)[len // 2]` over distinct words, as `jieba.analyse`.
    Median,
    /// The mean over the file's lines, as cppjieba.
    Mean,
}

/// A table of `word → idf`.
#[derive(Clone, Debug, Default)]
pub struct IdfTable {
    map: HashMap<String, f64>,
    median: f64,
    mean: f64,
}

impl IdfTable {
    /// Loads `source`: [`BUILTIN_IDF`] for jieba's table (decompressed and
    /// parsed once per process), or a file path resolved against `base`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not UTF-8, or has a malformed line.
    pub fn load(source: &str, base: Option<&Path>) -> Result<Arc<IdfTable>> {
        if source == BUILTIN_IDF {
            return Ok(Arc::clone(JIEBA_IDF.get_or_init(|| {
                let mut text = String::new();
                flate2::read::GzDecoder::new(JIEBA_IDF_GZ)
                    .read_to_string(&mut text)
                    .expect("the bundled IDF table is valid gzip and UTF-8");
                Arc::new(
                    IdfTable::parse(&text, Path::new("<bundled jieba idf>")).expect("bundled table parses"),
                )
            })));
        }
        let path = match base {
            Some(b) if Path::new(source).is_relative() => b.join(source),
            _ => PathBuf::from(source),
        };
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| Error::IdfTable {
            path: path.clone(),
            line: 0,
            message: format!("not UTF-8 ({e})"),
        })?;
        Ok(Arc::new(IdfTable::parse(&text, &path)?))
    }

    /// Parses `word idf` lines (whitespace-separated; blank lines and lines
    /// starting with `#` are skipped). `path` only names the source in errors.
    ///
    /// # Errors
    ///
    /// A line without two fields, or whose IDF is not a finite number.
    pub fn parse(text: &str, path: &Path) -> Result<IdfTable> {
        // Sized for every line up front: growing it rehashes every word
        // again (a fifth of loading the bundled table).
        let mut map = HashMap::with_capacity_and_hasher(
            memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1,
            Default::default(),
        );
        let mut sum = 0.0;
        let mut lines = 0usize;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |message: String| Error::IdfTable { path: path.to_owned(), line: i + 1, message };
            let (word, value) = line.rsplit_once(|c: char| c.is_whitespace()).ok_or_else(|| {
                err(format!("expected `word idf`, found {:?}", line.chars().take(60).collect::<String>()))
            })?;
            let idf: f64 = value.trim().parse().map_err(|_| err(format!("{value:?} is not a number")))?;
            if !idf.is_finite() {
                return Err(err(format!("{value:?} is not a finite number")));
            }
            sum += idf;
            lines += 1;
            map.insert(word.trim().to_owned(), idf);
        }
        if map.is_empty() {
            return Err(Error::IdfTable {
                path: path.to_owned(),
                line: 0,
                message: "the table is empty".into(),
            });
        }
        let mut values: Vec<f64> = map.values().copied().collect();
        let mid = values.len() / 2;
        let median = *values.select_nth_unstable_by(mid, f64::total_cmp).1;
        Ok(IdfTable { map, median, mean: sum / lines as f64 })
    }

    /// The IDF of `word`, if the table has it.
    pub fn get(&self, word: &str) -> Option<f64> {
        self.map.get(word).copied()
    }

    /// How many words the table holds.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table is empty (a loaded table never is).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The median IDF (see [`IdfRule::Median`]).
    pub fn median(&self) -> f64 {
        self.median
    }

    /// The mean IDF (see [`IdfRule::Mean`]).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    pub(crate) fn resolve_unknown(&self, u: &UnknownIdf) -> f64 {
        match u {
            UnknownIdf::Value(v) => *v,
            UnknownIdf::Rule(IdfRule::Median) => self.median,
            UnknownIdf::Rule(IdfRule::Mean) => self.mean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_table_statistics_match_jieba() {
        let t = IdfTable::load(BUILTIN_IDF, None).unwrap();
        assert_eq!(t.len(), 270_132);
        // jieba.analyse: median_idf = sorted(idf_freq.values())[len // 2]
        assert_eq!(t.median(), 11.9547675029);
        assert_eq!(t.get("劳动防护"), Some(13.900677652));
    }

    #[test]
    fn unknown_idf_reads_numbers_and_rules() {
        let r = |j: &str| serde_json::from_str::<UnknownIdf>(j);
        assert_eq!(r("11.5").unwrap(), UnknownIdf::Value(11.5));
        assert_eq!(r("12").unwrap(), UnknownIdf::Value(12.0));
        assert_eq!(r("\"mean\"").unwrap(), UnknownIdf::Rule(IdfRule::Mean));
        let e = r("\"nan\"").unwrap_err().to_string();
        assert!(e.contains(r#"a number, "median" or "mean""#), "{e}");
        assert_eq!(serde_json::to_string(&UnknownIdf::Rule(IdfRule::Median)).unwrap(), "\"median\"");
    }

    #[test]
    fn parse_errors_name_the_line() {
        let e = IdfTable::parse("a 1.0\nb\n", Path::new("x.txt")).unwrap_err().to_string();
        assert!(e.starts_with("x.txt:2:"), "{e}");
        let e = IdfTable::parse("a one\n", Path::new("x.txt")).unwrap_err().to_string();
        assert!(e.contains("not a number"), "{e}");
        assert!(IdfTable::parse("", Path::new("x.txt")).is_err());
    }
}
