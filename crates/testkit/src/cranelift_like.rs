//! A generator of Cranelift-x64-shaped functions, for the shapes regalloc2's fuzzer `Func`
//! never produces: `Stack` constraints, operands on multi-successor branches, two-address
//! code full of `Reuse` operands, SysV calls (fixed argument/return registers and ~25
//! clobbers) with values live across them, `fixed_nonallocatable` stack/frame pointers, the
//! 192 reserved "pinned" vreg ids, nested loops (so block frequencies matter), Float values
//! with `spillslot_size` 2, and `allow_multiple_vreg_defs = true`.
//!
//! Generation is structured (straight code, if/else diamonds, if-without-else through an
//! empty edge block, multi-way switches, do-while and while loops, nested), so the CFG is
//! reducible, has no critical edges by construction, and every use is dominated by its def:
//! the set of available values is passed down the recursion and only values defined on every
//! path (dominating blocks, or join-block params) survive a join. Blocks are created in
//! reverse postorder, the layout Cranelift produces. Choices are read from an
//! `arbitrary::Unstructured`; once its data runs out every choice takes its first option and
//! generation still terminates, because every loop is bounded by an instruction budget.
//!
//! About pinned vregs: Cranelift 0.135 reserves vreg ids 0..192 (one per `PReg` index) but
//! never passes them to the allocator — real registers in operands become
//! `fixed_nonallocatable` operands. So here vreg ids 0..192 exist (`num_vregs` counts them)
//! and are mostly unused; a few are used the way the ids suggest (vreg `p.index()` defined
//! once and used with `FixedReg(p)` constraints), which is legal regalloc2 input.

use arbitrary::{Arbitrary, Unstructured};
use regalloc2::{
    Block, MachineEnv, Operand, OperandConstraint, OperandKind, OperandPos, PReg, PRegSet,
    RegClass, VReg,
};

use crate::builder::{FuncBuilder, InstId, TestFunc};
use crate::fuzzgen::{SplitMix64, restrict_env};

/// x64 hardware encodings.
pub mod x64 {
    pub const RAX: usize = 0;
    pub const RCX: usize = 1;
    pub const RDX: usize = 2;
    pub const RBX: usize = 3;
    pub const RSP: usize = 4;
    pub const RBP: usize = 5;
    pub const RSI: usize = 6;
    pub const RDI: usize = 7;
    pub const R8: usize = 8;
    pub const R9: usize = 9;
    pub const R10: usize = 10;
    pub const R11: usize = 11;
    pub const R12: usize = 12;
    pub const R15: usize = 15;
    /// SysV integer argument registers in order.
    pub const INT_ARGS: [usize; 6] = [RDI, RSI, RDX, RCX, R8, R9];
    /// Caller-saved GPRs (clobbered by a call).
    pub const INT_CALLER_SAVED: [usize; 9] = [RAX, RCX, RDX, RSI, RDI, R8, R9, R10, R11];
}

fn gpr(i: usize) -> PReg {
    PReg::new(i, RegClass::Int)
}
fn xmm(i: usize) -> PReg {
    PReg::new(i, RegClass::Float)
}

/// The environment Cranelift 0.135 gives regalloc2 on x64 SysV (no pinned register):
/// preferred rsi, rdi, rax, rcx, rdx, r8-r11 / xmm0-7; non-preferred rbx, r12-r15 /
/// xmm8-15; no scratch, no fixed stack slots.
pub fn x64_env() -> MachineEnv {
    use x64::*;
    let pref_int: PRegSet = [RSI, RDI, RAX, RCX, RDX, R8, R9, R10, R11]
        .into_iter()
        .map(gpr)
        .collect();
    let nonpref_int: PRegSet = [RBX, R12, 13, 14, R15].into_iter().map(gpr).collect();
    MachineEnv {
        preferred_regs_by_class: [pref_int, (0..8).map(xmm).collect(), PRegSet::empty()],
        non_preferred_regs_by_class: [nonpref_int, (8..16).map(xmm).collect(), PRegSet::empty()],
        scratch_by_class: [None; 3],
        fixed_stack_slots: vec![],
    }
}

/// [`x64_env`] with only `k` allocatable registers per class (see
/// [`restrict_env`](crate::fuzzgen::restrict_env)); the dropped registers stay legal as fixed
/// operands (call arguments, returns).
pub fn x64_env_k(k: usize) -> MachineEnv {
    restrict_env(&x64_env(), k)
}

/// Number of vreg ids Cranelift reserves for pinned registers.
pub const PINNED_VREGS: usize = 192;

/// Size knobs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Upper bound on instructions (the generator stops adding statements at this budget).
    pub max_insts: usize,
    /// Maximum loop nesting.
    pub max_loop_depth: usize,
    /// Maximum if/switch nesting.
    pub max_if_depth: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_insts: 300,
            max_loop_depth: 3,
            max_if_depth: 3,
        }
    }
}

/// A generated function. `Arbitrary` with the default [`Config`].
#[derive(Clone, Debug)]
pub struct CraneliftLike(pub TestFunc);

impl<'a> Arbitrary<'a> for CraneliftLike {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(CraneliftLike(generate(u, &Config::default())))
    }
}

/// A function from `seed` (deterministic; 4 KiB of SplitMix64 bytes).
pub fn from_seed(seed: u64) -> TestFunc {
    let bytes = SplitMix64(seed).bytes(4096);
    generate(&mut Unstructured::new(&bytes), &Config::default())
}

/// Generate one function; never fails (exhausted input only makes it smaller).
pub fn generate(u: &mut Unstructured<'_>, cfg: &Config) -> TestFunc {
    let budget = 8 + u.int_in_range(0..=cfg.max_insts.max(8) - 8).unwrap_or(0);
    let mut g = Gen {
        u,
        b: FuncBuilder::new(),
        budget,
        cfg: cfg.clone(),
        pinned_defined: PRegSet::empty(),
        labels: vec![],
    };
    g.b.reserve_vregs(PINNED_VREGS);
    g.b.spillslot_size(RegClass::Int, 1)
        .spillslot_size(RegClass::Float, 2)
        .allow_multiple_vreg_defs(true);
    let entry = g.b.block();
    let mut avail = Avail::default();
    // The `args` pseudo-instruction: fixed defs of the incoming argument registers.
    let nint = 1 + g.pick(6);
    let nflt = 1 + g.pick(4);
    let mut ops = vec![];
    for &r in &x64::INT_ARGS[..nint] {
        let v = g.b.vreg(RegClass::Int);
        ops.push(Operand::reg_fixed_def(v, gpr(r)));
        avail.push(v);
    }
    for r in 0..nflt {
        let v = g.b.vreg(RegClass::Float);
        ops.push(Operand::reg_fixed_def(v, xmm(r)));
        avail.push(v);
    }
    let args = g.b.inst(entry, &ops);
    g.labels.extend(avail.all.iter().map(|&v| (v, args)));
    let end = g.region(entry, &mut avail, 0, 0);
    // Return one int (rax) and maybe one float (xmm0).
    let mut ops = vec![Operand::reg_fixed_use(
        g.value(&avail, RegClass::Int),
        gpr(x64::RAX),
    )];
    if g.chance(50) {
        ops.push(Operand::reg_fixed_use(
            g.value(&avail, RegClass::Float),
            xmm(0),
        ));
    }
    let ret = g.b.ret(end, &ops);
    // Debug labels: one label per value (its vreg index), from its def to the return.
    let labels = std::mem::take(&mut g.labels);
    for (v, from) in labels {
        if g.chance(20) {
            g.b.debug_label(v, from, ret, v.vreg() as u32);
        }
    }
    g.b.build().func
}

/// Values available (dominating) at the current point, most recent last.
#[derive(Clone, Default)]
struct Avail {
    all: Vec<VReg>,
}

impl Avail {
    fn push(&mut self, v: VReg) {
        self.all.push(v);
    }
}

struct Gen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    b: FuncBuilder,
    budget: usize,
    cfg: Config,
    /// Pinned-style vregs already defined (each at most once: SSA).
    pinned_defined: PRegSet,
    /// Values that may get a debug label, with their defining instruction.
    labels: Vec<(VReg, InstId)>,
}

impl Gen<'_, '_> {
    /// `0..n` (0 when the input is exhausted).
    fn pick(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.u.choose_index(n).unwrap_or(0)
    }

    /// True with roughly `percent`% probability; false once the input is exhausted, so that
    /// optional shapes stop appearing rather than repeat forever.
    fn chance(&mut self, percent: u8) -> bool {
        if self.u.is_empty() {
            return false;
        }
        self.u.int_in_range(0..=99u8).unwrap_or(100) < percent
    }

    fn class(&mut self) -> RegClass {
        if self.chance(30) {
            RegClass::Float
        } else {
            RegClass::Int
        }
    }

    /// An available value of `class`, biased to recent ones (short live ranges) with some
    /// old ones (long ranges across loops and calls). The entry `args` instruction defines
    /// at least one value of each class, so one always exists.
    fn value(&mut self, avail: &Avail, class: RegClass) -> VReg {
        let cands: Vec<VReg> = avail
            .all
            .iter()
            .copied()
            .filter(|v| v.class() == class)
            .collect();
        debug_assert!(!cands.is_empty());
        let n = cands.len();
        if self.chance(65) {
            let w = n.min(4);
            cands[n - 1 - self.pick(w)]
        } else {
            cands[self.pick(n)]
        }
    }

    fn def(&mut self, class: RegClass, avail: &mut Avail) -> VReg {
        let v = self.b.vreg(class);
        avail.push(v);
        v
    }

    /// Straight code and nested control flow starting in `cur`; returns the block where
    /// control continues (not yet terminated).
    fn region(&mut self, mut cur: Block, avail: &mut Avail, loops: usize, ifs: usize) -> Block {
        let stmts = 1 + self.pick(6);
        for _ in 0..stmts {
            if self.budget == 0 {
                break;
            }
            match self.pick(10) {
                0 | 1 if ifs < self.cfg.max_if_depth => cur = self.if_else(cur, avail, loops, ifs),
                2 if ifs < self.cfg.max_if_depth => cur = self.switch(cur, avail, loops, ifs),
                3 if loops < self.cfg.max_loop_depth => cur = self.do_while(cur, avail, loops, ifs),
                4 if loops < self.cfg.max_loop_depth => {
                    cur = self.while_loop(cur, avail, loops, ifs)
                }
                _ => {
                    let n = 1 + self.pick(8);
                    for _ in 0..n {
                        self.inst(cur, avail);
                    }
                }
            }
        }
        cur
    }

    /// Block params for a join: 0..3 values of random classes.
    fn params(&mut self) -> Vec<VReg> {
        let n = self.pick(4);
        (0..n)
            .map(|_| {
                let c = self.class();
                self.b.vreg(c)
            })
            .collect()
    }

    fn args_for(&mut self, params: &[VReg], avail: &Avail) -> Vec<VReg> {
        params
            .iter()
            .map(|p| self.value(avail, p.class()))
            .collect()
    }

    /// A multi-successor branch. Every successor has exactly one predecessor (we split
    /// critical edges by construction), so the branch may read a condition register.
    fn cond_branch(&mut self, cur: Block, avail: &Avail, targets: &[(Block, Vec<VReg>)]) {
        let ops = if self.chance(85) {
            vec![Operand::reg_use(self.value(avail, RegClass::Int))]
        } else {
            vec![]
        };
        let t: Vec<(Block, &[VReg])> = targets.iter().map(|(b, a)| (*b, &a[..])).collect();
        self.b.branch(cur, &ops, &t);
        self.budget = self.budget.saturating_sub(1);
    }

    /// cur -> (then | else) -> join(params). Sometimes "if without else": the else edge goes
    /// through an empty edge block (the critical edge cur -> join, split).
    fn if_else(&mut self, cur: Block, avail: &mut Avail, loops: usize, ifs: usize) -> Block {
        let t = self.b.block();
        let mut at = avail.clone();
        let t_end = self.region(t, &mut at, loops, ifs + 1);
        let f = self.b.block();
        let mut af = avail.clone();
        let empty_else = self.chance(30);
        let f_end = if empty_else {
            f
        } else {
            self.region(f, &mut af, loops, ifs + 1)
        };
        let params = self.params();
        let join = self.b.block_with_params(&params);
        // The arms take no params here; `switch` covers args on a multi-successor branch.
        self.cond_branch(cur, avail, &[(t, vec![]), (f, vec![])]);
        let ta = self.args_for(&params, &at);
        self.b.jump(t_end, join, &ta);
        let fa = self.args_for(&params, &af);
        self.b.jump(f_end, join, &fa);
        for &p in &params {
            avail.push(p);
        }
        join
    }

    /// A br_table: cur -> 2..4 cases (one with block params fed by the branch) -> join.
    fn switch(&mut self, cur: Block, avail: &mut Avail, loops: usize, ifs: usize) -> Block {
        let n = 2 + self.pick(3);
        let mut targets = vec![];
        let mut ends = vec![];
        for i in 0..n {
            // The first case takes block params, passed by the multi-successor branch itself.
            let cparams = if i == 0 { self.params() } else { vec![] };
            let c = self.b.block_with_params(&cparams);
            let cargs = self.args_for(&cparams, avail);
            let mut ac = avail.clone();
            for &p in &cparams {
                ac.push(p);
            }
            let end = self.region(c, &mut ac, loops, ifs + 1);
            targets.push((c, cargs));
            ends.push((end, ac));
        }
        let params = self.params();
        let join = self.b.block_with_params(&params);
        self.cond_branch(cur, avail, &targets);
        for (end, ac) in ends {
            let a = self.args_for(&params, &ac);
            self.b.jump(end, join, &a);
        }
        for &p in &params {
            avail.push(p);
        }
        join
    }

    /// cur -> header(params) -> body ... body_end -> latch -> header | exit.
    fn do_while(&mut self, cur: Block, avail: &mut Avail, loops: usize, ifs: usize) -> Block {
        let params = self.params();
        let header = self.b.block_with_params(&params);
        let init = self.args_for(&params, avail);
        self.b.jump(cur, header, &init);
        let mut ab = avail.clone();
        for &p in &params {
            ab.push(p);
        }
        let body_end = self.region(header, &mut ab, loops + 1, ifs);
        let latch = self.b.block();
        let exit = self.b.block();
        self.cond_branch(body_end, &ab, &[(latch, vec![]), (exit, vec![])]);
        let next = self.args_for(&params, &ab);
        self.b.jump(latch, header, &next);
        // The exit is dominated by body_end: everything available there stays available.
        *avail = ab;
        exit
    }

    /// cur -> header(params) -> (body ... -> header) | exit.
    fn while_loop(&mut self, cur: Block, avail: &mut Avail, loops: usize, ifs: usize) -> Block {
        let params = self.params();
        let header = self.b.block_with_params(&params);
        let init = self.args_for(&params, avail);
        self.b.jump(cur, header, &init);
        for &p in &params {
            avail.push(p);
        }
        // Header computes the condition.
        self.inst(header, avail);
        let body = self.b.block();
        let mut ab = avail.clone();
        let body_end = self.region(body, &mut ab, loops + 1, ifs);
        let exit = self.b.block();
        self.cond_branch(header, avail, &[(body, vec![]), (exit, vec![])]);
        let next = self.args_for(&params, &ab);
        self.b.jump(body_end, header, &next);
        exit
    }

    /// One x64-like instruction.
    fn inst(&mut self, blk: Block, avail: &mut Avail) {
        self.budget = self.budget.saturating_sub(1);
        let before = avail.all.len();
        let id = match self.pick(16) {
            // Two-address ALU op: dst reuses the first input's register. Cranelift lists
            // uses first and the reuse def last.
            0..=3 => {
                let c = self.class();
                let a = self.value(avail, c);
                let bop = if self.chance(25) {
                    Operand::any_use(self.value(avail, c))
                } else {
                    Operand::reg_use(self.value(avail, c))
                };
                let d = self.def(c, avail);
                if self.chance(50) {
                    self.b.inst(
                        blk,
                        &[Operand::reg_use(a), bop, Operand::reg_reuse_def(d, 0)],
                    )
                } else {
                    self.b.inst(
                        blk,
                        &[Operand::reg_reuse_def(d, 1), Operand::reg_use(a), bop],
                    )
                }
            }
            // Unary two-address op (neg/not) or a three-operand (AVX/lea-like) op.
            4 => {
                let c = self.class();
                let a = self.value(avail, c);
                let d = self.def(c, avail);
                self.b
                    .inst(blk, &[Operand::reg_use(a), Operand::reg_reuse_def(d, 0)])
            }
            5 => {
                let c = self.class();
                let (a, bb) = (self.value(avail, c), self.value(avail, c));
                let d = self.def(c, avail);
                self.b.inst(
                    blk,
                    &[
                        Operand::reg_use(a),
                        Operand::reg_use(bb),
                        Operand::reg_def(d),
                    ],
                )
            }
            // Constant / immediate load.
            6 => {
                let c = self.class();
                let d = self.def(c, avail);
                self.b.inst(blk, &[Operand::reg_def(d)])
            }
            // Load from [addr] or from the frame ([rbp + off], fixed_nonallocatable rbp).
            7 => {
                let c = self.class();
                if self.chance(30) {
                    let d = self.def(c, avail);
                    self.b.inst(
                        blk,
                        &[
                            Operand::reg_def(d),
                            Operand::fixed_nonallocatable(gpr(x64::RBP)),
                        ],
                    )
                } else {
                    let addr = self.value(avail, RegClass::Int);
                    let d = self.def(c, avail);
                    self.b
                        .inst(blk, &[Operand::reg_use(addr), Operand::reg_def(d)])
                }
            }
            // Store (Cranelift stores read the value with Any sometimes: `mov [m], imm/reg`).
            8 => {
                let c = self.class();
                let v = self.value(avail, c);
                let addr = self.value(avail, RegClass::Int);
                self.b
                    .inst(blk, &[Operand::reg_use(v), Operand::reg_use(addr)])
            }
            // Stack-constrained operands (not emitted by Cranelift today, but part of the
            // API): a use that must be in memory, or a def produced in memory.
            9 => {
                let c = self.class();
                let v = self.value(avail, c);
                if self.chance(50) {
                    self.b.inst(
                        blk,
                        &[Operand::new(
                            v,
                            OperandConstraint::Stack,
                            OperandKind::Use,
                            OperandPos::Early,
                        )],
                    )
                } else {
                    let d = self.def(c, avail);
                    self.b.inst(
                        blk,
                        &[
                            Operand::new(
                                v,
                                OperandConstraint::Stack,
                                OperandKind::Use,
                                OperandPos::Early,
                            ),
                            Operand::new(
                                d,
                                OperandConstraint::Stack,
                                OperandKind::Def,
                                OperandPos::Late,
                            ),
                        ],
                    )
                }
            }
            // Division: rax/rdx fixed uses, rax/rdx fixed defs, the divisor in any register
            // (a late use so it cannot sit in rax/rdx).
            10 => {
                let lo = self.value(avail, RegClass::Int);
                let hi = self.value(avail, RegClass::Int);
                let dv = self.value(avail, RegClass::Int);
                let q = self.def(RegClass::Int, avail);
                let r = self.def(RegClass::Int, avail);
                self.b.inst(
                    blk,
                    &[
                        Operand::reg_fixed_use(lo, gpr(x64::RAX)),
                        Operand::reg_fixed_use(hi, gpr(x64::RDX)),
                        Operand::reg_use_at_end(dv),
                        Operand::reg_fixed_def(q, gpr(x64::RAX)),
                        Operand::reg_fixed_def(r, gpr(x64::RDX)),
                    ],
                )
            }
            // Shift by cl: count fixed in rcx, two-address value.
            11 => {
                let a = self.value(avail, RegClass::Int);
                let cnt = self.value(avail, RegClass::Int);
                let d = self.def(RegClass::Int, avail);
                self.b.inst(
                    blk,
                    &[
                        Operand::reg_use(a),
                        Operand::reg_fixed_use(cnt, gpr(x64::RCX)),
                        Operand::reg_reuse_def(d, 0),
                    ],
                )
            }
            // int <-> float conversion with a temp (early def).
            12 => {
                let (from, to) = if self.chance(50) {
                    (RegClass::Int, RegClass::Float)
                } else {
                    (RegClass::Float, RegClass::Int)
                };
                let a = self.value(avail, from);
                let tmp = self.b.vreg(RegClass::Int);
                let d = self.def(to, avail);
                self.b.inst(
                    blk,
                    &[
                        Operand::reg_use(a),
                        Operand::reg_temp(tmp),
                        Operand::reg_def(d),
                    ],
                )
            }
            // A pinned-style vreg: vreg id = PReg index, defined once with FixedReg(p) and
            // read with FixedReg(p) by later instructions (falls back to a call otherwise).
            13 if !self.pinned_defined.contains(gpr(x64::R10)) || self.chance(50) => {
                self.pinned(blk, avail)
            }
            _ => self.call(blk, avail),
        };
        // Every value this instruction defined may get a debug label.
        for &v in &avail.all[before..] {
            self.labels.push((v, id));
        }
    }

    fn pinned(&mut self, blk: Block, avail: &mut Avail) -> InstId {
        // r10 / xmm15 stand in for pinned registers; define each once (dominating the
        // uses: defs only happen in code that reaches later uses through `avail`).
        let p = if self.chance(50) {
            gpr(x64::R10)
        } else {
            xmm(15)
        };
        let v = VReg::new(p.index(), p.class());
        if !self.pinned_defined.contains(p) {
            self.pinned_defined.add(p);
            let src = self.value(avail, p.class());
            avail.push(v);
            self.b
                .inst(blk, &[Operand::reg_use(src), Operand::reg_fixed_def(v, p)])
        } else if avail.all.contains(&v) {
            let d = self.def(p.class(), avail);
            self.b
                .inst(blk, &[Operand::reg_fixed_use(v, p), Operand::reg_def(d)])
        } else {
            // Defined on a path that does not dominate us: not usable here.
            self.call(blk, avail)
        }
    }

    /// A SysV call: integer args fixed to rdi, rsi, rdx, rcx, r8, r9 and float args to
    /// xmm0.., sometimes a stack argument (Any late use); results fixed in rax/rdx,
    /// xmm0/xmm1; every other caller-saved register clobbered (9 + 16 = 25 minus the results).
    fn call(&mut self, blk: Block, avail: &mut Avail) -> InstId {
        let nint = self.pick(7);
        let nflt = self.pick(4);
        let mut ops = vec![];
        for &r in &x64::INT_ARGS[..nint] {
            ops.push(Operand::reg_fixed_use(
                self.value(avail, RegClass::Int),
                gpr(r),
            ));
        }
        for r in 0..nflt {
            ops.push(Operand::reg_fixed_use(
                self.value(avail, RegClass::Float),
                xmm(r),
            ));
        }
        if self.chance(20) {
            let c = self.class();
            let v = self.value(avail, c);
            ops.push(Operand::new(
                v,
                OperandConstraint::Any,
                OperandKind::Use,
                OperandPos::Late,
            ));
        }
        let mut clobbers: PRegSet = x64::INT_CALLER_SAVED.iter().map(|&r| gpr(r)).collect();
        for r in 0..16 {
            clobbers.add(xmm(r));
        }
        let nret_int = self.pick(3);
        let nret_flt = self.pick(3);
        for &r in &[x64::RAX, x64::RDX][..nret_int] {
            let d = self.def(RegClass::Int, avail);
            ops.push(Operand::reg_fixed_def(d, gpr(r)));
            clobbers.remove(gpr(r));
        }
        for r in 0..nret_flt {
            let d = self.def(RegClass::Float, avail);
            ops.push(Operand::reg_fixed_def(d, xmm(r)));
            clobbers.remove(xmm(r));
        }
        // The call reads the stack pointer.
        ops.push(Operand::fixed_nonallocatable(gpr(x64::RSP)));
        let clob: Vec<PReg> = clobbers.into_iter().collect();
        self.b.inst_clobbers(blk, &ops, &clob)
    }
}
