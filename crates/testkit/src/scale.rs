//! The `scale` corpus of docs/metrics.md: deterministic generated functions from 1k to 1M
//! instructions, to show how allocation time grows with function size. Besides the
//! original shape (below), [`Shape`] lists shapes that copy the outliers of real
//! (Wasm-compiled) code, each from 1k to 256k instructions: a dispatch loop over a huge
//! switch, a chain of if/else diamonds, loop nests 8 deep with hundreds of values live,
//! and a function with 20,000 vregs.
//!
//! Shape (Cranelift x64-like, in [`x64_env`]): an entry block defines a pool of long-lived
//! values that stay live to the very end (they are read all along the function and by a final
//! run of "sink" instructions), then a sequence of straight-line stretches and loops nested up
//! to depth 3. Instructions are three-address ops, two-address ops (`Reuse` defs), stores
//! (uses only) and SysV-like calls (fixed argument/return registers, caller-saved clobbers).
//! Operands come from a bounded window of recently defined values per class, so the number
//! of simultaneously live values stays around the window size plus the pool (far above the
//! register count, so every function spills) however long the function grows: time then
//! measures scaling in length, not a live set that grows with it.
//!
//! Validity by construction: every use is dominated by its def (the window is saved on loop
//! entry and restored after the loop, so values defined in a loop body never escape it; the
//! loop header's params, which dominate the exit, are carried out instead); no critical
//! edges (header → body and header → exit targets have one predecessor each, preheader and
//! latch end in a single-successor jump); branch arguments only on jumps; blocks are laid out
//! in creation order, which is a reverse postorder.

use crate::builder::{FuncBuilder, TestFunc};
use crate::cranelift_like::{x64, x64_env};
use crate::fuzzgen::SplitMix64;
use regalloc2::{Block, MachineEnv, Operand, PReg, RegClass, VReg};
use std::collections::VecDeque;

/// Function sizes of the corpus, in instructions.
pub const SIZES: [usize; 7] = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000];

/// Values of each class an operand may come from (besides the pool and loop carries).
const WINDOW: usize = 24;
/// Long-lived integer / float values defined in the entry block.
const INT_POOL: usize = 12;
const FLOAT_POOL: usize = 6;
/// Maximum loop nesting (block frequency up to 10^3 in the cost metric).
const MAX_DEPTH: usize = 3;

/// The environment the corpus is allocated in: Cranelift's x64 SysV environment.
pub fn env() -> MachineEnv {
    x64_env()
}

/// A function of about `target` instructions (never fewer), deterministic in `(target, seed)`.
pub fn generate(target: usize, seed: u64) -> TestFunc {
    let mut g = Gen::new(seed ^ 0x5ca1_e000, 0);
    g.cur = g.b.block();
    for _ in 0..INT_POOL {
        let v = g.b.vreg(RegClass::Int);
        g.emit(&[Operand::reg_def(v)]);
        g.pool[0].push(v);
    }
    for _ in 0..FLOAT_POOL {
        let v = g.b.vreg(RegClass::Float);
        g.emit(&[Operand::reg_def(v)]);
        g.pool[1].push(v);
    }
    // Leave room for the sinks and the return.
    let sinks = INT_POOL.div_ceil(2) + FLOAT_POOL.div_ceil(2);
    let body = target.saturating_sub(g.insts + sinks + 1).max(1);
    g.region(body, 0);
    g.finish()
}

fn gpr(i: usize) -> PReg {
    PReg::new(i, RegClass::Int)
}

fn class_index(c: RegClass) -> usize {
    match c {
        RegClass::Int => 0,
        _ => 1,
    }
}

struct Gen {
    b: FuncBuilder,
    rng: SplitMix64,
    /// The block instructions are appended to.
    cur: Block,
    insts: usize,
    /// Recently defined values of each class that dominate the current point.
    window: [VecDeque<VReg>; 2],
    /// Entry-block values: dominate everything.
    pool: [Vec<VReg>; 2],
    /// Non-zero: every region nests loops down to this depth (the `Nest` shape).
    nest_depth: usize,
}

impl Gen {
    /// An empty function whose random choices come from `seed`, at loop depth `nest_depth`.
    fn new(seed: u64, nest_depth: usize) -> Gen {
        Gen {
            b: FuncBuilder::new(),
            rng: SplitMix64(seed),
            cur: Block::new(0),
            insts: 0,
            window: [VecDeque::new(), VecDeque::new()],
            pool: [vec![], vec![]],
            nest_depth,
        }
    }

    /// Sinks that keep the pool live to the end (two values per instruction), then the
    /// return.
    fn finish(mut self) -> TestFunc {
        for class in 0..2 {
            let pool = self.pool[class].clone();
            for pair in pool.chunks(2) {
                let ops: Vec<Operand> = pair.iter().map(|&v| Operand::reg_use(v)).collect();
                self.emit(&ops);
            }
        }
        let r = self.pick(RegClass::Int);
        self.b
            .ret(self.cur, &[Operand::reg_fixed_use(r, gpr(x64::RAX))]);
        self.b.build().func
    }

    fn emit(&mut self, ops: &[Operand]) {
        self.b.inst(self.cur, ops);
        self.insts += 1;
    }

    fn define(&mut self, v: VReg) {
        let w = &mut self.window[class_index(v.class())];
        if w.len() == WINDOW {
            w.pop_front();
        }
        w.push_back(v);
    }

    /// An operand source: mostly the last few values (short ranges), sometimes anywhere in
    /// the window (medium ranges), sometimes the pool (ranges spanning the function).
    fn pick(&mut self, class: RegClass) -> VReg {
        let ci = class_index(class);
        let w = &self.window[ci];
        let r = self.rng.below(10);
        if w.is_empty() || r >= 8 {
            let p = &self.pool[ci];
            return p[self.rng.below(p.len() as u64) as usize];
        }
        let n = w.len() as u64;
        let back = if r < 5 {
            self.rng.below(n.min(4))
        } else {
            self.rng.below(n)
        };
        w[w.len() - 1 - back as usize]
    }

    /// Two distinct sources of `class` (distinct so that reuse/fixed constraints stay simple).
    fn pick2(&mut self, class: RegClass) -> (VReg, VReg) {
        let a = self.pick(class);
        for _ in 0..8 {
            let b = self.pick(class);
            if b != a {
                return (a, b);
            }
        }
        // Pools have several values, so a distinct one always exists.
        let ci = class_index(class);
        let b = *self.pool[ci].iter().find(|&&p| p != a).unwrap();
        (a, b)
    }

    /// Emit about `budget` instructions at loop depth `depth`; `self.cur` may change.
    fn region(&mut self, budget: usize, depth: usize) {
        let start = self.insts;
        while self.insts - start < budget {
            let left = budget - (self.insts - start);
            if self.nest_depth > 0 {
                self.nest_step(start, budget, depth);
                continue;
            }
            if depth < MAX_DEPTH && left > 40 && self.rng.below(3) == 0 {
                let size = (20 + self.rng.below(left.min(3_000) as u64) as usize).min(left);
                self.lp(size, depth + 1);
            } else {
                let n = (5 + self.rng.below(60) as usize).min(left);
                for _ in 0..n {
                    self.op();
                }
            }
        }
    }

    /// One step of a `Nest` region: above the innermost level, a few instructions and the
    /// next loop level (a top-level nest takes a few hundred instructions, an inner level
    /// what its parent has left); at the innermost level, or without room for the levels
    /// below, a straight-line stretch.
    fn nest_step(&mut self, start: usize, budget: usize, depth: usize) {
        let left = budget - (self.insts - start);
        if depth < self.nest_depth && left > 12 * (self.nest_depth - depth) {
            for _ in 0..1 + self.rng.below(3) {
                self.op();
            }
            let left = budget.saturating_sub(self.insts - start);
            let size = if depth == 0 {
                left.min(200 + self.rng.below(400) as usize)
            } else {
                left.saturating_sub(2 + self.rng.below(4) as usize)
            };
            self.lp(size, depth + 1);
        } else {
            let n = (5 + self.rng.below(40) as usize).min(left);
            for _ in 0..n {
                self.op();
            }
        }
    }

    /// One straight-line instruction.
    fn op(&mut self) {
        let class = if self.rng.below(5) == 0 {
            RegClass::Float
        } else {
            RegClass::Int
        };
        let kind = self.rng.below(100);
        match kind {
            // Three-address op, or two-address (x64 style): the def reuses input 0's
            // register.
            0..80 => {
                let (a, c) = self.pick2(class);
                let d = self.b.vreg(class);
                let def = if kind < 35 {
                    Operand::reg_def(d)
                } else {
                    Operand::reg_reuse_def(d, 0)
                };
                self.emit(&[Operand::reg_use(a), Operand::reg_use(c), def]);
                self.define(d);
            }
            // Constant / load: a def only.
            80..88 => {
                let d = self.b.vreg(class);
                self.emit(&[Operand::reg_def(d)]);
                self.define(d);
            }
            // Store: uses only.
            88..97 => {
                let a = self.pick(RegClass::Int);
                let c = self.pick(class);
                self.emit(&[Operand::reg_use(a), Operand::reg_use(c)]);
            }
            // Call: two SysV integer arguments, result in rax, caller-saved registers (all
            // xmm and the integer ones but rax) clobbered.
            _ => {
                let (a, c) = self.pick2(RegClass::Int);
                let d = self.b.vreg(RegClass::Int);
                let ops = [
                    Operand::reg_fixed_use(a, gpr(x64::INT_ARGS[0])),
                    Operand::reg_fixed_use(c, gpr(x64::INT_ARGS[1])),
                    Operand::reg_fixed_def(d, gpr(x64::RAX)),
                ];
                self.b.inst_clobbers(self.cur, &ops, &call_clobbers());
                self.insts += 1;
                self.define(d);
            }
        }
    }

    /// A counted loop of about `size` instructions: preheader (current block) → header(i,
    /// acc) → body … latch → header, header → exit; the exit becomes the current block.
    fn lp(&mut self, size: usize, depth: usize) {
        let init_i = self.pick(RegClass::Int);
        let init_acc = self.pick(RegClass::Int);
        let (i, acc) = (self.b.vreg(RegClass::Int), self.b.vreg(RegClass::Int));
        let header = self.b.block_with_params(&[i, acc]);
        self.b.jump(self.cur, header, &[init_i, init_acc]);
        self.insts += 1;
        let saved = self.window.clone();
        self.define(i);
        self.define(acc);
        // Header: compare the counter against a pool value, then branch.
        self.cur = header;
        let bound = self.pool[0][0];
        let flag = self.b.vreg(RegClass::Int);
        self.emit(&[
            Operand::reg_use(i),
            Operand::reg_use(bound),
            Operand::reg_def(flag),
        ]);
        let body = self.b.block();
        self.cur = body;
        self.region(size.saturating_sub(6), depth);
        // Latch: step the counter and the accumulator, jump back.
        let (x, _) = self.pick2(RegClass::Int);
        let (i2, acc2) = (self.b.vreg(RegClass::Int), self.b.vreg(RegClass::Int));
        self.emit(&[Operand::reg_use(i), Operand::reg_reuse_def(i2, 0)]);
        self.emit(&[
            Operand::reg_use(acc),
            Operand::reg_use(x),
            Operand::reg_reuse_def(acc2, 0),
        ]);
        self.b.jump(self.cur, header, &[i2, acc2]);
        self.insts += 1;
        let exit = self.b.block();
        self.b.branch(header, &[], &[(body, &[]), (exit, &[])]);
        self.insts += 1;
        // After the loop only what dominated the preheader, plus the header params.
        self.window = saved;
        self.define(i);
        self.define(acc);
        self.cur = exit;
    }
}

// ----- Shapes that copy real outliers ------------------------------------------------------

/// Sizes, in instructions, of each generated shape of [`Shape`] other than `Scale`.
pub const SHAPE_SIZES: [usize; 5] = [1_000, 4_000, 16_000, 64_000, 256_000];

/// Vregs of the one `Vregs` function.
pub const VREGS_TARGET: usize = 20_000;

/// A function shape of the corpus; each is a group of its own in `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The original mix of straight-line stretches and loops up to depth 3 ([`generate`]).
    Scale,
    /// An interpreter loop: the header switches over `n / 4` case blocks, 20 values live.
    Dispatch,
    /// A chain of `n / 8` if/else diamonds with 30 values live throughout.
    Diamonds,
    /// Loop nests 8 deep, one after the other, with 300 values live throughout.
    Nest,
    /// A chain of diamonds where each value lives across the next 40 diamonds, until the
    /// function has [`VREGS_TARGET`] vregs.
    Vregs,
}

impl Shape {
    pub const ALL: [Shape; 5] = [
        Shape::Scale,
        Shape::Dispatch,
        Shape::Diamonds,
        Shape::Nest,
        Shape::Vregs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Scale => "scale",
            Shape::Dispatch => "dispatch",
            Shape::Diamonds => "diamonds",
            Shape::Nest => "nest",
            Shape::Vregs => "vregs",
        }
    }

    /// The sizes (target instructions) of this shape's functions up to `max_insts`.
    pub fn sizes(self, max_insts: usize) -> Vec<usize> {
        let sizes: &[usize] = match self {
            Shape::Scale => &SIZES,
            // One function; its size follows from the vreg count (about 2 instructions per
            // vreg), listed as such so that `--max-insts` can leave it out.
            Shape::Vregs => &[2 * VREGS_TARGET],
            _ => &SHAPE_SIZES,
        };
        sizes.iter().copied().filter(|&n| n <= max_insts).collect()
    }

    /// The function of this shape for `target` instructions.
    pub fn generate(self, target: usize) -> TestFunc {
        let seed = target as u64;
        match self {
            Shape::Scale => generate(target, seed),
            Shape::Dispatch => dispatch(target, seed),
            Shape::Diamonds => diamonds(target, seed, 30, None),
            Shape::Nest => nest(target, seed),
            Shape::Vregs => diamonds(usize::MAX, seed, 40, Some(VREGS_TARGET)),
        }
    }
}

/// One function of the corpus: a shape at a size.
#[derive(Clone, Copy, Debug)]
pub struct ScaleSpec {
    pub shape: Shape,
    pub insts: usize,
}

impl std::fmt::Display for ScaleSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.shape.name(), self.insts)
    }
}

/// Builder state shared by the shape generators: instructions counted as emitted.
struct Shaper {
    b: FuncBuilder,
    rng: SplitMix64,
    insts: usize,
}

impl Shaper {
    fn new(seed: u64) -> Self {
        Shaper {
            b: FuncBuilder::new(),
            rng: SplitMix64(seed ^ 0x05ba_9e5d),
            insts: 0,
        }
    }

    fn emit(&mut self, block: Block, ops: &[Operand]) {
        self.b.inst(block, ops);
        self.insts += 1;
    }

    /// A fresh value of `v`'s class from two sources: three-address or two-address (x64
    /// style, the def reusing input 0's register), at random.
    fn op(&mut self, block: Block, a: VReg, c: VReg) -> VReg {
        let d = self.b.vreg(a.class());
        let def = if self.rng.below(2) == 0 {
            Operand::reg_def(d)
        } else {
            Operand::reg_reuse_def(d, 0)
        };
        if a == c {
            self.emit(block, &[Operand::reg_use(a), def]);
        } else {
            self.emit(block, &[Operand::reg_use(a), Operand::reg_use(c), def]);
        }
        d
    }

    /// A store of `v` through the address `addr` (uses only).
    fn store(&mut self, block: Block, addr: VReg, v: VReg) {
        self.emit(block, &[Operand::reg_use(addr), Operand::reg_use(v)]);
    }

    /// A SysV-like call with two integer arguments and a result in rax; caller-saved
    /// registers clobbered.
    fn call(&mut self, block: Block, a: VReg, c: VReg) -> VReg {
        let d = self.b.vreg(RegClass::Int);
        let mut ops = vec![Operand::reg_fixed_use(a, gpr(x64::INT_ARGS[0]))];
        if c != a {
            ops.push(Operand::reg_fixed_use(c, gpr(x64::INT_ARGS[1])));
        }
        ops.push(Operand::reg_fixed_def(d, gpr(x64::RAX)));
        self.b.inst_clobbers(block, &ops, &call_clobbers());
        self.insts += 1;
        d
    }

    /// Values of each class defined in `block`, to stay live until `sink`.
    fn pool(&mut self, block: Block, ints: usize, floats: usize) -> Vec<VReg> {
        let mut v = Vec::with_capacity(ints + floats);
        for (n, class) in [(ints, RegClass::Int), (floats, RegClass::Float)] {
            for _ in 0..n {
                let x = self.b.vreg(class);
                self.emit(block, &[Operand::reg_def(x)]);
                v.push(x);
            }
        }
        v
    }

    /// Reads every value of `live` (two per instruction), then returns.
    fn sink_and_return(&mut self, block: Block, live: &[VReg], ret: VReg) {
        for class in [RegClass::Int, RegClass::Float] {
            let of: Vec<VReg> = live
                .iter()
                .copied()
                .filter(|v| v.class() == class)
                .collect();
            for pair in of.chunks(2) {
                let ops: Vec<Operand> = pair.iter().map(|&v| Operand::reg_use(v)).collect();
                self.emit(block, &ops);
            }
        }
        self.b
            .ret(block, &[Operand::reg_fixed_use(ret, gpr(x64::RAX))]);
        self.insts += 1;
    }

    fn pick(&mut self, live: &[VReg], class: RegClass) -> VReg {
        loop {
            let v = live[self.rng.below(live.len() as u64) as usize];
            if v.class() == class {
                return v;
            }
        }
    }

    fn class(&mut self) -> RegClass {
        if self.rng.below(5) == 0 {
            RegClass::Float
        } else {
            RegClass::Int
        }
    }
}

/// What a SysV call clobbers besides its result register rax: the other caller-saved
/// integer registers and every xmm register.
fn call_clobbers() -> Vec<PReg> {
    let mut clobbers: Vec<PReg> = x64::INT_CALLER_SAVED
        .iter()
        .filter(|&&r| r != x64::RAX)
        .map(|&r| gpr(r))
        .collect();
    clobbers.extend((0..16).map(|i| PReg::new(i, RegClass::Float)));
    clobbers
}

/// `Dispatch`: entry (20 values: 16 integer, 4 float) → header(i) → one of `n / 4` cases
/// or the exit; each case computes a value and jumps to the merge block, which steps `i`
/// and jumps back to the header. No critical edge: each case and the exit have the header
/// as their only predecessor, and every block with several predecessors (header, merge)
/// is entered by jumps only.
fn dispatch(target: usize, seed: u64) -> TestFunc {
    let mut s = Shaper::new(seed);
    let entry = s.b.block();
    let live = s.pool(entry, 16, 4);
    let i0 = s.b.vreg(RegClass::Int);
    s.emit(entry, &[Operand::reg_def(i0)]);
    let i = s.b.vreg(RegClass::Int);
    let header = s.b.block_with_params(&[i]);
    s.b.jump(entry, header, &[i0]);
    s.insts += 1;
    let cases = (target.saturating_sub(50) / 4).max(2);
    let flag = s.b.vreg(RegClass::Int);
    s.emit(
        header,
        &[
            Operand::reg_use(i),
            Operand::reg_use(live[0]),
            Operand::reg_def(flag),
        ],
    );
    // Cases first, the merge block after them: regalloc2's checker wants blocks laid out
    // after their predecessors (see docs/design.md, section 5).
    let mut targets: Vec<Block> = Vec::with_capacity(cases + 1);
    let mut carried: Vec<VReg> = Vec::with_capacity(cases);
    for _ in 0..cases {
        let case = s.b.block();
        targets.push(case);
        let class = s.class();
        let (a, c) = (s.pick(&live, class), s.pick(&live, class));
        let t = s.op(case, a, c);
        let (a, c) = (s.pick(&live, RegClass::Int), s.pick(&live, RegClass::Int));
        let u = if s.rng.below(10) == 0 {
            s.call(case, a, c)
        } else {
            s.op(case, a, c)
        };
        let addr = s.pick(&live, RegClass::Int);
        s.store(case, addr, t);
        carried.push(u);
    }
    let x = s.b.vreg(RegClass::Int);
    let merge = s.b.block_with_params(&[x]);
    for (&case, &u) in targets.iter().zip(&carried) {
        s.b.jump(case, merge, &[u]);
        s.insts += 1;
    }
    let i2 = s.op(merge, i, x);
    s.b.jump(merge, header, &[i2]);
    s.insts += 1;
    let exit = s.b.block();
    targets.push(exit);
    let branch_targets: Vec<(Block, &[VReg])> = targets.iter().map(|&t| (t, &[][..])).collect();
    s.b.branch(header, &[Operand::reg_use(flag)], &branch_targets);
    s.insts += 1;
    s.sink_and_return(exit, &live, i);
    s.b.build().func
}

/// `Diamonds`: a chain of if/else diamonds with `live` values live (4 of 5 integer).
/// Without `fifo`, they are defined in the entry and live to the end (a quarter of the
/// operands read them), and four working values rotate through the joins: each
/// diamond's join block takes a parameter that replaces one of them. With `fifo`, the
/// join parameter replaces the oldest of the `live` values, so each value lives across
/// the next `live` diamonds. The chain stops at `target` instructions or once `fifo`
/// vregs exist.
fn diamonds(target: usize, seed: u64, live: usize, fifo: Option<usize>) -> TestFunc {
    let mut s = Shaper::new(seed);
    let mut cur = s.b.block();
    let floats = live / 5;
    // `fifo`: the live set rotates; otherwise it stays live to the end and a few working
    // values rotate through the joins.
    let mut set = s.pool(cur, live - floats, floats);
    let fixed = set.clone();
    if fifo.is_none() {
        set = s.pool(cur, 3, 1);
    }
    let mut next_out = 0usize;
    let reserve = live / 2 + 12;
    loop {
        let done = match fifo {
            Some(n) => s.b.num_vregs() + 6 > n,
            None => s.insts + 8 + reserve > target,
        };
        if done {
            break;
        }
        let src = |s: &mut Shaper, set: &[VReg], class| {
            if fifo.is_none() && s.rng.below(4) == 0 {
                s.pick(&fixed, class)
            } else {
                s.pick(set, class)
            }
        };
        // Head: a condition and a value from the live set, then the branch.
        let (a, c) = (
            src(&mut s, &set, RegClass::Int),
            src(&mut s, &set, RegClass::Int),
        );
        let cond = if s.rng.below(12) == 0 {
            s.call(cur, a, c)
        } else {
            s.op(cur, a, c)
        };
        let class = s.class();
        let (a, c) = (src(&mut s, &set, class), src(&mut s, &set, class));
        let x = s.op(cur, a, c);
        let out = match fifo {
            Some(_) => {
                let k = next_out;
                next_out = (next_out + 1) % set.len();
                k
            }
            None => s.rng.below(set.len() as u64) as usize,
        };
        let class = set[out].class();
        let then_b = s.b.block();
        let else_b = s.b.block();
        let p = s.b.vreg(class);
        let join = s.b.block_with_params(&[p]);
        s.b.branch(
            cur,
            &[Operand::reg_use(cond)],
            &[(then_b, &[]), (else_b, &[])],
        );
        s.insts += 1;
        // Then: one op on the value leaving the set; else: two.
        let leaving = set[out];
        let y = if x.class() == class {
            s.op(then_b, leaving, x)
        } else {
            let o = src(&mut s, &set, class);
            s.op(then_b, leaving, o)
        };
        s.b.jump(then_b, join, &[y]);
        s.insts += 1;
        let o = src(&mut s, &set, class);
        let z = s.op(else_b, o, leaving);
        let o = src(&mut s, &set, class);
        let z = s.op(else_b, z, o);
        s.b.jump(else_b, join, &[z]);
        s.insts += 1;
        set[out] = p;
        cur = join;
    }
    let ret = s.pick(&set, RegClass::Int);
    if fifo.is_none() {
        set.extend(fixed);
    }
    s.sink_and_return(cur, &set, ret);
    s.b.build().func
}

/// `Nest`: 300 values (240 integer, 60 float) defined in the entry and live to the end,
/// then loop nests 8 deep one after the other (each level a few instructions around the
/// next, the innermost body a straight-line stretch), operands drawn as in [`generate`].
fn nest(target: usize, seed: u64) -> TestFunc {
    let mut g = Gen::new(seed ^ 0x0e57_0e57, NEST_DEPTH);
    g.cur = g.b.block();
    for (class, n) in [(RegClass::Int, 240), (RegClass::Float, 60)] {
        for _ in 0..n {
            let v = g.b.vreg(class);
            g.emit(&[Operand::reg_def(v)]);
            g.pool[class_index(class)].push(v);
        }
    }
    let sinks = 150;
    let body = target.saturating_sub(g.insts + sinks + 1).max(1);
    g.region(body, 0);
    g.finish()
}

/// Loop depth of the `Nest` shape.
const NEST_DEPTH: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use regalloc2::{Function, RegallocOptions};

    /// Ion (SSA validation on) allocates `f` in the corpus's environment and the checker
    /// accepts the result.
    fn ion_allocates_and_checks(f: &TestFunc) -> Result<(), String> {
        let env = env();
        let options = RegallocOptions {
            validate_ssa: true,
            ..Default::default()
        };
        let out = regalloc2::run(f, &env, &options).map_err(|e| format!("{e:?}"))?;
        crate::check::check_output(f, &env, &out).map_err(|e| format!("checker: {e}"))
    }

    #[test]
    fn sizes_and_validity() {
        for &n in &[1_000, 10_000] {
            let f = generate(n, n as u64);
            assert!(
                f.num_insts() >= n && f.num_insts() < n + 200,
                "{}",
                f.num_insts()
            );
            ion_allocates_and_checks(&f).expect("ion allocates the scale corpus");
        }
    }

    /// Every shape at its two smallest sizes: valid for ion (SSA validation on) and its
    /// output accepted by the checker; the size lands near the target.
    #[test]
    fn shapes_are_valid() {
        for shape in Shape::ALL {
            let mut sizes = shape.sizes(4_000);
            if sizes.is_empty() {
                sizes = shape.sizes(usize::MAX);
            }
            for n in sizes {
                let f = shape.generate(n);
                if shape != Shape::Vregs {
                    assert!(
                        f.num_insts() >= n * 9 / 10 && f.num_insts() < n + 300,
                        "{} {n}: {}",
                        shape.name(),
                        f.num_insts()
                    );
                } else {
                    assert!(f.num_vregs() <= VREGS_TARGET && f.num_vregs() > VREGS_TARGET - 10);
                }
                ion_allocates_and_checks(&f)
                    .unwrap_or_else(|e| panic!("{} {n}: {e}", shape.name()));
            }
        }
    }
}
