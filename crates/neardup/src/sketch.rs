//! [`Sketch`]: what a document is reduced to, by either method — a SimHash
//! [`Fingerprint`] or a MinHash [`Signature`]. Stores, servers and other
//! front ends that hold documents of either method hold sketches.
//!
//! ```
//! use neardup::detector::Detector;
//! use neardup::minhash::Method;
//! use neardup::Sketch;
//!
//! let d = Detector::preset("minhash")?;
//! let (sketch, features) = d.sign("one two three four five six", false)?;
//! let sketch = sketch.expect("a text with features has a sketch");
//! assert_eq!((sketch.method(), features), (Method::Minhash, 5)); // five word 2-shingles
//! // The text form names the values; parsing needs the method.
//! let text = sketch.to_string();
//! assert_eq!(Sketch::parse(&text, Method::Minhash)?, sketch);
//! assert!(Sketch::parse("ffff0000ffff0000", Method::Simhash)?.fingerprint().is_some());
//! # Ok::<(), neardup::Error>(())
//! ```

use serde::{Serialize, Serializer};

use crate::config::Method;
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::minhash::Signature;

/// A document's fingerprint or signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Sketch {
    /// A SimHash fingerprint.
    Fingerprint(Fingerprint),
    /// A MinHash signature.
    Signature(Signature),
}

impl Sketch {
    /// The method that makes sketches of this kind.
    pub fn method(&self) -> Method {
        match self {
            Sketch::Fingerprint(_) => Method::Simhash,
            Sketch::Signature(_) => Method::Minhash,
        }
    }

    /// The fingerprint, if it is one.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        match self {
            Sketch::Fingerprint(f) => Some(*f),
            Sketch::Signature(_) => None,
        }
    }

    /// The signature, if it is one.
    pub fn signature(&self) -> Option<&Signature> {
        match self {
            Sketch::Fingerprint(_) => None,
            Sketch::Signature(s) => Some(s),
        }
    }

    /// Parses the text form ([`Display`](std::fmt::Display)) of a sketch
    /// of `method`: 16 or 32 hex digits for a fingerprint, 8 per value for
    /// a signature (the two overlap, so the method must be known).
    ///
    /// # Errors
    ///
    /// [`Error::ParseFingerprint`](crate::Error::ParseFingerprint) or
    /// [`Error::ParseSignature`](crate::Error::ParseSignature).
    pub fn parse(s: &str, method: Method) -> Result<Sketch> {
        Ok(match method {
            Method::Simhash => Sketch::Fingerprint(s.parse()?),
            Method::Minhash => Sketch::Signature(Signature::from_hex(s)?),
        })
    }
}

impl From<Fingerprint> for Sketch {
    fn from(f: Fingerprint) -> Sketch {
        Sketch::Fingerprint(f)
    }
}

impl From<Signature> for Sketch {
    fn from(s: Signature) -> Sketch {
        Sketch::Signature(s)
    }
}

impl std::fmt::Display for Sketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sketch::Fingerprint(fp) => fp.fmt(f),
            Sketch::Signature(s) => f.write_str(&s.to_hex()),
        }
    }
}

/// As its text form.
impl Serialize for Sketch {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
