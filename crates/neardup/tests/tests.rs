//! The core crate's integration tests, in one binary.

mod compat;
mod golden;
mod properties;
mod util;
