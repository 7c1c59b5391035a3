//! A report for a terminal.

use std::io::{self, Write};

use super::{percent, Report};

/// The first `n` characters of `s` on one line.
fn excerpt(s: &str, n: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= n {
        flat
    } else {
        format!("{}…", flat.chars().take(n).collect::<String>())
    }
}

impl Report {
    /// Writes the report for a terminal: a summary, the sources, and each
    /// matched passage with an excerpt of both sides.
    ///
    /// # Errors
    ///
    /// What writing to `w` gives.
    pub fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        let r = self;
        writeln!(w, "A: {} ({} characters in {} sentences)", r.a.name, r.a.chars, r.a.sentences)?;
        match &r.index {
            None => {
                let s = &r.sources[0];
                writeln!(w, "B: {}", s.name)?;
                writeln!(
                    w,
                    "similarity: {} of A found in B ({} of {} characters); {} of B found in A",
                    percent(r.similarity()),
                    r.matched_chars,
                    r.a.chars,
                    percent(s.reverse.unwrap_or(0.0))
                )?;
            }
            Some(index) => {
                writeln!(w, "against: {index}")?;
                writeln!(
                    w,
                    "similarity: {} of A found in the index ({} of {} characters), in {}",
                    percent(r.similarity()),
                    r.matched_chars,
                    r.a.chars,
                    match r.sources.len() + r.sources_left_out {
                        1 => "1 document".to_owned(),
                        n => format!("{n} documents"),
                    }
                )?;
                for s in &r.sources {
                    writeln!(w, "  {:>6}  {}", percent(s.similarity), s.name)?;
                }
                if r.sources_left_out > 0 {
                    writeln!(w, "  … and {} more (--max-sources)", r.sources_left_out)?;
                }
            }
        }
        let q = &r.ratios;
        writeln!(
            w,
            "ratios: total {}, without quotes and references {}, without own sources {}, without both {}",
            percent(q.total),
            percent(q.without_quotes_and_references),
            percent(q.without_own),
            percent(q.without_both)
        )?;
        writeln!(w, "{}", r.settings())?;
        writeln!(w)?;
        match r.found.len() {
            1 => writeln!(w, "1 matched passage")?,
            n => writeln!(w, "{n} matched passages")?,
        }
        for (i, f) in r.found.iter().enumerate() {
            let sentences = f.sentences.map(|n| format!(", {n} sentences")).unwrap_or_default();
            let source =
                if r.index.is_some() { format!("{} ", r.sources[f.source].name) } else { String::new() };
            writeln!(
                w,
                "#{:<3} A {}..{}  <->  {source}B {}..{}  (distance {}{sentences})",
                i + 1,
                f.a.start,
                f.a.end,
                f.b.start,
                f.b.end,
                f.distance
            )?;
            writeln!(w, "     A: {}", excerpt(&r.a.text[f.a.clone()], 100))?;
            if let Some(b) = &r.sources[f.source].text {
                writeln!(w, "     B: {}", excerpt(&b[f.b.clone()], 100))?;
            }
        }
        Ok(())
    }
}
