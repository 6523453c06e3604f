//! Mutations that break regalloc2's input rules (or make an input unallocatable), applied to
//! a valid [`TestFunc`] for the `malformed` check. Each mutation is small and targeted, so a
//! crash report names the rule the allocator failed to guard; several can be stacked.
//! Mutations keep `TestFunc` itself indexable (its `Function` methods must not panic for ids
//! the function itself hands out), except where the rule broken *is* an out-of-range id.

use arbitrary::Unstructured;
use ragreedy_testkit::builder::{InstKind, TestFunc};
use regalloc2::{Block, Inst, InstRange, MachineEnv, Operand, OperandKind, RegClass, VReg};

use crate::{fresh_vreg, op_insts};

/// The rule a mutation breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// A second def of an existing vreg (not SSA).
    DuplicateDef,
    /// A use of an existing vreg at a random instruction (often not dominated by its def).
    UndominatedUse,
    /// A use of a vreg that is never defined (live into the entry block).
    UndefinedUse,
    /// An operand naming a vreg id >= `num_vregs`.
    VRegOutOfRange,
    /// A successor id >= `num_blocks`.
    BlockOutOfRange,
    /// An extra successor that creates a critical edge.
    CriticalEdge,
    /// One branch-argument list one longer or shorter than the target's params.
    ArgCountMismatch,
    /// A branch argument of the wrong class.
    ArgClassMismatch,
    /// Register operands on a branch whose successor has several predecessors.
    BranchOperandsToJoin,
    /// A block's terminator turned into a plain op, or a plain op into a return.
    Terminator,
    /// Params on the entry block.
    EntryParams,
    /// A `Reuse` constraint pointing at a missing or non-use operand.
    BadReuse,
    /// An instruction that uses a vreg it defines. (A fixed register of the wrong class
    /// is not representable: `Operand` stores only the fixed register's encoding.)
    UseOfOwnDef,
    /// Block instruction ranges that overlap, skip or leave out instructions.
    BrokenLayout,
    /// More register-constrained temps than registers, or two fixed defs of one register,
    /// at one instruction (valid input, but unallocatable).
    TooManyConstraints,
}

const ALL: [Mutation; 15] = [
    Mutation::DuplicateDef,
    Mutation::UndominatedUse,
    Mutation::UndefinedUse,
    Mutation::VRegOutOfRange,
    Mutation::BlockOutOfRange,
    Mutation::CriticalEdge,
    Mutation::ArgCountMismatch,
    Mutation::ArgClassMismatch,
    Mutation::BranchOperandsToJoin,
    Mutation::Terminator,
    Mutation::EntryParams,
    Mutation::BadReuse,
    Mutation::UseOfOwnDef,
    Mutation::BrokenLayout,
    Mutation::TooManyConstraints,
];

fn pick<T: Copy>(u: &mut Unstructured<'_>, v: &[T]) -> Option<T> {
    u.choose(v).ok().copied()
}

/// All vregs with a def (operands and block params), for reuse in mutations.
fn defined_vregs(f: &TestFunc) -> Vec<VReg> {
    let mut v: Vec<VReg> = f.block_params.iter().flatten().copied().collect();
    for inst in &f.insts {
        for op in &inst.operands {
            if op.kind() == OperandKind::Def && op.as_fixed_nonallocatable().is_none() {
                v.push(op.vreg());
            }
        }
    }
    v
}

/// The last instruction of block `b`, if its range is non-empty and in bounds.
fn last_inst(f: &TestFunc, b: usize) -> Option<usize> {
    let r = f.blocks[b];
    if r.len() == 0 {
        return None; // `InstRange::first` asserts non-emptiness
    }
    let last = r.first().index() + r.len() - 1;
    (last < f.insts.len()).then_some(last)
}

fn branch_blocks(f: &TestFunc) -> Vec<usize> {
    (0..f.blocks.len())
        .filter(|&b| last_inst(f, b).is_some_and(|l| f.insts[l].kind == InstKind::Branch))
        .collect()
}

/// Apply one mutation chosen by `u`; `None` if the chosen one does not apply to `f`.
pub fn mutate(f: &mut TestFunc, env: &MachineEnv, u: &mut Unstructured<'_>) -> Option<Mutation> {
    let m = pick(u, &ALL)?;
    let ops = op_insts(f);
    let nb = f.blocks.len();
    match m {
        Mutation::DuplicateDef => {
            let v = pick(u, &defined_vregs(f))?;
            let i = pick(u, &ops)?;
            // A second def in the *same* instruction is legal under
            // `allow_multiple_vreg_defs` (though ion's validator rejects it): ambiguous, skip.
            if f.insts[i].operands.iter().any(|o| o.vreg() == v) {
                return None;
            }
            f.insts[i].operands.push(Operand::reg_def(v));
        }
        Mutation::UndominatedUse => {
            let v = pick(u, &defined_vregs(f))?;
            let i = pick(u, &ops)?;
            f.insts[i].operands.push(Operand::reg_use(v));
        }
        Mutation::UndefinedUse => {
            let v = fresh_vreg(f, RegClass::Int);
            let i = pick(u, &ops)?;
            f.insts[i].operands.push(Operand::any_use(v));
        }
        Mutation::VRegOutOfRange => {
            let i = pick(u, &ops)?;
            let extra = u.int_in_range(0..=1000usize).ok()?;
            let v = VReg::new(f.num_vregs + extra, RegClass::Float);
            let op = if u.arbitrary::<bool>().ok()? {
                Operand::reg_use(v)
            } else {
                Operand::reg_def(v)
            };
            f.insts[i].operands.push(op);
        }
        Mutation::BlockOutOfRange => {
            let b = pick(u, &branch_blocks(f))?;
            let extra = u.int_in_range(0..=5usize).ok()?;
            f.block_succs[b].push(Block::new(nb + extra));
            f.branch_args[b].push(vec![]);
            // Preds are recomputed from in-range succs only; the bad id stays in succs.
            f.recompute_preds();
        }
        Mutation::CriticalEdge => {
            let b = pick(u, &branch_blocks(f))?;
            let t = u.int_in_range(0..=nb - 1).ok()?;
            // Args of the right classes (from any def: dominance is not the point here).
            let defs = defined_vregs(f);
            let mut args = vec![];
            for p in f.block_params[t].clone() {
                let same: Vec<VReg> = defs
                    .iter()
                    .copied()
                    .filter(|v| v.class() == p.class())
                    .collect();
                args.push(pick(u, &same)?);
            }
            f.block_succs[b].push(Block::new(t));
            f.branch_args[b].push(args);
            f.recompute_preds();
        }
        Mutation::ArgCountMismatch => {
            let b = pick(u, &branch_blocks(f))?;
            let k = u.choose_index(f.branch_args[b].len()).ok()?;
            if f.branch_args[b][k].pop().is_none() {
                let v = pick(u, &defined_vregs(f))?;
                f.branch_args[b][k].push(v);
            }
        }
        Mutation::ArgClassMismatch => {
            let cands: Vec<(usize, usize, usize)> = (0..nb)
                .flat_map(|b| {
                    f.branch_args[b]
                        .iter()
                        .enumerate()
                        .flat_map(move |(k, a)| (0..a.len()).map(move |j| (b, k, j)))
                })
                .collect();
            let (b, k, j) = pick(u, &cands)?;
            let old = f.branch_args[b][k][j];
            let other: Vec<VReg> = defined_vregs(f)
                .into_iter()
                .filter(|v| v.class() != old.class())
                .collect();
            f.branch_args[b][k][j] = pick(u, &other)?;
        }
        Mutation::BranchOperandsToJoin => {
            let cands: Vec<usize> = branch_blocks(f)
                .into_iter()
                .filter(|&b| {
                    f.block_succs[b]
                        .iter()
                        .any(|s| s.index() < nb && f.block_preds[s.index()].len() > 1)
                })
                .collect();
            let b = pick(u, &cands)?;
            let v = pick(u, &defined_vregs(f))?;
            let last = last_inst(f, b)?;
            f.insts[last].operands.push(Operand::reg_use(v));
        }
        Mutation::Terminator => {
            if u.arbitrary::<bool>().ok()? {
                let b = u.int_in_range(0..=nb - 1).ok()?;
                let last = last_inst(f, b)?;
                f.insts[last].kind = InstKind::Op;
            } else {
                let i = pick(u, &ops)?;
                f.insts[i].kind = InstKind::Ret;
            }
        }
        Mutation::EntryParams => {
            let v = fresh_vreg(f, RegClass::Int);
            let e = f.entry.index();
            f.block_params[e].push(v);
        }
        Mutation::BadReuse => {
            let i = pick(u, &ops)?;
            let v = fresh_vreg(f, RegClass::Int);
            // Reuse indices are 5 bits in `Operand`; 31 is beyond nearly every operand list.
            let idx = u.int_in_range(0..=31usize).ok()?;
            f.insts[i]
                .operands
                .insert(0, Operand::reg_reuse_def(v, idx));
        }
        Mutation::UseOfOwnDef => {
            let i = pick(u, &ops)?;
            let v = f.insts[i]
                .operands
                .iter()
                .find(|o| o.kind() == OperandKind::Def && o.as_fixed_nonallocatable().is_none())?
                .vreg();
            f.insts[i].operands.push(Operand::reg_use(v));
        }
        Mutation::BrokenLayout => {
            let b = u.int_in_range(0..=nb - 1).ok()?;
            let r = f.blocks[b];
            if r.len() == 0 {
                return None;
            }
            let (first, len) = (r.first().index(), r.len());
            let n = f.insts.len();
            f.blocks[b] = match u.int_in_range(0..=2u8).ok()? {
                // Empty block.
                0 => InstRange::new(Inst::new(first), Inst::new(first)),
                // Shorter: the last instruction belongs to no block.
                1 if len > 1 => InstRange::new(Inst::new(first), Inst::new(first + len - 1)),
                // Longer: overlaps the next block (stays within num_insts).
                _ => InstRange::new(Inst::new(first), Inst::new((first + len + 1).min(n))),
            };
        }
        Mutation::TooManyConstraints => {
            let i = pick(u, &ops)?;
            if u.arbitrary::<bool>().ok()? {
                // One more Int register temp than allocatable Int registers.
                let k =
                    env.preferred_regs_by_class[0].len() + env.non_preferred_regs_by_class[0].len();
                for _ in 0..=k {
                    let t = fresh_vreg(f, RegClass::Int);
                    f.insts[i].operands.push(Operand::reg_temp(t));
                }
            } else {
                // Two values both fixed-defined in one register.
                let p = env.preferred_regs_by_class[0].into_iter().next()?;
                let (a, b) = (fresh_vreg(f, RegClass::Int), fresh_vreg(f, RegClass::Int));
                f.insts[i].operands.push(Operand::reg_fixed_def(a, p));
                f.insts[i].operands.push(Operand::reg_fixed_def(b, p));
            }
        }
    }
    Some(m)
}
