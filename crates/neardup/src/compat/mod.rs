//! Reproductions of other SimHash implementations' own rules that are
//! not a pipeline stage: cppjieba's keyword order (used by the `yanyiwu`
//! preset). The others are stages: the PyPI `simhash` normalizer
//! (`normalize/python_simhash.rs`), ferd/simhash's byte windows
//! (`tokenize/bytes.rs`) and vote rule (`config/vote.rs`).

pub(crate) mod cppjieba;
