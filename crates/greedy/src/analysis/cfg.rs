//! Control-flow facts about the input function: structural validation (the same
//! `RegAllocError`s regalloc2 reports), postorder, dominator tree with O(1) dominance
//! queries, and the instruction → block map. Knows nothing of any allocator.

use regalloc2::{Block, Function, Inst, RegAllocError};

/// A validated view of the function's CFG.
#[derive(Default)]
pub(crate) struct Cfg {
    /// Blocks reachable from the entry, in postorder.
    pub postorder: Vec<Block>,
    /// Reverse-postorder position of each block (`u32::MAX` when unreachable).
    pub rpo_index: Vec<u32>,
    /// Immediate dominator of each block (`Block::invalid()` for the entry and unreachable blocks).
    pub idom: Vec<Block>,
    /// Per block: its preorder number in the dominator tree and one past the last number
    /// of its subtree, so `a` dominates `b` iff `b`'s number lies in `a`'s range.
    /// Unreachable blocks have `(u32::MAX, 0)`: no number lies in their empty range, and
    /// theirs lies in none.
    dom_range: Vec<(u32, u32)>,
    /// The block holding each instruction.
    pub inst_block: Vec<Block>,
    /// See [`Cfg::succ_index_in_pred`].
    pred_succ_index: Vec<u32>,
    scratch_stack: Vec<(Block, usize)>,
    /// Per reverse-postorder position: the immediate dominator's position.
    scratch_idom_rpo: Vec<u32>,
    /// Per reverse-postorder position: the size of its dominator subtree.
    scratch_size: Vec<u32>,
    /// Per reverse-postorder position: its preorder number, then the next free one.
    scratch_next: Vec<u32>,
    scratch_from_start: Vec<u32>,
    scratch_from: Vec<u32>,
    scratch_pred_mark: Vec<u32>,
    scratch_from_mark: Vec<u32>,
}

impl Cfg {
    /// Validates the CFG shape and computes the analyses. Errors mirror regalloc2's:
    /// `BB` for malformed blocks, `CritEdge`, `DisallowedBranchArg`, `Branch`.
    pub fn compute<F: Function + ?Sized>(&mut self, f: &F) -> Result<(), RegAllocError> {
        let nb = f.num_blocks();
        let ni = f.num_insts();
        if nb == 0 || f.entry_block().index() >= nb {
            return Err(RegAllocError::BB(f.entry_block()));
        }
        self.check_layout(f)?;
        self.check_edges(f)?;
        self.compute_postorder(f);
        self.compute_dominators(f);
        debug_assert_eq!(self.inst_block.len(), ni);
        Ok(())
    }

    /// Blocks must tile the instruction space in order, each non-empty and ending with
    /// exactly one terminator; branch-argument counts must match the successors' params.
    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn check_layout<F: Function + ?Sized>(&mut self, f: &F) -> Result<(), RegAllocError> {
        let nb = f.num_blocks();
        let ni = f.num_insts();
        self.inst_block.clear();
        self.inst_block.resize(ni, Block::invalid());
        let mut next = 0usize;
        for b in 0..nb {
            let block = Block::new(b);
            let range = f.block_insns(block);
            // Bounds through the iterator: `InstRange`'s accessors assert (and `len`
            // underflows) on empty or reversed ranges.
            let mut it = range.iter();
            let Some(first) = it.next() else {
                return Err(RegAllocError::BB(block));
            };
            let last = it.next_back().unwrap_or(first);
            if first.index() != next || last.index() >= ni {
                return Err(RegAllocError::BB(block));
            }
            next = range.last().index() + 1;
            for inst in range.iter() {
                self.inst_block[inst.index()] = block;
                let is_term = f.is_branch(inst) || f.is_ret(inst);
                if (inst == range.last()) != is_term {
                    return Err(RegAllocError::BB(block));
                }
            }
            let last = range.last();
            let succs = f.block_succs(block);
            if succs.iter().any(|s| s.index() >= nb) {
                return Err(RegAllocError::BB(block));
            }
            if f.is_branch(last) {
                for (i, &succ) in succs.iter().enumerate() {
                    if f.branch_blockparams(block, last, i).len() != f.block_params(succ).len() {
                        return Err(RegAllocError::Branch(last));
                    }
                }
            } else if !succs.is_empty() {
                return Err(RegAllocError::BB(block));
            }
        }
        if next != ni {
            return Err(RegAllocError::BB(Block::new(nb - 1)));
        }
        if !f.block_params(f.entry_block()).is_empty() {
            return Err(RegAllocError::BB(f.entry_block()));
        }
        Ok(())
    }

    /// Predecessor lists must mirror successor lists; no critical edges; a branch
    /// feeding a merge block carries no operands (its edge moves go before it).
    /// Membership is checked per block against the successor lists turned around (a
    /// counting sort by target), with stamps, not by scanning a successor list per
    /// predecessor: a switch over thousands of cases would make that quadratic.
    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn check_edges<F: Function + ?Sized>(&mut self, f: &F) -> Result<(), RegAllocError> {
        let nb = f.num_blocks();
        let entry = f.entry_block();
        let npreds = |b: Block| f.block_preds(b).len() + usize::from(b == entry);
        // `from[from_start[s]..from_start[s + 1]]`: the blocks listing `s` as a successor.
        // `check_layout` has rejected any successor out of range, so they index safely;
        // predecessors are checked here.
        let (from_start, from) = (&mut self.scratch_from_start, &mut self.scratch_from);
        from_start.clear();
        from_start.resize(nb + 1, 0);
        for b in 0..nb {
            for &s in f.block_succs(Block::new(b)) {
                from_start[s.index() + 1] += 1;
            }
        }
        for s in 0..nb {
            from_start[s + 1] += from_start[s];
        }
        from.clear();
        from.resize(from_start[nb] as usize, 0);
        // `from_start[s]` walks up to `from_start[s + 1]` while filling, then is restored.
        for b in 0..nb {
            for &s in f.block_succs(Block::new(b)) {
                from[from_start[s.index()] as usize] = b as u32;
                from_start[s.index()] += 1;
            }
        }
        for s in (1..nb).rev() {
            from_start[s] = from_start[s - 1];
        }
        from_start[0] = 0;
        // The first block whose predecessor or successor list has an edge missing from
        // the other side: the one a scan in block order would report.
        let mut bad = nb;
        let (pred_mark, from_mark) = (&mut self.scratch_pred_mark, &mut self.scratch_from_mark);
        pred_mark.clear();
        pred_mark.resize(nb, u32::MAX);
        from_mark.clear();
        from_mark.resize(nb, u32::MAX);
        for s in 0..nb {
            let preds = f.block_preds(Block::new(s));
            let froms = &from[from_start[s] as usize..from_start[s + 1] as usize];
            for &b in froms {
                from_mark[b as usize] = s as u32;
            }
            for &p in preds {
                if p.index() >= nb || from_mark[p.index()] != s as u32 {
                    bad = bad.min(s);
                } else {
                    pred_mark[p.index()] = s as u32;
                }
            }
            for &b in froms {
                if pred_mark[b as usize] != s as u32 {
                    bad = bad.min(b as usize);
                }
            }
        }
        if bad < nb {
            return Err(RegAllocError::BB(Block::new(bad)));
        }
        for b in 0..nb {
            let block = Block::new(b);
            if npreds(block) > 1 {
                for &p in f.block_preds(block) {
                    if f.block_succs(p).len() > 1 {
                        return Err(RegAllocError::CritEdge(p, block));
                    }
                }
            }
            if f.block_succs(block).iter().any(|&s| npreds(s) > 1) {
                let last = f.block_insns(block).last();
                if !f.inst_operands(last).is_empty() {
                    return Err(RegAllocError::DisallowedBranchArg(last));
                }
            }
        }
        // Position of each single-predecessor block among its predecessor's successors.
        self.pred_succ_index.clear();
        self.pred_succ_index.resize(nb, u32::MAX);
        for b in 0..nb {
            for (i, &s) in f.block_succs(Block::new(b)).iter().enumerate() {
                if f.block_preds(s).len() == 1 && self.pred_succ_index[s.index()] == u32::MAX {
                    self.pred_succ_index[s.index()] = i as u32;
                }
            }
        }
        Ok(())
    }

    /// For a block with exactly one predecessor: its position among that predecessor's
    /// successors (which `branch_blockparams` takes), found once per function.
    pub fn succ_index_in_pred(&self, b: Block) -> Option<usize> {
        let i = self.pred_succ_index[b.index()];
        (i != u32::MAX).then_some(i as usize)
    }

    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn compute_postorder<F: Function + ?Sized>(&mut self, f: &F) {
        let nb = f.num_blocks();
        self.postorder.clear();
        self.rpo_index.clear();
        self.rpo_index.resize(nb, u32::MAX);
        // `rpo_index` doubles as the visited mark during the walk.
        let stack = &mut self.scratch_stack;
        stack.clear();
        let entry = f.entry_block();
        self.rpo_index[entry.index()] = 0;
        stack.push((entry, 0));
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            let succs = f.block_succs(b);
            if *next < succs.len() {
                let s = succs[*next];
                *next += 1;
                if self.rpo_index[s.index()] == u32::MAX {
                    self.rpo_index[s.index()] = 0;
                    stack.push((s, 0));
                }
            } else {
                self.postorder.push(b);
                stack.pop();
            }
        }
        let n = self.postorder.len() as u32;
        for (i, &b) in self.postorder.iter().enumerate() {
            self.rpo_index[b.index()] = n - 1 - i as u32;
        }
    }

    /// Cooper, Harvey and Kennedy's iterative dominator algorithm over the RPO, with
    /// blocks named by their RPO position (so `intersect` compares positions directly),
    /// then the dominator tree's preorder numbering from subtree sizes: in RPO a block
    /// comes after its immediate dominator, so one backward pass sums the sizes and one
    /// forward pass hands each child the next free range under its parent.
    fn compute_dominators<F: Function + ?Sized>(&mut self, f: &F) {
        let nb = f.num_blocks();
        let n = self.postorder.len();
        let idom = &mut self.scratch_idom_rpo;
        idom.clear();
        idom.resize(n, u32::MAX);
        // The entry is RPO position 0.
        idom[0] = 0;
        let mut changed = true;
        let mut first_pass = true;
        while changed {
            changed = false;
            for (i, &b) in self.postorder.iter().rev().enumerate().skip(1) {
                let mut new_idom = u32::MAX;
                for &p in f.block_preds(b) {
                    // Unreachable predecessors (position `u32::MAX`) and those not yet
                    // visited have no dominator yet.
                    let pr = self.rpo_index[p.index()];
                    if idom.get(pr as usize).is_none_or(|&d| d == u32::MAX) {
                        continue;
                    }
                    new_idom = if new_idom == u32::MAX {
                        pr
                    } else {
                        intersect(idom, pr, new_idom)
                    };
                }
                if new_idom != idom[i] {
                    idom[i] = new_idom;
                    changed = true;
                }
            }
            // The first pass gives each block the common dominator of its predecessors
            // earlier in RPO, and no later pass changes those. A second pass would then
            // change nothing (and end the loop) if each block's dominator is also one of
            // every later predecessor's (loop back edges, as in any reducible CFG): that
            // is checked here over those edges alone.
            if std::mem::take(&mut first_pass) && changed {
                changed = self
                    .postorder
                    .iter()
                    .rev()
                    .enumerate()
                    .skip(1)
                    .any(|(i, &b)| {
                        f.block_preds(b).iter().any(|p| {
                            let pr = self.rpo_index[p.index()];
                            pr != u32::MAX
                                && pr as usize >= i
                                && intersect(idom, pr, idom[i]) != idom[i]
                        })
                    });
            }
        }

        self.idom.clear();
        self.idom.resize(nb, Block::invalid());
        self.dom_range.clear();
        self.dom_range.resize(nb, (u32::MAX, 0));
        if n == 0 {
            return;
        }
        let size = &mut self.scratch_size;
        size.clear();
        size.resize(n, 1);
        for i in (1..n).rev() {
            let d = idom[i] as usize;
            size[d] += size[i];
        }
        let next = &mut self.scratch_next;
        next.clear();
        next.resize(n, 0);
        next[0] = 1;
        let rpo = |i: usize| self.postorder[n - 1 - i];
        self.dom_range[rpo(0).index()] = (0, size[0]);
        for i in 1..n {
            let d = idom[i] as usize;
            let pre = next[d];
            next[d] += size[i];
            next[i] = pre + 1;
            let b = rpo(i);
            self.idom[b.index()] = rpo(d);
            self.dom_range[b.index()] = (pre, pre + size[i]);
        }
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index[b.index()] != u32::MAX
    }

    /// Does `a` dominate `b`? Unreachable blocks dominate nothing and are dominated by nothing.
    #[inline]
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        let (pa, end) = self.dom_range[a.index()];
        let pb = self.dom_range[b.index()].0;
        pa <= pb && pb < end
    }

    pub fn block_of(&self, inst: Inst) -> Block {
        self.inst_block[inst.index()]
    }
}

/// The nearest common ancestor of RPO positions `a` and `b` in the dominator tree so far
/// (`idom` by position): a dominator precedes what it dominates in RPO.
fn intersect(idom: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = idom[a as usize];
        }
        while b > a {
            b = idom[b as usize];
        }
    }
    a
}
