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

/// ferd/simhash's `simhash:hash/1` (Erlang, MD5 build, its default),
/// transcribed literally from its source as the oracle for the `ferd`
/// preset, which reaches the same bits through the general stages (byte
/// windows, MD5, the vote rule):
///
/// - the features are the 2-byte windows starting at bytes 1 to `len − 3`
///   (its `shingles/4` counts down from `len − 3` while the position is
///   above 0, so the first and the last window are never taken, and a
///   binary of fewer than 4 bytes has none);
/// - a window met `c` times weighs `c` (`DUP_WEIGHT_ADD` = 1);
/// - each window's MD5 digest is 128 bits, most significant first; lane
///   `j` sums `+w` where bit `j` is 1 and `−w` where it is 0;
/// - the result's bit `i` (most significant first) is 1 when lane
///   `127 − i` is at least 0 (`reduce/2` lists the lanes from 127 down, and
///   a sum of 0 gives 1), so no features gives 128 ones.
fn ferd_reference(bytes: &[u8]) -> [u8; 16] {
    use md5::{Digest, Md5};
    let n = bytes.len();
    let mut windows: Vec<[u8; 2]> =
        if n >= 4 { (1..=n - 3).map(|p| [bytes[p], bytes[p + 1]]).collect() } else { Vec::new() };
    windows.sort_unstable();
    let mut lanes = [0i64; 128];
    for group in windows.chunk_by(|a, b| a == b) {
        let w = group.len() as i64;
        let h = u128::from_be_bytes(Md5::digest(group[0]).into());
        for (j, lane) in lanes.iter_mut().enumerate() {
            *lane += if (h >> (127 - j)) & 1 == 1 { w } else { -w };
        }
    }
    let mut out = 0u128;
    for i in 0..128 {
        if lanes[127 - i] >= 0 {
            out |= 1 << (127 - i);
        }
    }
    out.to_be_bytes()
}

fn ferd() -> &'static neardup::Fingerprinter {
    static F: std::sync::OnceLock<neardup::Fingerprinter> = std::sync::OnceLock::new();
    F.get_or_init(|| neardup::Fingerprinter::preset("ferd").unwrap())
}

fn ferd_preset(bytes: &[u8]) -> [u8; 16] {
    ferd().fingerprint_bytes(bytes).unwrap().value().to_be_bytes()
}

/// ferd/simhash's `simhash:hash/1` on 685 inputs (its test suite's and
/// demo's strings, every length 0–39, random bytes, few-letter alphabets,
/// Chinese and English documents), as the Erlang module itself returned
/// them (testdata/compat/ferd_simhash.txt.gz; tests/compat/ferd/ says how
/// it was made): the `ferd` preset and the transcription give them all.
#[test]
fn ferd_simhash_values() {
    use std::io::Read;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/compat/ferd_simhash.txt.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    };
    let (mut n, mut utf8) = (0, 0);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (input, want) = line.split_once(' ').unwrap();
        let input = if input == "-" { Vec::new() } else { hex(input) };
        assert_eq!(
            ferd_preset(&input).to_vec(),
            hex(want),
            "preset, input {} bytes: {line:.80}",
            input.len()
        );
        assert_eq!(ferd_reference(&input).to_vec(), hex(want), "reference: {line:.80}");
        if let Ok(text) = std::str::from_utf8(&input) {
            // Text takes the same path as any bytes.
            assert_eq!(ferd().fingerprint(text).value().to_be_bytes().to_vec(), hex(want));
            utf8 += 1;
        }
        n += 1;
    }
    assert_eq!(n, 685);
    assert_eq!(utf8, 297, "the UTF-8 inputs, also fingerprinted as text");
    // The suite's claims: similar strings closer than unrelated data.
    let f = ferd();
    let v1 = f.fingerprint("My voice is my password.");
    let v2 = f.fingerprint("My voice is my passport.");
    let other = f.fingerprint("Something entirely unrelated to any voice");
    assert_eq!(v1.distance(v2), v2.distance(v1));
    assert_eq!(v1.distance(v1), 0);
    assert!(v1.distance(v2) < v1.distance(other));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// The preset equals the transcription on any bytes: random binaries,
    /// and few-symbol ones where windows repeat and lanes tie.
    #[test]
    fn ferd_preset_equals_the_transcription(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        small in proptest::collection::vec(0u8..3, 0..40),
    ) {
        proptest::prop_assert_eq!(ferd_preset(&bytes), ferd_reference(&bytes));
        proptest::prop_assert_eq!(ferd_preset(&small), ferd_reference(&small));
    }
}
