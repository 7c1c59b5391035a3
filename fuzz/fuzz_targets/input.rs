//! Arbitrary bytes as a JSONL, CSV or lines input to the CLI's readers
//! (`neardup_io::read_from`, the reader every front end shares), with the first byte choosing the
//! format and the flags (`--text-field`, `--id-field`, `--allow-empty`, a
//! tiny `--max-doc-bytes`, raw records kept): every record is either read
//! or a bad record that names where it is and what is wrong — never a
//! panic, and a kept raw record is always one JSON object. With the top
//! bit of the first byte, the body goes through the decompressing reader
//! first (gzip, zstd, bzip2, xz by their magic bytes, else as it is).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use neardup_io::{read_from, InputFormat, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else { return };
    let format = match sel % 3 {
        0 => InputFormat::Jsonl,
        1 => InputFormat::Csv,
        _ => InputFormat::Lines,
    };
    let opts = ReadOptions {
        paths: Vec::new(),
        format,
        text_field: (sel & 4 != 0).then(|| "body".to_owned()),
        id_field: (sel & 8 != 0).then(|| "key".to_owned()),
        allow_empty: sel & 16 != 0,
        max_doc_bytes: if sel & 32 != 0 { 64 } else { 1 << 20 },
        keep_raw: sel & 64 != 0,
    };
    let reader: Box<dyn std::io::Read> = if sel & 128 != 0 {
        match neardup_io::compressed::decoded(Box::new(Cursor::new(body.to_vec()))) {
            Ok((r, _)) => r,
            Err(_) => return,
        }
    } else {
        Box::new(Cursor::new(body.to_vec()))
    };
    let _ = read_from(reader, "fuzz.in", format, &opts, &mut |item| -> Result<(), neardup_io::Error> {
        match item {
            Ok(r) => {
                assert!(r.origin.starts_with("fuzz.in"), "{}", r.origin);
                if let Some(raw) = &r.raw {
                    // Read back the way the JSONL reader reads a line.
                    let _: serde_json::Map<String, serde_json::Value> =
                        serde_json::from_str(raw).expect("a kept raw record is one JSON object");
                }
            }
            Err(bad) => {
                assert!(bad.origin.starts_with("fuzz.in"), "{}", bad.origin);
                assert!(!bad.message.is_empty());
            }
        }
        Ok(())
    });
});
