//! The core crate's integration tests, in one binary.

mod compat;
mod golden;
mod index;
mod minhash;
mod properties;
mod util;
