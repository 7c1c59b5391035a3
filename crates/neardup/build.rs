//! Lays out jieba's IDF table (`data/jieba_idf.txt.gz`) at compile time as
//! `src/weight/idf_layout.rs` describes, into `OUT_DIR`, so that the
//! `keywords` and `yanyiwu` presets load it for nothing (parsing and
//! hashing its 270,132 lines took ~110 ms of every start).

use std::env;
use std::fs;
use std::io::Read;
use std::path::PathBuf;

#[path = "src/weight/idf_layout.rs"]
mod idf_layout;

fn main() {
    println!("cargo:rerun-if-changed=data/jieba_idf.txt.gz");
    println!("cargo:rerun-if-changed=src/weight/idf_layout.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let gz = fs::read("data/jieba_idf.txt.gz").expect("data/jieba_idf.txt.gz is in the crate");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .expect("the bundled IDF table is gzip of UTF-8");
    let (layout, mean) = idf_layout::parse(&text)
        .unwrap_or_else(|(line, message)| panic!("data/jieba_idf.txt.gz:{line}: {message}"));
    for (name, bytes) in [
        ("words", &layout.words),
        ("values", &layout.values),
        ("ctrl", &layout.ctrl),
        ("slots", &layout.slots),
    ] {
        fs::write(out.join(format!("jieba_idf_{name}.bin")), bytes).expect("OUT_DIR is writable");
    }
    let rs = format!(
        "static WORDS: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/jieba_idf_words.bin\"));\n\
         static VALUES: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/jieba_idf_values.bin\"));\n\
         static CTRL: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/jieba_idf_ctrl.bin\"));\n\
         static SLOTS: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/jieba_idf_slots.bin\"));\n\
         const HOME: usize = {};\n\
         const LEN: usize = {};\n\
         const MEDIAN: f64 = {:?};\n\
         const MEAN: f64 = {:?};\n",
        layout.home, layout.len, layout.median, mean
    );
    fs::write(out.join("jieba_idf.rs"), rs).expect("OUT_DIR is writable");
}
