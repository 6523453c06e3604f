//! `FlatFunc`: a read-only `Function` whose lists all live in a few flat arrays, one range
//! per block or instruction, as Cranelift's `VCode` keeps them. [`TestFunc`] holds a `Vec`
//! per instruction, block and edge, so every operand, predecessor or argument list an
//! allocator reads is its own heap allocation; timing allocators on it charges each read a
//! pointer chase that no Cranelift client pays, and charges it unevenly (an allocator that
//! reads predecessor lists more often pays more). The compare tool times on this type.

use crate::builder::TestFunc;
use regalloc2::{Block, Function, Inst, InstRange, Operand, PRegSet, RegClass, VReg};
use std::ops::Range;

/// A list of lists as one array and a range per list.
#[derive(Clone, Debug)]
struct Ranges<T> {
    items: Vec<T>,
    ranges: Vec<(u32, u32)>,
}

impl<T> Default for Ranges<T> {
    fn default() -> Self {
        Ranges {
            items: Vec::new(),
            ranges: Vec::new(),
        }
    }
}

impl<T: Copy> Ranges<T> {
    fn push(&mut self, list: &[T]) {
        let start = self.items.len() as u32;
        self.items.extend_from_slice(list);
        self.ranges.push((start, self.items.len() as u32));
    }

    fn get(&self, i: usize) -> &[T] {
        let (s, e) = self.ranges[i];
        &self.items[s as usize..e as usize]
    }
}

/// Whether an instruction ends its block with a branch or a return, or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ends {
    Not,
    Branch,
    Ret,
}

/// A snapshot of any `Function` in flat arrays (see the module docs).
#[derive(Clone, Debug)]
pub struct FlatFunc {
    blocks: Vec<InstRange>,
    entry: Block,
    succs: Ranges<Block>,
    preds: Ranges<Block>,
    params: Ranges<VReg>,
    /// Per block, the range of its successors' argument lists in `branch_args`.
    branch_args_of: Vec<Range<u32>>,
    branch_args: Ranges<VReg>,
    operands: Ranges<Operand>,
    clobbers: Vec<PRegSet>,
    ends: Vec<Ends>,
    num_vregs: usize,
    debug_value_labels: Vec<(VReg, Inst, Inst, u32)>,
    spillslot_size: [usize; 3],
    multi_spillslot_named_by_last_slot: bool,
    allow_multiple_vreg_defs: bool,
}

impl FlatFunc {
    /// Copies `f`'s answers to every `Function` question (predecessors as `f` reports
    /// them).
    pub fn from_function<F: Function + ?Sized>(f: &F) -> FlatFunc {
        let nb = f.num_blocks();
        let mut flat = FlatFunc {
            blocks: Vec::with_capacity(nb),
            entry: f.entry_block(),
            succs: Ranges::default(),
            preds: Ranges::default(),
            params: Ranges::default(),
            branch_args_of: Vec::with_capacity(nb),
            branch_args: Ranges::default(),
            operands: Ranges::default(),
            clobbers: Vec::with_capacity(f.num_insts()),
            ends: Vec::with_capacity(f.num_insts()),
            num_vregs: f.num_vregs(),
            debug_value_labels: f.debug_value_labels().to_vec(),
            spillslot_size: [
                f.spillslot_size(RegClass::Int),
                f.spillslot_size(RegClass::Float),
                f.spillslot_size(RegClass::Vector),
            ],
            multi_spillslot_named_by_last_slot: f.multi_spillslot_named_by_last_slot(),
            allow_multiple_vreg_defs: f.allow_multiple_vreg_defs(),
        };
        for b in 0..nb {
            let block = Block::new(b);
            let range = f.block_insns(block);
            flat.blocks.push(range);
            let succs = f.block_succs(block);
            flat.succs.push(succs);
            flat.preds.push(f.block_preds(block));
            flat.params.push(f.block_params(block));
            let first = flat.branch_args.ranges.len() as u32;
            if range.len() > 0 {
                for s in 0..succs.len() {
                    flat.branch_args
                        .push(f.branch_blockparams(block, range.last(), s));
                }
            }
            flat.branch_args_of
                .push(first..flat.branch_args.ranges.len() as u32);
        }
        for i in 0..f.num_insts() {
            let inst = Inst::new(i);
            flat.operands.push(f.inst_operands(inst));
            flat.clobbers.push(f.inst_clobbers(inst));
            flat.ends.push(if f.is_branch(inst) {
                Ends::Branch
            } else if f.is_ret(inst) {
                Ends::Ret
            } else {
                Ends::Not
            });
        }
        flat
    }
}

impl From<&TestFunc> for FlatFunc {
    fn from(f: &TestFunc) -> FlatFunc {
        FlatFunc::from_function(f)
    }
}

impl Function for FlatFunc {
    fn num_insts(&self) -> usize {
        self.ends.len()
    }
    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    fn entry_block(&self) -> Block {
        self.entry
    }
    fn block_insns(&self, block: Block) -> InstRange {
        self.blocks[block.index()]
    }
    fn block_succs(&self, block: Block) -> &[Block] {
        self.succs.get(block.index())
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        self.preds.get(block.index())
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        self.params.get(block.index())
    }
    fn is_ret(&self, insn: Inst) -> bool {
        self.ends[insn.index()] == Ends::Ret
    }
    fn is_branch(&self, insn: Inst) -> bool {
        self.ends[insn.index()] == Ends::Branch
    }
    fn branch_blockparams(&self, block: Block, _insn: Inst, succ_idx: usize) -> &[VReg] {
        // As `TestFunc`: an out-of-range successor has no arguments.
        let lists = &self.branch_args_of[block.index()];
        match lists.start.checked_add(succ_idx as u32) {
            Some(i) if i < lists.end => self.branch_args.get(i as usize),
            _ => &[],
        }
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        self.operands.get(insn.index())
    }
    fn inst_clobbers(&self, insn: Inst) -> PRegSet {
        self.clobbers[insn.index()]
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
    fn debug_value_labels(&self) -> &[(VReg, Inst, Inst, u32)] {
        &self.debug_value_labels
    }
    fn spillslot_size(&self, regclass: RegClass) -> usize {
        self.spillslot_size[regclass as usize]
    }
    fn multi_spillslot_named_by_last_slot(&self) -> bool {
        self.multi_spillslot_named_by_last_slot
    }
    fn allow_multiple_vreg_defs(&self) -> bool {
        self.allow_multiple_vreg_defs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzgen;

    /// Every answer of the flat copy is the original's, on fuzzer functions with block
    /// params, branches and clobbers.
    #[test]
    fn a_flat_copy_answers_as_the_original() {
        let mut checked = 0;
        for seed in 0..200u64 {
            let Some(f) = fuzzgen::func_from_seed(seed, &fuzzgen::small_env_options(4)) else {
                continue;
            };
            let t = TestFunc::from_function(&f);
            let flat = FlatFunc::from(&t);
            assert_eq!(flat.num_insts(), t.num_insts());
            assert_eq!(flat.num_blocks(), t.num_blocks());
            assert_eq!(flat.entry_block(), t.entry_block());
            assert_eq!(flat.num_vregs(), t.num_vregs());
            for b in 0..t.num_blocks() {
                let b = Block::new(b);
                let (fr, tr) = (flat.block_insns(b), t.block_insns(b));
                assert_eq!((fr.first(), fr.len()), (tr.first(), tr.len()));
                assert_eq!(flat.block_succs(b), t.block_succs(b));
                assert_eq!(flat.block_preds(b), t.block_preds(b));
                assert_eq!(flat.block_params(b), t.block_params(b));
                let last = t.block_insns(b).last();
                for s in 0..=t.block_succs(b).len() {
                    assert_eq!(
                        flat.branch_blockparams(b, last, s),
                        t.branch_blockparams(b, last, s)
                    );
                }
            }
            for i in 0..t.num_insts() {
                let i = Inst::new(i);
                assert_eq!(flat.inst_operands(i), t.inst_operands(i));
                assert_eq!(flat.inst_clobbers(i), t.inst_clobbers(i));
                assert_eq!(flat.is_branch(i), t.is_branch(i));
                assert_eq!(flat.is_ret(i), t.is_ret(i));
            }
            for c in [RegClass::Int, RegClass::Float, RegClass::Vector] {
                assert_eq!(flat.spillslot_size(c), t.spillslot_size(c));
            }
            checked += 1;
        }
        assert!(checked > 50, "{checked} functions");
    }
}
