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

/// What the 64 bytes of text from some offset are, a bit each (bit `k`
/// for the byte `k` further on): the words tokenizer steps over whole
/// stretches of ASCII or of ideographs with one look, instead of deciding
/// byte by byte or character by character, where Chinese text (a change
/// of kind every few characters) costs a mispredicted branch each time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// ASCII bytes.
    pub(crate) ascii: u64,
    /// Lead bytes of the ideographs [`ideograph_at`] finds.
    pub(crate) ideograph: u64,
}

/// Bits 0, 3, 6, …, 63: where the characters of a stretch of three-byte
/// characters start.
const EVERY_THIRD: u64 = 0x9249_2492_4924_9249;

impl Window {
    /// The window of `b` at `i`, with the kernels of `level`, if 65 bytes
    /// are left from `i` (the byte after the window decides an E4 lead
    /// byte). At the portable level there is none: building the masks a
    /// byte at a time costs more than the character loop it would save
    /// (Chinese `minhash` 58.9 MB/s against the loop's own speed).
    #[inline(always)]
    pub(crate) fn at(b: &[u8], i: usize, level: crate::simd::Level) -> Option<Window> {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::simd::Level;
            let w: &[u8; WINDOW + 1] = b.get(i..i + WINDOW + 1)?.try_into().expect("65 bytes");
            match level {
                // SAFETY: a level above portable is only ever one the CPU has.
                Level::Avx512 => return Some(unsafe { x86::window_avx512(w) }),
                // SAFETY: as above.
                Level::Avx2 => return Some(unsafe { x86::window_avx2(w) }),
                Level::Portable => {}
            }
        }
        let _ = (b, i, level);
        None
    }

    /// How many ideographs start one after another from the window's
    /// first byte (1 to 21; 0 when none does).
    #[inline(always)]
    pub(crate) fn ideographs(self) -> usize {
        (!self.ideograph & EVERY_THIRD).trailing_zeros() as usize / 3
    }

    /// How many ASCII bytes the window starts with (0 to 64).
    #[inline(always)]
    pub(crate) fn ascii_run(self) -> usize {
        (!self.ascii).trailing_zeros() as usize
    }
}

/// Bytes a [`Window`] describes.
#[cfg(any(test, target_arch = "x86_64"))]
const WINDOW: usize = 64;

/// What the SIMD kernels must give (tests only: see [`Window::at`]).
#[cfg(test)]
fn window_portable(w: &[u8; WINDOW + 1]) -> Window {
    let mut out = Window { ascii: 0, ideograph: 0 };
    for k in 0..WINDOW {
        out.ascii |= u64::from(w[k] < 0x80) << k;
        out.ideograph |= u64::from(ideograph_at(w, k)) << k;
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Window, WINDOW};
    use std::arch::x86_64::*;

    /// Lead bytes E5–E9, or E4 not followed by B7, as signed bytes.
    #[target_feature(enable = "avx2")]
    fn ideographs32(x: __m256i, next: __m256i) -> u32 {
        let e5_e9 = _mm256_and_si256(
            _mm256_cmpgt_epi8(x, _mm256_set1_epi8(0xE4u8 as i8)),
            _mm256_cmpgt_epi8(_mm256_set1_epi8(0xEAu8 as i8), x),
        );
        let e4 = _mm256_andnot_si256(
            _mm256_cmpeq_epi8(next, _mm256_set1_epi8(0xB7u8 as i8)),
            _mm256_cmpeq_epi8(x, _mm256_set1_epi8(0xE4u8 as i8)),
        );
        _mm256_movemask_epi8(_mm256_or_si256(e5_e9, e4)) as u32
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn window_avx2(w: &[u8; WINDOW + 1]) -> Window {
        let half = |off: usize| {
            // SAFETY: off + 33 ≤ 65: both loads are inside `w`.
            let (x, next) = unsafe {
                (
                    _mm256_loadu_si256(w.as_ptr().add(off).cast()),
                    _mm256_loadu_si256(w.as_ptr().add(off + 1).cast()),
                )
            };
            (!(_mm256_movemask_epi8(x) as u32), ideographs32(x, next))
        };
        let ((a0, i0), (a1, i1)) = (half(0), half(32));
        Window { ascii: u64::from(a0) | u64::from(a1) << 32, ideograph: u64::from(i0) | u64::from(i1) << 32 }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn window_avx512(w: &[u8; WINDOW + 1]) -> Window {
        // SAFETY: both 64-byte loads are inside the 65 bytes of `w`.
        let (x, next) =
            unsafe { (_mm512_loadu_si512(w.as_ptr().cast()), _mm512_loadu_si512(w.as_ptr().add(1).cast())) };
        let ascii = !_mm512_movepi8_mask(x);
        let e5_e9 = _mm512_cmpge_epu8_mask(x, _mm512_set1_epi8(0xE5u8 as i8))
            & _mm512_cmple_epu8_mask(x, _mm512_set1_epi8(0xE9u8 as i8));
        let e4 = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(0xE4u8 as i8))
            & _mm512_cmpneq_epi8_mask(next, _mm512_set1_epi8(0xB7u8 as i8));
        Window { ascii, ideograph: e5_e9 | e4 }
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Every level's window is the portable one, and says what
        /// `ideograph_at` and `is_ascii` say byte by byte.
        #[test]
        fn windows_agree_on_every_level(s in "(a|Z|中|文|一|\u{4dc0}|\u{4e00}|é|，|。|\u{3000}|𠀀| |\u{e4b7}){20,80}") {
            let b = s.as_bytes();
            for i in 0..b.len() {
                let Some(w) = b.get(i..i + WINDOW + 1) else { break };
                let w: &[u8; WINDOW + 1] = w.try_into().unwrap();
                let want = window_portable(w);
                for k in 0..WINDOW {
                    proptest::prop_assert_eq!(want.ascii >> k & 1 == 1, b[i + k] < 0x80);
                    proptest::prop_assert_eq!(want.ideograph >> k & 1 == 1, ideograph_at(b, i + k));
                }
                for level in crate::simd::supported() {
                    if level > crate::simd::Level::Portable {
                        proptest::prop_assert_eq!(Window::at(b, i, level), Some(want), "{}", level);
                    }
                }
            }
        }
    }

    #[test]
    fn window_counts() {
        let window = |s: &str, i: usize| window_portable(s.as_bytes()[i..i + WINDOW + 1].try_into().unwrap());
        let s = "中文字abc中".repeat(8);
        assert_eq!((window(&s, 0).ideographs(), window(&s, 0).ascii_run()), (3, 0));
        assert_eq!((window(&s, 9).ideographs(), window(&s, 9).ascii_run()), (0, 3));
        let all = "中".repeat(30);
        assert_eq!(window(&all, 0).ideographs(), 21);
        assert!(Window::at(all.as_bytes(), 30, crate::simd::detected()).is_none());
        assert!(Window::at(all.as_bytes(), 0, crate::simd::Level::Portable).is_none());
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
