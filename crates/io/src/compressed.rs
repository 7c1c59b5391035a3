//! Compressed inputs and outputs: gzip, zstd, bzip2 and xz, recognised by
//! their magic bytes (whatever the file is called) and decompressed on a
//! thread of their own, so that decompression runs beside parsing and
//! signing instead of before them.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// A compression format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (one member or several, as `cat a.gz b.gz` makes).
    Gzip,
    /// Zstandard (one frame or several).
    Zstd,
    /// bzip2.
    Bzip2,
    /// xz.
    Xz,
}

impl Compression {
    /// The format whose magic bytes start `head`.
    pub fn of_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(b"BZh") && head.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
            Compression::Bzip2
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// The format a file name's last extension names (`.gz`, `.zst`,
    /// `.bz2`, `.xz`), if any.
    pub fn of_name(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("gz" | "gzip") => Compression::Gzip,
            Some("zst" | "zstd") => Compression::Zstd,
            Some("bz2") => Compression::Bzip2,
            Some("xz") => Compression::Xz,
            _ => Compression::None,
        }
    }

    /// The extension this format's files end in (`""` for none).
    pub fn extension(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => ".gz",
            Compression::Zstd => ".zst",
            Compression::Bzip2 => ".bz2",
            Compression::Xz => ".xz",
        }
    }

    /// The format's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
        }
    }

    /// A writer that compresses into `inner`: the bytes are cut into
    /// chunks of 4 MiB, each compressed on its own (gzip members, zstd
    /// frames, bzip2 and xz streams: their decoders read the concatenation
    /// as one stream), several at once on every core; `finish` it to write
    /// the last chunk.
    pub fn encoder<W: Write>(self, inner: W) -> io::Result<Encoder<W>> {
        Ok(Encoder { format: self, inner, chunk: Vec::with_capacity(ENCODE_CHUNK), full: Vec::new() })
    }

    /// One chunk compressed on its own.
    fn compress(self, data: &[u8]) -> io::Result<Vec<u8>> {
        let out = Vec::with_capacity(data.len() / 3);
        Ok(match self {
            Compression::None => data.to_vec(),
            // Level 6: gzip's own default.
            Compression::Gzip => {
                let mut e = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
                e.write_all(data)?;
                e.finish()?
            }
            // Level 3: zstd's default.
            Compression::Zstd => zstd::stream::encode_all(data, 3)?,
            Compression::Bzip2 => {
                let mut e = bzip2::write::BzEncoder::new(out, bzip2::Compression::default());
                e.write_all(data)?;
                e.finish()?
            }
            Compression::Xz => {
                let mut e = liblzma::write::XzEncoder::new(out, 6);
                e.write_all(data)?;
                e.finish()?
            }
        })
    }
}

/// Bytes of input per compressed chunk.
const ENCODE_CHUNK: usize = 4 << 20;

/// A compressing writer ([`Compression::encoder`]).
pub struct Encoder<W: Write> {
    format: Compression,
    inner: W,
    chunk: Vec<u8>,
    full: Vec<Vec<u8>>,
}

impl<W: Write> Encoder<W> {
    /// Compresses the full chunks, in parallel, and writes them in order.
    fn drain(&mut self) -> io::Result<()> {
        use rayon::prelude::*;
        let format = self.format;
        let packed: Vec<io::Result<Vec<u8>>> = self.full.par_iter().map(|c| format.compress(c)).collect();
        self.full.clear();
        for p in packed {
            self.inner.write_all(&p?)?;
        }
        Ok(())
    }

    /// Writes the rest and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.chunk.is_empty() {
            let last = std::mem::take(&mut self.chunk);
            self.full.push(last);
        }
        self.drain()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.format == Compression::None {
            return self.inner.write(buf);
        }
        let n = buf.len().min(ENCODE_CHUNK - self.chunk.len());
        self.chunk.extend_from_slice(&buf[..n]);
        if self.chunk.len() == ENCODE_CHUNK {
            let full = std::mem::replace(&mut self.chunk, Vec::with_capacity(ENCODE_CHUNK));
            self.full.push(full);
            if self.full.len() >= 2 * rayon::current_num_threads() {
                self.drain()?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `reader`, decompressed if its first bytes are a compression format's
/// magic: the decompressed bytes come from a thread of their own. Returns
/// the format found.
///
/// # Errors
///
/// The first bytes cannot be read.
pub fn decoded(reader: Box<dyn Read + Send>) -> io::Result<(Box<dyn Read + Send>, Compression)> {
    let mut r = BufReader::with_capacity(1 << 16, reader);
    let head = loop {
        match r.fill_buf() {
            Ok(h) => break h,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    let found = Compression::of_magic(head);
    let decoder: Box<dyn Read + Send> = match found {
        Compression::None => return Ok((Box::new(r), found)),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(r)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(r)?),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(r)),
        Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(r)),
    };
    Ok((Box::new(Threaded::spawn(Box::new(Named { inner: decoder, format: found }))), found))
}

/// A decoder whose errors say which format failed and what it means.
struct Named {
    inner: Box<dyn Read + Send>,
    format: Compression,
}

impl Read for Named {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                "ends in the middle (a truncated file?)".to_string()
            } else {
                format!("is corrupt ({e})")
            };
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the {} stream {what}; the records before this point were read, the rest is \
                     lost: fetch or re-compress the file",
                    self.format.name()
                ),
            )
        })
    }
}

/// Bytes per chunk handed from the decompressing thread.
const CHUNK: usize = 1 << 20;
/// Bytes per read of the decoder.
const PIECE: usize = 1 << 14;

/// A reader fed by a thread that reads another reader ahead, a chunk at a
/// time (two chunks in flight; emptied chunks go back to be refilled).
pub struct Threaded {
    full: Receiver<io::Result<Vec<u8>>>,
    empty: SyncSender<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Threaded {
    /// Starts the thread that reads `inner`.
    pub fn spawn(mut inner: Box<dyn Read + Send>) -> Threaded {
        let (full_tx, full) = sync_channel::<io::Result<Vec<u8>>>(2);
        let (empty, empty_rx) = sync_channel::<Vec<u8>>(4);
        std::thread::spawn(move || {
            loop {
                let mut buf = empty_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK));
                buf.clear();
                buf.resize(CHUNK, 0);
                let mut n = 0;
                let mut failed = None;
                while n < CHUNK {
                    // Small reads: a decoder that fails loses the output of
                    // the read that failed, so the records before a corrupt
                    // point are read up to at most this much before it.
                    let end = (n + PIECE).min(CHUNK);
                    match inner.read(&mut buf[n..end]) {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                buf.truncate(n);
                let end = n == 0 || failed.is_some();
                // A send fails when the reader was dropped: stop.
                if n > 0 && full_tx.send(Ok(buf)).is_err() {
                    return;
                }
                if let Some(e) = failed {
                    let _ = full_tx.send(Err(e));
                    return;
                }
                if end {
                    return; // dropping the sender is the end of the stream
                }
            }
        });
        Threaded { full, empty, chunk: Vec::new(), pos: 0, done: false }
    }
}

impl Read for Threaded {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            if self.done {
                return Ok(0);
            }
            match self.full.recv() {
                Ok(Ok(next)) => {
                    let old = std::mem::replace(&mut self.chunk, next);
                    let _ = self.empty.try_send(old);
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// `path` without its compression extension (`corpus.jsonl.zst` →
/// `corpus.jsonl`), to tell the format of what is inside.
pub fn inner_name(path: &Path) -> &Path {
    match Compression::of_name(path) {
        Compression::None => path,
        _ => path.file_stem().map(Path::new).unwrap_or(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(c: Compression, data: &[u8]) -> Vec<u8> {
        let mut e = c.encoder(Vec::new()).unwrap();
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn every_format_decodes_by_its_magic() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        for c in
            [Compression::None, Compression::Gzip, Compression::Zstd, Compression::Bzip2, Compression::Xz]
        {
            let packed = roundtrip(c, &data);
            assert_eq!(Compression::of_magic(&packed), c, "{c:?}");
            let (mut r, found) = decoded(Box::new(io::Cursor::new(packed))).unwrap();
            assert_eq!(found, c);
            let mut back = Vec::new();
            r.read_to_end(&mut back).unwrap();
            assert!(back == data, "{c:?}");
        }
    }

    #[test]
    fn concatenated_members_are_all_read() {
        for c in [Compression::Gzip, Compression::Zstd, Compression::Bzip2, Compression::Xz] {
            let mut packed = roundtrip(c, b"a\n");
            packed.extend(roundtrip(c, b"b\n"));
            let (mut r, _) = decoded(Box::new(io::Cursor::new(packed))).unwrap();
            let mut back = String::new();
            r.read_to_string(&mut back).unwrap();
            assert_eq!(back, "a\nb\n", "{c:?}");
        }
    }

    #[test]
    fn a_truncated_or_corrupt_stream_is_an_error_not_an_end() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        for c in [Compression::Gzip, Compression::Zstd, Compression::Bzip2, Compression::Xz] {
            let packed = roundtrip(c, &data);
            let cut = packed[..packed.len() / 2].to_vec();
            let (mut r, _) = decoded(Box::new(io::Cursor::new(cut))).unwrap();
            let mut back = Vec::new();
            let err = r.read_to_end(&mut back).expect_err(&format!("{c:?} truncated"));
            assert!(err.to_string().contains(c.name()), "{c:?}: {err}");
            let mut bad = packed.clone();
            let mid = bad.len() / 2;
            for b in &mut bad[mid..mid + 64] {
                *b ^= 0x5a;
            }
            let (mut r, _) = decoded(Box::new(io::Cursor::new(bad))).unwrap();
            let mut back = Vec::new();
            assert!(r.read_to_end(&mut back).is_err(), "{c:?} corrupt");
        }
    }

    #[test]
    fn inner_names() {
        assert_eq!(inner_name(Path::new("a/c4.jsonl.gz")), Path::new("c4.jsonl"));
        assert_eq!(inner_name(Path::new("a/c4.jsonl")), Path::new("a/c4.jsonl"));
        assert_eq!(Compression::of_name(Path::new("x.JSONL.ZST")), Compression::Zstd);
    }
}
