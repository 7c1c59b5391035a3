//! Inverse-document-frequency tables.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use super::idf_layout::{self, u32_le, SLOT};
use crate::error::{Error, Result};

/// The name of the IDF table bundled with jieba.
pub const BUILTIN_IDF: &str = "jieba";

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

/// A table of `word → idf`, laid out as `idf_layout` describes: jieba's
/// bundled table is compiled into the binary that way (loading it costs
/// nothing), and a user's table is laid out the same way when loaded.
#[derive(Clone)]
pub struct IdfTable {
    words: Cow<'static, [u8]>,
    values: Cow<'static, [u8]>,
    ctrl: Cow<'static, [u8]>,
    slots: Cow<'static, [u8]>,
    home: usize,
    len: usize,
    median: f64,
    mean: f64,
}

// jieba's table, laid out by build.rs: `WORDS`, `VALUES`, `CTRL`, `HOME`,
// `SLOTS`, `LEN`, `MEDIAN` and `MEAN`.
include!(concat!(env!("OUT_DIR"), "/jieba_idf.rs"));

/// How many words ahead of its lookup [`IdfTable::get_each`] fetches a
/// word's place in the table.
const AHEAD: usize = 16;

/// `a == b` for two slices of the same length, without calling `memcmp`
/// for the short ones (words are mostly 3 to 12 bytes): two overlapping
/// loads from each end.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    debug_assert_eq!(n, b.len());
    let u64_at = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => a == b,
    }
}

impl IdfTable {
    /// Loads `source`: [`BUILTIN_IDF`] for jieba's table (compiled into
    /// the binary), or a file path resolved against `base`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not UTF-8, or has a malformed line.
    pub fn load(source: &str, base: Option<&Path>) -> Result<Arc<IdfTable>> {
        if source == BUILTIN_IDF {
            return Ok(Arc::clone(JIEBA_IDF.get_or_init(|| {
                Arc::new(IdfTable {
                    words: Cow::Borrowed(WORDS),
                    values: Cow::Borrowed(VALUES),
                    ctrl: Cow::Borrowed(CTRL),
                    slots: Cow::Borrowed(SLOTS),
                    home: HOME,
                    len: LEN,
                    median: MEDIAN,
                    mean: MEAN,
                })
            })));
        }
        let path = match base {
            Some(b) if Path::new(source).is_relative() => b.join(source),
            _ => PathBuf::from(source),
        };
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Error::IdfTable { path: path.clone(), line, message: format!("not UTF-8 ({})", e.utf8_error()) }
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
        let err = |line: usize, message: String| Error::IdfTable { path: path.to_owned(), line, message };
        let (layout, mean) = idf_layout::parse(text).map_err(|(line, message)| err(line, message))?;
        Ok(IdfTable::owned(layout, mean))
    }

    fn owned(l: idf_layout::Layout, mean: f64) -> IdfTable {
        IdfTable {
            words: Cow::Owned(l.words),
            values: Cow::Owned(l.values),
            ctrl: Cow::Owned(l.ctrl),
            slots: Cow::Owned(l.slots),
            home: l.home,
            len: l.len,
            median: l.median,
            mean,
        }
    }

    /// The IDF of `word`, if the table has it.
    pub fn get(&self, word: &str) -> Option<f64> {
        self.get_hashed(word.as_bytes(), idf_layout::hash(word.as_bytes()))
    }

    /// Calls `f(i, idf)` for each of `words` in order, `idf` as
    /// [`get`](Self::get) gives it for `words[i]`; but each word's
    /// place in the table is fetched from memory 16 words before
    /// it is read, so the cache misses of a document's lookups (the table
    /// is megabytes) overlap instead of following one another.
    pub fn get_each(&self, words: &[&str], mut f: impl FnMut(usize, Option<f64>)) {
        let fetch = |w: &str| {
            let h = idf_layout::hash(w.as_bytes());
            let s = h as usize & (self.home - 1);
            crate::simd::prefetch(&self.ctrl[s]);
            crate::simd::prefetch(&self.slots[SLOT * s]);
            h
        };
        let mut hashes = [0u64; AHEAD];
        for (h, w) in hashes.iter_mut().zip(words) {
            *h = fetch(w);
        }
        for (i, w) in words.iter().enumerate() {
            let h = hashes[i % AHEAD];
            if let Some(next) = words.get(i + AHEAD) {
                hashes[i % AHEAD] = fetch(next);
            }
            f(i, self.get_hashed(w.as_bytes(), h));
        }
    }

    /// [`get`](Self::get) of a word whose [`idf_layout::hash`] is `h`.
    #[inline(always)]
    fn get_hashed(&self, word: &[u8], h: u64) -> Option<f64> {
        const LOW: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // The bytes of `x` that are zero get their high bit set (a byte
        // after a zero may too, which the callers tolerate: see below).
        let zeros = |x: u64| x.wrapping_sub(LOW) & !x & HIGH;
        let tags = LOW * u64::from(idf_layout::tag(h));
        let mut s = h as usize & (self.home - 1);
        loop {
            let group = u64::from_le_bytes(self.ctrl[s..s + idf_layout::GROUP].try_into().expect("a group"));
            let free = zeros(group);
            let mut hits = zeros(group ^ tags);
            if free != 0 {
                // Only slots before the first free one can hold the word
                // (the first flag of `free` is always a true zero).
                hits &= (free & free.wrapping_neg()) - 1;
            }
            while hits != 0 {
                let i = s + (hits.trailing_zeros() / 8) as usize;
                let slot = &self.slots[SLOT * i..SLOT * (i + 1)];
                let held = idf_layout::slot_word(slot, &self.words);
                if held.len() == word.len() && same_bytes(held, word) {
                    let v = 8 * u32_le(slot, 0) as usize;
                    return Some(f64::from_le_bytes(self.values[v..v + 8].try_into().expect("8 bytes")));
                }
                hits &= hits - 1;
            }
            if free != 0 {
                return None;
            }
            s += idf_layout::GROUP;
        }
    }

    /// How many words the table holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty (a loaded table never is).
    pub fn is_empty(&self) -> bool {
        self.len == 0
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

impl Default for IdfTable {
    /// An empty table.
    fn default() -> IdfTable {
        IdfTable::owned(idf_layout::empty(), 0.0)
    }
}

impl fmt::Debug for IdfTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdfTable")
            .field("len", &self.len)
            .field("median", &self.median)
            .field("mean", &self.mean)
            .finish_non_exhaustive()
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
    fn compiled_table_equals_the_parsed_file() {
        use std::io::Read;
        let mut text = String::new();
        flate2::read::GzDecoder::new(&include_bytes!("../../data/jieba_idf.txt.gz")[..])
            .read_to_string(&mut text)
            .unwrap();
        let parsed = IdfTable::parse(&text, Path::new("jieba_idf.txt")).unwrap();
        let compiled = IdfTable::load(BUILTIN_IDF, None).unwrap();
        assert_eq!(
            (compiled.len(), compiled.median(), compiled.mean()),
            (parsed.len(), parsed.median(), parsed.mean())
        );
        for line in text.lines() {
            let (w, v) = line.rsplit_once(' ').unwrap();
            let v: f64 = v.parse().unwrap();
            assert_eq!(compiled.get(w), Some(v), "{w}");
            assert_eq!(parsed.get(w), Some(v), "{w}");
            let longer = format!("{w}的");
            assert_eq!(compiled.get(&longer), parsed.get(&longer));
        }
        for w in ["", "neardup", "的的的的的的的的的的的的的", "\u{0}"] {
            assert_eq!(compiled.get(w), None, "{w:?}");
        }
    }

    proptest::proptest! {
        // Against a map: the last value of a repeated word wins, every
        // absent word misses, and the statistics are jieba's.
        #[test]
        fn lookup_equals_a_map(
            lines in proptest::collection::vec(("[a-c的了]{1,4}|[x-z]{0,12}", 0u8..8), 1..60),
            probes in proptest::collection::vec("[a-c的了x-z]{0,6}", 0..40),
        ) {
            let lines: Vec<(String, f64)> = lines
                .into_iter()
                .filter(|(w, _)| !w.is_empty())
                .map(|(w, v)| (w, f64::from(v) / 4.0))
                .collect();
            proptest::prop_assume!(!lines.is_empty());
            let text: String = lines.iter().map(|(w, v)| format!("{w} {v}\n")).collect();
            let t = IdfTable::parse(&text, Path::new("t")).unwrap();
            let map: std::collections::HashMap<&str, f64> = lines.iter().map(|(w, v)| (w.as_str(), *v)).collect();
            proptest::prop_assert_eq!(t.len(), map.len());
            for w in lines.iter().map(|(w, _)| w).chain(&probes) {
                proptest::prop_assert_eq!(t.get(w), map.get(w.as_str()).copied(), "{}", w);
            }
            // The fetching-ahead lookup of all of them at once, in order,
            // on this table and on jieba's.
            let all: Vec<&str> = lines.iter().map(|(w, _)| w.as_str()).chain(probes.iter().map(String::as_str)).collect();
            for table in [&t, &*IdfTable::load(BUILTIN_IDF, None).unwrap()] {
                let mut each = Vec::new();
                table.get_each(&all, |i, v| each.push((i, v)));
                let one_by_one: Vec<(usize, Option<f64>)> = all.iter().map(|w| table.get(w)).enumerate().collect();
                proptest::prop_assert_eq!(each, one_by_one);
            }
            let mut values: Vec<f64> = map.values().copied().collect();
            values.sort_by(f64::total_cmp);
            proptest::prop_assert_eq!(t.median(), values[values.len() / 2]);
            let mean = lines.iter().map(|(_, v)| v).sum::<f64>() / lines.len() as f64;
            proptest::prop_assert_eq!(t.mean(), mean);
        }
    }

    proptest::proptest! {
        #[test]
        fn same_bytes_is_equality(a in proptest::collection::vec(0u8..4, 0..24), flip in 0usize..24) {
            let mut b = a.clone();
            proptest::prop_assert!(same_bytes(&a, &b));
            if flip < b.len() {
                b[flip] ^= 1;
                proptest::prop_assert!(!same_bytes(&a, &b));
            }
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idf.txt");
        std::fs::write(&path, b"a 1.0\n\xff\xfe 2.0\n").unwrap();
        let e = IdfTable::load(path.to_str().unwrap(), None).unwrap_err().to_string();
        assert!(e.contains("idf.txt:2: not UTF-8"), "{e}");
    }

    #[test]
    fn empty_table_misses() {
        let t = IdfTable::default();
        assert!(t.is_empty());
        assert_eq!(t.get("的"), None);
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
