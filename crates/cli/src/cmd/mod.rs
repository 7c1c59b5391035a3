//! One module per subcommand.

pub mod boilerplate;
pub mod class;
pub mod compare;
pub mod config;
pub mod dedup;
pub mod eval;
pub mod fingerprint;
pub mod idf;
pub mod index;
pub mod pairs;
pub mod report;
pub mod serve;
pub mod substrings;
