//! Overlapping byte windows: features of any bytes, not only of text.

/// Overlapping `n`-byte windows of the text's UTF-8 bytes (or of any
/// bytes), leaving out the first `skip_first` and the last `skip_last`
/// windows; see
/// [`TokenizerConfig::ByteGrams`](super::TokenizerConfig::ByteGrams).
///
/// ```
/// use neardup::tokenize::ByteGrams;
///
/// // ferd/simhash's windows: 2 bytes, neither the first nor the last.
/// let ferd = ByteGrams { n: 2, skip_first: 1, skip_last: 1 };
/// let w: Vec<&[u8]> = ferd.windows(b"abcde").collect();
/// assert_eq!(w, [&b"bc"[..], b"cd"]);
/// assert_eq!(ferd.windows(b"abc").count(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteGrams {
    /// Bytes per window (at least 1).
    pub n: usize,
    /// Windows left out at the start.
    pub skip_first: usize,
    /// Windows left out at the end.
    pub skip_last: usize,
}

impl ByteGrams {
    /// The windows of `bytes`, in order, repeats included.
    pub fn windows<'b>(&self, bytes: &'b [u8]) -> impl ExactSizeIterator<Item = &'b [u8]> + 'b {
        let n = self.n.max(1);
        let all = (bytes.len() + 1).saturating_sub(n);
        let end = all.saturating_sub(self.skip_last);
        let start = self.skip_first.min(end);
        (start..end).map(move |p| &bytes[p..p + n])
    }

    /// The distinct windows of `bytes` in byte order, each with how many
    /// times it occurs. Memory grows with the distinct windows (at most
    /// 65,536 for ferd's two bytes), not with the input.
    pub fn counted<'b>(&self, bytes: &'b [u8]) -> Vec<(&'b [u8], u64)> {
        let mut counts: rustc_hash::FxHashMap<&[u8], u64> = rustc_hash::FxHashMap::default();
        for w in self.windows(bytes) {
            *counts.entry(w).or_default() += 1;
        }
        let mut counted: Vec<(&[u8], u64)> = counts.into_iter().collect();
        counted.sort_unstable();
        counted
    }
}

/// A byte window as text, one to one: its UTF-8 as it is but for `\`,
/// which becomes `\\`, and every byte that is not part of a whole UTF-8
/// character as `\xNN`. What explanations and token lists show for
/// [`ByteGrams`] features.
///
/// ```
/// assert_eq!(neardup::tokenize::escape_bytes("中".as_bytes()), "中");
/// assert_eq!(neardup::tokenize::escape_bytes(&"中".as_bytes()[..2]), r"\xe4\xb8");
/// assert_eq!(neardup::tokenize::escape_bytes(br"a\x"), r"a\\x");
/// ```
pub fn escape_bytes(window: &[u8]) -> String {
    let mut out = String::with_capacity(window.len() * 2);
    for chunk in window.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The bytes [`escape_bytes`] wrote `text` from, or `None` if `text` is
/// not something it writes (a lone `\`, or `\x` without two hex digits).
///
/// ```
/// use neardup::tokenize::{escape_bytes, unescape_bytes};
///
/// assert_eq!(unescape_bytes(&escape_bytes(&[0xe4, b'\\', b'a'])), Some(vec![0xe4, b'\\', b'a']));
/// assert_eq!(unescape_bytes(r"\q"), None);
/// ```
pub fn unescape_bytes(text: &str) -> Option<Vec<u8>> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if b.get(i + 1) == Some(&b'x') {
            let hex = std::str::from_utf8(b.get(i + 2..i + 4)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 4;
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_leave_out_the_skipped_ones_and_never_overrun() {
        let g = |n, skip_first, skip_last| ByteGrams { n, skip_first, skip_last };
        let all: Vec<&[u8]> = g(2, 0, 0).windows(b"abcd").collect();
        assert_eq!(all, [&b"ab"[..], b"bc", b"cd"]);
        for len in 0..8 {
            let bytes = &b"abcdefgh"[..len];
            for (n, f, l) in [(1, 0, 0), (2, 1, 1), (3, 2, 0), (4, 0, 3), (9, 0, 0), (2, 9, 9)] {
                let w = g(n, f, l).windows(bytes);
                let expected = (len + 1).saturating_sub(n).saturating_sub(f + l);
                assert_eq!(w.len(), expected, "len {len} n {n} skips {f} {l}");
            }
        }
    }

    #[test]
    fn counted_windows_are_distinct_sorted_and_sum_to_the_windows() {
        let g = ByteGrams { n: 2, skip_first: 0, skip_last: 0 };
        let c = g.counted(b"abababa");
        assert_eq!(c, [(&b"ab"[..], 3), (&b"ba"[..], 3)]);
        assert!(g.counted(b"a").is_empty());
    }

    #[test]
    fn escaping_is_undone_by_unescaping() {
        for a in 0..=255u8 {
            for b in [b'\\', b'x', b'0', 0xe4, 0x80, 0xb8, a] {
                for w in [&[a, b][..], &[b'\\', a, b], &[0xe4, 0xb8, 0xad, a, b, b'x']] {
                    assert_eq!(unescape_bytes(&escape_bytes(w)).as_deref(), Some(w), "{w:?}");
                }
            }
        }
        for bad in ["\\", "a\\xz1", "\\x1", "\\y"] {
            assert_eq!(unescape_bytes(bad), None, "{bad}");
        }
    }
}
