//! `.md`: the text of a CommonMark document without its markup: each
//! paragraph, heading, list item, quote and code block a block; inline
//! code kept, link targets and images' addresses dropped, raw HTML
//! dropped.

use pulldown_cmark::{Event, Parser, TagEnd};

use super::{Bounded, DocumentKind, Limits, Unreadable};

pub(super) fn text(bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    let source = std::str::from_utf8(bytes).map_err(|e| {
        Unreadable::Damaged(format!(
            "{} that is not UTF-8 (invalid byte at {}); convert it to UTF-8",
            DocumentKind::Markdown.title(),
            e.valid_up_to()
        ))
    })?;
    let mut out = Bounded::new(limits, "its text");
    for (n, event) in Parser::new(source).enumerate() {
        if n % 4096 == 0 {
            limits.check_time()?;
        }
        match event {
            Event::Text(t) | Event::Code(t) => out.push(&t)?,
            Event::SoftBreak => out.push(" ")?,
            Event::HardBreak => out.push("\n")?,
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::TableRow
                | TagEnd::TableHead,
            ) => out.end_block(),
            Event::End(TagEnd::TableCell) => out.push("\t")?,
            _ => {}
        }
    }
    Ok(out.finish())
}
