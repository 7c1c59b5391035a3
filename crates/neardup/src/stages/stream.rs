//! The text stages in one pass: each token, as the tokenizer finds it, is
//! filtered and joined into its shingles, and each feature goes straight
//! to the method (hashed into a signature or votes) — no list of tokens,
//! of spans or of features is written and read again.
//!
//! The features are exactly those of [`Stages::with_features`], in the
//! same order (a property test checks it for every tokenizer).

use super::Stages;
use crate::filter::{Filters, TokenFilter};
use crate::tokenize::{TokenSink, Tokenizer, TokenizerConfig};

/// Features are handed on in chunks of this many: each later stage (the
/// hash, the bins or votes) then runs as a tight loop over a chunk that
/// is still in the nearest cache. Handing on each feature as it is made
/// interleaves the stages and measured 0.96× on Chinese `minhash`.
const CHUNK: usize = 256;

/// A [`TokenSink`] that filters each token and hands on the features —
/// the tokens themselves, or the shingles they end — a chunk at a time.
struct Features<'s, 't, F> {
    filters: Option<&'s Filters>,
    /// Tokens per shingle.
    n: usize,
    /// The chunk's tokens, when they are the features (`n` = 1).
    tokens: Vec<&'t str>,
    /// The tokens since the last chunk, and the `n` − 1 before them,
    /// joined by spaces (`n` > 1).
    joined: String,
    /// Where each of the last `n` tokens starts in `joined`, the newest
    /// at `slot`.
    starts: Vec<usize>,
    slot: usize,
    /// The chunk's shingles, as byte ranges of `joined`.
    spans: Vec<(usize, usize)>,
    /// Tokens kept so far (`n` > 1).
    kept: usize,
    /// Features handed on.
    count: usize,
    /// jieba's words of a Han run, before they are passed on one by one.
    cut: Vec<&'t str>,
    /// An empty buffer for a chunk's shingles, kept between chunks.
    slices: Vec<&'static str>,
    f: F,
}

impl<'t, F: FnMut(&[&str])> Features<'_, 't, F> {
    #[inline(always)]
    fn token(&mut self, token: &'t str) {
        if self.filters.is_some_and(|f| !f.keep(token)) {
            return;
        }
        if self.n <= 1 {
            self.tokens.push(token);
            if self.tokens.len() == CHUNK {
                self.flush();
            }
            return;
        }
        if self.kept > 0 {
            self.joined.push(' ');
        }
        self.slot = if self.slot + 1 == self.n { 0 } else { self.slot + 1 };
        self.starts[self.slot] = self.joined.len();
        self.joined.push_str(token);
        self.kept += 1;
        if self.kept >= self.n {
            // The oldest of the last n tokens is the next slot's.
            let first = self.starts[if self.slot + 1 == self.n { 0 } else { self.slot + 1 }];
            self.spans.push((first, self.joined.len()));
            if self.spans.len() == CHUNK {
                self.flush();
            }
        }
    }

    /// Hands on the chunk, then drops from `joined` what the next shingle
    /// does not need (all but the last `n` − 1 tokens).
    fn flush(&mut self) {
        if self.n <= 1 {
            self.count += self.tokens.len();
            (self.f)(&self.tokens);
            self.tokens.clear();
            return;
        }
        self.count += self.spans.len();
        let mut slices: Vec<&str> = std::mem::take(&mut self.slices);
        slices.extend(self.spans.iter().map(|&(a, b)| &self.joined[a..b]));
        (self.f)(&slices);
        self.slices = erase(slices);
        self.spans.clear();
        let keep_from =
            self.starts[if self.slot + 2 >= self.n { self.slot + 2 - self.n } else { self.slot + 2 }];
        if self.n > 1 && self.kept >= self.n {
            self.joined.drain(..keep_from);
            for s in &mut self.starts {
                *s = s.saturating_sub(keep_from);
            }
        }
    }

    /// Ends the text: fewer than `n` tokens make one shingle of them all.
    /// Returns the number of features and the buffers, emptied.
    fn finish(mut self) -> (usize, Buffers) {
        if self.n > 1 && self.kept > 0 && self.kept < self.n {
            self.spans.push((0, self.joined.len()));
        }
        if !self.tokens.is_empty() || !self.spans.is_empty() {
            self.flush();
        }
        let mut joined = self.joined;
        joined.clear();
        let mut spans = self.spans;
        spans.clear();
        let bufs = Buffers {
            joined,
            starts: self.starts,
            spans,
            tokens: erase(self.tokens),
            cut: erase(self.cut),
            slices: self.slices,
        };
        (self.count, bufs)
    }
}

/// The buffers of [`Features`], kept per thread between texts so that a
/// short text (most of a Chinese corpus) allocates nothing.
#[derive(Default)]
struct Buffers {
    joined: String,
    starts: Vec<usize>,
    spans: Vec<(usize, usize)>,
    tokens: Vec<&'static str>,
    cut: Vec<&'static str>,
    slices: Vec<&'static str>,
}

impl Buffers {
    /// Whether a huge text grew the buffers past what a thread should keep.
    fn is_huge(&self) -> bool {
        const KEEP: usize = 1 << 20;
        self.joined.capacity() > KEEP || self.cut.capacity() > KEEP / 16
    }
}

thread_local! {
    static BUFFERS: std::cell::Cell<Buffers> = std::cell::Cell::new(Buffers::default());
}

/// An emptied `Vec` of slices, kept for slices of any lifetime: collected
/// into one of the same layout, it keeps its allocation.
fn erase(mut v: Vec<&str>) -> Vec<&'static str> {
    v.clear();
    v.into_iter().map(|_| "").collect()
}

impl<'t, F: FnMut(&[&str])> TokenSink<'t> for Features<'_, 't, F> {
    #[inline(always)]
    fn push(&mut self, token: &'t str) {
        self.token(token);
    }

    fn cut_han(&mut self, run: &'t str, hmm: bool) {
        let mut cut = std::mem::take(&mut self.cut);
        cut.clear();
        cut.cut_han(run, hmm);
        for &w in &cut {
            self.token(w);
        }
        self.cut = cut;
    }
}

impl Stages {
    /// Hands the features of normalized text `norm` to `f` in chunks, as
    /// they are made — the same features, in the same order, as
    /// [`with_features`](Self::with_features) gives for the text — and
    /// returns how many there were. Byte windows are not tokens: a
    /// byte-grams pipeline gives none here.
    pub(crate) fn for_each_chunk(&self, norm: &str, f: impl FnMut(&[&str])) -> usize {
        let n = self.shingle.max(1);
        let mut bufs = BUFFERS.take();
        bufs.starts.clear();
        bufs.starts.resize(n, 0);
        bufs.tokens.reserve(if n == 1 { CHUNK } else { 0 });
        bufs.spans.reserve(if n == 1 { 0 } else { CHUNK });
        let mut sink = Features {
            filters: self.has_filters().then_some(&self.filters),
            n,
            tokens: bufs.tokens,
            joined: bufs.joined,
            starts: bufs.starts,
            slot: n - 1,
            spans: bufs.spans,
            kept: 0,
            count: 0,
            cut: bufs.cut,
            slices: bufs.slices,
            f,
        };
        match &self.tokenizer {
            TokenizerConfig::Words { hmm, han } => {
                crate::tokenize::Words { hmm: *hmm, han: *han }.tokens_into(norm, &mut sink)
            }
            TokenizerConfig::ByteGrams { .. } => {}
            other => {
                let mut tokens = Vec::with_capacity(norm.len() / 4 + 1);
                other.tokenize(norm, &mut tokens);
                for t in tokens {
                    sink.token(t);
                }
            }
        }
        let (count, bufs) = sink.finish();
        if !bufs.is_huge() {
            BUFFERS.set(bufs);
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PipelineConfig;
    use crate::filter::FilterConfig;
    use crate::tokenize::HanSplit;
    use proptest::prelude::*;

    /// Pipelines of every tokenizer, shingle size and filter.
    fn pipelines() -> Vec<Stages> {
        let mut configs: Vec<PipelineConfig> = crate::presets::NAMES
            .iter()
            .chain(&crate::presets::MINHASH_NAMES)
            .map(|n| crate::presets::config(n).unwrap())
            .collect();
        let words = |hmm, han| TokenizerConfig::Words { hmm, han };
        for (n, over) in [
            (1, words(false, HanSplit::Jieba)),
            (3, words(true, HanSplit::Jieba)),
            (2, words(false, HanSplit::Chars)),
            (5, words(false, HanSplit::Chars)),
            (2, TokenizerConfig::Jieba { hmm: true }),
            (3, TokenizerConfig::CharNgrams { n: 2, short: Default::default() }),
        ] {
            let mut c = crate::presets::config("minhash").unwrap();
            c.tokenizer = if n == 1 { over } else { TokenizerConfig::Shingles { n, over: Box::new(over) } };
            configs.push(c.clone());
            c.filters = vec![
                FilterConfig::Punctuation,
                FilterConfig::MinChars { min: 2 },
                FilterConfig::Stopwords { lists: vec!["en".into(), "zh".into()], files: vec![] },
            ];
            configs.push(c);
        }
        configs.into_iter().map(|c| Stages::load(c).unwrap()).collect()
    }

    fn chunked(stages: &Stages, text: &str) -> (Vec<String>, usize) {
        let norm = stages.normalize(text);
        let mut got = Vec::new();
        let mut chunks = 0;
        let count = stages.for_each_chunk(&norm, |c| {
            assert!(!c.is_empty() && c.len() <= CHUNK);
            chunks += 1;
            got.extend(c.iter().map(|f| f.to_string()));
        });
        assert_eq!(count, got.len());
        (got, chunks)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The chunks hold exactly the features `with_features` gives, in
        /// order, for texts short and long (many chunks, so the shingle
        /// buffer is cut between them).
        #[test]
        fn chunks_are_the_features(
            parts in proptest::collection::vec("(中文|我们|的|是|。|，|Rust|the|and|, |\\. | |\n|3\\.14|Ｆｕｌｌ|ひらがな|한국어|é|𠀋|〇|_|'){1,8}", 1..120),
            repeat in 1usize..24,
        ) {
            let text = parts.concat().repeat(repeat);
            for stages in pipelines() {
                if stages.tokenizer().is_bytes() {
                    continue;
                }
                let want = stages.with_features(&text, |f| f.iter().map(|s| s.to_string()).collect::<Vec<_>>());
                let (got, _) = chunked(&stages, &text);
                prop_assert_eq!(got, want, "{:?}", stages.config().tokenizer);
            }
        }
    }

    #[test]
    fn empty_and_short_texts() {
        for stages in pipelines().iter().filter(|s| !s.tokenizer().is_bytes()) {
            for text in ["", " ", "。", "a", "中", "中文", "the cat", "中文 the cat sat"] {
                let want =
                    stages.with_features(text, |f| f.iter().map(|s| s.to_string()).collect::<Vec<_>>());
                assert_eq!(chunked(stages, text).0, want, "{text:?} {:?}", stages.config().tokenizer);
            }
        }
        let minhash = Stages::load(crate::presets::config("minhash").unwrap()).unwrap();
        let long = "中文".repeat(1000);
        let want: Vec<String> =
            (0..1999).map(|i| if i % 2 == 0 { "中 文" } else { "文 中" }.to_string()).collect();
        // 1,999 shingles: seven full chunks and one of 207.
        assert_eq!(chunked(&minhash, &long), (want, 8));
    }
}
