//! The jieba flavour against jieba-rs itself: fixed texts, the sample
//! documents, and generated mixtures of scripts. (The cppjieba flavour is
//! checked against the real cppjieba by tests/compat/run.sh.)

use std::sync::OnceLock;

use proptest::prelude::*;

use super::*;

fn reference() -> &'static jieba_rs::Jieba {
    static J: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    J.get_or_init(jieba_rs::Jieba::new)
}

fn ours(text: &str, hmm: bool) -> Vec<&str> {
    let mut v = Vec::new();
    Segmenter::jieba().cut(text, hmm, &mut v);
    v
}

fn theirs(text: &str, hmm: bool) -> Vec<&str> {
    reference().cut(text, hmm).into_iter().map(|t| t.word).collect()
}

fn same(text: &str) {
    for hmm in [false, true] {
        assert_eq!(ours(text, hmm), theirs(text, hmm), "hmm = {hmm}, text {text:?}");
    }
}

#[test]
fn fixed_texts() {
    for t in [
        "",
        "我们中出了一个叛徒",
        "他来到了网易杭研大厦",
        "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
        "南京市长江大桥",
        "Rust 1.75 版本发布了！git-credential-cache 和 A.13 以及 3.0rc1 与 100% 的 C++ 和 C#。",
        "\r\n\r\n中文\r\nEnglish  混合\t文本 ，。！？",
        "ＡＢＣ全角字符１２３和㐀㐁扩展区𠀀𠀁字",
        "王小二在北京清华大学读书，张力和张华是吉林人，AA制、B超、T恤衫",
        "abc-def_ghi.jkl% 3.14.15-x 1号店 4S店",
        "c++ C++ c# C#x xC# AT&T AT&Tx a.b-c_d%e 100% .5 -x- a AA AAB 4s AB型 B超 T恤 Tx",
        "C+ c+d AT ATM A&T c## x++ +# %% -- ._ 1.2.3 v1.0-rc.2_final%",
    ] {
        same(t);
    }
}

/// The sample documents of testdata/ (and ../shared/data when present).
#[test]
fn sample_documents() {
    let texts = neardup_testkit::sample_texts(3000);
    for t in &texts {
        same(t);
    }
    let docs = texts.len();
    assert!(docs >= 50, "only {docs} documents compared");
}

/// Every way the cppjieba flavour cuts: without the HMM (the rules do not
/// apply), and with it by each cppjieba's rules.
const RULES: [(bool, crate::CppjiebaRules); 3] = [
    (false, crate::CppjiebaRules::V5_6_7),
    (true, crate::CppjiebaRules::V5_6_7),
    (true, crate::CppjiebaRules::Nodejieba3_5_8),
];

/// cppjieba's HMM rules for ASCII, by version, on the cases its v5.6.7
/// change names (a run of single characters goes through the HMM).
#[test]
fn cppjieba_ascii_rules_by_version() {
    use crate::CppjiebaRules::{Nodejieba3_5_8, V5_6_7};
    let seg = Segmenter::cppjieba();
    for (text, new, old) in [
        ("5G3.14", &["5G3.14"][..], &["5", "G3", ".", "14"][..]),
        ("3.14.15", &["3.14", ".", "15"], &["3.14.15"]),
        ("abc1.2x", &["abc1.2", "x"], &["abc1", ".", "2", "x"]),
        ("v2.", &["v2", "."], &["v2", "."]),
        ("12ab", &["12ab"], &["12", "ab"]),
        ("x.5", &["x.5"], &["x", ".", "5"]),
    ] {
        for (rules, want) in [(V5_6_7, new), (Nodejieba3_5_8, old)] {
            let mut got = Vec::new();
            seg.cut_with_rules(text, true, rules, &mut got);
            assert_eq!(got, want, "{text} by {rules:?}");
        }
    }
}

/// The cppjieba flavour's ASCII shortcut on the sample documents.
#[test]
fn cppjieba_ascii_shortcut_on_documents() {
    let seg = Segmenter::cppjieba();
    let mut sc = crate::Scratch::default();
    for t in neardup_testkit::sample_texts(3000) {
        for (hmm, rules) in RULES {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            crate::cppjieba::cut_with::<true>(seg, &t, hmm.then_some(rules), &mut fast, &mut sc);
            crate::cppjieba::cut_with::<false>(seg, &t, hmm.then_some(rules), &mut slow, &mut sc);
            assert_eq!(fast, slow, "hmm = {hmm}, {rules:?}: {}", &t[..t.len().min(80)]);
        }
    }
}

#[test]
fn dictionary_lookups() {
    let j = Segmenter::jieba();
    let c = Segmenter::cppjieba();
    assert!(j.contains("我们") && c.contains("我们"));
    assert!(j.contains("AA制") && !c.contains("AA制"));
    assert!(!j.contains("张力") && c.contains("张力"));
    assert!(!j.contains("") && !j.contains("我们们"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Mixtures of common and rare Han characters, dictionary words, ASCII
    /// words, digits, connectors, punctuation (both widths), whitespace,
    /// kana, extension-block and astral characters.
    #[test]
    fn same_words_as_jieba_rs(parts in proptest::collection::vec(prop_oneof![
        4 => "[的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞㐀𠀀]{1,12}",
        2 => "(中华人民共和国|北京大学|清华大学|南京市长江大桥|网易|杭研|大厦|叛徒|一个|我们|张力|张华|吉林|AA制|B超|T恤衫|1号店|C\\+\\+|C#|AT&T)",
        2 => "[a-zA-Z0-9]{1,8}",
        1 => "(c\\+\\+|c#|4s|4S|AB|AA|AT|T|B|a|C)",
        1 => "[+#&._%\\-]{1,3}",
        1 => "[ \t\r\n，。！？、；：“”（）《》]{1,3}",
        1 => "[ぁ-んァ-ンＡ-Ｚａ-ｚ０-９]{1,4}",
        1 => "(\r\n|é|ß|😀|\u{3000}|〇)",
    ], 0..24)) {
        let text: String = parts.concat();
        for hmm in [false, true] {
            prop_assert_eq!(ours(&text, hmm), theirs(&text, hmm), "hmm = {}", hmm);
        }
    }

    /// The cppjieba flavour's shortcut for ASCII ranges gives the words its
    /// route and HMM give them (which tests/compat/run.sh checks against
    /// cppjieba itself).
    #[test]
    fn cppjieba_ascii_ranges_as_the_route_cuts_them(parts in proptest::collection::vec(prop_oneof![
        3 => "[a-zA-Z0-9]{1,8}",
        2 => "(c\\+\\+|c#|C\\+\\+|C#|AT&T|4s|AA|AT|T恤|B超|卡拉OK|3\\.14|1\\.2\\.3)",
        2 => "[+#&._%\\-,;:!?()'\"/=<>@]{1,3}",
        3 => "[ \t\n，。]{1,2}",
        1 => "[\r\u{b}\u{c}\u{3000}]",
        2 => "[的一是在不了有和人这中大为上个国我以要他]{1,4}",
    ], 0..24)) {
        let text: String = parts.concat();
        let seg = Segmenter::cppjieba();
        for (hmm, rules) in RULES {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            let mut sc = crate::Scratch::default();
            crate::cppjieba::cut_with::<true>(seg, &text, hmm.then_some(rules), &mut fast, &mut sc);
            crate::cppjieba::cut_with::<false>(seg, &text, hmm.then_some(rules), &mut slow, &mut sc);
            prop_assert_eq!(fast, slow, "hmm = {}, {:?}", hmm, rules);
        }
    }

    /// Every character of the text is in exactly one word, for both flavours.
    #[test]
    fn words_cover_the_text(text in "\\PC{0,40}", hmm in any::<bool>()) {
        for seg in [Segmenter::jieba(), Segmenter::cppjieba()] {
            let mut v = Vec::new();
            seg.cut(&text, hmm, &mut v);
            prop_assert_eq!(v.concat(), text.clone());
            prop_assert!(v.iter().all(|w| !w.is_empty()));
        }
    }
}
