//! jieba's HMM (states B, E, M, S) and the two Viterbi decoders: jieba-rs's
//! (two allowed predecessors, ties to the later state) and cppjieba's (all
//! four predecessors, ties to the earlier state).

use std::sync::OnceLock;

static HMM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/jieba_hmm.bin"));

/// Both jiebas' "impossible" log probability.
pub(crate) const MIN_FLOAT: f64 = -3.14e100;

const B: usize = 0;
const E: usize = 1;
const M: usize = 2;
const S: usize = 3;

/// The model: start and transition log probabilities, and the emission
/// rows of the characters it knows.
pub(crate) struct Hmm {
    start: [f64; 4],
    trans: [[f64; 4]; 4],
    /// Row + 1 of each BMP character, 0 for none.
    index: Vec<u16>,
    rows: Vec<[f64; 4]>,
    /// Characters beyond the BMP, sorted, with their rows.
    astral: Vec<(u32, [f64; 4])>,
}

fn f64_at(b: &[u8], i: usize) -> f64 {
    f64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"))
}

impl Hmm {
    /// The process-wide model.
    pub(crate) fn shared() -> &'static Hmm {
        static LOADED: OnceLock<Hmm> = OnceLock::new();
        LOADED.get_or_init(Hmm::load)
    }

    fn load() -> Hmm {
        let mut start = [0.0; 4];
        let mut trans = [[0.0; 4]; 4];
        for (i, s) in start.iter_mut().enumerate() {
            *s = f64_at(HMM, 8 * i);
        }
        for (i, row) in trans.iter_mut().enumerate() {
            for (j, t) in row.iter_mut().enumerate() {
                *t = f64_at(HMM, 32 + 32 * i + 8 * j);
            }
        }
        let n = u32::from_le_bytes(HMM[160..164].try_into().expect("four bytes")) as usize;
        let mut index = vec![0u16; 65536];
        let mut rows = Vec::with_capacity(n);
        let mut astral = Vec::new();
        for k in 0..n {
            let at = 164 + 36 * k;
            let c = u32::from_le_bytes(HMM[at..at + 4].try_into().expect("four bytes"));
            let row = [f64_at(HMM, at + 4), f64_at(HMM, at + 12), f64_at(HMM, at + 20), f64_at(HMM, at + 28)];
            if c < 0x10000 {
                rows.push(row);
                index[c as usize] = u16::try_from(rows.len()).expect("fewer than 65,535 rows");
            } else {
                astral.push((c, row));
            }
        }
        Hmm { start, trans, index, rows, astral }
    }

    /// The emission log probabilities of `c` in B, E, M, S.
    #[inline(always)]
    fn emit(&self, c: u32) -> [f64; 4] {
        if c < 0x10000 {
            match self.index[c as usize] {
                0 => [MIN_FLOAT; 4],
                r => self.rows[r as usize - 1],
            }
        } else {
            self.astral.binary_search_by_key(&c, |a| a.0).map_or([MIN_FLOAT; 4], |i| self.astral[i].1)
        }
    }

    /// jieba-rs's Viterbi over `chars` (at least two): each state from its
    /// two allowed predecessors, a tie to the later one; the path ends in E
    /// unless S scores strictly higher. Leaves the states in `path`.
    // The loops index several arrays by state, as the originals do.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn viterbi_jieba(&self, chars: &[u32], prev: &mut Vec<[u8; 4]>, path: &mut Vec<u8>) {
        const ALLOWED: [[usize; 2]; 4] = [[E, S], [B, M], [B, M], [E, S]];
        let n = chars.len();
        prev.clear();
        prev.resize(n, [0; 4]);
        let mut v = self.first(chars[0]);
        for t in 1..n {
            let em = self.emit(chars[t]);
            let mut cur = [0.0; 4];
            for y in 0..4 {
                let [y0, y1] = ALLOWED[y];
                let p0 = v[y0] + self.trans[y0][y] + em[y];
                let p1 = v[y1] + self.trans[y1][y] + em[y];
                let (p, s) = if p0 > p1 { (p0, y0) } else { (p1, y1) };
                cur[y] = p;
                prev[t][y] = s as u8;
            }
            v = cur;
        }
        backtrack(prev, if v[E] > v[S] { E } else { S }, path);
    }

    /// cppjieba's `HMMSegment::Viterbi` over `chars` (at least one): each
    /// state from all four predecessors in order B, E, M, S, the first of
    /// equal scores kept; the path ends in E when E scores at least S.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn viterbi_cppjieba(&self, chars: &[u32], prev: &mut Vec<[u8; 4]>, path: &mut Vec<u8>) {
        let n = chars.len();
        prev.clear();
        prev.resize(n, [E as u8; 4]);
        let mut v = self.first(chars[0]);
        for x in 1..n {
            let em = self.emit(chars[x]);
            let mut cur = [MIN_FLOAT; 4];
            for y in 0..4 {
                for py in 0..4 {
                    let tmp = v[py] + self.trans[py][y] + em[y];
                    if tmp > cur[y] {
                        cur[y] = tmp;
                        prev[x][y] = py as u8;
                    }
                }
            }
            v = cur;
        }
        backtrack(prev, if v[E] >= v[S] { E } else { S }, path);
    }

    /// The scores of the first character: start plus emission, per state.
    fn first(&self, c: u32) -> [f64; 4] {
        let em = self.emit(c);
        std::array::from_fn(|y| self.start[y] + em[y])
    }
}

/// The states from the last one back: `path[x]` is the state at `x`, and
/// `prev[x]` gives the state before it.
fn backtrack(prev: &[[u8; 4]], last: usize, path: &mut Vec<u8>) {
    path.clear();
    path.resize(prev.len(), 0);
    let mut state = last;
    for x in (0..prev.len()).rev() {
        path[x] = state as u8;
        state = usize::from(prev[x][state]);
    }
}

/// Whether a state closes a word (E or S).
#[inline(always)]
pub(crate) fn closes(state: u8) -> bool {
    state as usize == E || state as usize == S
}

/// Whether a state opens a word (B).
#[inline(always)]
pub(crate) fn opens(state: u8) -> bool {
    state as usize == B
}

/// Whether a state is S.
#[inline(always)]
pub(crate) fn single(state: u8) -> bool {
    state as usize == S
}
