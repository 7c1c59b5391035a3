//! SimHash: weighted feature hashes vote on every bit of a 64- or 128-bit
//! [`Fingerprint`]; fingerprints within `k` bits ([`Radius`]) are near
//! duplicates, found exactly by the pigeonhole index ([`index`]).
//!
//! The method's own pieces live here: the loaded pipeline
//! ([`Fingerprinter`]: the text stages, then weight → select → hash →
//! vote), the vote ([`vote`]) and sparse vectors ([`sparse`]). The value
//! types it shares with the layers below are re-exported: the fingerprint
//! ([`Fingerprint`], [`Bits`]) and the rule ([`Radius`], [`Plan`]) sit at
//! the bottom because the configuration and the index, which knows
//! nothing of text, use them too; the feature hashes ([`hash`]) are a
//! configured stage.

mod fingerprinter;
pub mod sparse;
pub mod vote;

pub use fingerprinter::{Explanation, FeatureChange, FeatureVote, Fingerprinter, FingerprinterBuilder};

pub use crate::fingerprint::{Bits, Fingerprint};
pub use crate::radius::{Pass, Plan, Radius};
pub use crate::{hash, index};
