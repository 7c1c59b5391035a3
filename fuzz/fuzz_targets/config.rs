//! Arbitrary bytes as a TOML or JSON configuration: an error or a pipeline,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::{Fingerprinter, PipelineConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for parsed in [PipelineConfig::from_toml(text), PipelineConfig::from_json(text)] {
        if let Ok(c) = parsed {
            if let Ok(fingerprinter) = Fingerprinter::new(c) {
                let _ = fingerprinter.fingerprint("fuzz 模糊测试 テスト");
            }
        }
    }
});
