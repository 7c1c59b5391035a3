//! Libraries held in memory: [`MemLibrary`] (a class of papers checked
//! against each other) and [`Joined`] (two libraries as one: a class and
//! the library on disk).

use rayon::prelude::*;

use super::{Library, LibraryKeys};
use crate::disk::postings::MemPostings;
use crate::{Error, Result};

/// Documents keyed in memory (the same keys a library on disk gives).
pub struct MemLibrary {
    keys: LibraryKeys,
    postings: MemPostings,
    docs: Vec<(String, String)>,
}

impl MemLibrary {
    /// `docs` (id, text) keyed by `keys`; document `i` is sequence `i`.
    pub fn new(keys: LibraryKeys, docs: Vec<(String, String)>) -> MemLibrary {
        let keyed: Vec<Vec<u64>> = docs.par_iter().map(|(_, t)| keys.of(t)).collect();
        let mut postings = MemPostings::default();
        for (seq, k) in keyed.iter().enumerate() {
            postings.add(seq as u64, k);
        }
        MemLibrary { keys, postings, docs }
    }

    /// Its documents, in order.
    pub fn docs(&self) -> &[(String, String)] {
        &self.docs
    }
}

impl Library for MemLibrary {
    fn keys(&self) -> LibraryKeys {
        self.keys
    }

    fn lookup(&self, key: u64, cap: usize, out: &mut Vec<u64>) -> Result<()> {
        self.postings.lookup(key, cap, out);
        Ok(())
    }

    fn id(&self, seq: u64) -> Result<Option<String>> {
        Ok(self.docs.get(seq as usize).map(|d| d.0.clone()))
    }

    fn text(&self, seq: u64) -> Result<Option<String>> {
        Ok(self.docs.get(seq as usize).map(|d| d.1.clone()))
    }
}

/// The sequence bit that says a document is the second library's.
const SECOND: u64 = 1 << 63;

/// Two libraries keyed alike, looked up as one (the second's sequence
/// numbers carry the top bit).
pub struct Joined<'a> {
    first: &'a dyn Library,
    second: &'a dyn Library,
}

impl<'a> Joined<'a> {
    /// `first` and `second` as one.
    ///
    /// # Errors
    ///
    /// Libraries keyed differently (their keys would not meet).
    pub fn new(first: &'a dyn Library, second: &'a dyn Library) -> Result<Joined<'a>> {
        if first.keys() != second.keys() {
            return Err(Error::Config(format!(
                "the two libraries are keyed differently ({:?} and {:?})",
                first.keys(),
                second.keys()
            )));
        }
        Ok(Joined { first, second })
    }

    fn of(&self, seq: u64) -> (&dyn Library, u64) {
        if seq & SECOND != 0 {
            (self.second, seq & !SECOND)
        } else {
            (self.first, seq)
        }
    }
}

impl Library for Joined<'_> {
    fn keys(&self) -> LibraryKeys {
        self.first.keys()
    }

    fn lookup(&self, key: u64, cap: usize, out: &mut Vec<u64>) -> Result<()> {
        self.first.lookup(key, cap, out)?;
        let from = out.len();
        self.second.lookup(key, cap, out)?;
        for s in &mut out[from..] {
            *s |= SECOND;
        }
        Ok(())
    }

    fn id(&self, seq: u64) -> Result<Option<String>> {
        let (lib, seq) = self.of(seq);
        lib.id(seq)
    }

    fn text(&self, seq: u64) -> Result<Option<String>> {
        let (lib, seq) = self.of(seq);
        lib.text(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passage::find_in_library;

    const A: &str = "the quick brown fox jumps over the lazy dog near the river bank every single morning";
    const B: &str = "a completely different text about cooking rice and washing clothes at home on sundays";

    #[test]
    fn joined_libraries_find_both_sides_by_their_own_ids() {
        let keys = LibraryKeys::default();
        let one = MemLibrary::new(keys, vec![("a".into(), A.into())]);
        let two = MemLibrary::new(keys, vec![("x".into(), "nothing".into()), ("b".into(), B.into())]);
        let both = Joined::new(&one, &two).unwrap();
        let query = format!("{A}. And then: {B}.");
        let hits = find_in_library(&both, &query).unwrap();
        let mut ids: Vec<String> = hits.iter().map(|h| both.id(h.seq).unwrap().unwrap()).collect();
        ids.sort();
        assert_eq!(ids, ["a", "b"]);
        for h in &hits {
            let text = both.text(h.seq).unwrap().unwrap();
            assert!(text == A || text == B);
        }
        let other = LibraryKeys { seed_words: 5, ..keys };
        let three = MemLibrary::new(other, Vec::new());
        assert!(Joined::new(&one, &three).is_err());
    }
}
