//! Builds the dictionary's double-array trie and the HMM's tables from
//! `data/` into `OUT_DIR`, so that loading them at run time is a copy.
//!
//! `jieba_dict.bin` (little-endian u32 words unless said):
//! - magic `NDJD`, version, `slots`, `codes`;
//! - the char → code table: 65,536 u16 (0 for a character in no word);
//! - `slots` × (check, base): the trie; `check` is the parent slot
//!   (`u32::MAX` when free), the root is slot 0;
//! - `slots` × jieba frequency (0 when the slot ends no word of dict.txt);
//! - `slots` × cppjieba frequency (the same for cppjieba's dictionary).
//!
//! `jieba_hmm.bin` (little-endian f64 unless said): 4 start, 16 transition
//! log probabilities, u32 row count, then rows of (u32 char, 4 × f64
//! emission) in character order; a state a character has no emission for
//! is −3.14e100, as in both jiebas.

use std::collections::{BTreeMap, HashMap};
use std::env;
use std::fs;
use std::path::PathBuf;

const FREE: u32 = u32::MAX;
const MIN_FLOAT: f64 = -3.14e100;

fn main() {
    println!("cargo:rerun-if-changed=data/dict.txt");
    println!("cargo:rerun-if-changed=data/cppjieba.txt");
    println!("cargo:rerun-if-changed=data/hmm.model");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("jieba_dict.bin"), dict()).expect("write jieba_dict.bin");
    fs::write(out.join("jieba_hmm.bin"), hmm()).expect("write jieba_hmm.bin");
}

/// A trie node being built: its children as (code, node), and the jieba and
/// cppjieba frequencies of the word ending at it (0 for none).
type Node = (Vec<(u16, usize)>, (u32, u32));

fn dict() -> Vec<u8> {
    let text = fs::read_to_string("data/dict.txt").expect("data/dict.txt");
    // word → (jieba frequency, cppjieba frequency); the last line of a word wins.
    let mut words: BTreeMap<Vec<char>, (u32, u32)> = BTreeMap::new();
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let (Some(w), Some(f)) = (it.next(), it.next()) else { continue };
        let f: u32 = f.parse().expect("dict.txt frequency");
        words.insert(w.chars().collect(), (f, f));
    }
    let delta = fs::read_to_string("data/cppjieba.txt").expect("data/cppjieba.txt");
    for line in delta.lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.split(' ').collect();
        match parts.as_slice() {
            ["-", w] => {
                words.get_mut(&w.chars().collect::<Vec<_>>()).expect("removed word is in dict.txt").1 = 0
            }
            ["+", w, f] => {
                words.entry(w.chars().collect()).or_insert((0, 0)).1 = f.parse().expect("frequency");
            }
            _ => panic!("bad line in cppjieba.txt: {line}"),
        }
    }
    // Codes: frequent characters first, so the busy part of the trie is dense.
    let mut count: HashMap<char, u32> = HashMap::new();
    for w in words.keys() {
        for &c in w {
            *count.entry(c).or_default() += 1;
        }
    }
    let mut chars: Vec<(char, u32)> = count.into_iter().collect();
    chars.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut code = vec![0u16; 65536];
    for (i, &(c, _)) in chars.iter().enumerate() {
        assert!((c as u32) < 65536, "dictionary character beyond the BMP: {c:?}");
        code[c as usize] = u16::try_from(i + 1).expect("fewer than 65,535 characters");
    }
    let keys: Vec<(Vec<u16>, (u32, u32))> = {
        let mut k: Vec<_> =
            words.iter().map(|(w, &f)| (w.iter().map(|&c| code[c as usize]).collect(), f)).collect();
        k.sort();
        k
    };

    // The trie as nodes: (children as (code, node), word frequencies).
    let mut nodes: Vec<Node> = vec![(vec![], (0, 0))];
    let mut stack = vec![(0usize, 0usize, 0usize, keys.len())];
    while let Some((node, depth, lo, hi)) = stack.pop() {
        let mut lo = lo;
        if keys[lo].0.len() == depth {
            nodes[node].1 = keys[lo].1;
            lo += 1;
        }
        let mut i = lo;
        while i < hi {
            let c = keys[i].0[depth];
            let mut j = i + 1;
            while j < hi && keys[j].0[depth] == c {
                j += 1;
            }
            nodes.push((vec![], (0, 0)));
            let child = nodes.len() - 1;
            nodes[node].0.push((c, child));
            stack.push((child, depth + 1, i, j));
            i = j;
        }
    }
    // Bases, widest nodes first while the array is empty; the many nodes
    // with one child then fill the holes.
    let mut da = DoubleArray::new();
    da.take(0);
    let mut order: Vec<usize> = (0..nodes.len()).filter(|&n| !nodes[n].0.is_empty()).collect();
    order.sort_by_key(|&n| std::cmp::Reverse(nodes[n].0.len()));
    let mut base = vec![0u32; nodes.len()];
    for n in order {
        let codes: Vec<u32> = nodes[n].0.iter().map(|c| u32::from(c.0)).collect();
        base[n] = da.place(&codes);
    }
    // Slots from the bases: the root is slot 0 and its own parent, so no
    // walk ever lands on it.
    let mut slot = vec![0u32; nodes.len()];
    da.check[0] = 0;
    let mut queue = vec![0usize];
    while let Some(n) = queue.pop() {
        let s = slot[n] as usize;
        da.base[s] = base[n];
        da.jieba[s] = nodes[n].1 .0;
        da.cpp[s] = nodes[n].1 .1;
        for &(c, child) in &nodes[n].0 {
            let t = base[n] + u32::from(c);
            slot[child] = t;
            da.check[t as usize] = s as u32;
            queue.push(child);
        }
    }
    // Every walk reads base + code ≤ max base + the largest code: keep that in bounds.
    let max_code = chars.len() as u32;
    let len = da.base.iter().copied().max().unwrap_or(0) as usize + max_code as usize + 1;
    da.grow(len);
    let slots = da.check.len();

    let mut out = Vec::with_capacity(16 + 131072 + slots * 16);
    out.extend_from_slice(b"NDJD");
    for v in [1u32, slots as u32, max_code] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for c in &code {
        out.extend_from_slice(&c.to_le_bytes());
    }
    for i in 0..slots {
        out.extend_from_slice(&da.check[i].to_le_bytes());
        out.extend_from_slice(&da.base[i].to_le_bytes());
    }
    for v in da.jieba.iter().chain(&da.cpp) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

struct DoubleArray {
    check: Vec<u32>,
    base: Vec<u32>,
    jieba: Vec<u32>,
    cpp: Vec<u32>,
    /// `next[x]` leads to the first free slot at or after `x` (union-find
    /// with path halving: a taken slot points one further).
    next: Vec<u32>,
    /// Which slots are taken, as bits, for testing 64 bases at once.
    bits: Vec<u64>,
}

impl DoubleArray {
    fn new() -> Self {
        let mut da = DoubleArray {
            check: vec![],
            base: vec![],
            jieba: vec![],
            cpp: vec![],
            next: vec![],
            bits: vec![],
        };
        da.grow(1 << 16);
        da
    }

    fn grow(&mut self, len: usize) {
        if len > self.check.len() {
            let old = self.next.len();
            self.check.resize(len, FREE);
            self.base.resize(len, 0);
            self.jieba.resize(len, 0);
            self.cpp.resize(len, 0);
            self.bits.resize(len.div_ceil(64) + 1, 0);
            self.next.extend(old as u32..len as u32);
        }
    }

    /// The first free slot at or after `x` (growing the array if need be).
    fn free_from(&mut self, x: usize) -> usize {
        self.grow(x + 1);
        let mut x = x;
        loop {
            if x >= self.next.len() {
                self.grow(x + (1 << 16));
            }
            let n = self.next[x] as usize;
            if n == x {
                return x;
            }
            if n < self.next.len() {
                let nn = self.next[n];
                self.next[x] = nn;
            }
            x = n;
        }
    }

    fn take(&mut self, x: usize) {
        self.bits[x / 64] |= 1 << (x % 64);
        self.next[x] = x as u32 + 1;
    }

    /// The 64 slots from `pos` as bits (1 = taken), slot `pos` lowest.
    fn taken64(&self, pos: usize) -> u64 {
        let (w, r) = (pos / 64, pos % 64);
        let lo = self.bits[w] >> r;
        if r == 0 {
            lo
        } else {
            lo | (self.bits[w + 1] << (64 - r))
        }
    }

    /// The first base at which every `codes` slot is free (first fit),
    /// tested 64 bases at a time.
    fn place(&mut self, codes: &[u32]) -> u32 {
        let first = codes[0] as usize;
        let last = codes[codes.len() - 1] as usize;
        let mut base = self.free_from(first + 1) - first;
        loop {
            self.grow(base + last + 128);
            let mut free = !0u64;
            for &c in codes {
                free &= !self.taken64(base + c as usize);
            }
            if free != 0 {
                let base = base + free.trailing_zeros() as usize;
                for &c in codes {
                    self.take(base + c as usize);
                }
                return base as u32;
            }
            // On to the next free slot for the first code past this window.
            base = self.free_from(base + 64 + first) - first;
        }
    }
}

fn hmm() -> Vec<u8> {
    let text = fs::read_to_string("data/hmm.model").expect("data/hmm.model");
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    let mut out = Vec::new();
    let nums = |l: &str| -> Vec<f64> { l.split(' ').map(|x| x.parse().expect("number")).collect() };
    let start = nums(lines.next().expect("start line"));
    assert_eq!(start.len(), 4);
    for v in start {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for _ in 0..4 {
        let row = nums(lines.next().expect("transition line"));
        assert_eq!(row.len(), 4);
        for v in row {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    let mut emit: BTreeMap<char, [f64; 4]> = BTreeMap::new();
    for state in 0..4 {
        let line = lines.next().expect("emission line");
        for pair in line.split(',') {
            let (c, p) = pair.split_once(':').expect("char:prob");
            let mut it = c.chars();
            let c = it.next().expect("one char");
            assert!(it.next().is_none());
            emit.entry(c).or_insert([MIN_FLOAT; 4])[state] = p.parse().expect("probability");
        }
    }
    out.extend_from_slice(&(emit.len() as u32).to_le_bytes());
    for (c, row) in emit {
        out.extend_from_slice(&(c as u32).to_le_bytes());
        for v in row {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}
