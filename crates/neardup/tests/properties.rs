//! Property tests: determinism, the Hamming metric, the sparse API against
//! the text pipeline, and 128-bit consistency.

use neardup::sparse::simhash_sparse;
use neardup::{Bits, Fingerprint, Fingerprinter, FingerprinterBuilder, HashConfig};
use proptest::prelude::*;
use std::sync::OnceLock;

fn presets() -> &'static Vec<Fingerprinter> {
    static P: OnceLock<Vec<Fingerprinter>> = OnceLock::new();
    P.get_or_init(|| neardup::presets::NAMES.iter().map(|n| Fingerprinter::preset(n).unwrap()).collect())
}

/// Text mixing English, Chinese, kana, Hangul, digits, punctuation and marks.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("the".to_string()),
        Just("Quick".to_string()),
        Just("fox's".to_string()),
        Just("中文".to_string()),
        Just("测试文本".to_string()),
        Just("北京烤鸭".to_string()),
        Just("ひらがな".to_string()),
        Just("한국어".to_string()),
        Just("3.14".to_string()),
        Just("，".to_string()),
        Just("!".to_string()),
        Just("・".to_string()),
        Just("「引用」".to_string()),
        Just("ΟΔΟΣ".to_string()),
        "[a-z]{1,8}",
        "\\PC{1,4}",
    ];
    prop::collection::vec((piece, prop_oneof![Just(" "), Just(""), Just("\n")]), 0..40)
        .prop_map(|v| v.into_iter().map(|(p, s)| p + s).collect())
}

fn fp64() -> impl Strategy<Value = Fingerprint> {
    any::<u64>().prop_map(Fingerprint::from_u64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn deterministic_and_batch_equals_single(t in text()) {
        for fingerprinter in presets() {
            let a = fingerprinter.fingerprint(&t);
            prop_assert_eq!(a, fingerprinter.fingerprint(&t));
            prop_assert_eq!(vec![a], fingerprinter.fingerprint_batch(&[t.as_str()]));
            let ex = fingerprinter.explain(&t);
            prop_assert_eq!(a, ex.fingerprint);
            prop_assert_eq!((a, ex.feature_count), fingerprinter.fingerprint_counted(&t));
        }
    }

    #[test]
    fn changes_are_exactly_the_features_whose_weights_differ(a in text(), b in text()) {
        let f = Fingerprinter::preset("default").unwrap();
        let (ea, eb) = (f.explain(&a), f.explain(&b));
        let changes = ea.changes(&eb);
        prop_assert!(ea.changes(&ea).is_empty());
        let weight = |e: &neardup::Explanation, name: &str| {
            e.features.iter().filter(|v| v.feature == name).map(|v| v.weight).sum::<f64>()
        };
        for c in &changes {
            prop_assert_eq!(c.weight_a, weight(&ea, &c.feature));
            prop_assert_eq!(c.weight_b, weight(&eb, &c.feature));
            prop_assert!(c.weight_a != c.weight_b);
        }
        let gaps: Vec<f64> = changes.iter().map(|c| (c.weight_a - c.weight_b).abs()).collect();
        prop_assert!(gaps.windows(2).all(|w| w[0] >= w[1]), "largest first");
        let named: std::collections::HashSet<&str> = changes.iter().map(|c| c.feature.as_str()).collect();
        for v in ea.features.iter().chain(&eb.features) {
            let differs = weight(&ea, &v.feature) != weight(&eb, &v.feature);
            prop_assert_eq!(differs, named.contains(v.feature.as_str()), "{}", v.feature);
        }
    }

    #[test]
    fn sparse_api_equals_text_pipeline(t in text()) {
        prop_assert_eq!(presets().len(), 6);
        for fingerprinter in presets() {
            let features = fingerprinter.features(&t);
            let c = fingerprinter.config();
            let fp = fingerprinter.fingerprint(&t);
            // The sparse API votes by the classic rule over feature text;
            // `ferd` reverses its bits and shows byte windows escaped.
            if c.vote.is_default() && !c.tokenizer.is_bytes() {
                let sparse =
                    simhash_sparse(c.hash, c.bits, features.iter().map(|(f, w)| (f.as_str(), *w))).unwrap();
                prop_assert_eq!(fp, sparse);
            }
            prop_assert_eq!(fingerprinter.fingerprint_weighted(features).unwrap(), fp);
        }
    }

    #[test]
    fn hamming_is_a_metric(a in fp64(), b in fp64(), c in fp64()) {
        prop_assert_eq!(a.distance(a), 0);
        prop_assert_eq!(a.distance(b), b.distance(a));
        prop_assert!(a.distance(c) <= a.distance(b) + b.distance(c));
        prop_assert!(a.distance(b) <= 64);
        prop_assert_eq!(a.distance(b) == 0, a == b);
        let s = a.similarity(b);
        prop_assert!((0.0..=1.0).contains(&s));
    }

    #[test]
    fn hex_round_trips(v in any::<u128>()) {
        let f = Fingerprint::from_u128(v);
        prop_assert_eq!(f.to_string().parse::<Fingerprint>().unwrap(), f);
        let g = Fingerprint::from_u64(v as u64);
        prop_assert_eq!(g.to_string().parse::<Fingerprint>().unwrap(), g);
    }

    #[test]
    fn f128_is_consistent(t in text()) {
        for h in [HashConfig::Xxh3, HashConfig::Fnv1a, HashConfig::Md5, HashConfig::Siphash] {
            let f64p = FingerprinterBuilder::new().hash(h).build().unwrap();
            let f128p = FingerprinterBuilder::new().hash(h).bits(Bits::B128).build().unwrap();
            let (a, b) = (f64p.fingerprint(&t), f128p.fingerprint(&t));
            prop_assert_eq!(b.bits(), Bits::B128);
            prop_assert!(a.try_distance(b).is_err());
            // The same features vote in both; each lane is the same reference vote.
            let feats = f128p.features(&t);
            prop_assert_eq!(feats.clone(), f64p.features(&t));
            let mut want: u128 = 0;
            for j in 0..128u32 {
                let lane: f64 = feats.iter().map(|(f, w)| {
                    let hv = h.hash(Bits::B128, f.as_bytes());
                    if (hv >> j) & 1 == 1 { *w } else { -*w }
                }).sum();
                if lane > 0.0 { want |= 1 << j; }
            }
            prop_assert_eq!(b.value(), want);
            // MD5's 64-bit hash is the low half of its 128-bit hash, so the
            // low 64 bits of the fingerprints agree.
            if h == HashConfig::Md5 {
                prop_assert_eq!(b.value() as u64, a.as_u64().unwrap());
            }
        }
    }
}

#[test]
fn empty_documents_are_reported() {
    let fingerprinter = Fingerprinter::preset("default").unwrap();
    assert!(fingerprinter.try_fingerprint("").is_err());
    assert!(fingerprinter.try_fingerprint("  ，。！ ").is_err());
    assert_eq!(fingerprinter.fingerprint("").value(), 0);
    let py = Fingerprinter::preset("python-simhash").unwrap();
    assert!(py.try_fingerprint("").is_ok(), "the PyPI package fingerprints the empty feature");
}

#[test]
fn non_finite_weights_are_refused() {
    let fingerprinter = Fingerprinter::preset("default").unwrap();
    assert!(fingerprinter.fingerprint_weighted([("a", f64::NAN)]).is_err());
    assert!(simhash_sparse(HashConfig::Xxh3, Bits::B64, [(1u64, f64::INFINITY)]).is_err());
    assert!(simhash_sparse(HashConfig::Lookup3, Bits::B128, [(1u64, 1.0)]).is_err());
}
