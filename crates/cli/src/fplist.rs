//! Lists of precomputed fingerprints: one per line, as `HEX`, `ID<TAB>HEX`,
//! or the JSONL that `neardup fingerprint` writes (`{"id": …, "fingerprint": "…"}`).
//! Parsed in parallel; every bad line is reported as `FILE:LINE`.

use std::path::Path;

use anyhow::{bail, Context, Result};
use neardup::{Bits, Fingerprint};
use rayon::prelude::*;

pub use neardup::index::Words;

/// Ids of a list: given on the lines, or the line numbers.
pub struct Ids {
    /// Concatenated ids (empty when the lines had none).
    bytes: String,
    /// End of each id in `bytes`.
    ends: Vec<u64>,
    /// The 1-based line number of each entry.
    lines: Vec<u64>,
}

impl Ids {
    /// The id of entry `i`: the one on its line, else its line number.
    pub fn get(&self, i: usize) -> serde_json::Value {
        if self.ends.is_empty() {
            return serde_json::Value::from(self.lines[i]);
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let s = &self.bytes[start..self.ends[i] as usize];
        // JSONL ids were stored as JSON; tab-separated ids as text.
        if let Some(json) = s.strip_prefix('\u{1}') {
            serde_json::from_str(json).unwrap_or_else(|_| serde_json::Value::String(json.to_owned()))
        } else {
            serde_json::Value::String(s.to_owned())
        }
    }

    /// The id as text (for TSV output).
    pub fn text(&self, i: usize) -> String {
        match self.get(i) {
            serde_json::Value::String(s) => s,
            v => v.to_string(),
        }
    }
}

struct Parsed {
    words: Vec<u128>,
    ids: Vec<(usize, usize)>,
    id_bytes: String,
    lines: Vec<u64>,
    bits: Option<(Bits, u64)>,
}

/// Reads a fingerprint list.
pub fn read(path: &Path) -> Result<(Words, Ids)> {
    let data = if path.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut v).context("stdin")?;
        v
    } else {
        std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?
    };
    let name = path.display().to_string();
    let (cuts, first_lines) = chunks_at_line_ends(&data);
    let parsed: Vec<Result<Parsed>> = cuts
        .par_windows(2)
        .zip(first_lines)
        .map(|(c, first)| parse_chunk(&data[c[0]..c[1]], first, &name))
        .collect();
    join_chunks(parsed, &name)
}

/// Cuts `data` into about eight chunks a thread at line ends: the cut
/// offsets (first 0, last `data.len()`) and the line number each chunk
/// starts at.
fn chunks_at_line_ends(data: &[u8]) -> (Vec<usize>, Vec<u64>) {
    let chunks = (rayon::current_num_threads() * 8).max(1);
    let step = data.len().div_ceil(chunks).max(1);
    let mut cuts = vec![0usize];
    let mut pos = step;
    while pos < data.len() {
        match data[pos..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                cuts.push(pos + i + 1);
                pos = pos + i + 1 + step;
            }
            None => break,
        }
    }
    cuts.push(data.len());
    cuts.dedup();
    let counts: Vec<u64> = cuts
        .par_windows(2)
        .map(|c| data[c[0]..c[1]].iter().filter(|&&b| b == b'\n').count() as u64)
        .collect();
    let first_lines = counts
        .iter()
        .scan(1, |acc, c| {
            let s = *acc;
            *acc += c;
            Some(s)
        })
        .collect();
    (cuts, first_lines)
}

/// The chunks' fingerprints and ids in order, refusing a list that mixes
/// widths or lines with and without ids.
fn join_chunks(parsed: Vec<Result<Parsed>>, name: &str) -> Result<(Words, Ids)> {
    let mut bits: Option<(Bits, u64)> = None;
    let mut words = Vec::new();
    let mut ids = Ids { bytes: String::new(), ends: Vec::new(), lines: Vec::new() };
    let mut with_ids = None;
    for p in parsed {
        let p = p?;
        if let (Some((a, la)), Some((b, lb))) = (bits, p.bits) {
            if a != b {
                bail!("{name}:{lb}: a {b}-bit fingerprint, but line {la} has a {a}-bit one; one list holds one width");
            }
        }
        bits = bits.or(p.bits);
        if !p.words.is_empty() {
            let has = !p.ids.is_empty();
            match with_ids {
                None => with_ids = Some((has, p.lines[0])),
                Some((h, l)) if h != has => bail!(
                    "{name}:{}: some lines have ids and others (line {l}) do not; give every line an id or none",
                    p.lines[0]
                ),
                _ => {}
            }
        }
        let base = ids.bytes.len() as u64;
        ids.bytes.push_str(&p.id_bytes);
        ids.ends.extend(p.ids.iter().map(|&(_, e)| base + e as u64));
        words.extend(p.words);
        ids.lines.extend(p.lines);
    }
    let words = match bits.map(|b| b.0) {
        Some(Bits::B128) => Words::B128(words),
        _ => Words::B64(words.into_iter().map(|w| w as u64).collect()),
    };
    Ok((words, ids))
}

fn parse_chunk(chunk: &[u8], first_line: u64, name: &str) -> Result<Parsed> {
    let mut p =
        Parsed { words: Vec::new(), ids: Vec::new(), id_bytes: String::new(), lines: Vec::new(), bits: None };
    for (i, line) in chunk.split(|&b| b == b'\n').enumerate() {
        let lineno = first_line + i as u64;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = || format!("{name}:{lineno}");
        let text = std::str::from_utf8(line).with_context(|| format!("{}: invalid UTF-8", at()))?;
        let (id, hex): (Option<String>, std::borrow::Cow<str>) = if text.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(text).with_context(|| {
                format!("{}: malformed JSON; expected {{\"id\": …, \"fingerprint\": \"HEX\"}}", at())
            })?;
            let Some(hex) = v.get("fingerprint").and_then(|f| f.as_str()) else {
                bail!("{}: no string field \"fingerprint\"", at());
            };
            let id = v.get("id").map(|id| format!("\u{1}{id}"));
            (id, hex.to_owned().into())
        } else {
            match text.rsplit_once('\t') {
                Some((id, hex)) => (Some(id.to_owned()), hex.into()),
                None => (None, text.into()),
            }
        };
        let fp: Fingerprint = hex.trim().parse().with_context(|| {
            format!("{}: expected HEX or ID<TAB>HEX (16 or 32 hex digits), or fingerprint JSONL", at())
        })?;
        match p.bits {
            None => p.bits = Some((fp.bits(), lineno)),
            Some((b, l)) if b != fp.bits() => {
                bail!(
                    "{}: a {}-bit fingerprint, but line {l} has a {b}-bit one; one list holds one width",
                    at(),
                    fp.bits()
                )
            }
            _ => {}
        }
        if let Some(id) = id {
            let start = p.id_bytes.len();
            p.id_bytes.push_str(&id);
            p.ids.push((start, p.id_bytes.len()));
        } else if !p.ids.is_empty() {
            bail!("{}: this line has no id but earlier lines do; give every line an id or none", at());
        }
        if !p.ids.is_empty() && p.ids.len() != p.words.len() + 1 {
            bail!("{}: this line has an id but earlier lines do not; give every line an id or none", at());
        }
        p.words.push(fp.value());
        p.lines.push(lineno);
    }
    Ok(p)
}
