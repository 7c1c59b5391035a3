//! Golden fingerprints: every preset on real documents. Fingerprints are a
//! file format; if one of these changes, either fix the regression or bump
//! FORMAT_VERSION and say so in CHANGELOG.md, then refresh with
//! `UPDATE_EXPECT=1 cargo test -p neardup --test tests golden`.

use expect_test::expect_file;
use neardup::{Bits, Fingerprinter, FingerprinterBuilder};

use crate::util::all_docs;

fn table(fingerprinter: &Fingerprinter) -> String {
    let mut out = String::new();
    for d in all_docs() {
        out.push_str(&format!("{}\t{}\n", fingerprinter.fingerprint(&d.text), d.id));
    }
    out
}

#[test]
fn golden_default() {
    expect_file!["golden/default.txt"].assert_eq(&table(&Fingerprinter::preset("default").unwrap()));
}

#[test]
fn golden_keywords() {
    expect_file!["golden/keywords.txt"].assert_eq(&table(&Fingerprinter::preset("keywords").unwrap()));
}

#[test]
fn golden_python_simhash() {
    expect_file!["golden/python-simhash.txt"]
        .assert_eq(&table(&Fingerprinter::preset("python-simhash").unwrap()));
}

#[test]
fn golden_yanyiwu() {
    expect_file!["golden/yanyiwu.txt"].assert_eq(&table(&Fingerprinter::preset("yanyiwu").unwrap()));
}

/// The `yanyiwu` preset's values before it followed cppjieba v5.6.7 (the
/// file is golden/yanyiwu.txt as it was), kept by `yanyiwu-nodejieba`.
#[test]
fn golden_yanyiwu_nodejieba() {
    expect_file!["golden/yanyiwu-nodejieba.txt"]
        .assert_eq(&table(&Fingerprinter::preset("yanyiwu-nodejieba").unwrap()));
}

#[test]
fn golden_ferd() {
    expect_file!["golden/ferd.txt"].assert_eq(&table(&Fingerprinter::preset("ferd").unwrap()));
}

#[test]
fn golden_default_128() {
    let fingerprinter = FingerprinterBuilder::new().bits(Bits::B128).build().unwrap();
    expect_file!["golden/default-128.txt"].assert_eq(&table(&fingerprinter));
}

/// The pipeline the stage goldens start from (the `default` preset of
/// neardup 0.1 before the quality evaluation: word 3-shingles), so that
/// they pin the stages, not whatever `default` is today.
fn base() -> FingerprinterBuilder {
    use neardup::{FilterConfig, NormalizerConfig, TokenizerConfig};
    let mut b = FingerprinterBuilder::new();
    b.normalize(vec![NormalizerConfig::Nfkc, NormalizerConfig::Lowercase])
        .filters(vec![FilterConfig::Punctuation])
        .tokenizer(TokenizerConfig::Shingles {
            n: 3,
            over: Box::new(TokenizerConfig::Words { hmm: false, han: Default::default() }),
        });
    b
}

#[test]
fn golden_every_hash() {
    // One short text through every built-in hash, so a drift in any one is caught.
    let mut out = String::new();
    for h in neardup::HashConfig::ALL {
        for bits in [Bits::B64, Bits::B128] {
            if !h.supports(bits) {
                continue;
            }
            let fingerprinter = base().hash(h).bits(bits).build().unwrap();
            let text = "近似重复检测 near-duplicate detection with SimHash, 64 and 128 bits";
            out.push_str(&format!("{} {} {}\n", h.name(), bits, fingerprinter.fingerprint(text)));
        }
    }
    expect_file!["golden/hashes.txt"].assert_eq(&out);
}

#[test]
fn golden_every_stage_variant() {
    // One text through each weighter, selection and tokenizer variant that
    // no preset uses, so a drift in any of them is caught.
    use neardup::select::TieBreak;
    use neardup::tokenize::ShortText;
    use neardup::{FilterConfig, NormalizerConfig, SelectConfig, TokenizerConfig, WeightConfig};
    let text = "近似重复检测：SimHash 把相似的文档映射到相近的指纹。Near-duplicate detection maps similar \
                documents to similar fingerprints; ひらがな カタカナ 한국어 텍스트 3.14 café";
    let words = TokenizerConfig::Words { hmm: true, han: Default::default() };
    let variants: Vec<(&str, FingerprinterBuilder)> = vec![
        ("uniform", {
            let mut b = base();
            b.weight(WeightConfig::Uniform);
            b
        }),
        ("textrank", {
            let mut b = base();
            b.tokenizer(words.clone()).weight(WeightConfig::Textrank {
                window: 5,
                damping: 0.85,
                iterations: 10,
            });
            b
        }),
        ("tfidf-median-top8", {
            let mut b = base();
            b.tokenizer(words.clone())
                .weight(WeightConfig::Tfidf { idf: "jieba".into(), unknown: Default::default() })
                .select(SelectConfig::TopN { n: 8, ties: TieBreak::FirstOccurrence });
            b
        }),
        ("adaptive", {
            let mut b = base();
            b.tokenizer(words.clone()).select(SelectConfig::Adaptive { ratio: 0.5, min: 4, max: 16 });
            b
        }),
        ("char-3grams-stripped", {
            let mut b = base();
            b.normalize(vec![
                NormalizerConfig::Nfkc,
                NormalizerConfig::Lowercase,
                NormalizerConfig::StripPunctuation,
                NormalizerConfig::CollapseWhitespace,
            ])
            .tokenizer(TokenizerConfig::CharNgrams { n: 3, short: ShortText::Skip });
            b
        }),
        ("stopwords-minchars", {
            let mut b = base();
            b.tokenizer(words.clone()).filters(vec![
                FilterConfig::Punctuation,
                FilterConfig::Stopwords { lists: vec!["en".into(), "zh".into()], files: vec![] },
                FilterConfig::MinChars { min: 2 },
            ]);
            b
        }),
    ];
    let mut out = String::new();
    for (name, b) in variants {
        out.push_str(&format!("{name} {}\n", b.build().unwrap().fingerprint(text)));
    }
    // The html normalizer, on a page around the same text.
    let page = format!(
        "<!DOCTYPE html><html><head><title>t</title><script>x()</script></head><body><nav>首页 | 新闻</nav>\
         <article><p>{}</p></article><footer>© 2026</footer></body></html>",
        text.replace('&', "&amp;")
    );
    let mut b = base();
    b.normalize(vec![NormalizerConfig::Html, NormalizerConfig::Nfkc, NormalizerConfig::Lowercase]);
    let html = b.build().unwrap();
    out.push_str(&format!("html-page {}\n", html.fingerprint(&page)));
    out.push_str(&format!("html-text {}\n", html.fingerprint(text)));
    expect_file!["golden/stages.txt"].assert_eq(&out);
}

/// MinHash signatures are a format too: the first 8 values of each
/// document's signature and an FNV-1a fold of all 128 (`-` for a document
/// without features).
#[test]
fn golden_minhash() {
    let minhasher = neardup::minhash::MinHasher::preset("minhash").unwrap();
    let mut out = String::new();
    for d in all_docs() {
        let line = match minhasher.signature(&d.text) {
            Ok(s) => {
                let fold = s.values().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &v| {
                    (h ^ u64::from(v)).wrapping_mul(0x0000_0100_0000_01b3)
                });
                let head: Vec<String> = s.values()[..8].iter().map(|v| format!("{v:08x}")).collect();
                format!("{} {fold:016x}", head.join(" "))
            }
            Err(_) => "-".to_owned(),
        };
        out.push_str(&format!("{line}\t{}\n", d.id));
    }
    expect_file!["golden/minhash.txt"].assert_eq(&out);
}
