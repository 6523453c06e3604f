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

    /// Adds every point of `[start, end)`.
    #[inline]
    pub fn insert(&mut self, start: u32, end: u32) {
        let Some(span) = WordSpan::new(start, end) else {
            return;
        };
        if span.first == span.last {
            self.words[span.first] |= span.lo & span.hi;
            return;
        }
        self.words[span.first] |= span.lo;
        self.words[span.first + 1..span.last].fill(!0);
        self.words[span.last] |= span.hi;
    }

    /// Removes every point of `[start, end)`.
    #[inline]
    pub fn remove(&mut self, start: u32, end: u32) {
        let Some(span) = WordSpan::new(start, end) else {
            return;
        };
        if span.first == span.last {
            self.words[span.first] &= !(span.lo & span.hi);
            return;
        }
        self.words[span.first] &= !span.lo;
        self.words[span.first + 1..span.last].fill(0);
        self.words[span.last] &= !span.hi;
    }

    /// Is any point of `[start, end)` in the set? Always inlined: a short probe is a few
    /// instructions, fewer than the call the inliner would otherwise keep for it.
    #[inline(always)]
    pub fn any(&self, start: u32, end: u32) -> bool {
        WordSpan::new(start, end).is_some_and(|span| self.any_in(span))
    }

    /// Is any point of `span` in the set? Always inlined, as `any`.
    #[inline(always)]
    pub fn any_in(&self, span: WordSpan) -> bool {
        if span.first == span.last {
            return self.words[span.first] & span.lo & span.hi != 0;
        }
        self.words[span.first] & span.lo != 0
            || self.words[span.first + 1..span.last]
                .iter()
                .any(|&w| w != 0)
            || self.words[span.last] & span.hi != 0
    }
}

/// A nonempty range of points as the words covering it (`first..=last`) and the masks of
/// the first and last word: probing several sets over one range computes it once.
#[derive(Clone, Copy)]
pub(crate) struct WordSpan {
    first: usize,
    last: usize,
    lo: u64,
    hi: u64,
}

impl WordSpan {
    /// The span of `[start, end)`, `None` when it is empty. `end` must be within the size
    /// given to `PointBits::reset` of every set it probes.
    #[inline(always)]
    pub fn new(start: u32, end: u32) -> Option<Self> {
        if start >= end {
            return None;
        }
        let last = end - 1;
        Some(Self {
            first: (start / WORD) as usize,
            last: (last / WORD) as usize,
            lo: !0u64 << (start % WORD),
            hi: !0u64 >> (WORD - 1 - last % WORD),
        })
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
