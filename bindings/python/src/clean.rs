//! `neardup.boilerplate` and `neardup.substrings`: the core's cleaning
//! jobs (`neardup::clean`) over a list of texts, as the commands of the
//! same names run them over files.

use neardup::clean::substrings::{cut, KeepSpan, Measure, Substrings};
use neardup::clean::{Boilerplate, DocUnits, Rule, Unit};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use crate::args::Texts;
use crate::to_py;

/// The memory either job holds before it spills to the temporary folder.
const MEMORY: u64 = 1 << 30;

// boilerplate's `min_words` default must be a literal in its signature for
// Python to show it (and stubtest to check the stub): the core's, checked.
const _: () = assert!(neardup::clean::MIN_UNIT_WORDS == 3, "update min_words' default below and in the stub");

/// Removes boilerplate from `texts`, as `neardup boilerplate`: every
/// `unit` (`"paragraph"`, `"line"` or `"sentences:N"`) found in at least
/// `min_docs` texts is cut from all of them (or, with `repeats=True`,
/// every occurrence after the first); a text that lost something and has
/// fewer than `min_chars` non-space characters left is dropped. Only
/// units of at least `min_words` words count (each Chinese, Japanese or
/// Korean character a word): a shared heading or number is not boilerplate.
///
/// Returns `{"texts": [...], "removed": [...]}`: each text cleaned (None
/// if dropped), and each removed unit as `{"text", "documents", "removed"}`
/// (`"occurrences"` instead of `"documents"` with `repeats=True`),
/// most removed first.
#[pyfunction]
#[pyo3(signature = (texts, unit = "paragraph", min_docs = 2, repeats = false, min_chars = 1, min_words = 3))]
pub(crate) fn boilerplate<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    unit: &str,
    min_docs: u32,
    repeats: bool,
    min_chars: usize,
    min_words: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let unit: Unit = unit.parse().map_err(to_py)?;
    let rule = if repeats { Rule::Repeats } else { Rule::MinDocs(min_docs) };
    let job = Boilerplate::new(unit).rule(rule).min_chars(min_chars).min_words(min_words);
    job.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let texts = Texts::read(texts, "texts")?;
    let owned = texts.strs("texts")?;
    let done = py.allow_threads(|| -> neardup::Result<_> {
        let units: Vec<DocUnits> = owned.par_iter().map(|t| job.units(t)).collect();
        let mut counting = job.counting(MEMORY, std::env::temp_dir())?;
        for u in &units {
            counting.add(u)?;
        }
        let mut cleaner = counting.finish()?;
        let cleaned: Vec<Option<String>> = owned
            .iter()
            .zip(&units)
            .map(|(t, u)| {
                let c = cleaner.clean(t, u);
                (!c.dropped).then(|| c.text.into_owned())
            })
            .collect();
        Ok((cleaned, cleaner.removed_units()))
    });
    let (cleaned, removed) = done.map_err(to_py)?;
    let out = PyDict::new(py);
    out.set_item("texts", cleaned)?;
    let units: Vec<Bound<'py, PyDict>> = removed
        .into_iter()
        .map(|u| {
            let d = PyDict::new(py);
            d.set_item("text", u.text)?;
            if let Some(n) = u.documents {
                d.set_item("documents", n)?;
            }
            if let Some(n) = u.occurrences {
                d.set_item("occurrences", n)?;
            }
            d.set_item("removed", u.removed)?;
            Ok(d)
        })
        .collect::<PyResult<_>>()?;
    out.set_item("removed", units)?;
    Ok(out)
}

/// Removes repeated substrings from `texts`, as `neardup substrings`:
/// every span of at least `min_bytes` bytes of UTF-8 (or `min_tokens`
/// tokens; 100 bytes when neither is given) found more than once is cut
/// from every text after the first that has it (`keep="first"`) or from
/// all (`keep="none"`), never inside a word or a character; a text that
/// lost something and has fewer than `min_chars` non-space characters
/// left is dropped.
///
/// Returns `{"texts": [...], "spans": [...]}`: each text cleaned (None if
/// dropped), and for each text the `(start, end)` character offsets of
/// the spans cut from it.
#[pyfunction]
#[pyo3(signature = (texts, min_bytes = None, min_tokens = None, keep = "first", min_chars = 1))]
pub(crate) fn substrings<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    min_bytes: Option<usize>,
    min_tokens: Option<usize>,
    keep: &str,
    min_chars: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let value_error = |e: neardup::Error| match e {
        neardup::Error::Config(m) => PyValueError::new_err(m),
        e => PyValueError::new_err(e.to_string()),
    };
    let measure = Measure::of(min_bytes, min_tokens).map_err(value_error)?;
    let keep: KeepSpan = keep.parse().map_err(value_error)?;
    let job = Substrings::new(measure).keep(keep);
    job.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let texts = Texts::read(texts, "texts")?;
    let owned = texts.strs("texts")?;
    let done = py.allow_threads(|| -> neardup::Result<_> {
        let dir = std::env::temp_dir();
        let mut corpus = job.corpus(&dir)?;
        for t in &owned {
            corpus.push(t)?;
        }
        let corpus = corpus.finish()?;
        let removal = job.find(&corpus, MEMORY, &dir)?;
        let mut out = Vec::with_capacity(owned.len());
        for (i, t) in owned.iter().enumerate() {
            let spans = removal.spans(&corpus, i, t)?;
            let cleaned = cut(t, &spans);
            let dropped =
                !spans.is_empty() && cleaned.chars().filter(|c| !c.is_whitespace()).count() < min_chars;
            let chars: Vec<(usize, usize)> =
                spans.iter().map(|s| (t[..s.start].chars().count(), t[..s.end].chars().count())).collect();
            out.push(((!dropped).then_some(cleaned), chars));
        }
        Ok(out)
    });
    type Spans = Vec<Vec<(usize, usize)>>;
    let (cleaned, spans): (Vec<Option<String>>, Spans) = done.map_err(to_py)?.into_iter().unzip();
    let out = PyDict::new(py);
    out.set_item("texts", cleaned)?;
    out.set_item("spans", spans)?;
    Ok(out)
}
