//! Skipping, 16 bytes at a time, the parts of a text that a normalizer
//! leaves alone. Chinese text mixes three-byte ideographs with ASCII, so a
//! loop that decides character by character mispredicts a branch at
//! nearly every change of kind; a block of 16 bytes that holds only bytes
//! of the kinds a normalizer passes over is checked in one go instead
//! (72 % of the blocks of docs_zh.jsonl are).
//!
//! On x86-64 the check is SSE2, which every x86-64 processor has (no
//! runtime dispatch needed); elsewhere it is the portable loop, which the
//! tests also run against the SSE2 one.

const BLOCK: usize = 16;

/// Whether a CJK ideograph of U+4000–U+9FFF other than the Yijing
/// hexagrams U+4DC0–U+4DFF starts at byte `i` of valid UTF-8, decided on
/// the lead byte (E5–E9, or E4 not followed by B7) without decoding: most
/// of Chinese text. Such a character is a stable starter for NFKC, script
/// Han, a letter (Lo), neither ASCII nor whitespace (a test checks it
/// against the Unicode tables).
#[inline(always)]
pub(crate) fn ideograph_at(b: &[u8], i: usize) -> bool {
    match b[i] {
        0xE5..=0xE9 => true,
        0xE4 => b[i + 1] != 0xB7,
        _ => false,
    }
}

/// What a normalizer passes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// ASCII, continuation bytes, and lead bytes E4–E9 (U+4000–U+9FFF)
    /// not followed by B7 (U+4DC0–U+4DFF, the Yijing hexagrams): what NFKC
    /// leaves alone.
    NfkcStable,
    /// ASCII but capitals, continuation bytes, and lead bytes E3–E9
    /// (U+3000–U+9FFF): what lower case leaves alone.
    Caseless,
}

/// Whether byte `x` (followed by `next`) passes, one at a time.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn passes(kind: Kind, x: u8, next: u8) -> bool {
    match kind {
        Kind::NfkcStable => x < 0xC0 || ((0xE4..=0xE9).contains(&x) && !(x == 0xE4 && next == 0xB7)),
        Kind::Caseless => (x < 0xC0 && !x.is_ascii_uppercase()) || (0xE3..=0xE9).contains(&x),
    }
}

/// Bit k set when `b[k]` does not pass, for the 16 bytes of a block (`b`
/// has 17 bytes: the one after the block matters for E4 B7).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn block_fails_portable(kind: Kind, b: &[u8; BLOCK + 1]) -> u32 {
    (0..BLOCK).fold(0, |m, k| m | u32::from(!passes(kind, b[k], b[k + 1])) << k)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_fails(kind: Kind, b: &[u8; BLOCK + 1]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86-64; the loads read b[0..16] and
    // b[1..17], inside the 17-byte array.
    unsafe {
        let x = _mm_loadu_si128(b.as_ptr().cast());
        let ascii = _mm_cmpgt_epi8(x, _mm_set1_epi8(-1));
        let cont = _mm_cmplt_epi8(x, _mm_set1_epi8(-64));
        let lead = |lo: u8, hi: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)),
                _mm_cmplt_epi8(x, _mm_set1_epi8(hi as i8 + 1)),
            )
        };
        let fails = |ok: __m128i| !(_mm_movemask_epi8(ok) as u32) & 0xFFFF;
        match kind {
            Kind::NfkcStable => {
                let ok = _mm_or_si128(_mm_or_si128(ascii, cont), lead(0xE4, 0xE9));
                let e4 = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(0xE4u8 as i8)));
                let next = _mm_loadu_si128(b.as_ptr().add(1).cast());
                let b7 = _mm_movemask_epi8(_mm_cmpeq_epi8(next, _mm_set1_epi8(0xB7u8 as i8)));
                fails(ok) | (e4 & b7) as u32
            }
            Kind::Caseless => {
                let upper = _mm_and_si128(
                    _mm_cmpgt_epi8(x, _mm_set1_epi8(b'A' as i8 - 1)),
                    _mm_cmplt_epi8(x, _mm_set1_epi8(b'Z' as i8 + 1)),
                );
                let ok = _mm_or_si128(_mm_or_si128(_mm_andnot_si128(upper, ascii), cont), lead(0xE3, 0xE9));
                fails(ok)
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
use block_fails_portable as block_fails;

/// The first character at or after `i` (a character boundary) that does
/// not pass, found 16 bytes at a time; near the end of `b`, where no whole
/// block is left, the first character boundary after the blocks that
/// passed. The caller goes on from there character by character.
#[inline(always)]
pub(crate) fn skip(b: &[u8], mut i: usize, kind: Kind) -> usize {
    // One byte more than the block, to see what follows its last byte.
    while let Some(w) = b.get(i..i + BLOCK + 1) {
        match block_fails(kind, w.try_into().expect("a block")) {
            0 => i += BLOCK,
            // Continuation bytes always pass, so a failing byte is a
            // character's first.
            m => return i + m.trailing_zeros() as usize,
        }
    }
    // The blocks may have ended inside a character whose lead byte passed:
    // step over its continuation bytes.
    while i < b.len() && (0x80..0xC0).contains(&b[i]) {
        i += 1;
    }
    i
}

/// A character loop's companion: where the loop may jump ahead by whole
/// blocks. After a jump it tries again one character later (the one that
/// stopped the blocks); when no block passed, a block later, so text that
/// never passes (Japanese, Russian) is not checked twice per character.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Skipper {
    kind: Kind,
    retry: usize,
}

impl Skipper {
    pub(crate) fn new(kind: Kind) -> Skipper {
        Skipper { kind, retry: 0 }
    }

    /// Where the loop at `i` (a character boundary) may go on from, if
    /// further than `i`.
    #[inline(always)]
    pub(crate) fn jump(&mut self, b: &[u8], i: usize) -> Option<usize> {
        if i < self.retry {
            return None;
        }
        let j = skip(b, i, self.kind);
        if j > i {
            self.retry = j + 1;
            Some(j)
        } else {
            self.retry = i + BLOCK;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// `skip` lands on a character boundary and passes only characters
        /// whose bytes pass; the vector check equals the portable one.
        #[test]
        fn skip_passes_only_what_passes(s in "(a|Z|中|文|一|\u{4dc0}|\u{4e00}|é|，|。|\u{3000}|𠀀| |Σ){0,60}") {
            let b = s.as_bytes();
            for kind in [Kind::NfkcStable, Kind::Caseless] {
                for (from, _) in s.char_indices() {
                    let to = skip(b, from, kind);
                    proptest::prop_assert!(s.is_char_boundary(to) && to >= from);
                    for (k, _) in s[from..to].char_indices() {
                        let at = from + k;
                        let next = b.get(at + 1).copied().unwrap_or(0);
                        proptest::prop_assert!(passes(kind, b[at], next), "{:?} at {}", kind, at);
                    }
                    if let Some(w) = b.get(from..from + BLOCK + 1) {
                        let w: &[u8; BLOCK + 1] = w.try_into().unwrap();
                        proptest::prop_assert_eq!(block_fails(kind, w), block_fails_portable(kind, w));
                    }
                }
            }
        }
    }

    #[test]
    fn every_byte_pair_checks_alike() {
        for kind in [Kind::NfkcStable, Kind::Caseless] {
            for x in 0..=255u8 {
                for next in [0u8, 0x41, 0x80, 0xB7, 0xB8, 0xE4] {
                    // Filler that passes, around the two bytes under test.
                    let fill = b' ';
                    let mut w = [fill; BLOCK + 1];
                    w[7] = x;
                    w[8] = next;
                    let want = passes(kind, x, next) && passes(kind, next, fill);
                    assert_eq!(block_fails(kind, &w) == 0, want, "{kind:?} {x:#x} {next:#x}");
                    assert_eq!(block_fails_portable(kind, &w), block_fails(kind, &w));
                }
            }
        }
    }

    #[test]
    fn ideographs_on_their_lead_byte() {
        for c in (0..0x11_0000u32).filter_map(char::from_u32) {
            let s = c.to_string();
            let want = ('\u{4000}'..='\u{9FFF}').contains(&c) && !('\u{4DC0}'..='\u{4DFF}').contains(&c);
            assert_eq!(ideograph_at(s.as_bytes(), 0), want, "{c:?}");
        }
    }

    #[test]
    fn skips_long_runs() {
        let s = "中文".repeat(20) + "，" + &"中文".repeat(10);
        assert_eq!(skip(s.as_bytes(), 0, Kind::NfkcStable), 120);
        let s = "abc".repeat(20) + "D";
        assert_eq!(skip(s.as_bytes(), 0, Kind::Caseless), 48);
    }
}
