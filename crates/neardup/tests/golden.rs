//! Golden fingerprints: every preset on real documents. Fingerprints are a
//! file format; if one of these changes, either fix the regression or bump
//! FORMAT_VERSION and say so in CHANGELOG.md, then refresh with
//! `UPDATE_EXPECT=1 cargo test -p neardup --test tests golden`.

use expect_test::expect_file;
use neardup::{Bits, Fingerprinter, FingerprinterBuilder};

use crate::util::all_docs;

fn table(fp: &Fingerprinter) -> String {
    let mut out = String::new();
    for d in all_docs() {
        out.push_str(&format!("{}\t{}\n", fp.fingerprint(&d.text), d.id));
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

#[test]
fn golden_default_128() {
    let fp = FingerprinterBuilder::new().bits(Bits::B128).build().unwrap();
    expect_file!["golden/default-128.txt"].assert_eq(&table(&fp));
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
            let fp = FingerprinterBuilder::new().hash(h).bits(bits).build().unwrap();
            let text = "近似重复检测 near-duplicate detection with SimHash, 64 and 128 bits";
            out.push_str(&format!("{} {} {}\n", h.name(), bits, fp.fingerprint(text)));
        }
    }
    expect_file!["golden/hashes.txt"].assert_eq(&out);
}
