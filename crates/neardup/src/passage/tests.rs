//! The passage module's tests.

use super::*;
use crate::Fingerprinter;

fn texts(text: &str) -> Vec<&str> {
    sentences(text, 400).into_iter().map(|r| &text[r]).collect()
}

#[test]
fn english_sentences() {
    assert_eq!(
            texts("Dr. Smith met J. R. Jones at 3.15 p.m. yesterday.  \"Really?!\" he asked. It was (nearly) over.\nNew line"),
            vec![
                "Dr. Smith met J. R. Jones at 3.15 p.m. yesterday.",
                "\"Really?!\"",
                "he asked.",
                "It was (nearly) over.",
                "New line"
            ]
        );
    assert_eq!(texts("One.\n\n\"Two\" three. 'Four' five."), vec!["One.", "\"Two\" three.", "'Four' five."]);
    assert_eq!(texts("Say \"hi.\" Then"), vec!["Say \"hi.\"", "Then"]);
    assert_eq!(texts("<!-- x --> Why?Because. Go!"), vec!["<!-- x --> Why?Because.", "Go!"]);
    assert_eq!(texts("e.g. this, i.e. that. Done"), vec!["e.g. this, i.e. that.", "Done"]);
    assert!(texts("  \n\n  ").is_empty());
    assert!(texts("").is_empty());
}

#[test]
fn chinese_sentences() {
    assert_eq!(
        texts("今天天气很好。我们去公园吧！你来吗？“好的。”他说……然后走了；再见"),
        vec!["今天天气很好。", "我们去公园吧！", "你来吗？", "“好的。”", "他说……", "然后走了；", "再见"]
    );
    assert_eq!(texts("版本3.0发布了.接着"), vec!["版本3.0发布了.", "接着"]);
}

#[test]
fn long_sentences_are_cut_on_char_boundaries() {
    let text = "词".repeat(1000);
    let s = sentences(&text, 400);
    assert_eq!(s.iter().map(|r| text[r.clone()].chars().count()).collect::<Vec<_>>(), vec![400, 400, 200]);
    let words = "word ".repeat(300);
    let s = sentences(&words, 100);
    assert!(s.iter().all(|r| words[r.clone()].chars().count() <= 100), "{s:?}");
    assert!(s.iter().all(|r| words[r.clone()].starts_with("word") && words[r.clone()].ends_with("word")));
    assert_eq!(s.iter().map(|r| words[r.clone()].split(' ').count()).sum::<usize>(), 300);
}

#[test]
fn windows_cover_every_sentence_and_respect_min_chars() {
    let text = "One two three. Four five. Six. Seven eight nine ten. Eleven.";
    let s = sentences(text, 400);
    let cfg = PassageConfig { window: 2, min_chars: 0, ..PassageConfig::default() };
    let p = passages(text, &s, &cfg);
    assert_eq!(p.iter().map(|p| p.sentences.clone()).collect::<Vec<_>>(), vec![0..2, 1..3, 2..4, 3..5]);
    let cfg = PassageConfig { window: 2, min_chars: 30, ..PassageConfig::default() };
    let p = passages(text, &s, &cfg);
    assert!(p.iter().all(|p| text[p.bytes.clone()].chars().count() >= 30 || p.sentences.end == s.len()));
    let covered: std::collections::BTreeSet<usize> = p.iter().flat_map(|p| p.sentences.clone()).collect();
    assert_eq!(covered.len(), s.len());
    // A document shorter than one window is one passage.
    let short = "Just one sentence.";
    assert_eq!(passages(short, &sentences(short, 400), &PassageConfig::default()).len(), 1);
}

#[test]
fn hard_wrapped_lines_stay_one_sentence() {
    assert_eq!(
        texts("The quick brown\nfox jumps over\n  the dog.\nNext one\n\nparagraph two\n--create\n[-]d"),
        vec!["The quick brown\nfox jumps over\n  the dog.", "Next one", "paragraph two", "--create", "[-]d"]
    );
    assert_eq!(
        texts("床前明月光，\n疑是地上霜。\n举头望明月\n低头思故乡"),
        vec!["床前明月光，\n疑是地上霜。", "举头望明月\n低头思故乡"]
    );
    assert_eq!(texts("名字\n\n总览\ntar\n<操作参数>"), vec!["名字", "总览\ntar", "<操作参数>"]);
}

#[test]
fn periods_after_multibyte_closers() {
    assert_eq!(texts("He said “no”. Then left."), vec!["He said “no”.", "Then left."]);
    assert_eq!(texts("「好」. 然后"), vec!["「好」.", "然后"]);
}

proptest::proptest! {
    #[test]
    fn sentences_are_ordered_trimmed_and_on_boundaries(text in "(\\PC|[.。!?？ \n”’」)]){0,200}", max in 1usize..50) {
        let s = sentences(&text, max);
        let mut prev = 0;
        for r in &s {
            proptest::prop_assert!(prev <= r.start && r.start < r.end && r.end <= text.len());
            proptest::prop_assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
            let t = &text[r.clone()];
            proptest::prop_assert_eq!(t, t.trim());
            proptest::prop_assert!(t.chars().count() <= max);
            prev = r.end;
        }
        // No text is lost: everything outside the sentences is whitespace.
        let mut covered = vec![false; text.len()];
        for r in &s {
            covered[r.clone()].iter_mut().for_each(|c| *c = true);
        }
        for (i, c) in text.char_indices() {
            proptest::prop_assert!(covered[i] || c.is_whitespace(), "{:?} at {} lost", c, i);
        }
        let cfg = PassageConfig { window: 1 + max % 4, min_chars: max, max_sentence_chars: max };
        for p in passages(&text, &s, &cfg) {
            proptest::prop_assert!(p.sentences.start < p.sentences.end && p.sentences.end <= s.len());
            proptest::prop_assert_eq!(p.bytes.clone(), s[p.sentences.start].start..s[p.sentences.end - 1].end);
        }
    }
}

#[test]
fn sentence_splitting_is_linear_without_spaces() {
    let text = "了.接".repeat(200_000);
    let t = std::time::Instant::now();
    assert_eq!(sentences(&text, 400).len(), 200_001);
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

/// Real-looking sentences: `n` of them, from a fixed seed.
fn prose(seed: u64, n: usize) -> Vec<String> {
    let words = [
        "river", "stone", "index", "table", "window", "garden", "number", "letter", "paper", "signal",
        "market", "winter", "silver", "forest", "engine", "harbor", "candle", "mirror", "planet", "ladder",
        "meadow", "butter", "violet", "copper", "basket", "dragon", "pepper", "saddle", "thunder", "orange",
    ];
    let mut rng = neardup_testkit::Rng(seed);
    (0..n)
        .map(|_| {
            let len = 8 + rng.next() as usize % 10;
            let s: Vec<&str> = (0..len).map(|_| words[rng.next() as usize % words.len()]).collect();
            let mut s = s.join(" ");
            s[..1].make_ascii_uppercase();
            s + "."
        })
        .collect()
}

fn aligner() -> Aligner {
    Aligner::new(Fingerprinter::preset("default").unwrap())
}

#[test]
fn a_verbatim_copy_is_one_span_with_its_exact_bounds() {
    let host = prose(1, 12);
    let src = prose(2, 12);
    let copied = src[3..9].join(" ");
    let a = format!("{}\n\n{copied}\n\n{}", host[..6].join(" "), host[6..].join(" "));
    let b = src.join(" ");
    let found = aligner().align(&a, &b);
    assert_eq!(found.spans.len(), 1, "{:?}", found.spans);
    assert_eq!(&a[found.spans[0].a.clone()], copied);
    assert_eq!(&b[found.spans[0].b.clone()], copied);
    assert_eq!(found.spans[0].a_sentences.len(), 6);
    assert_eq!(found.spans[0].distance, 0);
}

#[test]
fn light_edits_and_reordering_do_not_split_a_passage() {
    let src = prose(3, 14);
    let b = src.join(" ");
    let host = prose(4, 8).join(" ");
    let whole = src[2..10].join(" ");
    // A word changed every dozen words, a comma dropped, lines wrapped anew.
    let edited: String = whole
        .split(' ')
        .enumerate()
        .map(|(i, w)| if i % 12 == 5 { "changed".to_owned() } else { w.to_owned() })
        .collect::<Vec<_>>()
        .join(" ")
        .replace(". ", ".\n");
    // The same sentences in another order.
    let mut order: Vec<&String> = src[2..10].iter().collect();
    order.swap(0, 5);
    order.swap(2, 7);
    let reordered = order.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
    for copy in [&edited, &reordered] {
        let a = format!("{host}\n\n{copy}\n\nThe end of it all is here.");
        let found = aligner().align(&a, &b);
        assert_eq!(found.spans.len(), 1, "{copy:?}: {:?}", found.spans);
        // Up to 3 words after the last edit (no shared run of 4 words) may
        // fall outside the span.
        let start = a.find(copy.as_str()).unwrap();
        let span = &found.spans[0];
        assert!(
            span.a.start <= start + 30 && span.a.end + 30 >= start + copy.len(),
            "{span:?} {start} {}",
            copy.len()
        );
        let bs = b.find(src[2].as_str()).unwrap();
        assert!(
            span.b.start <= bs + 30 && span.b.end + 30 >= bs + whole.len(),
            "{span:?} {bs} {}",
            whole.len()
        );
    }
}

#[test]
fn passages_from_two_places_are_two_spans_and_unrelated_texts_none() {
    let src = prose(5, 30);
    let b = src.join(" ");
    let (p1, p2) = (src[20..24].join(" "), src[2..6].join(" "));
    let a = format!("{p1}\n\n{p2}");
    let found = aligner().align(&a, &b);
    assert_eq!(found.spans.iter().map(|s| &a[s.a.clone()]).collect::<Vec<_>>(), vec![&p1, &p2]);
    assert_eq!(found.similarity(), 1.0);
    let unrelated = aligner().align(&prose(6, 20).join(" "), &b);
    assert!(unrelated.spans.is_empty(), "{:?}", unrelated.spans);
    assert_eq!(unrelated.similarity(), 0.0);
}

#[test]
fn chinese_is_aligned_by_characters() {
    let src = "数据库在写入之前会先检查约束条件。如果约束不满足，事务就会回滚并报告错误。\
               索引可以加快查询的速度，但是会让写入变慢一些。我们建议只为常用的查询建立索引。";
    let copied = "如果约束不满足，事务就会回滚并报告错误。索引可以加快查询的速度，但是会让写入变慢一些。";
    let a = format!("今天天气很好，我们去公园散步。{}后来下雨了。", copied.replace('，', ""));
    let found = aligner().align(&a, src);
    assert_eq!(found.spans.len(), 1, "{:?}", found.spans);
    assert_eq!(&src[found.spans[0].b.clone()], copied);
    assert_eq!(&a[found.spans[0].a.clone()], copied.replace('，', ""));
}

#[test]
fn repetitive_text_stays_linear() {
    // Every window is a candidate of every other without the cap.
    let words = ["alpha", "beta", "gamma", "delta", "epsilon"];
    let mut x = 7u64;
    let text: String = (0..40_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            words[(x >> 33) as usize % 5]
        })
        .collect::<Vec<_>>()
        .join(" ");
    let aligner = Aligner::new(Fingerprinter::preset("default").unwrap());
    let found = aligner.align(&text, &text);
    assert_eq!((found.similarity(), found.b_similarity()), (1.0, 1.0));
}

#[test]
fn covered_chars_counts_the_union_inside_sentences() {
    let text = "ab cd ef";
    let s = vec![0..2, 3..5, 6..8];
    assert_eq!(covered_chars(text, &s, &[0..5, 3..8]), 6);
    assert_eq!(covered_chars(text, &s, std::slice::from_ref(&(1..4))), 2);
    assert_eq!(covered_chars(text, &s, &[]), 0);
}

#[test]
fn passage_names_parse_from_the_right() {
    assert_eq!(parse_entry_name("doc#1#10-20"), Some(("doc#1", 10..20)));
    assert_eq!(parse_entry_name("a-b#0-5"), Some(("a-b", 0..5)));
    assert_eq!(parse_entry_name("doc#20-10"), None);
    assert_eq!(parse_entry_name("doc"), None);
    assert_eq!(parse_entry_name(&entry_name("x#y", &(3..9))), Some(("x#y", 3..9)));
}
