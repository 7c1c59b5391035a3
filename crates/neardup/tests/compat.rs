//! The compatibility presets against their peers' published values.

use neardup::hash::{hashlittle2, FeatureHasher};
use neardup::{Fingerprinter, HashConfig};

#[test]
fn yanyiwu_layer_vectors() {
    // yanyiwu/simhash's README: the keywords of its test text with their
    // weights give this fingerprint.
    let fingerprinter = Fingerprinter::preset("yanyiwu").unwrap();
    let keywords =
        [("日军", 318.452), ("集团军", 151.001), ("10", 140.87), ("地区", 106.978), ("攻占", 103.739)];
    assert_eq!(fingerprinter.fingerprint_weighted(keywords).unwrap().as_u64(), Some(15286165794479097173));
    assert_eq!(HashConfig::Lookup3.hash64(b""), 16045690984833335023);
    assert_eq!(hashlittle2(b"", 0, 0), (0xdeadbeef, 0xdeadbeef));
}

#[test]
fn python_simhash_known_values() {
    // Values printed by `Simhash(text).value` of the PyPI package 2.1.2.
    let fingerprinter = Fingerprinter::preset("python-simhash").unwrap();
    assert_eq!(fingerprinter.fingerprint("").to_string(), "e9800998ecf8427e");
}

#[test]
fn keywords_preset_picks_jieba_keywords() {
    let fingerprinter = Fingerprinter::preset("keywords").unwrap();
    let f = fingerprinter.features("今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。后天纽约的天气不好，昨天纽约的天气也不好，北京烤鸭真好吃");
    let names: Vec<&str> = f.iter().map(|(w, _)| w.as_str()).take(3).collect();
    // jieba.analyse.extract_tags(topK=3) gives 北京烤鸭, 纽约, 天气.
    assert_eq!(names, ["北京烤鸭", "纽约", "天气"]);
}
