//! Any UTF-8 text through every preset: no panic, deterministic, and the
//! sparse API agrees with the text pipeline.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use neardup::{presets, Fingerprinter};

fn pipelines() -> &'static Vec<Fingerprinter> {
    static P: OnceLock<Vec<Fingerprinter>> = OnceLock::new();
    P.get_or_init(|| presets::NAMES.iter().map(|n| Fingerprinter::preset(n).unwrap()).collect())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for fingerprinter in pipelines() {
        let a = fingerprinter.fingerprint(text);
        assert_eq!(a, fingerprinter.fingerprint(text));
        let _ = fingerprinter.try_fingerprint(text);
        let features = fingerprinter.features(text);
        assert_eq!(fingerprinter.fingerprint_weighted(features).unwrap(), a);
    }
});
