//! Substring dedup against brute force: every position's L-gram compared
//! with every other, on small corpora, in one suffix array and in many.

use proptest::prelude::*;

use super::*;

/// The removed symbols by brute force: the start `p` of a whole window
/// (no separator) is marked when the same window starts elsewhere (keep
/// none) or earlier (keep first); a marked start covers `l` symbols.
fn brute<S: PartialEq + Copy>(text: &[S], sep: S, l: usize, keep: KeepSpan) -> Vec<bool> {
    let n = text.len();
    let valid = |p: usize| p + l <= n && !text[p..p + l].contains(&sep);
    let mut removed = vec![false; n];
    for p in (0..n).filter(|&p| valid(p)) {
        let other = (0..n).filter(|&q| q != p && valid(q) && text[q..q + l] == text[p..p + l]);
        let hit = match keep {
            KeepSpan::None => other.count() > 0,
            KeepSpan::First => other.filter(|&q| q < p).count() > 0,
        };
        if hit {
            removed[p..p + l].iter_mut().for_each(|r| *r = true);
        }
    }
    removed
}

fn removed_bits(r: &Removal, n: u64) -> Vec<bool> {
    let runs = r.removed.runs(0, n);
    let mut v = vec![false; n as usize];
    for run in runs {
        v[run.start as usize..run.end as usize].iter_mut().for_each(|x| *x = true);
    }
    v
}

fn run(docs: &[String], measure: Measure, keep: KeepSpan, memory: u64) -> (Corpus, Removal) {
    let dir = tempfile::tempdir().unwrap();
    let job = Substrings::new(measure).keep(keep);
    let mut b = job.corpus(dir.path()).unwrap();
    for d in docs {
        b.push(d).unwrap();
    }
    let corpus = b.finish().unwrap();
    let removal = job.find(&corpus, memory, dir.path()).unwrap();
    (corpus, removal)
}

const WORDS: [&str; 8] = ["ab", "abc", "b", "我们", "北京", " ", "。", "x y"];

fn docs() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(proptest::collection::vec(0..WORDS.len(), 0..40), 0..12)
        .prop_map(|ds| ds.into_iter().map(|d| d.into_iter().map(|w| WORDS[w]).collect()).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    /// Bytes: one suffix array, or parts of 4,096 symbols merged (the
    /// smallest part), give the brute force's removed bytes.
    #[test]
    fn bytes_equal_brute_force(docs in docs(), l in 1usize..12, none in any::<bool>(), small in any::<bool>()) {
        let keep = if none { KeepSpan::None } else { KeepSpan::First };
        let (corpus, removal) = run(&docs, Measure::Bytes(l), keep, if small { 0 } else { 1 << 30 });
        let mut text = Vec::new();
        for d in &docs {
            text.extend_from_slice(d.as_bytes());
            text.push(0xFF);
        }
        prop_assert_eq!(removed_bits(&removal, corpus.symbols()), brute(&text, 0xFF, l, keep));
        for (i, d) in docs.iter().enumerate() {
            for s in removal.spans(&corpus, i, d).unwrap() {
                prop_assert!(d.is_char_boundary(s.start) && d.is_char_boundary(s.end), "no broken character");
            }
        }
    }

    /// Tokens: the same on token ids.
    #[test]
    fn tokens_equal_brute_force(docs in docs(), l in 1usize..6, none in any::<bool>()) {
        let keep = if none { KeepSpan::None } else { KeepSpan::First };
        let (corpus, removal) = run(&docs, Measure::Tokens(l), keep, 1 << 30);
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut text = Vec::new();
        for d in &docs {
            for t in tokens::tokens(d) {
                let next = ids.len() as u32 + 1;
                text.push(*ids.entry(d[t].to_owned()).or_insert(next));
            }
            text.push(0);
        }
        prop_assert_eq!(removed_bits(&removal, corpus.symbols()), brute(&text, 0, l, keep));
    }
}

/// Many parts: a corpus of 60 KB cut into parts of 4,096 bytes finds the
/// repeats across parts as one suffix array does.
#[test]
fn parts_merge_to_what_one_suffix_array_finds() {
    let mut rng = neardup_testkit::Rng(7);
    let shared = "The same paragraph of boilerplate text appears in many documents here. ";
    let docs: Vec<String> = (0..300)
        .map(|i| {
            let own: String = (0..40).map(|_| (b'a' + rng.below(26) as u8) as char).collect();
            if i % 3 == 0 {
                format!("{own} {shared} {i}")
            } else {
                own
            }
        })
        .collect();
    let (corpus, one) = run(&docs, Measure::Bytes(30), KeepSpan::First, 1 << 30);
    let (_, many) = run(&docs, Measure::Bytes(30), KeepSpan::First, 0);
    assert_eq!(one.parts(), 1);
    assert!(many.parts() >= 5, "{} parts", many.parts());
    assert_eq!(removed_bits(&one, corpus.symbols()), removed_bits(&many, corpus.symbols()));
    let first = one.spans(&corpus, 0, &docs[0]).unwrap();
    assert!(first.is_empty(), "the first occurrence stays");
    let third = one.spans(&corpus, 3, &docs[3]).unwrap();
    assert_eq!(third.iter().map(|r| &docs[3][r.clone()]).collect::<Vec<_>>(), [shared.trim_end()]);
}

/// Chinese text: spans are cut between characters, never inside one, and
/// what is left is valid text without the repeated sentence.
#[test]
fn chinese_spans_keep_whole_characters() {
    let repeated = "转载请注明出处，本文版权归作者所有。";
    let docs = [format!("今天天气很好。{repeated}我们去公园。"), format!("明天下雨。{repeated}")];
    let (corpus, removal) = run(&docs, Measure::Bytes(10), KeepSpan::First, 1 << 30);
    let spans = removal.spans(&corpus, 1, &docs[1]).unwrap();
    // The 。 before the repeat is repeated too (both copies follow one).
    assert_eq!(cut(&docs[1], &spans), "明天下雨");
    assert!(removal.spans(&corpus, 0, &docs[0]).unwrap().is_empty());
    let (corpus, removal) = run(&docs, Measure::Bytes(7), KeepSpan::None, 1 << 30);
    for (i, d) in docs.iter().enumerate() {
        let left = cut(d, &removal.spans(&corpus, i, d).unwrap());
        assert!(!left.contains("转载请注明出处"), "{left}");
        assert!(left.chars().all(|c| c != '\u{fffd}'));
    }
}
