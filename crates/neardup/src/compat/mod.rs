//! Reproductions of other SimHash implementations' selection rules, used
//! by the compatibility presets. (The PyPI `simhash` normalizer is a
//! normalizer: `normalize/python_simhash.rs`.)

pub(crate) mod cppjieba;
