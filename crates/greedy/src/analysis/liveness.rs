//! SSA validation and liveness. Every vreg has one definition (a block parameter or an
//! instruction def) that dominates its uses; live-in sets come from path exploration
//! backwards from each upward-exposed use to the definition, so the work is
//! proportional to the size of the live-in sets, not to iterations of a dataflow
//! fixpoint.

use super::cfg::Cfg;
use super::intervals::fixed_nonallocatable;
use regalloc2::{
    Block, Function, Inst, OperandConstraint, OperandKind, PRegSet, RegAllocError, RegClass, VReg,
};

/// End of an `exposed` chain.
const NO_ENTRY: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct Liveness {
    /// Defining block of each vreg (`Block::invalid()` if never defined).
    pub def_block: Vec<Block>,
    /// Class of each vreg, learned from its first mention.
    pub class: Vec<Option<RegClass>>,
    /// One bit per vreg with a class (vreg `64 * i + j` is bit `j` of word `i`): the
    /// vregs the function mentions. Functions number many they never mention
    /// (Cranelift's pinned ones, for a start); a walk over these (`mentioned`) skips
    /// those 64 at a time.
    classed: Vec<u64>,
    /// From the first mentioned vreg to one past the last (`vreg_span`).
    span: std::ops::Range<usize>,
    /// Vregs live on entry to each block (block params excluded), each block's sorted.
    pub livein: LiveIns,
    /// Operands over all instructions: the size of `Output::allocs`.
    pub num_operands: usize,
    /// Per vreg: the operands naming it (fixed non-allocatable ones aside).
    pub operand_count: Vec<u32>,
    /// Per vreg: the blocks it is live into.
    pub livein_count: Vec<u32>,
    /// One bit per vreg with a `Stack` or `Limit` operand: see
    /// `has_stack_or_limit_operand`.
    stack_or_limit: Vec<u64>,
    /// The instructions with a reuse or fixed-register operand (non-allocatable ones
    /// aside), in order: all that `Partners::compute_listed` needs to visit.
    pub copy_or_fixed_insts: Vec<Inst>,
    /// The registers some fixed non-allocatable operand names (no vreg; not reserved in
    /// the interference matrix): a value kept outside the allocation order must not sit
    /// in one of these where an instruction names it.
    pub nonallocatable_named: PRegSet,
    def_inst: Vec<Inst>,
    /// Per vreg, the last block defining it so far; only for `first_use_error`.
    local_stamp: Vec<u32>,
    /// Upward-exposed uses chained per vreg: `exposed_head[v]` is the latest entry of
    /// `v`, an entry is its block and the index of `v`'s previous entry. Grouping by
    /// vreg this way is what the livein walk needs (its block stamps hold one vreg at
    /// a time) without sorting every use.
    exposed_head: Vec<u32>,
    exposed: Vec<(u32, u32)>,
    /// One bit per vreg, set when it has an exposed use: most vregs have none, and
    /// `compute_liveins` visits only these, in increasing order, 64 vregs a word.
    exposed_vregs: Vec<u64>,
    /// Branch arguments whose vreg had no class yet at their block's end.
    unclassed_args: Vec<VReg>,
    /// Per block, during `walk_liveins`: the last vreg found live into it, and how
    /// many are (one entry for both: the walk reads and writes them together).
    block_marks: Vec<(u32, u32)>,
    /// The blocks each exposed vreg is live into, vreg after vreg (`reached_vregs`):
    /// the worklist of its walk and the record the live-in lists are laid out from.
    reached: Vec<u32>,
    /// Per exposed vreg, in increasing order: the vreg and the end of its blocks in
    /// `reached`.
    reached_vregs: Vec<(VReg, u32)>,
    /// Whether the last `compute` succeeded: then only the vregs it mentioned (still
    /// in `classed`) have entries in `def_block`, `def_inst`, `operand_count`,
    /// `exposed_head` and `livein_count` other than their defaults, and those alone
    /// are reset (the tables only grow). A failed one may have left others.
    clean: bool,
}

/// The vregs live into each block, all blocks' in one vector: block `b`'s are
/// `list[start[b]..start[b + 1]]`.
#[derive(Default)]
pub(crate) struct LiveIns {
    start: Vec<u32>,
    list: Vec<VReg>,
}

impl std::ops::Index<usize> for LiveIns {
    type Output = [VReg];
    #[inline]
    fn index(&self, b: usize) -> &[VReg] {
        &self.list[self.start[b] as usize..self.start[b + 1] as usize]
    }
}

/// The set bits of a bitset over vregs, in increasing order (see `Liveness::mentioned`).
#[derive(Clone)]
pub(crate) struct Mentioned<'a> {
    /// The current word and those after it.
    words: &'a [u64],
    /// The vreg of bit 0 of the current word.
    base: usize,
    /// The current word's bits not yet returned.
    word: u64,
}

impl<'a> Mentioned<'a> {
    fn of(words: &'a [u64]) -> Self {
        Mentioned {
            words,
            base: 0,
            word: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for Mentioned<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            let rest = self.words.get(1..)?;
            let &next = rest.first()?;
            self.words = rest;
            self.base += 64;
            self.word = next;
        }
        let v = self.base + self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(v)
    }
}

impl Liveness {
    pub fn compute<F: Function + ?Sized>(&mut self, f: &F, cfg: &Cfg) -> Result<(), RegAllocError> {
        self.validate_ssa(f, cfg)?;
        self.find_span();
        self.compute_liveins(f, cfg)?;
        self.clean = true;
        Ok(())
    }

    /// Does some operand of `v` have a `Stack` or `Limit` constraint? Few values have
    /// one, and the others need no search of their uses for them.
    pub fn has_stack_or_limit_operand(&self, v: VReg) -> bool {
        self.stack_or_limit[v.vreg() / 64] & (1 << (v.vreg() % 64)) != 0
    }

    /// The vregs the function mentions (`classed`), in increasing order.
    pub fn mentioned(&self) -> Mentioned<'_> {
        Mentioned::of(&self.classed)
    }

    /// The vreg indices from the first the function mentions to the last: every vreg a
    /// later stage looks up lies here. Cranelift numbers its values from 192 (after
    /// indices it reserves), so a per-vreg table kept across functions needs only this
    /// stretch reset (`lists::reset_span`): clearing all of one cost small functions
    /// 2% of their instructions and a quarter of their cache-line writes.
    pub fn vreg_span(&self) -> std::ops::Range<usize> {
        self.span.clone()
    }

    /// Is `v` in `vreg_span`? A vreg outside it (a debug label naming a value the
    /// code never mentions) has no current entry in any per-vreg table.
    pub fn in_span(&self, v: VReg) -> bool {
        self.span.contains(&v.vreg())
    }

    fn find_span(&mut self) {
        let first = self.classed.iter().position(|&w| w != 0);
        let last = self.classed.iter().rposition(|&w| w != 0);
        self.span = match (first, last) {
            (Some(a), Some(b)) => {
                64 * a + self.classed[a].trailing_zeros() as usize
                    ..64 * b + 64 - self.classed[b].leading_zeros() as usize
            }
            _ => 0..0,
        };
    }

    /// The instruction defining `v`, if an instruction does (not a block param).
    pub fn def_inst(&self, v: VReg) -> Option<Inst> {
        let i = self.def_inst[v.vreg()];
        i.is_valid().then_some(i)
    }

    #[inline]
    fn note_class(&mut self, v: VReg, inst: Inst) -> Result<(), RegAllocError> {
        let slot = self
            .class
            .get_mut(v.vreg())
            .ok_or(RegAllocError::SSA(v, inst))?;
        match *slot {
            None => {
                *slot = Some(v.class());
                self.classed[v.vreg() / 64] |= 1 << (v.vreg() % 64);
            }
            Some(c) if c != v.class() => return Err(RegAllocError::SSA(v, inst)),
            Some(_) => {}
        }
        Ok(())
    }

    /// The same rules as regalloc2's `validate_ssa`, plus the operand-shape checks that
    /// keep later stages panic-free (indices in range, classes consistent, reuse targets
    /// that exist).
    ///
    /// One walk checks the operands and collects the upward-exposed uses for
    /// `compute_liveins`: a use (or branch argument, a use at the block end) not
    /// preceded by its definition in its own block. Whether such a use is dominated by
    /// its definition can only be told once every definition is known, so it is
    /// checked per exposed block in `compute_liveins`; a branch argument whose shape is
    /// wrong is only noted. Either failure means the function is invalid, and
    /// `first_use_error` then finds the error regalloc2's order of checks reports.
    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn validate_ssa<F: Function + ?Sized>(
        &mut self,
        f: &F,
        cfg: &Cfg,
    ) -> Result<(), RegAllocError> {
        let nv = f.num_vregs();
        let nb = f.num_blocks();
        self.reset_vreg_tables(nv);
        self.class.clear();
        self.class.resize(nv, None);
        self.classed.clear();
        self.classed.resize(nv.div_ceil(64), 0);
        self.stack_or_limit.clear();
        self.stack_or_limit.resize(nv.div_ceil(64), 0);
        self.exposed.clear();
        self.exposed_vregs.clear();
        self.exposed_vregs.resize(nv.div_ceil(64), 0);
        self.unclassed_args.clear();
        self.copy_or_fixed_insts.clear();
        self.nonallocatable_named = PRegSet::empty();
        let multi_defs = f.allow_multiple_vreg_defs();
        self.num_operands = 0;
        let mut bad_arg = false;

        for b in 0..nb {
            let block = Block::new(b);
            for &p in f.block_params(block) {
                self.note_class(p, Inst::invalid())?;
                if self.def_block[p.vreg()].is_valid() {
                    return Err(RegAllocError::SSA(p, Inst::invalid()));
                }
                self.def_block[p.vreg()] = block;
            }
            let insns = f.block_insns(block);
            for inst in insns.iter() {
                let ops = f.inst_operands(inst);
                if ops.len() > u16::MAX as usize {
                    return Err(RegAllocError::TooManyOperands);
                }
                self.num_operands += ops.len();
                for (k, op) in ops.iter().enumerate() {
                    if let Some(p) = fixed_nonallocatable(*op) {
                        if op.kind() == OperandKind::Def {
                            return Err(RegAllocError::SSA(op.vreg(), inst));
                        }
                        self.nonallocatable_named.add(p);
                        continue;
                    }
                    let v = op.vreg();
                    self.note_class(v, inst)?;
                    self.operand_count[v.vreg()] += 1;
                    match op.constraint() {
                        OperandConstraint::FixedReg(p) => {
                            if p.class() != v.class() {
                                return Err(RegAllocError::SSA(v, inst));
                            }
                            self.note_copy_or_fixed(inst);
                        }
                        OperandConstraint::Reuse(j) => {
                            self.note_copy_or_fixed(inst);
                            let ok = op.kind() == OperandKind::Def
                                && j < ops.len()
                                && j != k
                                && ops[j].kind() == OperandKind::Use
                                && ops[j].as_fixed_nonallocatable().is_none()
                                && ops[j].class() == v.class()
                                // The input's allocation becomes the output's register:
                                // only a plain register use can take that.
                                && ops[j].constraint() == OperandConstraint::Reg;
                            if !ok {
                                return Err(RegAllocError::SSA(v, inst));
                            }
                        }
                        OperandConstraint::Limit(0) => {
                            return Err(RegAllocError::TooManyLiveRegs);
                        }
                        OperandConstraint::Limit(_) | OperandConstraint::Stack => {
                            self.stack_or_limit[v.vreg() / 64] |= 1 << (v.vreg() % 64);
                        }
                        _ => {}
                    }
                    if op.kind() == OperandKind::Def {
                        let prev = self.def_inst[v.vreg()];
                        if self.def_block[v.vreg()].is_valid() && !(multi_defs && prev == inst) {
                            return Err(RegAllocError::SSA(v, inst));
                        }
                        self.def_block[v.vreg()] = block;
                        self.def_inst[v.vreg()] = inst;
                    } else if self.def_block[v.vreg()] != block || self.def_inst[v.vreg()] == inst {
                        // Not defined earlier in this block: exposed if the definition
                        // is elsewhere, an error if it is later here or in this very
                        // instruction (which `compute_liveins` tells apart).
                        self.note_exposed(v, b as u32);
                    }
                }
            }
            let last = insns.last();
            if f.is_branch(last) {
                for (i, &succ) in f.block_succs(block).iter().enumerate() {
                    let params = f.block_params(succ);
                    for (&arg, &param) in f.branch_blockparams(block, last, i).iter().zip(params) {
                        if arg.vreg() >= nv || arg.class() != param.class() {
                            bad_arg = true;
                            continue;
                        }
                        match self.class[arg.vreg()] {
                            Some(c) if c == arg.class() => {}
                            // Mentioned first by a later block, or never.
                            None => self.unclassed_args.push(arg),
                            Some(_) => bad_arg = true,
                        }
                        // Everything this block defines precedes its branch arguments.
                        if self.def_block[arg.vreg()] != block {
                            self.note_exposed(arg, b as u32);
                        }
                    }
                }
            }
        }
        bad_arg |= self
            .unclassed_args
            .iter()
            .any(|&arg| self.class[arg.vreg()] != Some(arg.class()));
        if bad_arg {
            let e = self.first_use_error(f, cfg, RegAllocError::EntryLivein);
            debug_assert!(
                !matches!(e, RegAllocError::EntryLivein),
                "a bad branch argument passed"
            );
            return Err(e);
        }
        Ok(())
    }

    /// Every entry of the per-vreg tables `clean` covers at its default, for at least
    /// `nv` vregs. Must run before `classed` is cleared.
    fn reset_vreg_tables(&mut self, nv: usize) {
        if std::mem::take(&mut self.clean) {
            // The tables grow together: cut to one length, one bounds check covers all.
            let n = self.def_block.len();
            let (def_block, def_inst, operand_count, exposed_head, livein_count) = (
                &mut self.def_block[..n],
                &mut self.def_inst[..n],
                &mut self.operand_count[..n],
                &mut self.exposed_head[..n],
                &mut self.livein_count[..n],
            );
            for v in Mentioned::of(&self.classed) {
                def_block[v] = Block::invalid();
                def_inst[v] = Inst::invalid();
                operand_count[v] = 0;
                exposed_head[v] = NO_ENTRY;
                livein_count[v] = 0;
            }
        } else {
            self.def_block.fill(Block::invalid());
            self.def_inst.fill(Inst::invalid());
            self.operand_count.fill(0);
            self.exposed_head.fill(NO_ENTRY);
            self.livein_count.fill(0);
        }
        if self.def_block.len() < nv {
            self.def_block.resize(nv, Block::invalid());
            self.def_inst.resize(nv, Inst::invalid());
            self.operand_count.resize(nv, 0);
            self.exposed_head.resize(nv, NO_ENTRY);
            self.livein_count.resize(nv, 0);
        }
        debug_assert!(
            self.def_block.iter().all(|b| !b.is_valid())
                && self.def_inst.iter().all(|i| !i.is_valid())
                && self.operand_count.iter().all(|&n| n == 0)
                && self.exposed_head.iter().all(|&e| e == NO_ENTRY)
                && self.livein_count.iter().all(|&n| n == 0)
        );
    }

    /// The error regalloc2's second walk over the function reports first: uses (and
    /// branch arguments) in program order, each checked for a dominating definition;
    /// `otherwise` if there is none. Only called once `validate_ssa` or
    /// `compute_liveins` has seen the function fail.
    #[cold]
    #[inline(never)]
    fn first_use_error<F: Function + ?Sized>(
        &mut self,
        f: &F,
        cfg: &Cfg,
        otherwise: RegAllocError,
    ) -> RegAllocError {
        self.local_stamp.clear();
        self.local_stamp.resize(f.num_vregs(), u32::MAX);
        self.check_uses(f, cfg).err().unwrap_or(otherwise)
    }

    /// Dominance of uses: a local def must come earlier in the block (never in the same
    /// instruction), a non-local one must dominate the block. Branch args are uses at
    /// the block end.
    fn check_uses<F: Function + ?Sized>(&mut self, f: &F, cfg: &Cfg) -> Result<(), RegAllocError> {
        let nv = f.num_vregs();
        for b in 0..f.num_blocks() {
            let block = Block::new(b);
            let stamp = b as u32;
            for &p in f.block_params(block) {
                self.local_stamp[p.vreg()] = stamp;
            }
            let insns = f.block_insns(block);
            for inst in insns.iter() {
                let ops = f.inst_operands(inst);
                for op in ops {
                    if op.kind() == OperandKind::Use && op.as_fixed_nonallocatable().is_none() {
                        self.check_dominated(cfg, block, stamp, op.vreg(), inst)?;
                    }
                }
                for op in ops {
                    if op.kind() == OperandKind::Def && op.as_fixed_nonallocatable().is_none() {
                        self.local_stamp[op.vreg().vreg()] = stamp;
                    }
                }
            }
            let last = insns.last();
            if f.is_branch(last) {
                for (i, &succ) in f.block_succs(block).iter().enumerate() {
                    let params = f.block_params(succ);
                    for (&arg, &param) in f.branch_blockparams(block, last, i).iter().zip(params) {
                        if arg.vreg() >= nv || arg.class() != param.class() {
                            return Err(RegAllocError::Branch(last));
                        }
                        self.note_class(arg, last)?;
                        self.check_dominated(cfg, block, stamp, arg, last)?;
                    }
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn note_copy_or_fixed(&mut self, inst: Inst) {
        if self.copy_or_fixed_insts.last() != Some(&inst) {
            self.copy_or_fixed_insts.push(inst);
        }
    }

    /// Chains an upward-exposed use of `v` in block `b`. Blocks are walked in order, so
    /// a repeat of the same block is the chain's head.
    #[inline]
    fn note_exposed(&mut self, v: VReg, b: u32) {
        let head = &mut self.exposed_head[v.vreg()];
        if *head == NO_ENTRY {
            self.exposed_vregs[v.vreg() / 64] |= 1 << (v.vreg() % 64);
        } else if self.exposed[*head as usize].0 == b {
            return;
        }
        self.exposed.push((b, *head));
        *head = (self.exposed.len() - 1) as u32;
    }

    #[inline]
    fn check_dominated(
        &self,
        cfg: &Cfg,
        block: Block,
        stamp: u32,
        v: VReg,
        inst: Inst,
    ) -> Result<(), RegAllocError> {
        let def = self.def_block[v.vreg()];
        let ok = def.is_valid()
            && if def == block {
                self.local_stamp[v.vreg()] == stamp
            } else {
                cfg.dominates(def, block)
            };
        if ok {
            Ok(())
        } else {
            Err(RegAllocError::SSA(v, inst))
        }
    }

    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn compute_liveins<F: Function + ?Sized>(
        &mut self,
        f: &F,
        cfg: &Cfg,
    ) -> Result<(), RegAllocError> {
        let nb = f.num_blocks();
        if let Err(undominated) = self.walk_liveins(f, cfg) {
            let e = self.first_use_error(f, cfg, RegAllocError::EntryLivein);
            // Only a use its definition does not dominate reaches the entry, and that
            // error comes first.
            debug_assert!(
                !undominated || !matches!(e, RegAllocError::EntryLivein),
                "an undominated use passed"
            );
            return Err(e);
        }
        // `start[b + 1]` holds the number of block `b`'s live-ins: summed, `start[b]` is
        // where they begin. Each then serves as block `b`'s fill cursor, ending at its
        // successor's start, and is shifted back once all are placed.
        let LiveIns { start, list } = &mut self.livein;
        list.clear();
        list.resize(self.reached.len(), VReg::invalid());
        // Slices, not the vectors: their lengths and pointers stay in registers.
        let (start, list) = (&mut start[..], &mut list[..]);
        for b in 0..nb {
            start[b + 1] += start[b];
        }
        let mut from = 0;
        for &(vreg, end) in &self.reached_vregs {
            for &b in &self.reached[from..end as usize] {
                let at = &mut start[b as usize];
                list[*at as usize] = vreg;
                *at += 1;
            }
            from = end as usize;
        }
        start.copy_within(0..nb, 1);
        start[0] = 0;
        Ok(())
    }

    /// Finds every exposed vreg's live-in blocks (`reached`, `reached_vregs`) and counts
    /// each block's (`livein.start[b + 1]`, `livein_count`). `Err` when the function is
    /// invalid: `true` for an exposed use its definition does not dominate, `false` for a
    /// walk reaching the entry.
    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn walk_liveins<F: Function + ?Sized>(&mut self, f: &F, cfg: &Cfg) -> Result<(), bool> {
        let nb = f.num_blocks();
        self.block_marks.clear();
        self.block_marks.resize(nb, (u32::MAX, 0));
        // A slice, not the vector: `reached` grows as it is written, and its length and
        // pointer stay in registers.
        let marks = &mut self.block_marks[..];
        let reached = &mut self.reached;
        reached.clear();
        self.reached_vregs.clear();
        let entry = f.entry_block().index() as u32;
        // Vregs in increasing order, so every livein list comes out sorted. A block is
        // marked (and its live-in recorded) when first reached, so it is visited once;
        // the blocks reached do not depend on the order they are visited.
        for word_index in 0..self.exposed_vregs.len() {
            let mut word = self.exposed_vregs[word_index];
            while word != 0 {
                let v = word_index * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let mut e = self.exposed_head[v];
                let vreg = VReg::new(v, self.class[v].unwrap_or(RegClass::Int));
                let def = self.def_block[v];
                let stamp = v as u32;
                let begin = reached.len();
                while e != NO_ENTRY {
                    let (b, prev) = self.exposed[e as usize];
                    e = prev;
                    let x = Block::new(b as usize);
                    // An exposed use needs a definition in another block dominating its own.
                    if !(def.is_valid() && def != x && cfg.dominates(def, x)) {
                        return Err(true);
                    }
                    let m = &mut marks[b as usize];
                    if m.0 != stamp {
                        *m = (stamp, m.1 + 1);
                        reached.push(b);
                    }
                }
                let mut next = begin;
                while let Some(&x) = reached.get(next) {
                    next += 1;
                    if x == entry {
                        return Err(false);
                    }
                    for &p in f.block_preds(Block::new(x as usize)) {
                        let pi = p.index();
                        let m = &mut marks[pi];
                        if p != def && m.0 != stamp {
                            *m = (stamp, m.1 + 1);
                            reached.push(pi as u32);
                        }
                    }
                }
                self.livein_count[v] = (reached.len() - begin) as u32;
                self.reached_vregs.push((vreg, reached.len() as u32));
            }
        }
        let counts = &mut self.livein.start;
        counts.clear();
        counts.push(0);
        counts.extend(self.block_marks.iter().map(|&(_, n)| n));
        Ok(())
    }
}
