//! The core crate's integration tests, in one binary.

mod compat;
mod dedup;
mod disk;
mod golden;
mod index;
mod minhash;
mod outofcore;
mod properties;
mod util;
