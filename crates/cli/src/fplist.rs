//! Lists of precomputed fingerprints: one per line, as `HEX`, `ID<TAB>HEX`,
//! or the JSONL that `neardup fingerprint` writes (`{"id": …, "fingerprint": "…"}`).
//! Parsed in parallel; every bad line is reported as `FILE:LINE`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use neardup::dedup::{SpillColumn, SpillTo};
use neardup::{Bits, Fingerprint};
use rayon::prelude::*;

pub use neardup::index::Words;

/// Ids of a list: given on the lines, or the line numbers.
pub struct Ids {
    /// Concatenated ids (empty when the lines had none).
    bytes: String,
    /// End of each id in `bytes`.
    ends: Vec<u64>,
    /// The 1-based line number of each entry, or `None` when entry `i` is
    /// on line `i + 1` (no blank lines): nothing stored per entry.
    lines: Option<Vec<u64>>,
}

impl Ids {
    /// The id of entry `i`: the one on its line, else its line number.
    pub fn get(&self, i: usize) -> serde_json::Value {
        if self.ends.is_empty() {
            return serde_json::Value::from(self.line(i));
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        id_value(&self.bytes[start..self.ends[i] as usize])
    }

    /// The 1-based line of entry `i`.
    fn line(&self, i: usize) -> u64 {
        self.lines.as_ref().map_or(i as u64 + 1, |l| l[i])
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

/// Bytes read at a time: each block is cut at line ends and parsed on all
/// threads, then its fingerprints are appended, so memory holds the
/// fingerprints (8 bytes each for 64 bits) and one block, never the file.
const BLOCK: usize = 32 << 20;

/// The longest line read: a fingerprint line is tens of bytes, so a longer
/// one means the wrong file (a binary without newlines would otherwise be
/// held whole).
const MAX_LINE: usize = 16 << 20;

/// Reads a fingerprint list, streaming it a block at a time.
pub fn read(path: &Path) -> Result<(Words, Ids)> {
    let name = path.display().to_string();
    let input = open(path)?;
    read_blocks(input, &name, BLOCK)
}

/// The list at `path`, or standard input for `-`.
fn open(path: &Path) -> Result<Box<dyn std::io::Read>> {
    Ok(if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?)
    })
}

/// Entry `j`'s id in a parsed block: the one on its line (a JSONL id as
/// its JSON value), else its line number — what [`Ids::get`] gives.
fn entry_id(p: &Parsed, j: usize) -> serde_json::Value {
    if p.ids.is_empty() {
        return serde_json::Value::from(p.lines[j]);
    }
    id_value(&p.id_bytes[p.ids[j].0..p.ids[j].1])
}

/// A stored id as a value: JSONL ids were stored as `\u{1}` + JSON,
/// tab-separated ids as text.
fn id_value(s: &str) -> serde_json::Value {
    match s.strip_prefix('\u{1}') {
        Some(json) => {
            serde_json::from_str(json).unwrap_or_else(|_| serde_json::Value::String(json.to_owned()))
        }
        None => serde_json::Value::String(s.to_owned()),
    }
}

/// [`read`] from `input`, `block` bytes at a time.
fn read_blocks(input: impl std::io::Read, name: &str, block: usize) -> Result<(Words, Ids)> {
    let mut list = List::default();
    for_each_block(input, name, block, &mut |p| list.append(p, name))?;
    Ok(list.finish())
}

/// Parses `input` `block` bytes at a time, handing each block's lines to
/// `sink` in order.
fn for_each_block(
    mut input: impl std::io::Read,
    name: &str,
    block: usize,
    sink: &mut dyn FnMut(Parsed) -> Result<()>,
) -> Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(block + 4096);
    let mut carry: Vec<u8> = Vec::new();
    let mut line = 1u64;
    loop {
        buf.clear();
        buf.append(&mut carry);
        let n = std::io::Read::read_to_end(&mut std::io::Read::take(&mut input, block as u64), &mut buf)
            .with_context(|| format!("{name}: cannot read"))?;
        let eof = n == 0;
        // Parse up to the last complete line; the rest waits for the next block.
        let end = if eof {
            buf.len()
        } else {
            match buf.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None if buf.len() > MAX_LINE => bail!(
                    "{name}:{line}: a line of more than {} MB; a fingerprint list holds one short line per \
                     fingerprint (is this the right file?)",
                    MAX_LINE >> 20
                ),
                None => {
                    // One line longer than a block: read on.
                    carry = std::mem::take(&mut buf);
                    continue;
                }
            }
        };
        carry.extend_from_slice(&buf[end..]);
        let data = &buf[..end];
        let (cuts, first_lines, next_line) = chunks_at_line_ends(data, line);
        let parsed: Vec<Result<Parsed>> = cuts
            .par_windows(2)
            .zip(first_lines)
            .map(|(c, first)| parse_chunk(&data[c[0]..c[1]], first, name))
            .collect();
        line = next_line;
        for p in parsed {
            sink(p?)?;
        }
        if eof {
            break;
        }
    }
    Ok(())
}

/// Cuts `data` into about eight chunks a thread at line ends: the cut
/// offsets (first 0, last `data.len()`), the line number each chunk
/// starts at (the first being `first_line`), and the line after `data`.
fn chunks_at_line_ends(data: &[u8], first_line: u64) -> (Vec<usize>, Vec<u64>, u64) {
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
        .scan(first_line, |acc, c| {
            let s = *acc;
            *acc += c;
            Some(s)
        })
        .collect();
    (cuts, first_lines, first_line + counts.iter().sum::<u64>())
}

/// A list being read: the chunks' fingerprints and ids appended in order,
/// refusing a list that mixes widths or lines with and without ids.
#[derive(Default)]
struct List {
    checks: Checks,
    words64: Vec<u64>,
    words128: Vec<u128>,
    ids: Option<Ids>,
}

/// What every block of one list must agree on: the width, and whether
/// lines have ids.
#[derive(Default)]
struct Checks {
    bits: Option<(Bits, u64)>,
    with_ids: Option<(bool, u64)>,
}

impl Checks {
    /// Refuses a block that mixes widths or ids with the blocks before.
    fn check(&mut self, p: &Parsed, name: &str) -> Result<()> {
        if let (Some((a, la)), Some((b, lb))) = (self.bits, p.bits) {
            if a != b {
                bail!("{name}:{lb}: a {b}-bit fingerprint, but line {la} has a {a}-bit one; one list holds one width");
            }
        }
        self.bits = self.bits.or(p.bits);
        if p.words.is_empty() {
            return Ok(());
        }
        let has = !p.ids.is_empty();
        match self.with_ids {
            None => self.with_ids = Some((has, p.lines[0])),
            Some((h, l)) if h != has => bail!(
                "{name}:{}: some lines have ids and others (line {l}) do not; give every line an id or none",
                p.lines[0]
            ),
            _ => {}
        }
        Ok(())
    }
}

impl List {
    fn len(&self) -> usize {
        self.words64.len() + self.words128.len()
    }

    fn append(&mut self, p: Parsed, name: &str) -> Result<()> {
        self.checks.check(&p, name)?;
        if p.words.is_empty() {
            return Ok(());
        }
        let count = self.len() as u64;
        let ids = self.ids.get_or_insert_with(|| Ids { bytes: String::new(), ends: Vec::new(), lines: None });
        let base = ids.bytes.len() as u64;
        ids.bytes.push_str(&p.id_bytes);
        ids.ends.extend(p.ids.iter().map(|&(_, e)| base + e as u64));
        // Line numbers are kept only once some entry is not on line i + 1.
        let consecutive =
            p.lines[0] == count + 1 && p.lines[p.lines.len() - 1] == count + p.lines.len() as u64;
        match &mut ids.lines {
            Some(lines) => lines.extend(p.lines),
            None if consecutive => {}
            None => {
                let mut lines: Vec<u64> = (1..=count).collect();
                lines.extend(p.lines);
                ids.lines = Some(lines);
            }
        }
        match self.checks.bits {
            Some((Bits::B128, _)) => self.words128.extend(p.words),
            _ => self.words64.extend(p.words.into_iter().map(|w| w as u64)),
        }
        Ok(())
    }

    fn finish(self) -> (Words, Ids) {
        let ids = self.ids.unwrap_or(Ids { bytes: String::new(), ends: Vec::new(), lines: None });
        let words = match self.checks.bits.map(|b| b.0) {
            Some(Bits::B128) => Words::B128(self.words128),
            _ => Words::B64(self.words64),
        };
        (words, ids)
    }
}

/// The value of exactly 16 hex digits (either case), the common line.
#[inline]
fn hex16(b: &[u8]) -> Option<u64> {
    if b.len() != 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

fn parse_chunk(chunk: &[u8], first_line: u64, name: &str) -> Result<Parsed> {
    let mut p =
        Parsed { words: Vec::new(), ids: Vec::new(), id_bytes: String::new(), lines: Vec::new(), bits: None };
    for (i, line) in chunk.split(|&b| b == b'\n').enumerate() {
        let lineno = first_line + i as u64;
        let at = || format!("{name}:{lineno}");
        let Some((id, fp)) = parse_line(line.strip_suffix(b"\r").unwrap_or(line), &at)? else {
            continue;
        };
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

/// One line's id (JSON ids stored as `\u{1}` + JSON) and fingerprint, or
/// `None` for a blank line; `at` names the line in errors.
fn parse_line<'l>(
    line: &'l [u8],
    at: &dyn Fn() -> String,
) -> Result<Option<(Option<Cow<'l, str>>, Fingerprint)>> {
    // The common lines, `HEX` and `ID<TAB>HEX` with 16 digits, straight to
    // a word without the general parser.
    if line.first() != Some(&b'{') {
        let (id, hex) = match line.iter().rposition(|&b| b == b'\t') {
            Some(t) => (Some(&line[..t]), &line[t + 1..]),
            None => (None, line),
        };
        if let (Some(v), Ok(id)) = (hex16(hex), id.map(std::str::from_utf8).transpose()) {
            return Ok(Some((id.map(Cow::Borrowed), Fingerprint::from_u64(v))));
        }
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = std::str::from_utf8(line).with_context(|| format!("{}: invalid UTF-8", at()))?;
    let (id, hex): (Option<Cow<str>>, Cow<str>) = if text.starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(text).with_context(|| {
            format!("{}: malformed JSON; expected {{\"id\": …, \"fingerprint\": \"HEX\"}}", at())
        })?;
        let Some(hex) = v.get("fingerprint").and_then(|f| f.as_str()) else {
            bail!("{}: no string field \"fingerprint\"", at());
        };
        let id = v.get("id").map(|id| Cow::Owned(format!("\u{1}{id}")));
        (id, hex.to_owned().into())
    } else {
        match text.rsplit_once('\t') {
            Some((id, hex)) => (Some(id.into()), hex.into()),
            None => (None, text.into()),
        }
    };
    let fp: Fingerprint = hex.trim().parse().with_context(|| {
        format!("{}: expected HEX or ID<TAB>HEX (16 or 32 hex digits), or fingerprint JSONL", at())
    })?;
    Ok(Some((id, fp)))
}

/// Reads a list a block at a time, handing `sink` each block's entries in
/// order as `(id, fingerprint)`: the id on the line (a JSONL id as its
/// JSON value), else the line number — what [`read`]'s `Ids::get` gives.
/// Memory holds one block, never the list.
pub fn stream(
    path: &Path,
    sink: &mut dyn FnMut(Vec<(serde_json::Value, Fingerprint)>) -> Result<()>,
) -> Result<()> {
    let name = path.display().to_string();
    let input = open(path)?;
    let mut checks = Checks::default();
    for_each_block(input, &name, BLOCK, &mut |p| {
        checks.check(&p, &name)?;
        let bits = checks.bits.map_or(Bits::B64, |b| b.0);
        let entries = (0..p.words.len())
            .map(|j| {
                let id = entry_id(&p, j);
                let fp = match bits {
                    Bits::B64 => Fingerprint::from_u64(p.words[j] as u64),
                    Bits::B128 => Fingerprint::from_u128(p.words[j]),
                };
                (id, fp)
            })
            .collect();
        sink(entries)
    })
}

/// A list of 64-bit fingerprints read into temporary files, for a dedup
/// out of core: the fingerprints as a spilling column (two `u32` halves a
/// row), the ids on disk.
pub struct SpilledList {
    /// Row `i`: fingerprint `i` as its low and high halves.
    pub fingerprints: SpillColumn,
    /// The entries' ids.
    pub ids: SpilledIds,
}

/// The ids of a [`SpilledList`]: each entry's id as JSON text in a
/// temporary file and its end (a `u64`) in another, or nothing stored
/// while every entry is on line `i + 1` without an id.
pub struct SpilledIds {
    dir: PathBuf,
    stored: Option<(BufWriter<File>, BufWriter<File>)>,
    written: u64,
    count: usize,
}

impl SpilledIds {
    fn new(dir: &Path) -> SpilledIds {
        SpilledIds { dir: dir.to_path_buf(), stored: None, written: 0, count: 0 }
    }

    fn tmp_error(&self) -> String {
        format!("{}: cannot write a temporary file (--tmp-dir)", self.dir.display())
    }

    fn store(&mut self) -> Result<()> {
        let open = || tempfile::tempfile_in(&self.dir).map(|f| BufWriter::with_capacity(1 << 20, f));
        let texts = open().with_context(|| self.tmp_error())?;
        let ends = open().with_context(|| self.tmp_error())?;
        self.stored = Some((texts, ends));
        // The entries so far were on lines 1..=count.
        for i in 0..self.count {
            self.push_text(&(i + 1).to_string())?;
        }
        Ok(())
    }

    fn push_text(&mut self, text: &str) -> Result<()> {
        let why = self.tmp_error();
        let (texts, ends) = self.stored.as_mut().expect("stored ids");
        texts.write_all(text.as_bytes()).context(why.clone())?;
        self.written += text.len() as u64;
        ends.write_all(&self.written.to_le_bytes()).context(why)?;
        Ok(())
    }

    fn append(&mut self, p: &Parsed) -> Result<()> {
        let consecutive =
            p.ids.is_empty() && p.lines.iter().enumerate().all(|(j, &l)| l == (self.count + j + 1) as u64);
        if self.stored.is_none() && !consecutive {
            self.store()?;
        }
        if self.stored.is_some() {
            for j in 0..p.words.len() {
                let text = entry_id(p, j).to_string();
                self.push_text(&text)?;
            }
        }
        self.count += p.words.len();
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let why = self.tmp_error();
        if let Some((texts, ends)) = &mut self.stored {
            texts.flush().context(why.clone())?;
            ends.flush().context(why)?;
        }
        Ok(())
    }

    /// Bytes written to temporary files.
    pub fn spilled_bytes(&self) -> u64 {
        if self.stored.is_some() {
            self.written + 8 * self.count as u64
        } else {
            0
        }
    }

    /// Entry `i`'s id (two positioned reads when stored).
    pub fn get(&self, i: usize) -> Result<serde_json::Value> {
        let Some((texts, ends)) = &self.stored else { return Ok(serde_json::Value::from(i as u64 + 1)) };
        let why = || format!("{}: cannot read a temporary file back", self.dir.display());
        let mut b = [0u8; 16];
        let (start, end) = if i == 0 {
            ends.get_ref().read_exact_at(&mut b[..8], 0).with_context(why)?;
            (0, u64::from_le_bytes(b[..8].try_into().expect("8 bytes")))
        } else {
            ends.get_ref().read_exact_at(&mut b, 8 * (i as u64 - 1)).with_context(why)?;
            (
                u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
            )
        };
        let mut bytes = vec![0u8; (end - start) as usize];
        texts.get_ref().read_exact_at(&mut bytes, start).with_context(why)?;
        Ok(serde_json::from_slice(&bytes)?)
    }

    /// The ids in order, one read of the files.
    pub fn reader(&self) -> Result<IdReader> {
        let files = match &self.stored {
            None => None,
            Some((texts, ends)) => {
                let open = |f: &BufWriter<File>| -> Result<std::io::BufReader<File>> {
                    let mut f = f.get_ref().try_clone()?;
                    std::io::Seek::rewind(&mut f)?;
                    Ok(std::io::BufReader::with_capacity(1 << 20, f))
                };
                Some((open(texts)?, open(ends)?))
            }
        };
        Ok(IdReader { files, at: 0, next: 0, bytes: Vec::new() })
    }
}

/// The ids of a [`SpilledIds`] in order.
pub struct IdReader {
    files: Option<(std::io::BufReader<File>, std::io::BufReader<File>)>,
    at: u64,
    next: u64,
    bytes: Vec<u8>,
}

impl IdReader {
    /// The next entry's id.
    pub fn next_id(&mut self) -> Result<serde_json::Value> {
        self.next += 1;
        let Some((texts, ends)) = &mut self.files else { return Ok(serde_json::Value::from(self.next)) };
        let mut b = [0u8; 8];
        ends.read_exact(&mut b).context("cannot read the ids back")?;
        let end = u64::from_le_bytes(b);
        self.bytes.resize((end - self.at) as usize, 0);
        texts.read_exact(&mut self.bytes).context("cannot read the ids back")?;
        self.at = end;
        Ok(serde_json::from_slice(&self.bytes)?)
    }
}

/// The width of the first fingerprint of the list at `path` (its first
/// 64 KiB read), or `None` if there is none there or it does not parse.
pub fn first_width(path: &Path) -> Option<Bits> {
    let mut head = Vec::with_capacity(64 << 10);
    std::fs::File::open(path).ok()?.take(64 << 10).read_to_end(&mut head).ok()?;
    let at = || String::new();
    head.split(|&b| b == b'\n')
        .filter_map(|line| parse_line(line.strip_suffix(b"\r").unwrap_or(line), &at).ok().flatten())
        .map(|(_, fp)| fp.bits())
        .next()
}

/// Reads a list of 64-bit fingerprints into temporary files in `dir`
/// (fingerprints beyond `limit` bytes, ids always), streaming it.
///
/// # Errors
///
/// As [`read`], a list of 128-bit fingerprints (out of core takes 64), or
/// temporary files that cannot be written.
pub fn read_spilled(path: &Path, dir: &Path, limit: u64) -> Result<SpilledList> {
    let name = path.display().to_string();
    let input = open(path)?;
    let mut checks = Checks::default();
    let mut fingerprints = SpillColumn::spilling(2, SpillTo { dir: dir.to_path_buf(), limit });
    let mut ids = SpilledIds::new(dir);
    for_each_block(input, &name, BLOCK, &mut |p| {
        checks.check(&p, &name)?;
        if let Some((Bits::B128, line)) = checks.bits {
            bail!(
                "{name}:{line}: 128-bit fingerprints are deduplicated in memory; give --memory room for them"
            );
        }
        for &w in &p.words {
            fingerprints.push(&[w as u32, (w >> 32) as u32])?;
        }
        ids.append(&p)
    })?;
    ids.finish()?;
    Ok(SpilledList { fingerprints, ids })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn parse(text: &str, block: usize) -> Result<(Vec<u128>, Vec<serde_json::Value>)> {
        let (words, ids) = read_blocks(text.as_bytes(), "t", block)?;
        let words: Vec<u128> = match words {
            Words::B64(v) => v.into_iter().map(u128::from).collect(),
            Words::B128(v) => v,
        };
        let ids = (0..words.len()).map(|i| ids.get(i)).collect();
        Ok((words, ids))
    }

    #[test]
    fn any_block_size_reads_the_same_list() {
        for with_ids in [false, true] {
            let mut text = String::new();
            let mut want_words = Vec::new();
            let mut want_ids = Vec::new();
            for i in 0..500u64 {
                let v = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                if i % 97 == 5 {
                    text.push_str("\n  \r\n"); // blank lines: ids are line numbers after them
                }
                let line = text.matches('\n').count() as u64 + 1;
                match (with_ids, i % 3) {
                    (true, 0) => text.push_str(&format!("id{i}\t{v:016X}\r\n")),
                    (true, _) => text.push_str(&format!("id{i}\t{v:016x}\n")),
                    (false, 0) => {
                        text.push_str(&format!("{{\"id\": {line}, \"fingerprint\": \"{v:016x}\"}}\n"))
                    }
                    (false, _) => text.push_str(&format!("0x{v:016x}\n")),
                }
                want_words.push(u128::from(v));
                want_ids.push(if with_ids {
                    serde_json::json!(format!("id{i}"))
                } else {
                    serde_json::json!(line)
                });
            }
            if !with_ids {
                // JSONL lines carry their own ids: keep the list uniform.
                text = text.lines().map(|l| l.replace("0x", "")).collect::<Vec<_>>().join("\n");
                text = text
                    .lines()
                    .map(|l| {
                        if l.starts_with('{') {
                            serde_json::from_str::<serde_json::Value>(l).unwrap()["fingerprint"]
                                .as_str()
                                .unwrap()
                                .to_owned()
                        } else {
                            l.to_owned()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            for block in [1, 7, 64, 4096, BLOCK] {
                let (words, ids) = parse(&text, block).unwrap();
                assert_eq!(words, want_words, "block {block}");
                assert_eq!(ids, want_ids, "block {block}, ids {with_ids}");
            }
        }
    }

    #[test]
    fn empty_binary_and_endless_inputs_get_clear_answers() {
        let (words, _) = read_blocks(&b""[..], "t", BLOCK).unwrap();
        assert_eq!(words.len(), 0);
        let e = parse("\u{0}\u{1}binary\n", 4).unwrap_err();
        assert!(format!("{e:#}").starts_with("t:1: expected HEX"), "{e:#}");
        let e = read_blocks(&b"0123456789abcdef\n\xff\xfe\t0123456789abcdee\n"[..], "t", 8).err().unwrap();
        assert!(format!("{e:#}").starts_with("t:2: invalid UTF-8"), "{e:#}");
        // No newline at all, past the longest line: refused, not held whole.
        let endless = std::io::repeat(b'a').take(MAX_LINE as u64 + 2 * BLOCK as u64);
        let e = read_blocks(endless, "t", BLOCK).err().unwrap();
        assert!(format!("{e:#}").contains("t:1: a line of more than 16 MB"), "{e:#}");
    }

    #[test]
    fn bad_lines_are_named_at_any_block_size() {
        for block in [1, 5, BLOCK] {
            let e = parse("0123456789abcdef\n\n0123456789abcdeg\n", block).unwrap_err();
            assert!(format!("{e:#}").starts_with("t:3: expected HEX"), "{e:#}");
            let e = parse("a\t0123456789abcdef\n0123456789abcdef\n", block).unwrap_err();
            let e = format!("{e:#}");
            assert!(e.starts_with("t:2: ") && e.contains("every line an id or none"), "{e}");
            let e = parse("0123456789abcdef\nb\t0123456789abcdef\n", block).unwrap_err();
            assert!(format!("{e:#}").contains("every line an id or none"), "{e:#}");
            let e = parse("0123456789abcdef\n0123456789abcdef0123456789abcdef\n", block).unwrap_err();
            assert!(format!("{e:#}").contains("t:2: a 128-bit fingerprint"), "{e:#}");
        }
    }
}
