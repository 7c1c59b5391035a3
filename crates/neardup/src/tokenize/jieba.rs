//! The jieba segmenter, loaded once per process and shared.

use std::sync::OnceLock;

use jieba_rs::Jieba;

static JIEBA: OnceLock<Jieba> = OnceLock::new();

/// The process-wide jieba segmenter with its bundled dictionary.
///
/// Loading the dictionary takes 0.1–0.2 s, so it happens once, on first
/// use, and every pipeline shares the result.
pub fn shared_jieba() -> &'static Jieba {
    JIEBA.get_or_init(Jieba::new)
}

/// Appends jieba's words for a run of Han characters.
pub(crate) fn cut_han<'t>(run: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    out.extend(shared_jieba().cut(run, hmm).into_iter().map(|t| t.word));
}

/// The whole text through `cut`, whitespace tokens dropped.
pub(crate) fn cut_whole<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    out.extend(
        shared_jieba()
            .cut(text, hmm)
            .into_iter()
            .map(|t| t.word)
            .filter(|w| !w.chars().all(char::is_whitespace)),
    );
}
