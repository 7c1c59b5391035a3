//! Reproductions of other SimHash implementations: cppjieba's keyword
//! order (used by the `yanyiwu` preset) and ferd/simhash's whole function.
//! (The PyPI `simhash` normalizer is a normalizer:
//! `normalize/python_simhash.rs`.)

pub(crate) mod cppjieba;
pub mod ferd;
