//! What `neardup dedup` shows a person at the end of a run: the first
//! clusters, each document by its id and its title (or first words), and
//! how close each removed one is to the one kept. Everything else is in
//! the output files; this is for reading in ten seconds.

use serde_json::{Map, Value};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How many removed members of one cluster are shown.
const SHOWN_MEMBERS: usize = 3;
/// The widest title shown, in terminal columns.
const TITLE_COLUMNS: usize = 48;
/// The widest id shown, in terminal columns.
const ID_COLUMNS: usize = 44;

/// One document as shown: its id and its record (for the title).
pub struct Shown<'a> {
    /// The id as written to the outputs.
    pub id: &'a Value,
    /// The record as JSON.
    pub raw: &'a str,
}

/// One cluster: the kept document, then the removed ones with how close
/// each is to it, in words ("similarity 0.74", "distance 3").
pub struct ShownCluster<'a> {
    pub kept: Shown<'a>,
    /// Whether `kept` is a document of the index a dedup ran against (not
    /// a new one).
    pub indexed: bool,
    pub removed: Vec<(Shown<'a>, String)>,
    /// How many documents the cluster has (the shown ones may be fewer).
    pub size: usize,
}

/// A line of the view: a line of its own, or a document in three columns.
enum Row {
    Line(String),
    Doc { role: String, id: String, title: String },
}

/// The lines printed for `clusters` (the first few of `total`); titles
/// fall back on the record's `text_field`.
pub fn lines(clusters: &[ShownCluster], total: usize, text_field: &str) -> Vec<String> {
    let mut rows = Vec::new();
    let doc = |role: String, d: &Shown| Row::Doc { role, id: id_of(d.id), title: title(d.raw, text_field) };
    for (i, c) in clusters.iter().enumerate() {
        let size = crate::output::count(c.size as u64, "document");
        rows.push(Row::Line(format!("cluster {} of {total}, {size}", i + 1)));
        rows.push(doc(if c.indexed { "  in the index".into() } else { "  kept".into() }, &c.kept));
        for (d, closeness) in c.removed.iter().take(SHOWN_MEMBERS) {
            rows.push(doc(format!("  removed, {closeness}"), d));
        }
        if c.size > 1 + SHOWN_MEMBERS {
            rows.push(Row::Line(format!("  … and {} more removed", c.size - 1 - SHOWN_MEMBERS)));
        }
    }
    let widest = |column: fn(&Row) -> Option<&String>| {
        rows.iter().filter_map(column).map(|s| s.width()).max().unwrap_or(0)
    };
    let roles = widest(|r| if let Row::Doc { role, .. } = r { Some(role) } else { None });
    let ids = widest(|r| if let Row::Doc { id, .. } = r { Some(id) } else { None });
    rows.into_iter()
        .map(|r| match r {
            Row::Line(line) => line,
            Row::Doc { role, id, title } => format!("{}  {}  {title}", pad(&role, roles), pad(&id, ids)),
        })
        .collect()
}

/// `s` padded with spaces to `columns` terminal columns.
fn pad(s: &str, columns: usize) -> String {
    format!("{s}{}", " ".repeat(columns.saturating_sub(s.width())))
}

/// The id as a person reads it: a string without its quotes.
fn id_of(id: &Value) -> String {
    match id {
        Value::String(s) => clip(s, ID_COLUMNS),
        other => clip(&other.to_string(), ID_COLUMNS),
    }
}

/// The record's `title` field, else the first words of its text, at most
/// [`TITLE_COLUMNS`] wide.
fn title(raw: &str, text_field: &str) -> String {
    let record: Map<String, Value> = serde_json::from_str(raw).unwrap_or_default();
    let pick = |name: &str| record.get(name).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    clip(pick("title").or_else(|| pick(text_field)).unwrap_or(""), TITLE_COLUMNS)
}

/// `s` on one line (runs of whitespace become one space, other control
/// characters, such as a terminal's escape sequences, are dropped), cut to
/// `columns` terminal columns with "…" where it was cut.
fn clip(s: &str, columns: usize) -> String {
    let s: String =
        s.split_whitespace().collect::<Vec<_>>().join(" ").chars().filter(|c| !c.is_control()).collect();
    if s.width() <= columns {
        return s;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > columns - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn titles_come_from_the_title_field_else_the_first_words() {
        assert_eq!(
            title(r#"{"title":"Apple: Heinous DVD Pirates","text":"x"}"#, "text"),
            "Apple: Heinous DVD Pirates"
        );
        assert_eq!(title(r#"{"title":" ","body":"one\n two   three"}"#, "body"), "one two three");
        assert_eq!(title("not json", "text"), "");
        assert_eq!(title(r#"{"title":"red\u001b[31m alert\u0007"}"#, "text"), "red[31m alert", "no escapes");
        assert_eq!(title(r#"{"title":7,"text":""}"#, "text"), "");
    }

    #[test]
    fn ids_of_any_kind_stay_on_one_line() {
        assert_eq!(id_of(&json!("a\nb")), "a b");
        assert_eq!(id_of(&json!(42)), "42");
        assert_eq!(id_of(&json!("")), "");
    }

    #[test]
    fn long_titles_are_cut_by_terminal_columns() {
        let zh = "第 10 章 Debian 和内核".repeat(5);
        let cut = clip(&zh, 20);
        assert!(cut.ends_with('…') && cut.width() <= 20, "{cut}");
        assert_eq!(clip("short", 20), "short");
    }

    #[test]
    fn clusters_show_kept_removed_and_how_close_in_aligned_columns() {
        let (a, b) = (json!("en/a"), json!("en/blog/b"));
        let c = ShownCluster {
            indexed: false,
            kept: Shown { id: &a, raw: r#"{"title":"Heinous"}"# },
            removed: vec![(
                Shown { id: &b, raw: r#"{"text":"Heinous DVD Pirates reposted"}"# },
                "similarity 0.74".into(),
            )],
            size: 6,
        };
        let lines = lines(&[c], 3, "text");
        assert_eq!(lines[0], "cluster 1 of 3, 6 documents");
        assert!(lines[1].starts_with("  kept") && lines[1].contains("en/a") && lines[1].ends_with("Heinous"));
        assert!(
            lines[2].contains("removed, similarity 0.74")
                && lines[2].ends_with("Heinous DVD Pirates reposted")
        );
        let column = |l: &str| l.find("en/").unwrap();
        assert_eq!(column(&lines[1]), column(&lines[2]), "{lines:#?}");
        assert_eq!(lines[3], "  … and 2 more removed");
    }
}
