//! [`Names`]: document ids by internal index id, and back.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Internal id → document id (`None` once deleted) and document id →
/// internal id, each name stored once: the lookup table holds internal ids
/// and hashes the names they point to. Hashing is foldhash with a per-process
/// random seed (fast, and clients cannot choose ids that collide).
#[derive(Default)]
pub(crate) struct Names {
    names: Vec<Option<Box<str>>>,
    table: HashTable<u64>,
    hasher: foldhash::fast::RandomState,
}

impl Names {
    /// From names by internal id (`None` for deleted slots).
    pub(crate) fn from_slots(names: Vec<Option<Box<str>>>) -> Names {
        let live = names.iter().filter(|n| n.is_some()).count();
        let mut n = Names { names, table: HashTable::with_capacity(live), ..Names::default() };
        for i in 0..n.names.len() {
            if let Some(name) = &n.names[i] {
                let h = n.hasher.hash_one(&**name);
                let (names, hasher) = (&n.names, &n.hasher);
                n.table.insert_unique(h, i as u64, |&j| hash_slot(hasher, names, j));
            }
        }
        n
    }

    /// The internal id of a document id.
    #[cfg(test)]
    pub(crate) fn get(&self, id: &str) -> Option<u64> {
        let h = self.hasher.hash_one(id);
        self.table.find(h, |&i| self.names[i as usize].as_deref() == Some(id)).copied()
    }

    /// The document id of an internal id, if live.
    pub(crate) fn name(&self, internal: u64) -> Option<&str> {
        self.names.get(internal as usize)?.as_deref()
    }

    /// Gives `id` (not present) the next internal id.
    pub(crate) fn push(&mut self, id: &str) -> u64 {
        let internal = self.names.len() as u64;
        self.names.push(Some(id.into()));
        let h = self.hasher.hash_one(id);
        let (names, hasher) = (&self.names, &self.hasher);
        self.table.insert_unique(h, internal, |&j| hash_slot(hasher, names, j));
        internal
    }

    /// Forgets `id`; returns its internal id (whose slot stays, empty).
    pub(crate) fn remove(&mut self, id: &str) -> Option<u64> {
        let h = self.hasher.hash_one(id);
        let names = &self.names;
        let entry = self.table.find_entry(h, |&i| names[i as usize].as_deref() == Some(id)).ok()?;
        let (internal, _) = entry.remove();
        self.names[internal as usize] = None;
        Some(internal)
    }

    /// Live names.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Slots, live and deleted.
    pub(crate) fn slots(&self) -> usize {
        self.names.len()
    }

    /// Every slot's name ("" for deleted ones), in internal-id order.
    pub(crate) fn iter_slots(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| n.as_deref().unwrap_or(""))
    }
}

fn hash_slot(hasher: &foldhash::fast::RandomState, names: &[Option<Box<str>>], i: u64) -> u64 {
    // Only live slots are in the table.
    hasher.hash_one(names[i as usize].as_deref().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_both_ways_through_growth_and_removal() {
        let mut n = Names::from_slots(vec![Some("a".into()), None, Some("c".into())]);
        assert_eq!((n.get("a"), n.get("b"), n.get("c")), (Some(0), None, Some(2)));
        for i in 0..10_000 {
            assert_eq!(n.push(&format!("id-{i}")), 3 + i);
        }
        assert_eq!(n.len(), 10_002);
        assert_eq!(n.remove("id-5"), Some(8));
        assert_eq!(n.remove("id-5"), None);
        assert_eq!(n.get("id-5"), None);
        assert_eq!(n.name(8), None);
        assert_eq!(n.get("id-9999"), Some(10_002));
        assert_eq!(n.name(10_002), Some("id-9999"));
        assert_eq!(n.slots(), 10_003);
        assert_eq!(n.iter_slots().filter(|s| s.is_empty()).count(), 2);
        let again = Names::from_slots(n.iter_slots().map(|s| (!s.is_empty()).then(|| s.into())).collect());
        assert_eq!(again.len(), n.len());
        assert_eq!(again.get("id-77"), n.get("id-77"));
    }
}
