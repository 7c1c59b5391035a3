//! Reproductions of other SimHash implementations, used by the
//! compatibility presets.

pub(crate) mod cppjieba;
pub(crate) mod python;
mod pyunicode_tables;
