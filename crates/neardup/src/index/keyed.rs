//! [`KeyedIndex`]: a [`TableIndex`] whose entries are named by the caller's
//! keys (document ids, URLs, Python objects), with insert, replace and
//! remove by key.

use std::borrow::Borrow;
use std::hash::Hash;

use super::slots::Slots;
use super::table_index::{TableIndex, TableIndexBuilder};
use super::{HammingIndex, Id, Match};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::radius::{Pass, Plan, Radius, UNKNOWN_FEATURES};

/// Fingerprints by key over a [`TableIndex`]. Each key gets an internal id
/// (a *slot*, never reused while the index lives) under which its entry is
/// indexed; the index keeps, per slot, the key, the fingerprint and the
/// document's feature count (for a length-dependent [`Radius`]), so that
/// replacing or removing a key is a lookup, never a read of every entry.
///
/// Keys and slots are a [`Slots`] (keys stored once, hashed with foldhash
/// under a per-process random seed, so clients cannot choose keys that
/// collide). A slot is never reused: a removed entry stays in its segment,
/// marked dead, until a merge.
///
/// Built [`for_radius`](Self::for_radius), it answers a length-dependent
/// rule ([`query_rule`](Self::query_rule)) the way `neardup dedup` does: one
/// table index per pass of the radius's [`Plan`] — pass 0 over every entry
/// at the smallest k, then one over the short documents at each larger k —
/// so a long document's query never reads the large-k tables, and only
/// short documents pay for them in memory.
///
/// ```
/// use neardup::index::{KeyedIndex, TableIndex};
/// use neardup::Fingerprint;
///
/// let mut index: KeyedIndex<Box<str>> = KeyedIndex::new(TableIndex::builder().k(3).build()?);
/// index.insert("a".into(), Fingerprint::from_u64(0b1111), 40)?;
/// index.insert("b".into(), Fingerprint::from_u64(0b0111), 40)?;
/// index.insert("a".into(), Fingerprint::from_u64(0xffff_0000), 40)?; // replaces a
/// let near: Vec<(&str, u32)> =
///     index.query(Fingerprint::from_u64(0b1111), 3)?.into_iter().map(|(k, d)| (&**k, d)).collect();
/// assert_eq!(near, [("b", 1)]);
/// assert!(index.remove("b")? && !index.contains("b"));
/// assert_eq!(index.len(), 1);
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone)]
pub struct KeyedIndex<K> {
    /// Pass 0's index (every entry).
    index: TableIndex,
    /// The rule the passes serve, and the indexes of passes 1.. (entries
    /// short enough for each), when built for a length-dependent radius.
    rule: Option<RuleTables>,
    /// The caller's keys by slot.
    slots: Slots<K>,
    /// Slot → fingerprint value.
    fps: Vec<u128>,
    /// Slot → feature count ([`UNKNOWN_FEATURES`] if not known).
    features: Vec<u32>,
}

/// The tables of the later passes of a radius's [`Plan`] — one
/// [`TableIndex`] per pass after the first, each over the entries short
/// enough for it — and the query that searches every pass a document takes
/// part in at its own k (pass 0's tables, over every entry, are the
/// caller's). [`KeyedIndex`] holds one; an index file stores them
/// ([`IndexFile::later`](super::file::IndexFile::later)) so that a query by
/// the rule needs no table built at open.
#[derive(Clone, Debug)]
pub struct RuleTables {
    plan: Plan,
    later: Vec<(Pass, TableIndex)>,
}

impl<K> std::fmt::Debug for KeyedIndex<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyedIndex")
            .field("len", &self.slots.len())
            .field("slots", &self.slots.slots())
            .finish()
    }
}

impl<K: Hash + Eq> KeyedIndex<K> {
    /// An empty keyed index over an empty `index`.
    ///
    /// # Panics
    ///
    /// If `index` is not empty (use [`from_slots`](Self::from_slots)).
    pub fn new(index: TableIndex) -> KeyedIndex<K> {
        assert!(index.is_empty(), "KeyedIndex::new takes an empty index");
        KeyedIndex { index, rule: None, slots: Slots::new(), fps: Vec::new(), features: Vec::new() }
    }

    /// A keyed index over `index`, whose entry ids are slots into `keys`
    /// (`None` for removed slots), as an index file or a snapshot holds
    /// them; `features` per slot if known. A key named by several slots
    /// (an index file built from records with repeated ids) keeps its last
    /// slot, as if inserted again; the earlier entries are removed.
    ///
    /// # Errors
    ///
    /// An entry whose id has no key, two entries of one id, or a feature
    /// column of another length.
    pub fn from_slots(index: TableIndex, keys: Vec<Option<K>>, features: Option<Vec<u32>>) -> Result<Self> {
        let features = features.unwrap_or_else(|| vec![UNKNOWN_FEATURES as u32; keys.len()]);
        if features.len() != keys.len() {
            return Err(Error::Config(format!("{} feature counts for {} slots", features.len(), keys.len())));
        }
        let mut fps = vec![0u128; keys.len()];
        let mut seen = vec![false; keys.len()];
        for (id, fp) in index.entries() {
            let slot = usize::try_from(id).ok().filter(|&s| s < keys.len() && keys[s].is_some());
            let Some(slot) = slot else {
                return Err(Error::Config(format!("index entry {id} has no key")));
            };
            if std::mem::replace(&mut seen[slot], true) {
                return Err(Error::Config(format!("index entry {id} is there twice")));
            }
            fps[slot] = fp.value();
        }
        if let Some(slot) = (0..keys.len()).find(|&s| keys[s].is_some() && !seen[s]) {
            return Err(Error::Config(format!("key of slot {slot} has no index entry")));
        }
        let (slots, superseded) = Slots::from_keys(keys);
        let mut k = KeyedIndex { index, rule: None, slots, fps, features };
        // A key stored in several slots keeps its last one.
        for old in superseded {
            let fp = Fingerprint::new(k.fps[old as usize], k.index.bits());
            k.index.remove_entry(old, fp)?;
        }
        Ok(k)
    }

    /// An empty keyed index for `radius`: one table index per pass of its
    /// [`Plan`] (see the type's documentation), each made by `builder` with
    /// the pass's k.
    ///
    /// # Errors
    ///
    /// An impossible layout for some pass.
    pub fn for_radius(radius: &Radius, builder: TableIndexBuilder) -> Result<Self> {
        let plan = Plan::new(radius);
        let mut k = KeyedIndex::new(builder.clone().k(plan.passes()[0].k).build()?);
        k.rule = Some(RuleTables::build(plan, &builder, Vec::new())?);
        Ok(k)
    }

    /// This index, with the later passes of `radius`'s plan built over the
    /// entries short enough for them (what a snapshot, which holds pass 0,
    /// needs on load). Pass 0's tables are kept as they are.
    ///
    /// # Errors
    ///
    /// An impossible layout for some pass.
    pub fn with_radius(mut self, radius: &Radius, builder: TableIndexBuilder) -> Result<Self> {
        let plan = Plan::new(radius);
        // A fixed radius has no later pass: nothing to read.
        let entries: Vec<(Id, Fingerprint, usize)> = if plan.passes().len() > 1 {
            self.index.entries().into_iter().map(|(id, fp)| (id, fp, self.features(id))).collect()
        } else {
            Vec::new()
        };
        self.rule = Some(RuleTables::build(plan, &builder, entries)?);
        Ok(self)
    }

    /// This index with `tables` as its later passes (what an index file
    /// stores, [`RuleTables::from_tables`]), built over these slots.
    pub fn with_rule_tables(mut self, tables: RuleTables) -> Self {
        self.rule = Some(tables);
        self
    }

    /// The later passes' tables, when built for a radius.
    pub fn rule_tables(&self) -> Option<&RuleTables> {
        self.rule.as_ref()
    }

    /// The radius the passes were built for, if any.
    pub fn radius(&self) -> Option<&Radius> {
        self.rule.as_ref().map(|r| r.plan.radius())
    }

    /// The slot of `key`, if present.
    pub fn slot<Q>(&self, key: &Q) -> Option<u64>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slots.slot(key)
    }

    /// Whether `key` is present.
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slot(key).is_some()
    }

    /// The fingerprint of `key`, if present.
    pub fn get<Q>(&self, key: &Q) -> Option<Fingerprint>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slot(key).map(|s| Fingerprint::new(self.fps[s as usize], self.index.bits()))
    }

    /// The key of a slot, if live.
    pub fn key(&self, slot: u64) -> Option<&K> {
        self.slots.key(slot)
    }

    /// The feature count of a slot ([`UNKNOWN_FEATURES`] if not known).
    pub fn features(&self, slot: u64) -> usize {
        self.features.get(slot as usize).map_or(UNKNOWN_FEATURES, |&f| f as usize)
    }

    /// Gives `key` (absent) the next slot; the caller indexes it.
    fn name(&mut self, key: K, fp: Fingerprint, features: usize) -> u64 {
        // Slots are never released here, so each new key takes the next one.
        let slot = self.slots.assign(key);
        debug_assert_eq!(slot as usize, self.fps.len());
        self.fps.push(fp.value());
        self.features.push(features.min(UNKNOWN_FEATURES) as u32);
        slot
    }

    /// Forgets `key`; removes its index entry unless its slot is
    /// `pending_from` or later (named but not indexed yet). Returns the slot.
    fn forget<Q>(&mut self, key: &Q, pending_from: u64) -> Result<Option<u64>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let Some(slot) = self.slots.remove(key) else { return Ok(None) };
        if slot < pending_from {
            let fp = Fingerprint::new(self.fps[slot as usize], self.index.bits());
            self.index.remove_entry(slot, fp)?;
            let features = self.features(slot);
            for (pass, index) in self.rule.iter_mut().flat_map(|r| &mut r.later) {
                if pass.includes(features) {
                    index.remove_entry(slot, fp)?;
                }
            }
        }
        Ok(Some(slot))
    }

    /// Adds `key` (replacing its entry if present) with a document of
    /// `features` features ([`UNKNOWN_FEATURES`] if not known).
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn insert(&mut self, key: K, fp: Fingerprint, features: usize) -> Result<()> {
        super::check_width(self.index.bits(), fp)?;
        self.forget(key.borrow(), u64::MAX)?;
        let slot = self.name(key, fp, features);
        self.index.insert(slot, fp)?;
        for (pass, index) in self.rule.iter_mut().flat_map(|r| &mut r.later) {
            if pass.includes(features) {
                index.insert(slot, fp)?;
            }
        }
        Ok(())
    }

    /// Adds many `(key, fingerprint, features)` with one bulk load (one new
    /// segment); a key repeated in the batch keeps its last entry.
    ///
    /// # Errors
    ///
    /// A fingerprint of another width (then nothing is added).
    pub fn insert_batch(&mut self, items: Vec<(K, Fingerprint, usize)>) -> Result<()> {
        let bits = self.index.bits();
        if let Some(&(_, fp, _)) = items.iter().find(|i| i.1.bits() != bits) {
            super::check_width(bits, fp)?;
        }
        let first = self.slots.slots() as u64;
        let mut pending: Vec<Option<Fingerprint>> = Vec::with_capacity(items.len());
        for (key, fp, features) in items {
            if let Some(old) = self.forget(key.borrow(), first)? {
                if old >= first {
                    pending[(old - first) as usize] = None;
                }
            }
            self.name(key, fp, features);
            pending.push(Some(fp));
        }
        let entries: Vec<(Id, Fingerprint)> =
            pending.into_iter().enumerate().filter_map(|(i, fp)| Some((first + i as u64, fp?))).collect();
        for (pass, index) in self.rule.iter_mut().flat_map(|r| &mut r.later) {
            let features = &self.features;
            let short =
                entries.iter().filter(|e| pass.includes(features[e.0 as usize] as usize)).copied().collect();
            index.bulk_load(short)?;
        }
        self.index.bulk_load(entries)
    }

    /// Removes `key`; returns whether it was present.
    ///
    /// # Errors
    ///
    /// Only if the index is inconsistent with its slots (never for entries
    /// it indexed itself).
    pub fn remove<Q>(&mut self, key: &Q) -> Result<bool>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        Ok(self.forget(key, u64::MAX)?.is_some())
    }

    /// The index entries within `k` of `fp`, as [`Match`]es of slots,
    /// sorted by distance then slot.
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn query_slots(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        self.index.query(fp, k)
    }

    /// The keys within `k` of `fp` with their distances, nearest first
    /// (ties: the earlier inserted).
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<(&K, u32)>> {
        Ok(self.keyed(self.index.query(fp, k)?))
    }

    /// The keys that are near duplicates of a document of `features`
    /// features and fingerprint `fp` by `radius`'s rule (see
    /// [`Radius::accepts`]), nearest first.
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn query_rule(&self, fp: Fingerprint, features: usize, radius: &Radius) -> Result<Vec<(&K, u32)>> {
        Ok(self.keyed(self.query_rule_slots(fp, features, radius)?))
    }

    /// [`query_rule`](Self::query_rule) as [`Match`]es of slots, sorted by
    /// distance then slot. With the radius the index was built for, each
    /// pass the document takes part in is searched at its own k; otherwise
    /// pass 0's tables are searched at the radius's largest k (exact, but
    /// slow beyond their layout).
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn query_rule_slots(&self, fp: Fingerprint, features: usize, radius: &Radius) -> Result<Vec<Match>> {
        let features_of = |id: Id| self.features(id);
        match &self.rule {
            Some(rule) => rule.query_by(&self.index, radius, fp, features, features_of),
            None => RuleTables::query_scanning(&self.index, radius, fp, features, features_of),
        }
    }

    /// Matches of slots as keys (dropping slots removed meanwhile).
    pub fn keyed(&self, found: impl IntoIterator<Item = Match>) -> Vec<(&K, u32)> {
        found.into_iter().filter_map(|m| Some((self.key(m.id)?, m.distance))).collect()
    }

    /// Live keys.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no key is present.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Slots, live and removed.
    pub fn slots(&self) -> usize {
        self.slots.slots()
    }

    /// Every slot's key (`None` for removed ones), in slot order: what an
    /// index file stores as its names.
    pub fn slot_keys(&self) -> impl Iterator<Item = Option<&K>> {
        self.slots.keys()
    }

    /// The keys and their slots.
    pub fn keys(&self) -> &Slots<K> {
        &self.slots
    }

    /// Every slot's feature count, in slot order.
    pub fn slot_features(&self) -> &[u32] {
        &self.features
    }

    /// Pass 0's index, which holds every entry (for its layout, stats and
    /// snapshots).
    pub fn index(&self) -> &TableIndex {
        &self.index
    }

    /// Every pass's index, pass 0 first (for stats and merges).
    pub fn indexes(&self) -> impl Iterator<Item = &TableIndex> {
        std::iter::once(&self.index).chain(self.rule.iter().flat_map(|r| r.later.iter().map(|(_, i)| i)))
    }

    /// Pass `i`'s index, to merge its segments ([`TableIndex::apply_merge`]);
    /// entries must not be added or removed through it.
    pub fn index_mut(&mut self, i: usize) -> Option<&mut TableIndex> {
        match i {
            0 => Some(&mut self.index),
            i => self.rule.as_mut()?.later.get_mut(i - 1).map(|(_, index)| index),
        }
    }

    /// Bytes held by every pass's index.
    pub fn memory_bytes(&self) -> usize {
        self.indexes().map(TableIndex::memory_bytes).sum()
    }
}

impl RuleTables {
    /// Tables for the later passes of `plan` over `entries` (id,
    /// fingerprint, features), each made by `builder` at the pass's k.
    ///
    /// # Errors
    ///
    /// An impossible layout for some pass.
    pub fn build(
        plan: Plan,
        builder: &TableIndexBuilder,
        entries: Vec<(Id, Fingerprint, usize)>,
    ) -> Result<RuleTables> {
        let mut later = Vec::new();
        for &pass in &plan.passes()[1..] {
            let short: Vec<(Id, Fingerprint)> =
                entries.iter().filter(|e| pass.includes(e.2)).map(|e| (e.0, e.1)).collect();
            let b = builder.clone().k(pass.k);
            let index = if short.is_empty() { b.build()? } else { b.build_from(short)? };
            later.push((pass, index));
        }
        Ok(RuleTables { plan, later })
    }

    /// The tables `tables` (as [`tables`](Self::tables) gave them) for the
    /// later passes of `radius`'s plan.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when they are not one table index per later pass,
    /// each exact up to the pass's k.
    pub fn from_tables(radius: &Radius, tables: Vec<TableIndex>) -> Result<RuleTables> {
        let plan = Plan::new(radius);
        let passes = &plan.passes()[1..];
        if tables.len() != passes.len() {
            return Err(Error::Config(format!(
                "{} tables of later passes for a rule ({radius}) of {} later passes",
                tables.len(),
                passes.len()
            )));
        }
        if let Some((p, t)) = passes.iter().zip(&tables).find(|(p, t)| t.layout().k < p.k) {
            return Err(Error::Config(format!(
                "the tables of the pass at k = {} are exact only up to k = {}",
                p.k,
                t.layout().k
            )));
        }
        let later = passes.iter().copied().zip(tables).collect();
        Ok(RuleTables { plan, later })
    }

    /// The rule the tables serve.
    pub fn radius(&self) -> &Radius {
        self.plan.radius()
    }

    /// The later passes' tables, in pass order.
    pub fn tables(&self) -> impl Iterator<Item = &TableIndex> {
        self.later.iter().map(|(_, t)| t)
    }

    /// Adds entries (id, fingerprint, features) to the passes they are
    /// short enough for (one bulk load each).
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn bulk_load(&mut self, entries: &[(Id, Fingerprint, usize)]) -> Result<()> {
        for (pass, index) in &mut self.later {
            let short: Vec<(Id, Fingerprint)> =
                entries.iter().filter(|e| pass.includes(e.2)).map(|e| (e.0, e.1)).collect();
            index.bulk_load(short)?;
        }
        Ok(())
    }

    /// The entries of `pass0` (every entry, at the plan's first k) and of
    /// these tables that are near duplicates of a document of `features`
    /// features and fingerprint `fp` by `radius`, sorted by distance then
    /// id; `features_of` gives an entry's feature count. With the radius
    /// the tables were built for, each pass the document takes part in is
    /// searched at its own k; another radius is answered by
    /// [`query_scanning`](Self::query_scanning).
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn query_by(
        &self,
        pass0: &TableIndex,
        radius: &Radius,
        fp: Fingerprint,
        features: usize,
        features_of: impl Fn(Id) -> usize,
    ) -> Result<Vec<Match>> {
        if self.plan.radius() != radius {
            return Self::query_scanning(pass0, radius, fp, features, features_of);
        }
        let plan = &self.plan;
        let mut out = pass0.query(fp, plan.passes()[0].k)?;
        for (p, (pass, index)) in self.later.iter().enumerate() {
            if pass.includes(features) {
                let found = index.query(fp, pass.k)?;
                out.extend(
                    found
                        .into_iter()
                        .filter(|m| plan.accepts(p + 1, m.distance, features, features_of(m.id))),
                );
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// [`query_by`](Self::query_by) without later tables: `pass0`'s
    /// tables searched at the radius's largest k (exact, but slow beyond
    /// their layout), filtered by the rule.
    ///
    /// # Errors
    ///
    /// A fingerprint of another width.
    pub fn query_scanning(
        pass0: &TableIndex,
        radius: &Radius,
        fp: Fingerprint,
        features: usize,
        features_of: impl Fn(Id) -> usize,
    ) -> Result<Vec<Match>> {
        let mut out: Vec<Match> = pass0
            .query(fp, radius.max_k())?
            .into_iter()
            .filter(|m| radius.accepts(m.distance, features, features_of(m.id)))
            .collect();
        out.sort_unstable();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(v: u64) -> Fingerprint {
        Fingerprint::from_u64(v)
    }

    #[test]
    fn keys_map_both_ways_through_growth_replacement_and_removal() {
        let mut k: KeyedIndex<String> = KeyedIndex::new(TableIndex::builder().k(3).build().unwrap());
        for i in 0..5_000u64 {
            k.insert(format!("id-{i}"), fp(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)), 10).unwrap();
        }
        assert_eq!(k.len(), 5_000);
        k.insert("id-5".into(), fp(7), 10).unwrap();
        assert_eq!(k.len(), 5_000);
        assert_eq!(k.slots(), 5_001);
        assert_eq!(k.get("id-5"), Some(fp(7)));
        assert_eq!(k.key(5), None, "the replaced slot is empty");
        assert!(k.remove("id-9").unwrap());
        assert!(!k.remove("id-9").unwrap());
        assert_eq!(k.query(fp(7), 0).unwrap(), [(&"id-5".to_owned(), 0)]);
        let again = KeyedIndex::from_slots(
            k.index().clone(),
            k.slot_keys().map(|s| s.cloned()).collect(),
            Some(k.slot_features().to_vec()),
        )
        .unwrap();
        assert_eq!(again.len(), k.len());
        assert_eq!(again.slot("id-77"), k.slot("id-77"));
        assert_eq!(again.get("id-5"), Some(fp(7)));
    }

    #[test]
    fn batches_keep_the_last_of_a_repeated_key() {
        let mut k: KeyedIndex<u32> = KeyedIndex::new(TableIndex::builder().k(2).build().unwrap());
        k.insert(1, fp(1), 5).unwrap();
        k.insert_batch(vec![(1, fp(2), 5), (2, fp(3), 5), (1, fp(4), 5)]).unwrap();
        assert_eq!((k.len(), k.get(&1), k.get(&2)), (2, Some(fp(4)), Some(fp(3))));
        assert_eq!(k.index().len(), 2);
        assert!(k.insert_batch(vec![(3, Fingerprint::from_u128(1), 5)]).is_err());
        assert_eq!(k.len(), 2);
    }

    #[test]
    fn from_slots_refuses_inconsistent_parts() {
        let index = TableIndex::builder().k(1).build_from([(0, fp(1)), (2, fp(2))]).unwrap();
        assert!(KeyedIndex::<u8>::from_slots(index.clone(), vec![Some(0), None, Some(2)], None).is_ok());
        assert!(KeyedIndex::<u8>::from_slots(index.clone(), vec![Some(0), None, None], None).is_err());
        assert!(KeyedIndex::<u8>::from_slots(index.clone(), vec![Some(0), Some(1), Some(2)], None).is_err());
        let repeated =
            KeyedIndex::<u8>::from_slots(index.clone(), vec![Some(0), None, Some(0)], None).unwrap();
        assert_eq!((repeated.len(), repeated.index().len(), repeated.get(&0)), (1, 1, Some(fp(2))));
        assert!(KeyedIndex::<u8>::from_slots(index, vec![Some(0), None, Some(2)], Some(vec![1])).is_err());
    }

    #[test]
    fn the_rule_filters_by_both_lengths() {
        let mut k: KeyedIndex<&str> = KeyedIndex::new(TableIndex::builder().k(8).build().unwrap());
        k.insert("short", fp(0xff), 100).unwrap();
        k.insert("long", fp(0xff00), 5_000).unwrap();
        let rule = Radius::by_length(&[(600, 8)], 4);
        assert_eq!(k.query_rule(fp(0), 100, &rule).unwrap(), [(&"short", 8)]);
        assert!(k.query_rule(fp(0), 5_000, &rule).unwrap().is_empty());
        assert_eq!(k.query_rule(fp(0xfe00), 5_000, &rule).unwrap(), [(&"long", 1)]);
    }
}
