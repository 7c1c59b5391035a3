//! `.html`: the text a browser shows, read by html5ever's tokenizer (the
//! HTML standard's tokenization: character references, raw text in
//! scripts and styles, malformed markup as browsers read it): scripts,
//! styles, templates and `<head>` dropped; block elements (paragraphs,
//! headings, list items, table rows, …) each a block; `<br>` a line break,
//! table cells apart by tabs. White space inside a block collapses as a
//! browser collapses it, except in `<pre>`.
//!
//! The tokenizer alone, without the tree builder: text needs no tree, the
//! tokenizer is linear in its input (the tree builder's cost grows with
//! nesting depth times elements, minutes for a page nested 10^5 deep), and
//! the input is fed a chunk at a time so that the deadline holds.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::TokenizerResult;

use super::{Bounded, DocumentKind, Limits, Unreadable};

/// Elements whose content is not shown.
const HIDDEN: &[&str] = &[
    "head", "title", "script", "style", "template", "noscript", "svg", "math", "iframe", "object", "textarea",
];

/// Elements that start and end a block of text.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
];

/// Bytes fed to the tokenizer between looks at the clock.
const CHUNK: usize = 32 << 10;

/// What the text so far is, as tokens arrive.
struct Text<'a> {
    out: Bounded<'a>,
    /// Open elements whose content is hidden, innermost last.
    hidden: Vec<String>,
    /// Depth inside `<pre>`.
    pre: usize,
    /// Why reading stopped (the text grew over the limit).
    stopped: Option<Unreadable>,
}

struct Sink<'a>(RefCell<Text<'a>>);

impl Text<'_> {
    fn push(&mut self, s: &str) {
        if self.stopped.is_none() {
            if let Err(e) = self.out.push(s) {
                self.stopped = Some(e);
            }
        }
    }

    fn tag(&mut self, kind: TagKind, name: &str, self_closing: bool) {
        let hidden = HIDDEN.contains(&name);
        match kind {
            TagKind::StartTag if hidden && !self_closing => self.hidden.push(name.to_owned()),
            // The body shows even where the head was never closed.
            TagKind::StartTag if name == "body" => self.hidden.clear(),
            TagKind::EndTag if hidden => {
                if let Some(i) = self.hidden.iter().rposition(|h| h == name) {
                    self.hidden.truncate(i);
                }
            }
            _ if !self.hidden.is_empty() => {}
            _ => self.shown_tag(kind, name),
        }
    }

    fn shown_tag(&mut self, kind: TagKind, name: &str) {
        if name == "pre" {
            match kind {
                TagKind::StartTag => self.pre += 1,
                TagKind::EndTag => self.pre = self.pre.saturating_sub(1),
            }
        }
        if BLOCKS.contains(&name) {
            self.out.end_block();
        } else if name == "br" {
            self.push("\n");
        } else if kind == TagKind::EndTag && matches!(name, "td" | "th") {
            self.push("\t");
        }
    }

    /// Pushes `t` with runs of white space as one space, none at the start
    /// of a line (except in `<pre>`).
    fn characters(&mut self, t: &str) {
        if !self.hidden.is_empty() {
            return;
        }
        if self.pre > 0 {
            return self.push(t);
        }
        let text = &self.out.text;
        let line_start = text.is_empty() || text.ends_with(['\n', ' ', '\t']);
        if t.starts_with(|c: char| c.is_ascii_whitespace()) && !line_start {
            self.push(" ");
        }
        let mut first = true;
        for word in t.split_ascii_whitespace() {
            if !first {
                self.push(" ");
            }
            self.push(word);
            first = false;
        }
        if !first && t.ends_with(|c: char| c.is_ascii_whitespace()) {
            self.push(" ");
        }
    }
}

impl TokenSink for Sink<'_> {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut text = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) => {
                text.tag(tag.kind, &tag.name, tag.self_closing);
                // What the tree builder would tell the tokenizer: the
                // content of these elements is raw text, not markup.
                if tag.kind == TagKind::StartTag && !tag.self_closing {
                    return match &*tag.name {
                        "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                        "style" | "iframe" | "noembed" | "noframes" | "xmp" | "noscript" => {
                            TokenSinkResult::RawData(RawKind::Rawtext)
                        }
                        "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
                        "plaintext" => TokenSinkResult::Plaintext,
                        _ => TokenSinkResult::Continue,
                    };
                }
            }
            Token::CharacterTokens(t) => text.characters(&t),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

pub(super) fn text(bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    // The tokenizer reads UTF-8; a page in another encoding is refused with
    // what to do rather than read as mojibake.
    let source = std::str::from_utf8(bytes).map_err(|e| {
        Unreadable::Damaged(format!(
            "{} that is not UTF-8 (invalid byte at {}); save it as UTF-8 (for example `iconv -f GB18030 -t UTF-8`)",
            DocumentKind::Html.title(),
            e.valid_up_to()
        ))
    })?;
    let sink = Sink(RefCell::new(Text {
        out: Bounded::new(limits, "its text"),
        hidden: Vec::new(),
        pre: 0,
        stopped: None,
    }));
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let queue = BufferQueue::default();
    let mut rest = source;
    while !rest.is_empty() {
        let mut cut = rest.len().min(CHUNK);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        queue.push_back(StrTendril::from_slice(&rest[..cut]));
        rest = &rest[cut..];
        while let TokenizerResult::Script(()) = tokenizer.feed(&queue) {}
        limits.check_time()?;
        if let Some(e) = tokenizer.sink.0.borrow_mut().stopped.take() {
            return Err(e);
        }
    }
    tokenizer.end();
    let text = tokenizer.sink.0.into_inner();
    match text.stopped {
        Some(e) => Err(e),
        None => Ok(text.out.finish()),
    }
}
