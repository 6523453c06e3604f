//! An input validator: does a `Function` obey regalloc2's input rules (the `Function`
//! trait's documented contract: SSA, CFG shape, operand shapes)? Used by the `malformed` fuzz check to decide whether a mutated function must be
//! rejected with a `RegAllocError` or must be allocated correctly.
//!
//! It must never panic, whatever the function claims (ids out of range, overlapping or
//! reversed instruction ranges), because it runs on deliberately broken inputs: every id is
//! range-checked before it is used as an index. It is at least as strict as ion's own
//! `validate_ssa` + CFG checks, and also checks what ion's validation skips (branch
//! arguments as dominated uses, operand vreg ids and classes, `Reuse` indices).

use regalloc2::{Block, Function, OperandConstraint, OperandKind, VReg};

use crate::cost::Cfg;

/// `Ok` if `f` is a valid regalloc2 input; otherwise the first rule broken.
pub fn validate_input<F: Function + ?Sized>(f: &F) -> Result<(), String> {
    let nb = f.num_blocks();
    let ni = f.num_insts();
    let nv = f.num_vregs();
    if nb == 0 {
        return Err("no blocks".into());
    }
    if f.entry_block().index() >= nb {
        return Err("entry block out of range".into());
    }
    // Layout: contiguous, in order, non-empty, covering every instruction.
    let mut next = 0;
    for b in 0..nb {
        let r = f.block_insns(Block::new(b));
        // `InstRange::first` asserts non-emptiness: test the length first.
        if r.len() == 0 || r.first().index() != next {
            return Err(format!("block {b}: range not contiguous or empty"));
        }
        next = r.first().index() + r.len();
        if next > ni {
            return Err(format!("block {b}: range beyond num_insts"));
        }
    }
    if next != ni {
        return Err("instructions outside every block".into());
    }
    // Successor / predecessor ids and consistency.
    for b in 0..nb {
        let block = Block::new(b);
        if let Some(s) = f.block_succs(block).iter().find(|s| s.index() >= nb) {
            return Err(format!("block {b}: successor {} out of range", s.index()));
        }
        if let Some(p) = f.block_preds(block).iter().find(|p| p.index() >= nb) {
            return Err(format!("block {b}: predecessor {} out of range", p.index()));
        }
    }
    let cfg = Cfg::new(f);
    for b in 0..nb {
        let mut claimed: Vec<usize> = f
            .block_preds(Block::new(b))
            .iter()
            .map(|p| p.index())
            .collect();
        let mut actual = cfg.preds[b].clone();
        claimed.sort_unstable();
        actual.sort_unstable();
        if claimed != actual {
            return Err(format!(
                "block {b}: preds {claimed:?} disagree with succs {actual:?}"
            ));
        }
    }
    let entry = f.entry_block().index();
    let npreds = |b: usize| cfg.preds[b].len() + usize::from(b == entry);
    // Terminators, critical edges, branch args.
    for b in 0..nb {
        let block = Block::new(b);
        let r = f.block_insns(block);
        for i in r.iter() {
            let term = f.is_branch(i) || f.is_ret(i);
            if (i == r.last()) != term {
                return Err(format!(
                    "block {b}: terminator missing or mid-block at inst {}",
                    i.index()
                ));
            }
        }
        let last = r.last();
        let succs = f.block_succs(block);
        if f.is_ret(last) && !succs.is_empty() {
            return Err(format!("block {b}: ret with successors"));
        }
        if f.is_branch(last) && succs.is_empty() {
            return Err(format!("block {b}: branch without successors"));
        }
        for (k, s) in succs.iter().enumerate() {
            let s = s.index();
            if succs.len() > 1 && npreds(s) > 1 {
                return Err(format!("critical edge {b} -> {s}"));
            }
            if npreds(s) > 1 && !f.inst_operands(last).is_empty() {
                return Err(format!(
                    "block {b}: branch operands with a multi-pred successor"
                ));
            }
            if f.is_branch(last) {
                let args = f.branch_blockparams(block, last, k);
                let params = f.block_params(Block::new(s));
                if args.len() != params.len() {
                    return Err(format!(
                        "block {b}: {} args for {} params of {s}",
                        args.len(),
                        params.len()
                    ));
                }
                for (a, p) in args.iter().zip(params) {
                    if a.vreg() >= nv || a.class() != p.class() {
                        return Err(format!("block {b}: branch arg {a} bad for param {p}"));
                    }
                }
            }
        }
    }
    if !f.block_params(Block::new(entry)).is_empty() {
        return Err("entry block has params".into());
    }
    // Operands well-formed; single definitions.
    let mut def_block = vec![usize::MAX; nv];
    let mut def_inst = vec![usize::MAX; nv]; // usize::MAX - 1 = block param
    let mut define = |v: VReg, b: usize, i: usize| -> Result<(), String> {
        if v.vreg() >= nv {
            return Err(format!("{v} out of range (num_vregs {nv})"));
        }
        let slot = v.vreg();
        if def_block[slot] != usize::MAX {
            // Several defs in one instruction are legal only with allow_multiple_vreg_defs.
            if !(f.allow_multiple_vreg_defs() && def_inst[slot] == i && i < usize::MAX - 1) {
                return Err(format!("{v} defined twice"));
            }
        }
        def_block[slot] = b;
        def_inst[slot] = i;
        Ok(())
    };
    for b in 0..nb {
        for &p in f.block_params(Block::new(b)) {
            define(p, b, usize::MAX - 1)?;
        }
        for i in f.block_insns(Block::new(b)).iter() {
            let ops = f.inst_operands(i);
            for (k, op) in ops.iter().enumerate() {
                if op.as_fixed_nonallocatable().is_some() {
                    continue;
                }
                if op.vreg().vreg() >= nv {
                    return Err(format!(
                        "inst {} operand {k}: {} out of range",
                        i.index(),
                        op.vreg()
                    ));
                }
                match op.constraint() {
                    OperandConstraint::FixedReg(p) if p.class() != op.class() => {
                        return Err(format!(
                            "inst {} operand {k}: fixed reg of another class",
                            i.index()
                        ));
                    }
                    OperandConstraint::Reuse(idx) => {
                        let ok = op.kind() == OperandKind::Def
                            && ops.get(idx).is_some_and(|r| {
                                // regalloc2 requires the reused input to be a plain `Reg`
                                // use (ion mis-allocates a reused fixed use).
                                r.kind() == OperandKind::Use
                                    && r.class() == op.class()
                                    && r.constraint() == OperandConstraint::Reg
                            });
                        if !ok {
                            return Err(format!(
                                "inst {} operand {k}: bad reuse index {idx}",
                                i.index()
                            ));
                        }
                    }
                    _ => {}
                }
                if op.kind() == OperandKind::Def {
                    define(op.vreg(), b, i.index())?;
                }
            }
        }
    }
    // Uses dominated by defs (reachable blocks only: no dominance exists elsewhere); an
    // instruction may not use what it defines.
    let dominated = |v: VReg, b: usize, at: usize| -> bool {
        let db = def_block[v.vreg()];
        if db == usize::MAX {
            return false;
        }
        if db == b {
            let di = def_inst[v.vreg()];
            di == usize::MAX - 1 || di < at
        } else {
            cfg.dominates(db, b)
        }
    };
    for b in 0..nb {
        if !cfg.reachable[b] {
            continue;
        }
        let block = Block::new(b);
        let r = f.block_insns(block);
        for i in r.iter() {
            for op in f.inst_operands(i) {
                if op.kind() == OperandKind::Use
                    && op.as_fixed_nonallocatable().is_none()
                    && !dominated(op.vreg(), b, i.index())
                {
                    return Err(format!(
                        "inst {}: use of {} not dominated by its def",
                        i.index(),
                        op.vreg()
                    ));
                }
            }
        }
        let last = r.last();
        if f.is_branch(last) {
            for k in 0..f.block_succs(block).len() {
                for &a in f.branch_blockparams(block, last, k) {
                    // Branch args are read at the end of the block, after the branch's defs.
                    if !dominated(a, b, last.index() + 1) {
                        return Err(format!(
                            "block {b}: branch arg {a} not dominated by its def"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}
