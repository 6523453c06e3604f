//! Redundant-move elimination inside blocks: replay a block's instructions and moves
//! while tracking which vreg each location is known to hold, and drop a move whose
//! destination already holds the value it would copy (a second reload of a spilled value
//! into the same register, a store of a value the slot already holds). Knowledge comes
//! from defs, uses and moves, and is lost at clobbers, at writes by instructions, and at
//! block boundaries.

use hashbrown::HashMap;
use regalloc2::{Allocation, Block, Edit, Function, Inst, OperandKind, Output, ProgPoint};

#[derive(Default)]
pub(crate) struct RedundantMoves {
    holds: HashMap<u32, u32>,
    kept: Vec<(ProgPoint, Edit)>,
}

impl RedundantMoves {
    /// Removes redundant moves from `out.edits`; returns how many.
    pub fn run<F: Function + ?Sized>(&mut self, f: &F, out: &mut Output) -> usize {
        let edits = std::mem::take(&mut out.edits);
        self.kept.clear();
        let mut e = 0;
        let mut removed = 0;
        for b in 0..f.num_blocks() {
            self.holds.clear();
            for inst in f.block_insns(Block::new(b)).iter() {
                removed += self.replay_edits(&edits, &mut e, ProgPoint::before(inst));
                self.replay_inst(f, out, inst);
                removed += self.replay_edits(&edits, &mut e, ProgPoint::after(inst));
            }
        }
        // Anything left (nothing should be) is kept as it was.
        self.kept.extend_from_slice(&edits[e..]);
        out.edits = std::mem::take(&mut self.kept);
        removed
    }

    fn replay_edits(&mut self, edits: &[(ProgPoint, Edit)], e: &mut usize, at: ProgPoint) -> usize {
        let mut removed = 0;
        while *e < edits.len() && edits[*e].0 == at {
            let (point, edit) = &edits[*e];
            let Edit::Move { from, to } = *edit;
            let value = self.holds.get(&from.bits()).copied();
            if value.is_some() && self.holds.get(&to.bits()).copied() == value {
                removed += 1;
            } else {
                match value {
                    Some(v) => self.holds.insert(to.bits(), v),
                    None => self.holds.remove(&to.bits()),
                };
                self.kept.push((*point, edit.clone()));
            }
            *e += 1;
        }
        removed
    }

    fn replay_inst<F: Function + ?Sized>(&mut self, f: &F, out: &Output, inst: Inst) {
        let ops = f.inst_operands(inst);
        let allocs = out.inst_allocs(inst);
        for (op, &alloc) in ops.iter().zip(allocs) {
            if op.kind() == OperandKind::Use && op.as_fixed_nonallocatable().is_none() {
                self.holds.insert(alloc.bits(), op.vreg().vreg() as u32);
            }
        }
        for clobber in f.inst_clobbers(inst) {
            self.holds.remove(&Allocation::reg(clobber).bits());
        }
        for (op, &alloc) in ops.iter().zip(allocs) {
            if op.kind() == OperandKind::Def {
                self.holds.insert(alloc.bits(), op.vreg().vreg() as u32);
            }
        }
    }
}
