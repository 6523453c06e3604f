//! The `scale` corpus of docs/metrics.md: deterministic generated functions from 1k to 1M
//! instructions, to show how allocation time grows with function size.
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

use ragreedy_testkit::builder::{FuncBuilder, TestFunc};
use ragreedy_testkit::cranelift_like::{x64, x64_env};
use ragreedy_testkit::fuzzgen::SplitMix64;
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
    let mut g = Gen {
        b: FuncBuilder::new(),
        rng: SplitMix64(seed ^ 0x5ca1_e000),
        cur: Block::new(0),
        insts: 0,
        window: [VecDeque::new(), VecDeque::new()],
        pool: [vec![], vec![]],
    };
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
    // Sinks: keep the pool live to the end, two values per instruction.
    for class in 0..2 {
        let pool = g.pool[class].clone();
        for pair in pool.chunks(2) {
            let ops: Vec<Operand> = pair.iter().map(|&v| Operand::reg_use(v)).collect();
            g.emit(&ops);
        }
    }
    let r = g.pick(RegClass::Int);
    g.b.ret(g.cur, &[Operand::reg_fixed_use(r, gpr(x64::RAX))]);
    g.b.build().func
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
}

impl Gen {
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

    /// One straight-line instruction.
    fn op(&mut self) {
        let class = if self.rng.below(5) == 0 {
            RegClass::Float
        } else {
            RegClass::Int
        };
        match self.rng.below(100) {
            // Three-address op.
            0..35 => {
                let (a, c) = self.pick2(class);
                let d = self.b.vreg(class);
                self.emit(&[
                    Operand::reg_use(a),
                    Operand::reg_use(c),
                    Operand::reg_def(d),
                ]);
                self.define(d);
            }
            // Two-address op (x64 style): the def reuses input 0's register.
            35..80 => {
                let (a, c) = self.pick2(class);
                let d = self.b.vreg(class);
                self.emit(&[
                    Operand::reg_use(a),
                    Operand::reg_use(c),
                    Operand::reg_reuse_def(d, 0),
                ]);
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
                let mut clobbers: Vec<PReg> = x64::INT_CALLER_SAVED
                    .iter()
                    .filter(|&&r| r != x64::RAX)
                    .map(|&r| gpr(r))
                    .collect();
                clobbers.extend((0..16).map(|i| PReg::new(i, RegClass::Float)));
                self.b.inst_clobbers(self.cur, &ops, &clobbers);
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

#[cfg(test)]
mod tests {
    use super::*;
    use regalloc2::{Function, RegallocOptions};

    #[test]
    fn sizes_and_validity() {
        for &n in &[1_000, 10_000] {
            let f = generate(n, n as u64);
            assert!(
                f.num_insts() >= n && f.num_insts() < n + 200,
                "{}",
                f.num_insts()
            );
            let env = env();
            let out = regalloc2::run(
                &f,
                &env,
                &RegallocOptions {
                    validate_ssa: true,
                    ..Default::default()
                },
            )
            .expect("ion allocates the scale corpus");
            ragreedy_testkit::check::check_output(&f, &env, &out).expect("checker");
        }
    }
}
