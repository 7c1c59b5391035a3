//! A loaded PDF made safe for the text reader, before it reads.
//!
//! `pdf-extract` trusts the file: it follows a page tree wherever it
//! leads (a tree that lists itself is read again and again), draws a form
//! that draws itself until the stack overflows, and inflates every stream
//! it touches in full. This pass walks the file once, bounded, and leaves
//! a document the reader cannot be led astray by:
//!
//! 1. **Streams inflate within a budget**: every compressed stream is
//!    inflated here (Flate, LZW, ASCII85, ASCIIHex, RunLength), all of them
//!    together within [`Limits::inflation`]; past it the file is a
//!    decompression bomb ([`Unreadable::Bomb`]). Images and TrueType font
//!    programs, which hold no text the reader uses, are emptied unread.
//! 2. **The page tree is flattened**: walked with a visited set and a
//!    depth limit ([`DEPTH`]), each page once, in order, its inherited
//!    resources and media box copied onto it.
//! 3. **Forms are drawn as a tree**: each `Do` is followed with the forms
//!    being drawn on a stack; one that would draw a form already on the
//!    stack (a cycle), nest past [`DEPTH`], or name nothing is removed, and
//!    more than [`DRAWS`] drawings in all is a hostile file.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use super::{Limits, Unreadable};

/// The deepest a page tree, or forms drawn inside forms, may nest.
pub(super) const DEPTH: usize = 32;

/// The most forms drawn in one document, counting each drawing.
pub(super) const DRAWS: usize = 100_000;

/// Makes `doc` safe to read (see the module's description); its pages.
pub(super) fn tidy(doc: &mut Document, limits: &Limits) -> Result<usize, Unreadable> {
    inflate_streams(doc, limits)?;
    let pages = flatten_pages(doc)?;
    limits.check_time()?;
    draw_forms_as_a_tree(doc, &pages)?;
    Ok(pages.len())
}

/// A hostile or damaged file, in words.
fn damaged(what: &str) -> Unreadable {
    Unreadable::Damaged(format!("a PDF {what}: a damaged or hostile file; open it and print it to PDF again"))
}

fn name_of(o: &Object) -> Option<&[u8]> {
    match o {
        Object::Name(n) => Some(n),
        _ => None,
    }
}

/// `o`, followed through references (a bounded number).
fn resolve<'a>(doc: &'a Document, o: &'a Object) -> Option<&'a Object> {
    doc.dereference(o).ok().map(|(_, o)| o)
}

fn dict_in<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    match resolve(doc, d.get(key).ok()?)? {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

fn type_is(d: &Dictionary, key: &[u8], value: &[u8]) -> bool {
    d.get(key).ok().and_then(name_of) == Some(value)
}

// ---- 1. streams ---------------------------------------------------------

/// Inflates every compressed stream in place, within the budget; empties
/// images and TrueType font programs.
fn inflate_streams(doc: &mut Document, limits: &Limits) -> Result<(), Unreadable> {
    let unread = unread_streams(doc);
    let limit = limits.inflation();
    let mut budget = limit;
    let ids: Vec<ObjectId> = doc.objects.keys().copied().collect();
    for (n, id) in ids.into_iter().enumerate() {
        if n % 256 == 0 {
            limits.check_time()?;
        }
        let Some(Object::Stream(s)) = doc.objects.get_mut(&id) else { continue };
        if unread.contains(&id) || type_is(&s.dict, b"Subtype", b"Image") {
            s.dict.remove(b"Filter");
            s.dict.remove(b"DecodeParms");
            s.set_content(Vec::new());
            continue;
        }
        let Ok(filters) = s.filters() else { continue };
        let filters: Vec<Vec<u8>> = filters.into_iter().map(<[u8]>::to_vec).collect();
        let predicted = s
            .dict
            .get(b"DecodeParms")
            .ok()
            .and_then(|p| match p {
                Object::Dictionary(d) => d.get(b"Predictor").ok()?.as_i64().ok(),
                _ => None,
            })
            .is_some_and(|p| p > 1);
        let original = std::mem::take(&mut s.content);
        let mut data: Option<Vec<u8>> = None;
        let mut decoded_all = true;
        for f in &filters {
            let input = data.as_deref().unwrap_or(&original);
            let out = match f.as_slice() {
                b"FlateDecode" | b"Fl" => inflate(input, budget),
                b"LZWDecode" | b"LZW" => lzw(input, budget, s.dict.get(b"DecodeParms").ok()),
                b"ASCII85Decode" | b"A85" => Some(ascii85(input)),
                b"ASCIIHexDecode" | b"AHx" => Some(ascii_hex(input)),
                b"RunLengthDecode" | b"RL" => run_length(input, budget),
                // Images' codecs (DCT, JPX, CCITT, JBIG2) and encryption:
                // left as they are; the reader does not inflate them.
                _ => {
                    decoded_all = false;
                    break;
                }
            };
            match out {
                Some(out) if out.len() as u64 <= budget => data = Some(out),
                _ => {
                    let what = format!("its compressed stream {} {} R", id.0, id.1);
                    return Err(Unreadable::Bomb { what: what.into(), limit });
                }
            }
        }
        budget -= data.as_ref().map_or(0, |d| d.len() as u64);
        match data {
            // Inflated to check its size; the reader inflates it again (a
            // predictor, an unknown filter), to no more than that.
            Some(_) if !decoded_all || predicted => s.content = original,
            None => s.content = original,
            Some(data) => {
                s.dict.remove(b"Filter");
                s.dict.remove(b"DecodeParms");
                s.set_content(data);
            }
        }
    }
    Ok(())
}

/// The streams no text comes from: TrueType and OpenType font programs
/// (the reader inflates them only to drop them).
fn unread_streams(doc: &Document) -> HashSet<ObjectId> {
    let mut out = HashSet::new();
    for o in doc.objects.values() {
        let Object::Dictionary(d) = o else { continue };
        if !type_is(d, b"Type", b"FontDescriptor") {
            continue;
        }
        if let Ok(Object::Reference(id)) = d.get(b"FontFile2") {
            out.insert(*id);
        }
    }
    out
}

/// A writer that refuses to grow past `room` bytes.
struct Capped {
    out: Vec<u8>,
    room: u64,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.out.len() + buf.len()) as u64 > self.room {
            return Err(std::io::Error::other("over the inflation limit"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Flate, stopped past `room` bytes (`None`); a damaged tail is cut off,
/// as readers do, and a zlib stream with a bad header is read as raw
/// deflate.
fn inflate(data: &[u8], room: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let read = flate2::read::ZlibDecoder::new(data).take(room + 1).read_to_end(&mut out);
    if read.is_err() && out.is_empty() && data.len() > 2 {
        let _ = flate2::read::DeflateDecoder::new(&data[2..]).take(room + 1).read_to_end(&mut out);
    }
    (out.len() as u64 <= room).then_some(out)
}

/// LZW (PDF's: most significant bit first, early change by default).
fn lzw(data: &[u8], room: u64, params: Option<&Object>) -> Option<Vec<u8>> {
    use weezl::{decode::Decoder, BitOrder};
    let early = match params {
        Some(Object::Dictionary(d)) => d.get(b"EarlyChange").ok().and_then(|v| v.as_i64().ok()) != Some(0),
        _ => true,
    };
    let mut decoder =
        if early { Decoder::with_tiff_size_switch(BitOrder::Msb, 8) } else { Decoder::new(BitOrder::Msb, 8) };
    let mut out = Capped { out: Vec::new(), room };
    let status = decoder.into_stream(&mut out).decode_all(data).status;
    match status {
        Err(e) if e.kind() == std::io::ErrorKind::Other && out.out.len() as u64 + 4096 > room => None,
        _ => Some(out.out),
    }
}

/// ASCII85 (at most 4 bytes per input byte).
fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let (mut group, mut count) = (0u64, 0usize);
    for &c in data {
        match c {
            b'~' => break,
            b'z' if count == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group = group * 85 + u64::from(c - b'!');
                count += 1;
                if count == 5 {
                    out.extend_from_slice(&(group as u32).to_be_bytes());
                    (group, count) = (0, 0);
                }
            }
            _ => {}
        }
    }
    if count > 1 {
        for _ in count..5 {
            group = group * 85 + 84;
        }
        out.extend_from_slice(&(group as u32).to_be_bytes()[..count - 1]);
    }
    out
}

/// ASCIIHex (half the input).
fn ascii_hex(data: &[u8]) -> Vec<u8> {
    let digits: Vec<u8> = data
        .iter()
        .take_while(|&&c| c != b'>')
        .filter_map(|&c| (c as char).to_digit(16).map(|d| d as u8))
        .collect();
    digits.chunks(2).map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0)).collect()
}

/// RunLength, stopped past `room` bytes (`None`).
fn run_length(data: &[u8], room: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let n = data[i] as usize;
        i += 1;
        match n {
            128 => break,
            0..=127 => {
                let end = (i + n + 1).min(data.len());
                out.extend_from_slice(&data[i..end]);
                i = end;
            }
            _ => {
                if let Some(&b) = data.get(i) {
                    out.resize(out.len() + 257 - n, b);
                }
                i += 1;
            }
        }
        if out.len() as u64 > room {
            return None;
        }
    }
    Some(out)
}

// ---- 2. pages -----------------------------------------------------------

/// What a page inherits from the nodes above it.
#[derive(Clone, Default)]
struct Inherited {
    resources: Option<Object>,
    media_box: Option<Object>,
    crop_box: Option<Object>,
    rotate: Option<Object>,
}

impl Inherited {
    fn under(&self, d: &Dictionary) -> Inherited {
        let own = |k: &[u8], up: &Option<Object>| d.get(k).ok().cloned().or_else(|| up.clone());
        Inherited {
            resources: own(b"Resources", &self.resources),
            media_box: own(b"MediaBox", &self.media_box),
            crop_box: own(b"CropBox", &self.crop_box),
            rotate: own(b"Rotate", &self.rotate),
        }
    }
}

/// The pages, each once and in order, under one new flat `Pages` node;
/// each page holds what it inherited and one content stream.
fn flatten_pages(doc: &mut Document) -> Result<Vec<ObjectId>, Unreadable> {
    let root = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"Pages").ok())
        .and_then(|p| p.as_reference().ok())
        .ok_or_else(|| damaged("without a page tree"))?;
    let mut seen = HashSet::new();
    let mut pages: Vec<(ObjectId, Inherited)> = Vec::new();
    let mut stack = vec![(root, 0usize, Inherited::default())];
    while let Some((id, depth, up)) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Ok(d) = doc.get_dictionary(id) else { continue };
        let here = up.under(d);
        let kids = d.get(b"Kids").ok().and_then(|k| resolve(doc, k)).and_then(|k| k.as_array().ok());
        match kids {
            Some(kids) if !type_is(d, b"Type", b"Page") => {
                if depth >= DEPTH {
                    return Err(damaged(&format!("whose page tree nests more than {DEPTH} deep")));
                }
                for kid in kids.iter().rev() {
                    if let Ok(k) = kid.as_reference() {
                        stack.push((k, depth + 1, here.clone()));
                    }
                }
            }
            _ => pages.push((id, here)),
        }
    }
    let node = doc.new_object_id();
    let kids: Vec<Object> = pages.iter().map(|(id, _)| Object::Reference(*id)).collect();
    let mut tree = Dictionary::new();
    tree.set("Type", Object::Name(b"Pages".to_vec()));
    tree.set("Count", pages.len() as i64);
    tree.set("Kids", kids);
    doc.objects.insert(node, Object::Dictionary(tree));
    if let Ok(c) = doc.catalog_mut() {
        c.set("Pages", Object::Reference(node));
    }
    let mut ids = Vec::with_capacity(pages.len());
    for (id, inherited) in pages {
        let content = page_content(doc, id);
        let media_box = inherited
            .media_box
            .filter(|b| is_box(doc, b))
            .unwrap_or_else(|| Object::Array([0, 0, 612, 792].map(Object::Integer).to_vec()));
        let content_id = doc.add_object(pdf_extract::Stream::new(Dictionary::new(), content));
        let Ok(Object::Dictionary(page)) = doc.get_object_mut(id) else { continue };
        page.set("Type", Object::Name(b"Page".to_vec()));
        page.set("Parent", Object::Reference(node));
        page.set("MediaBox", media_box);
        page.set("Contents", Object::Reference(content_id));
        for (key, value) in [
            ("Resources", inherited.resources),
            ("CropBox", inherited.crop_box),
            ("Rotate", inherited.rotate),
        ] {
            match value {
                Some(v) => page.set(key, v),
                None => {
                    page.remove(key.as_bytes());
                }
            }
        }
        ids.push(id);
    }
    Ok(ids)
}

/// Four numbers.
fn is_box(doc: &Document, b: &Object) -> bool {
    resolve(doc, b).and_then(|b| b.as_array().ok()).is_some_and(|a| {
        a.len() == 4
            && a.iter().all(|n| matches!(resolve(doc, n), Some(Object::Integer(_) | Object::Real(_))))
    })
}

/// A page's content streams (inflated already), one after another.
fn page_content(doc: &Document, page: ObjectId) -> Vec<u8> {
    let Ok(d) = doc.get_dictionary(page) else { return Vec::new() };
    let parts: Vec<&Object> = match d.get(b"Contents").ok().and_then(|c| resolve(doc, c)) {
        Some(Object::Array(a)) => a.iter().collect(),
        Some(o) => vec![o],
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for p in parts {
        if let Some(Object::Stream(s)) = resolve(doc, p) {
            out.extend_from_slice(&s.content);
            out.push(b'\n');
        }
    }
    out
}

// ---- 3. forms -----------------------------------------------------------

/// Follows every page's forms as the reader will draw them, and removes
/// the drawings that would loop, nest too deep or name nothing.
fn draw_forms_as_a_tree(doc: &mut Document, pages: &[ObjectId]) -> Result<(), Unreadable> {
    let empty = Dictionary::new();
    let mut walk = Walk { doc, draws: 0, calls: HashMap::new(), cut: HashMap::new() };
    for &page in pages {
        let Ok(d) = walk.doc.get_dictionary(page) else { continue };
        let Ok(content) = d.get(b"Contents").and_then(Object::as_reference) else { continue };
        let resources = dict_in(walk.doc, d, b"Resources").unwrap_or(&empty);
        walk.content(content, resources, &mut Vec::new())?;
    }
    let cut = std::mem::take(&mut walk.cut);
    for (id, ops) in cut {
        let Some(Object::Stream(s)) = doc.objects.get_mut(&id) else { continue };
        let Ok(mut content) = pdf_extract::content::Content::decode(&s.content) else { continue };
        let mut i = 0;
        content.operations.retain(|_| {
            i += 1;
            !ops.contains(&(i - 1))
        });
        if let Ok(bytes) = content.encode() {
            s.set_content(bytes);
        }
    }
    Ok(())
}

/// A content stream's `Do` operations: each one's index and the name it
/// draws (`None`: not a name).
type Calls = Vec<(usize, Option<Vec<u8>>)>;

struct Walk<'a> {
    doc: &'a Document,
    draws: usize,
    /// Each content stream's `Do`s: the operation's index and the name.
    calls: HashMap<ObjectId, Calls>,
    /// The operations to remove, by content stream.
    cut: HashMap<ObjectId, HashSet<usize>>,
}

impl<'a> Walk<'a> {
    fn calls_of(&mut self, id: ObjectId) -> Calls {
        let doc = self.doc;
        self.calls
            .entry(id)
            .or_insert_with(|| {
                let Ok(Object::Stream(s)) = doc.get_object(id) else { return Vec::new() };
                if memchr::memmem::find(&s.content, b"Do").is_none() {
                    return Vec::new();
                }
                let Ok(content) = pdf_extract::content::Content::decode(&s.content) else {
                    return Vec::new();
                };
                content
                    .operations
                    .iter()
                    .enumerate()
                    .filter(|(_, op)| op.operator == "Do")
                    .map(|(i, op)| (i, op.operands.first().and_then(name_of).map(<[u8]>::to_vec)))
                    .collect()
            })
            .clone()
    }

    /// Draws the content stream `id` with `resources`, the forms in
    /// `drawing` being drawn around it.
    fn content(
        &mut self,
        id: ObjectId,
        resources: &'a Dictionary,
        drawing: &mut Vec<ObjectId>,
    ) -> Result<(), Unreadable> {
        let doc = self.doc;
        for (op, name) in self.calls_of(id) {
            let target = name.and_then(|n| {
                let xobjects = dict_in(doc, resources, b"XObject")?;
                let form = xobjects.get(&n).ok()?.as_reference().ok()?;
                match doc.get_object(form).ok()? {
                    Object::Stream(s) => Some((form, s)),
                    _ => None,
                }
            });
            let Some((form, stream)) = target else {
                self.cut.entry(id).or_default().insert(op);
                continue;
            };
            if type_is(&stream.dict, b"Subtype", b"Image") {
                continue;
            }
            if drawing.contains(&form) || drawing.len() >= DEPTH {
                self.cut.entry(id).or_default().insert(op);
                continue;
            }
            self.draws += 1;
            if self.draws > DRAWS {
                return Err(damaged(&format!("that draws its forms more than {DRAWS} times")));
            }
            let own = dict_in(doc, &stream.dict, b"Resources").unwrap_or(resources);
            drawing.push(form);
            self.content(form, own, drawing)?;
            drawing.pop();
        }
        Ok(())
    }
}
