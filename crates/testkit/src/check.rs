//! Correctness check of one allocation: [`check_output`] runs regalloc2's `Checker` (the
//! dataflow oracle) and, before it, every structural rule of the `Output` contract that the
//! checker cannot see (the `Output` contract as regalloc2 documents it): the allocs layout, allocations present,
//! fixed constraints exact, only allocatable registers written, edits sorted and never after
//! a terminator, no stack-to-stack moves, spill-slot geometry, and `debug_locations` order.
//!
//! The structural rules run first because the checker itself indexes `allocs` through
//! `inst_alloc_offsets` and would panic on a broken layout instead of reporting it.

use std::collections::HashMap;

use regalloc2::checker::Checker;
use regalloc2::{
    Allocation, Block, Edit, Function, Inst, InstPosition, MachineEnv, Operand, OperandConstraint,
    OperandKind, Output, PReg, PRegSet, ProgPoint, RegClass,
};

/// Whether ion allocates `func` (default options; a panic counts as no) and its output
/// passes every check at [`Strictness::Baseline`]: a checker failure of ours on an input
/// where this is false may be the checker's, not ours (a shrinker must not keep such an
/// input as our failure; `fixtures/checker-rejects-every-allocation.txt` is one).
pub fn ion_output_passes<F: Function>(func: &F, env: &MachineEnv) -> bool {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let ion = catch_unwind(AssertUnwindSafe(|| {
        regalloc2::run(func, env, &regalloc2::RegallocOptions::default())
    }));
    matches!(ion, Ok(Ok(out)) if check_output_with(func, env, &out, Strictness::Baseline).is_ok())
}

/// All checks (structural, then regalloc2's checker) at [`Strictness::Ours`]. `Err` holds a
/// human-readable list of every violation found (structural ones all reported; the checker
/// runs only if they pass).
pub fn check_output<F: Function>(func: &F, env: &MachineEnv, out: &Output) -> Result<(), String> {
    check_output_with(func, env, out, Strictness::Ours)
}

/// How strict the structural rules are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// Everything, for our allocator.
    Ours,
    /// What ion and fastalloc satisfy, for baselines: ion emits overlapping
    /// `debug_locations` for one label (the same vreg in two places across a split) and
    /// fastalloc emits ranges outside the requested ones, so neither is required.
    Baseline,
}

/// [`check_output`] at a chosen strictness.
pub fn check_output_with<F: Function>(
    func: &F,
    env: &MachineEnv,
    out: &Output,
    strictness: Strictness,
) -> Result<(), String> {
    check_structure(func, env, out, strictness)?;
    let mut checker = Checker::new(func, env);
    checker.prepare(out);
    checker
        .run()
        .map_err(|e| format!("regalloc2 checker: {e:?}"))
}

/// Only the rules the checker cannot see (usable on `?Sized` functions too).
pub fn check_structure<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    out: &Output,
    strictness: Strictness,
) -> Result<(), String> {
    let mut errs = Errors::default();
    if !check_layout(func, out, &mut errs) {
        // Everything below indexes `allocs` by the layout: stop here.
        return Err(errs.finish());
    }
    let info = EnvInfo::new(func, env);
    check_allocs(func, &info, out, &mut errs);
    check_edits(func, &info, out, &mut errs);
    check_spillslots(func, &info, out, &mut errs);
    check_debug_locations(func, out, strictness, &mut errs);
    if errs.list.is_empty() {
        Ok(())
    } else {
        Err(errs.finish())
    }
}

#[derive(Default)]
struct Errors {
    list: Vec<String>,
}

impl Errors {
    /// Keep the report readable on badly broken outputs: at most 50 entries.
    fn push(&mut self, s: String) {
        if self.list.len() < 50 {
            self.list.push(s);
        } else if self.list.len() == 50 {
            self.list.push("... (more errors omitted)".into());
        }
    }
    fn finish(self) -> String {
        self.list.join("\n")
    }
}

/// Register sets of a `MachineEnv` and the function, precomputed.
struct EnvInfo {
    allocatable: PRegSet,
    allocatable_or_scratch: PRegSet,
    fixed_stack: PRegSet,
    /// Registers that some operand of a real vreg is fixed to. regalloc2 allows fixed
    /// constraints on non-allocatable registers, and ion then may keep that vreg (and
    /// values merged with it) in the fixed register beyond the fixed operand itself, so
    /// these are legal destinations anywhere. Registers named only by
    /// `fixed_nonallocatable` operands (stack pointer, pinned registers) never are.
    fixed_in_func: PRegSet,
}

impl EnvInfo {
    fn new<F: Function + ?Sized>(func: &F, env: &MachineEnv) -> Self {
        let mut fixed_in_func = PRegSet::empty();
        for i in 0..func.num_insts() {
            for op in func.inst_operands(Inst::new(i)) {
                if let Some(p) = fixed_reg(op)
                    && op.as_fixed_nonallocatable().is_none()
                {
                    fixed_in_func.add(p);
                }
            }
        }
        let mut allocatable = PRegSet::empty();
        for c in 0..3 {
            allocatable.union_from(env.preferred_regs_by_class[c]);
            allocatable.union_from(env.non_preferred_regs_by_class[c]);
        }
        let fixed_stack: PRegSet = env.fixed_stack_slots.iter().copied().collect();
        let scratch: PRegSet = env.scratch_by_class.iter().flatten().copied().collect();
        let mut allocatable_or_scratch = allocatable;
        allocatable_or_scratch.union_from(scratch);
        EnvInfo {
            allocatable,
            allocatable_or_scratch,
            fixed_stack,
            fixed_in_func,
        }
    }

    /// May an instruction def or a move write register `r`? (Scratch is for moves only.)
    fn may_write(&self, r: PReg) -> bool {
        self.allocatable.contains(r)
            || self.fixed_stack.contains(r)
            || self.fixed_in_func.contains(r)
    }

    /// Stack memory: a spill slot or a fixed-stack PReg.
    fn is_stack(&self, a: Allocation) -> bool {
        match a.as_reg() {
            Some(r) => self.fixed_stack.contains(r),
            None => a.is_stack(),
        }
    }
}

fn fixed_reg(op: &Operand) -> Option<PReg> {
    match op.constraint() {
        OperandConstraint::FixedReg(p) => Some(p),
        _ => None,
    }
}

/// Rule 1: `inst_alloc_offsets[i] = Σ_{j<i} operands(j)`, `allocs.len()` = total operands.
fn check_layout<F: Function + ?Sized>(func: &F, out: &Output, errs: &mut Errors) -> bool {
    let n = func.num_insts();
    if out.inst_alloc_offsets.len() != n {
        errs.push(format!(
            "inst_alloc_offsets has {} entries for {} insts",
            out.inst_alloc_offsets.len(),
            n
        ));
        return false;
    }
    let mut ok = true;
    let mut total = 0usize;
    for i in 0..n {
        if out.inst_alloc_offsets[i] as usize != total {
            errs.push(format!(
                "inst_alloc_offsets[{i}] = {}, expected {total}",
                out.inst_alloc_offsets[i]
            ));
            ok = false;
        }
        total += func.inst_operands(Inst::new(i)).len();
    }
    if out.allocs.len() != total {
        errs.push(format!(
            "allocs has {} entries for {total} operands",
            out.allocs.len()
        ));
        ok = false;
    }
    ok
}

/// Rule 2 and the def half of rule 9: every alloc present; fixed constraints exact; a def
/// writes only an allocatable register, a fixed register of the function, or stack memory.
fn check_allocs<F: Function + ?Sized>(func: &F, info: &EnvInfo, out: &Output, errs: &mut Errors) {
    for i in 0..func.num_insts() {
        let inst = Inst::new(i);
        let ops = func.inst_operands(inst);
        let allocs = out.inst_allocs(inst);
        for (k, (op, &a)) in ops.iter().zip(allocs).enumerate() {
            if a.is_none() {
                errs.push(format!("{inst:?} operand {k} ({op}): no allocation"));
                continue;
            }
            if let Some(p) = fixed_reg(op) {
                if a != Allocation::reg(p) {
                    errs.push(format!(
                        "{inst:?} operand {k} ({op}): allocated {a}, fixed to {p}"
                    ));
                }
                continue;
            }
            if let Some(r) = a.as_reg() {
                if r.class() != op.class() {
                    errs.push(format!(
                        "{inst:?} operand {k} ({op}): register {r} of another class"
                    ));
                }
                if op.kind() == OperandKind::Def && !info.may_write(r) {
                    errs.push(format!(
                        "{inst:?} operand {k} ({op}): def writes non-allocatable {r}"
                    ));
                }
            }
        }
    }
}

/// Rules 4-6, 9 for edits.
fn check_edits<F: Function + ?Sized>(func: &F, info: &EnvInfo, out: &Output, errs: &mut Errors) {
    let n = func.num_insts();
    // Last inst of each block: an edit at `after(last)` is silently dropped downstream.
    let mut is_last = vec![false; n];
    for b in 0..func.num_blocks() {
        let r = func.block_insns(Block::new(b));
        if r.len() > 0 {
            is_last[r.last().index()] = true;
        }
    }
    let mut prev = None;
    for (idx, &(pt, ref e)) in out.edits.iter().enumerate() {
        let Edit::Move { from, to } = *e;
        if let Some(p) = prev
            && pt < p
        {
            errs.push(format!(
                "edit {idx} at {pt:?} comes after an edit at {p:?}: not sorted"
            ));
        }
        prev = Some(pt);
        let i = pt.inst().index();
        if i >= n {
            errs.push(format!("edit {idx} at {pt:?}: beyond the last instruction"));
            continue;
        }
        if pt.pos() == InstPosition::After && is_last[i] {
            errs.push(format!(
                "edit {idx} at {pt:?}: after a block's last instruction (would be dropped)"
            ));
        }
        if from.is_none() || to.is_none() {
            errs.push(format!(
                "edit {idx} at {pt:?}: move {from} -> {to} with a none side"
            ));
            continue;
        }
        if info.is_stack(from) && info.is_stack(to) {
            errs.push(format!(
                "edit {idx} at {pt:?}: stack-to-stack move {from} -> {to}"
            ));
        }
        if let (Some(a), Some(b)) = (from.as_reg(), to.as_reg())
            && a.class() != b.class()
        {
            errs.push(format!(
                "edit {idx} at {pt:?}: move {from} -> {to} across classes"
            ));
        }
        if let Some(r) = to.as_reg()
            && !info.may_write(r)
            && !info.allocatable_or_scratch.contains(r)
        {
            errs.push(format!(
                "edit {idx} at {pt:?}: writes {r}, which is neither allocatable nor a fixed \
                 register of the function"
            ));
        }
    }
}

/// Rule 7: a value of class `c` in spill slot `s` occupies `spillslot_size(c)` slots, aligned
/// to that size, all below `num_spillslots`.
fn check_spillslots<F: Function + ?Sized>(
    func: &F,
    info: &EnvInfo,
    out: &Output,
    errs: &mut Errors,
) {
    let by_last = func.multi_spillslot_named_by_last_slot();
    let check = |slot: usize, class: RegClass, what: &dyn Fn() -> String, errs: &mut Errors| {
        let size = func.spillslot_size(class).max(1);
        let first = if by_last {
            match (slot + 1).checked_sub(size) {
                Some(f) => f,
                None => {
                    errs.push(format!(
                        "{}: slot {slot} named by last slot of {size}",
                        what()
                    ));
                    return;
                }
            }
        } else {
            slot
        };
        if first % size != 0 {
            errs.push(format!(
                "{}: {class:?} value of {size} slots at slot {first}, not aligned",
                what()
            ));
        }
        if first + size > out.num_spillslots {
            errs.push(format!(
                "{}: uses slots {first}..{} but num_spillslots = {}",
                what(),
                first + size,
                out.num_spillslots
            ));
        }
    };
    for i in 0..func.num_insts() {
        let inst = Inst::new(i);
        for (k, (op, a)) in func
            .inst_operands(inst)
            .iter()
            .zip(out.inst_allocs(inst))
            .enumerate()
        {
            if let Some(s) = a.as_stack() {
                check(
                    s.index(),
                    op.class(),
                    &|| format!("{inst:?} operand {k} ({op})"),
                    errs,
                );
            }
        }
    }
    // An edit's class is the class of its register side (stack-to-stack is flagged above;
    // for it we cannot tell the class, so only the slot range is checked with size 1).
    let _ = info;
    for (idx, &(pt, Edit::Move { from, to })) in out.edits.iter().enumerate() {
        let class = from.as_reg().or(to.as_reg()).map(|r| r.class());
        for a in [from, to] {
            if let Some(s) = a.as_stack() {
                match class {
                    Some(c) => check(s.index(), c, &|| format!("edit {idx} at {pt:?}"), errs),
                    None if s.index() >= out.num_spillslots => errs.push(format!(
                        "edit {idx} at {pt:?}: slot {} >= num_spillslots {}",
                        s.index(),
                        out.num_spillslots
                    )),
                    None => {}
                }
            }
        }
    }
}

/// Rule 10: `debug_locations` sorted by (label, from), no reversed range, and (strict only)
/// inside a requested range of that label and disjoint per label where the requests are.
fn check_debug_locations<F: Function + ?Sized>(
    func: &F,
    out: &Output,
    strictness: Strictness,
    errs: &mut Errors,
) {
    let mut requested: HashMap<u32, Vec<(ProgPoint, ProgPoint)>> = HashMap::new();
    for &(_, from, to, label) in func.debug_value_labels() {
        requested
            .entry(label)
            .or_default()
            .push((ProgPoint::before(from), ProgPoint::before(to)));
    }
    // Disjointness per label is only owed when the requests for that label are disjoint:
    // fuzz `Func`s give one label to several vregs over overlapping ranges.
    let mut overlapping_requests = std::collections::HashSet::new();
    for (label, rs) in requested.iter_mut() {
        rs.sort_unstable();
        if rs.windows(2).any(|w| w[1].0 < w[0].1) {
            overlapping_requests.insert(*label);
        }
    }
    let mut prev: Option<(u32, ProgPoint, ProgPoint)> = None;
    for (idx, &(label, from, to, alloc)) in out.debug_locations.iter().enumerate() {
        // Empty ranges (from == to) do occur in ion's output and are harmless.
        if from > to {
            errs.push(format!(
                "debug_locations[{idx}]: reversed range {from:?}..{to:?}"
            ));
        }
        if alloc.is_none() {
            errs.push(format!("debug_locations[{idx}]: no allocation"));
        }
        if let Some((pl, pf, pt)) = prev {
            if (label, from) < (pl, pf) {
                errs.push(format!(
                    "debug_locations[{idx}]: not sorted by (label, from)"
                ));
            } else if strictness == Strictness::Ours
                && label == pl
                && from < pt
                && !overlapping_requests.contains(&label)
            {
                errs.push(format!(
                    "debug_locations[{idx}]: label {label} range {from:?}..{to:?} overlaps \
                     previous ..{pt:?}"
                ));
            }
        }
        prev = Some((label, from, to));
        let inside = requested
            .get(&label)
            .is_some_and(|rs| rs.iter().any(|&(f, t)| f <= from && to <= t));
        if !inside && strictness == Strictness::Ours {
            errs.push(format!(
                "debug_locations[{idx}]: label {label} range {from:?}..{to:?} outside every \
                 requested range"
            ));
        }
    }
}
