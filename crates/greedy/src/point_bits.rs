//! `PointBits`: a set of program points as a flat bit vector, one bit per point. It
//! answers "is any point of `[start, end)` in the set" with a few word loads, where a
//! sorted list of ranges needs a binary search; register probes of short intervals ask
//! that question far more often than anything else, and a missed search there is a chain
//! of dependent cache misses.

/// Bits per word.
const WORD: u32 = u64::BITS;

#[derive(Default)]
pub(crate) struct PointBits {
    words: Vec<u64>,
}

impl PointBits {
    /// Empties the set and sizes it for points `0..points`.
    pub fn reset(&mut self, points: u32) {
        self.words.clear();
        self.words.resize(points.div_ceil(WORD) as usize, 0);
    }

    /// The word range `[a, b]` covering `[start, end)` and the masks of its first and last
    /// word. `start < end`, and `end` within the size given to `reset`.
    #[inline]
    fn span(start: u32, end: u32) -> (usize, usize, u64, u64) {
        let last = end - 1;
        (
            (start / WORD) as usize,
            (last / WORD) as usize,
            !0u64 << (start % WORD),
            !0u64 >> (WORD - 1 - last % WORD),
        )
    }

    /// Adds every point of `[start, end)`.
    #[inline]
    pub fn insert(&mut self, start: u32, end: u32) {
        if start >= end {
            return;
        }
        let (a, b, lo, hi) = Self::span(start, end);
        if a == b {
            self.words[a] |= lo & hi;
            return;
        }
        self.words[a] |= lo;
        self.words[a + 1..b].fill(!0);
        self.words[b] |= hi;
    }

    /// Removes every point of `[start, end)`.
    #[inline]
    pub fn remove(&mut self, start: u32, end: u32) {
        if start >= end {
            return;
        }
        let (a, b, lo, hi) = Self::span(start, end);
        if a == b {
            self.words[a] &= !(lo & hi);
            return;
        }
        self.words[a] &= !lo;
        self.words[a + 1..b].fill(0);
        self.words[b] &= !hi;
    }

    /// Is any point of `[start, end)` in the set? Always inlined: a short probe is a few
    /// instructions, fewer than the call the inliner would otherwise keep for it.
    #[inline(always)]
    pub fn any(&self, start: u32, end: u32) -> bool {
        if start >= end {
            return false;
        }
        let (a, b, lo, hi) = Self::span(start, end);
        if a == b {
            return self.words[a] & lo & hi != 0;
        }
        self.words[a] & lo != 0
            || self.words[a + 1..b].iter().any(|&w| w != 0)
            || self.words[b] & hi != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts and removals of random ranges against a plain boolean array, with every
    /// query range checked.
    #[test]
    fn matches_a_plain_array() {
        const N: u32 = 700;
        let mut bits = PointBits::default();
        bits.reset(N);
        let mut model = vec![false; N as usize];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % u64::from(n)) as u32
        };
        for step in 0..5_000u32 {
            let s = next(N);
            let e = (s + next(200)).min(N);
            let add = next(2) == 0;
            if add {
                bits.insert(s, e);
            } else {
                bits.remove(s, e);
            }
            model[s as usize..e as usize].fill(add);
            let qs = next(N);
            let qe = (qs + 1 + next(150)).min(N);
            let want = model[qs as usize..qe as usize].iter().any(|&x| x);
            assert_eq!(bits.any(qs, qe), want, "step {step}: [{qs}, {qe})");
        }
        bits.reset(N);
        assert!(!bits.any(0, N));
    }
}
