//! What examiners leave out of a similarity: quoted text, the reference
//! list, matches too short to mean anything, and the author's own earlier
//! papers — each shown beside the total, as CNKI shows 总文字复制比 beside
//! 去除引用文献复制比 and 去除本人文献复制比.

use std::ops::Range;

use serde::Serialize;

use crate::passage::covered_chars;

/// What is left out of a report's ratios. Defaults: quotes and the
/// reference list are left out of [`Ratios::without_quotes_and_references`]
/// (the total counts them); no match is too short; no source is the
/// author's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exclusions {
    /// Text in quotation marks (“…”, "…", 「…」, 『…』) and block quotes
    /// (lines starting with `>`).
    pub quotes: bool,
    /// The reference list: from the last heading named References,
    /// Bibliography, Works Cited, 参考文献, 引用文献 or 参考资料 to the end
    /// (or to an Appendix / 附录 heading after it).
    pub references: bool,
    /// Matches with fewer characters than this in A (whitespace not
    /// counted) are ignored altogether; 13 is CNKI's rule for Chinese.
    pub min_match_chars: usize,
    /// Sources that are the author's own (their ids or names), left out of
    /// [`Ratios::without_own`].
    pub own: Vec<String>,
}

impl Default for Exclusions {
    fn default() -> Exclusions {
        Exclusions { quotes: true, references: true, min_match_chars: 0, own: Vec::new() }
    }
}

/// The share of A found, with and without what examiners leave out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Ratios {
    /// Everything found (the report's similarity).
    pub total: f64,
    /// Without quoted text and the reference list (去除引用).
    pub without_quotes_and_references: f64,
    /// Without the author's own sources (去除本人).
    pub without_own: f64,
    /// Without either.
    pub without_both: f64,
    /// Characters of A in quotes or the reference list.
    pub excluded_chars: usize,
}

/// Heading names of a reference list (lower case).
const REFERENCE_HEADINGS: &[&str] = &[
    "references",
    "reference",
    "bibliography",
    "works cited",
    "literature cited",
    "参考文献",
    "引用文献",
    "参考资料",
];

/// Heading names that end a reference list.
const APPENDIX_HEADINGS: &[&str] = &["appendix", "appendices", "附录"];

/// A line's heading word: without numbering ("7.", "VII", "第七章" are
/// not parsed beyond digits and dots), `#` marks and a trailing colon.
fn heading(line: &str) -> String {
    let t = line.trim().trim_start_matches('#').trim();
    let t = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.').trim();
    t.trim_end_matches([':', '：']).trim().to_lowercase()
}

/// The reference list of `text`, as bytes: from the last reference
/// heading to the end, or to the first appendix heading after it.
pub fn references(text: &str) -> Option<Range<usize>> {
    let mut start = None;
    let mut offset = 0;
    let mut lines = Vec::new();
    for line in text.split_inclusive('\n') {
        lines.push((offset, line));
        offset += line.len();
    }
    for &(at, line) in &lines {
        if REFERENCE_HEADINGS.contains(&heading(line).as_str()) {
            start = Some(at);
        }
    }
    let start = start?;
    let end = lines
        .iter()
        .filter(|&&(at, _)| at > start)
        .find(|(_, line)| {
            let h = heading(line);
            APPENDIX_HEADINGS.iter().any(|a| h == *a || h.starts_with(&format!("{a} ")))
        })
        .map_or(text.len(), |&(at, _)| at);
    Some(start..end)
}

/// The quoted parts of `text`, as bytes: text between paired quotation
/// marks (“…”, 「…」, 『…』, and straight "…" within one paragraph), marks
/// included, and block-quote lines (starting with `>`). A mark that is not
/// closed within its paragraph quotes nothing.
pub fn quotes(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('>') {
            out.push(offset..offset + line.trim_end().len());
        }
        offset += line.len();
    }
    let mut para_start = 0;
    for para in text.split("\n\n") {
        quoted_in(para, para_start, &mut out);
        para_start += para.len() + 2;
    }
    merge(out)
}

fn quoted_in(para: &str, at: usize, out: &mut Vec<Range<usize>>) {
    let mut open: Option<(char, usize)> = None;
    for (i, c) in para.char_indices() {
        match open {
            None => {
                if matches!(c, '“' | '「' | '『' | '"') {
                    open = Some((c, i));
                }
            }
            Some((o, s)) => {
                let closes = matches!((o, c), ('“', '”') | ('「', '」') | ('『', '』') | ('"', '"'));
                if closes {
                    out.push(at + s..at + i + c.len_utf8());
                    open = None;
                }
            }
        }
    }
}

/// `ranges` sorted and joined where they overlap or touch.
fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(m) if r.start <= m.end => m.end = m.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `ranges` without the parts inside `cut` (both joined first; one sweep).
fn subtract(ranges: &[Range<usize>], cut: &[Range<usize>]) -> Vec<Range<usize>> {
    let cut = merge(cut.to_vec());
    let mut out = Vec::new();
    let mut k = 0;
    for r in merge(ranges.to_vec()) {
        while k < cut.len() && cut[k].end <= r.start {
            k += 1;
        }
        let mut start = r.start;
        for c in cut[k..].iter().take_while(|c| c.start < r.end) {
            if c.start > start {
                out.push(start..c.start);
            }
            start = start.max(c.end);
        }
        if start < r.end {
            out.push(start..r.end);
        }
    }
    out
}

/// Whether a match of A's bytes `r` is long enough to count.
pub(super) fn long_enough(text: &str, r: &Range<usize>, ex: &Exclusions) -> bool {
    ex.min_match_chars == 0
        || text[r.clone()].chars().filter(|c| !c.is_whitespace()).count() >= ex.min_match_chars
}

/// The characters of A found in `spans` (each with whether its source is
/// the author's own) and the ratios, over A's `chars` characters in
/// sentences of at most `max_sentence_chars`.
pub(super) fn measure(
    text: &str,
    max_sentence_chars: usize,
    chars: usize,
    spans: &[(Range<usize>, bool)],
    ex: &Exclusions,
) -> (usize, Ratios) {
    let sentences = crate::passage::sentences(text, max_sentence_chars);
    let mut cut = Vec::new();
    if ex.quotes {
        cut.extend(quotes(text));
    }
    if ex.references {
        cut.extend(references(text));
    }
    let of = |keep_own: bool| -> Vec<Range<usize>> {
        spans.iter().filter(|(_, own)| keep_own || !own).map(|(r, _)| r.clone()).collect()
    };
    let count = |ranges: &[Range<usize>]| covered_chars(text, &sentences, ranges);
    let share = |n: usize| if chars == 0 { 0.0 } else { n as f64 / chars as f64 };
    let (all, theirs) = (of(true), of(false));
    let matched = count(&all);
    let ratios = Ratios {
        total: share(matched),
        without_quotes_and_references: share(count(&subtract(&all, &cut))),
        without_own: share(count(&theirs)),
        without_both: share(count(&subtract(&theirs, &cut))),
        excluded_chars: count(&merge(cut)),
    };
    (matched, ratios)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_in_english_and_chinese() {
        let t = "He said “this is quoted” and \"so is this\".\n> a block quote\nNot “closed.\n\n他说「引用的话」和『另一句』。";
        let q: Vec<&str> = quotes(t).into_iter().map(|r| &t[r]).collect();
        assert_eq!(
            q,
            vec!["“this is quoted”", "\"so is this\"", "> a block quote", "「引用的话」", "『另一句』"]
        );
    }

    #[test]
    fn the_last_reference_heading_to_the_end_or_an_appendix() {
        let t = "Contents\nReferences\n\nBody text.\n\n7. References\n[1] A. Author.\n\nAppendix A\nTables.";
        let r = references(t).unwrap();
        assert!(t[r.clone()].starts_with("7. References") && t[r].ends_with("Author.\n\n"));
        let z = "正文。\n\n参考文献：\n[1] 张三. 论文.\n";
        assert_eq!(&z[references(z).unwrap()], "参考文献：\n[1] 张三. 论文.\n");
        assert_eq!(references("No list here.\nThe references are many."), None);
    }

    #[test]
    fn ratios_leave_out_quotes_references_own_and_short_matches() {
        use crate::passage::Aligner;
        use crate::report::Report;
        let copied = "SimHash maps each document to a short fingerprint and similar documents get \
                      fingerprints that differ in few bits of the whole.";
        let quoted = "An index over permuted tables finds them without a full scan of the corpus at all.";
        for (a, refs) in [
            (
                format!("Intro words here.\n\n{copied}\n\nHe wrote “{quoted}”\n\nReferences\n{quoted}"),
                "References",
            ),
            (format!("引言部分。\n\n{copied}\n\n他写道「{quoted}」\n\n参考文献\n{quoted}"), "参考文献"),
        ] {
            let b = format!("{copied} {quoted} Other text follows here.");
            let aligner = Aligner::new(crate::Fingerprinter::preset("default").unwrap());
            let all = Report::pair(&aligner, ("a", a.clone()), ("b", b.clone()), &Exclusions::default());
            let r = all.ratios;
            assert!(r.total > 0.8, "{refs}: {r:?}");
            let plain = aligner.align(&a, &b);
            assert_eq!(r.total, plain.similarity());
            // Without quotes and references: the unquoted copy, and the
            // words joining it to the quote ("He wrote", in one span).
            let at = a.find(copied).unwrap();
            let want = covered_chars(
                &a,
                &crate::passage::sentences(&a, 400),
                std::slice::from_ref(&(at..at + copied.len())),
            );
            let without = r.without_quotes_and_references * all.a.chars as f64;
            assert!(without >= want as f64 && without <= want as f64 + 12.0, "{refs}: {without} for {want}");
            assert_eq!((r.without_own, r.without_both), (r.total, r.without_quotes_and_references));
            let own = Exclusions { own: vec!["b".into()], ..Exclusions::default() };
            let r = Report::pair(&aligner, ("a", a.clone()), ("b", b.clone()), &own).ratios;
            assert_eq!((r.without_own, r.without_both), (0.0, 0.0));
            let long = Exclusions { min_match_chars: 10_000, ..Exclusions::default() };
            let r = Report::pair(&aligner, ("a", a), ("b", b), &long);
            assert!(r.found.is_empty() && r.ratios.total == 0.0);
        }
    }

    #[test]
    fn subtracting_ranges() {
        assert_eq!(subtract(&[0..10, 20..30], &[5..8, 25..40]), vec![0..5, 8..10, 20..25]);
        assert_eq!(subtract(std::slice::from_ref(&(0..10)), &[]), vec![0..10]);
        assert!(subtract(std::slice::from_ref(&(3..4)), std::slice::from_ref(&(0..10))).is_empty());
    }
}
