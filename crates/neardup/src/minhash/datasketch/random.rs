//! numpy's legacy `RandomState`: the Mersenne Twister (MT19937) seeded
//! from a 32-bit integer, and `randint`'s masked rejection sampling — the
//! stream datasketch draws its permutations from. Tests compare with
//! numpy's own values.

/// The Mersenne Twister's state: 624 words and the next one to temper.
pub(crate) struct Mt19937 {
    state: [u32; 624],
    pos: usize,
}

const N: usize = 624;
const M: usize = 397;

impl Mt19937 {
    /// `np.random.RandomState(seed)`: Matsumoto and Nishimura's
    /// `init_genrand`.
    pub(crate) fn new(seed: u32) -> Mt19937 {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32.wrapping_mul(prev ^ (prev >> 30)).wrapping_add(i as u32);
        }
        Mt19937 { state, pos: N }
    }

    fn regenerate(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX: u32 = 0x9908_b0df;
        for i in 0..N {
            let y = (self.state[i] & UPPER) | (self.state[(i + 1) % N] & LOWER);
            let mag = if y & 1 == 1 { MATRIX } else { 0 };
            self.state[i] = self.state[(i + M) % N] ^ (y >> 1) ^ mag;
        }
        self.pos = 0;
    }

    /// The next 32 random bits.
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.pos == N {
            self.regenerate();
        }
        let mut y = self.state[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// The next 64 random bits: two draws, the first the high half.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let hi = u64::from(self.next_u32());
        (hi << 32) | u64::from(self.next_u32())
    }

    /// `randint(low, high, dtype=np.uint32)` for one value: `low` plus a
    /// value in `0..=high - low - 1` by masked rejection, as the legacy
    /// generator draws it.
    pub(crate) fn randint_u32(&mut self, low: u64, high: u64) -> u32 {
        let range = high - low - 1;
        if range == 0 {
            return low as u32;
        }
        if range == u64::from(u32::MAX) {
            return (low as u32).wrapping_add(self.next_u32());
        }
        let range = range as u32;
        let mask = u32::MAX >> range.leading_zeros();
        loop {
            let v = self.next_u32() & mask;
            if v <= range {
                return (low as u32).wrapping_add(v);
            }
        }
    }

    /// `randint(low, high, dtype=np.uint64)` for one value (`high` up to
    /// 2^64): 32-bit draws for a range that fits 32 bits, else 64-bit draws,
    /// masked and rejected as numpy does.
    pub(crate) fn randint_u64(&mut self, low: u64, high: u128) -> u64 {
        let range = (high - u128::from(low) - 1) as u64;
        if range == 0 {
            return low;
        }
        if range <= u64::from(u32::MAX) {
            return low.wrapping_add(u64::from(self.randint_u32(0, range + 1)));
        }
        if range == u64::MAX {
            return low.wrapping_add(self.next_u64());
        }
        let mask = u64::MAX >> range.leading_zeros();
        loop {
            let v = self.next_u64() & mask;
            if v <= range {
                return low.wrapping_add(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_stream_of_seed_5489() {
        // The first outputs of mt19937ar.c under init_genrand(5489).
        let mut mt = Mt19937::new(5489);
        let first: Vec<u32> = (0..3).map(|_| mt.next_u32()).collect();
        assert_eq!(first, [3_499_211_612, 581_869_302, 3_890_346_734]);
        // The 10,000th output (std::mt19937's conformance value).
        let mut mt = Mt19937::new(5489);
        let v = (0..10_000).map(|_| mt.next_u32()).last();
        assert_eq!(v, Some(4_123_659_995));
    }

    #[test]
    fn numpy_randint_values() {
        // np.random.RandomState(1).randint(0, 1 << 31, 3, dtype=np.uint32)
        let mut mt = Mt19937::new(1);
        let a: Vec<u32> = (0..3).map(|_| mt.randint_u32(0, 1 << 31)).collect();
        assert_eq!(a, NUMPY_SEED1_U32);
        // np.random.RandomState(1).randint(1, (1 << 61) - 1, dtype=np.uint64), twice
        let mut mt = Mt19937::new(1);
        let p = (1u128 << 61) - 1;
        let b = [mt.randint_u64(1, p), mt.randint_u64(0, p)];
        assert_eq!(b, NUMPY_SEED1_U64);
    }

    // Pinned from numpy 2.4 (the test venv's differential tests compare
    // whole permutation arrays with datasketch's).
    const NUMPY_SEED1_U32: [u32; 3] = [1_791_095_845, 2_135_392_491, 946_286_476];
    const NUMPY_SEED1_U64: [u64; 2] = [775_169_054_918_279_404, 1_758_426_461_858_698_312];
}
