//! Natural loops and block frequencies. A back edge is an edge to a dominator; the loop
//! forest is built innermost-first with union-find so that deep nests cost near-linear
//! time. Frequency is `10^depth` (capped) for now; a client-supplied frequency would
//! replace `BlockFrequency::compute_from_loop_depth` and nothing else.

use super::cfg::Cfg;
use regalloc2::{Block, Function};

/// Loop depth beyond which frequencies stop growing (keeps `f32` weights finite).
const MAX_FREQ_DEPTH: u32 = 8;

#[derive(Default)]
pub(crate) struct LoopInfo {
    /// Loop nesting depth of each block (0 outside loops).
    pub depth: Vec<u32>,
    /// Innermost loop header of each block, `Block::invalid()` outside loops.
    pub header: Vec<Block>,
    parent: Vec<Block>,
    union_find: Vec<u32>,
    headers: Vec<Block>,
    stack: Vec<Block>,
}

impl LoopInfo {
    pub fn compute<F: Function + ?Sized>(&mut self, f: &F, cfg: &Cfg) {
        let nb = f.num_blocks();
        self.depth.clear();
        self.depth.resize(nb, 0);
        self.header.clear();
        self.header.resize(nb, Block::invalid());
        self.parent.clear();
        self.parent.resize(nb, Block::invalid());
        self.union_find.clear();
        self.union_find.extend(0..nb as u32);

        self.headers.clear();
        for &b in &cfg.postorder {
            if f.block_preds(b).iter().any(|&p| cfg.dominates(b, p)) {
                self.headers.push(b);
            }
        }
        // Postorder visits inner headers (later in RPO) first.
        for hi in 0..self.headers.len() {
            let h = self.headers[hi];
            self.stack.clear();
            for &p in f.block_preds(h) {
                if p != h && cfg.dominates(h, p) {
                    self.stack.push(p);
                }
            }
            while let Some(x) = self.stack.pop() {
                let r = self.find(x);
                if r == h.index() as u32 {
                    continue;
                }
                let rb = Block::new(r as usize);
                if !cfg.dominates(h, rb) {
                    // Irreducible entry into the region: not part of this natural loop.
                    continue;
                }
                if self.header[rb.index()] == rb {
                    self.parent[rb.index()] = h;
                } else {
                    self.header[rb.index()] = h;
                }
                self.union_find[rb.index()] = h.index() as u32;
                for &p in f.block_preds(rb) {
                    if cfg.is_reachable(p) {
                        self.stack.push(p);
                    }
                }
            }
            self.header[h.index()] = h;
        }
        // Outer headers come first in reverse postorder, so parents are done first.
        for hi in (0..self.headers.len()).rev() {
            let h = self.headers[hi];
            let p = self.parent[h.index()];
            self.depth[h.index()] = 1 + if p.is_valid() {
                self.depth[p.index()]
            } else {
                0
            };
        }
        for b in 0..nb {
            let h = self.header[b];
            if h.is_valid() && h.index() != b {
                self.depth[b] = self.depth[h.index()];
            }
        }
    }

    /// Is `b` in the natural loop headed by `h` (or in a loop nested in it)?
    pub fn in_loop(&self, b: Block, h: Block) -> bool {
        let mut x = self.header[b.index()];
        while x.is_valid() {
            if x == h {
                return true;
            }
            x = self.parent[x.index()];
        }
        false
    }

    fn find(&mut self, x: Block) -> u32 {
        let mut r = x.index() as u32;
        while self.union_find[r as usize] != r {
            r = self.union_find[r as usize];
        }
        let mut y = x.index() as u32;
        while self.union_find[y as usize] != r {
            let next = self.union_find[y as usize];
            self.union_find[y as usize] = r;
            y = next;
        }
        r
    }
}

/// Relative execution frequency of each block (entry = 1).
#[derive(Default)]
pub(crate) struct BlockFrequency {
    pub freq: Vec<f32>,
}

impl BlockFrequency {
    pub fn compute_from_loop_depth(&mut self, loops: &LoopInfo) {
        self.freq.clear();
        self.freq.extend(
            loops
                .depth
                .iter()
                .map(|&d| 10f32.powi(d.min(MAX_FREQ_DEPTH) as i32)),
        );
    }

    pub fn of(&self, b: Block) -> f32 {
        self.freq[b.index()]
    }
}
