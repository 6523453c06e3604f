//! A test `Function` of our own ([`TestFunc`]) with a small builder ([`FuncBuilder`]), so
//! unit tests can write small functions by hand, plus helpers that make `MachineEnv`s with a
//! chosen number of registers ([`env`], [`env_by_class`]) and a plain-text listing of any
//! `Function`, optionally annotated with an allocation ([`listing`], [`listing_with_output`]).
//!
//! `regalloc2::fuzzing::func::Func` has only private fields and no builder, and it never
//! produces several shapes the allocator must handle (stack constraints, branch operands,
//! pinned vregs, multi-slot spill sizes for Int/Float); `TestFunc` can express all of them.
//! It performs no validation: `build()` only lays blocks out and derives predecessors, so
//! deliberately malformed functions (the `malformed` fuzz target) can be built too. Its
//! fields are public for the same reason: mutation tests edit a built function directly.

use std::fmt::{self, Write as _};

use regalloc2::{
    Allocation, Block, Edit, Function, Inst, InstRange, MachineEnv, Operand, Output, PReg, PRegSet,
    ProgPoint, RegClass, VReg,
};

pub use regalloc2::fuzzing::func::machine_env;

/// What kind of instruction this is: a plain op, a branch (block terminator with successors)
/// or a return (block terminator without successors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstKind {
    Op,
    Branch,
    Ret,
}

/// One instruction of a [`TestFunc`].
#[derive(Clone, Debug)]
pub struct InstData {
    pub kind: InstKind,
    pub operands: Vec<Operand>,
    pub clobbers: PRegSet,
}

/// A function in regalloc2's input format with every field public.
///
/// Invariant kept by [`FuncBuilder::build`] and [`TestFunc::from_function`] (but not by
/// hand-made mutations): `block_preds` is derived from `block_succs` (preds in increasing
/// block order, one entry per edge), `branch_args[b].len() == block_succs[b].len()`, and block
/// `i`'s instruction range directly follows block `i - 1`'s.
#[derive(Clone, Debug)]
pub struct TestFunc {
    pub insts: Vec<InstData>,
    pub blocks: Vec<InstRange>,
    pub entry: Block,
    pub block_succs: Vec<Vec<Block>>,
    pub block_preds: Vec<Vec<Block>>,
    pub block_params: Vec<Vec<VReg>>,
    /// Per block, per successor: the branch arguments.
    pub branch_args: Vec<Vec<Vec<VReg>>>,
    pub num_vregs: usize,
    pub debug_value_labels: Vec<(VReg, Inst, Inst, u32)>,
    /// Indexed by `RegClass as usize`.
    pub spillslot_size: [usize; 3],
    pub multi_spillslot_named_by_last_slot: bool,
    pub allow_multiple_vreg_defs: bool,
}

impl Function for TestFunc {
    fn num_insts(&self) -> usize {
        self.insts.len()
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
        &self.block_succs[block.index()]
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        &self.block_preds[block.index()]
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        &self.block_params[block.index()]
    }
    fn is_ret(&self, insn: Inst) -> bool {
        self.insts[insn.index()].kind == InstKind::Ret
    }
    fn is_branch(&self, insn: Inst) -> bool {
        self.insts[insn.index()].kind == InstKind::Branch
    }
    fn branch_blockparams(&self, block: Block, _insn: Inst, succ_idx: usize) -> &[VReg] {
        // Out-of-range successor indices return no arguments instead of panicking, so a
        // malformed function (arg lists shorter than succ lists) still reads as *something*.
        self.branch_args[block.index()]
            .get(succ_idx)
            .map(|v| &v[..])
            .unwrap_or(&[])
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        &self.insts[insn.index()].operands
    }
    fn inst_clobbers(&self, insn: Inst) -> PRegSet {
        self.insts[insn.index()].clobbers
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

impl TestFunc {
    /// Renames every vreg the function mentions (operands other than fixed
    /// non-allocatable ones, block params, branch arguments, debug labels) through
    /// `rename`, for a renumbered copy of a function (Cranelift's numbering from 192, a
    /// dense one); the caller sets `num_vregs` to match.
    pub fn rename_vregs(&mut self, mut rename: impl FnMut(VReg) -> VReg) {
        for inst in &mut self.insts {
            for op in &mut inst.operands {
                if op.as_fixed_nonallocatable().is_none() {
                    *op = Operand::new(rename(op.vreg()), op.constraint(), op.kind(), op.pos());
                }
            }
        }
        for v in self.block_params.iter_mut().flatten() {
            *v = rename(*v);
        }
        for v in self.branch_args.iter_mut().flatten().flatten() {
            *v = rename(*v);
        }
        for label in &mut self.debug_value_labels {
            label.0 = rename(label.0);
        }
    }

    /// Snapshot any `Function` (e.g. a fuzzer `Func`) into a `TestFunc`, so it can be mutated.
    /// Predecessors are copied as the source reports them (not recomputed).
    pub fn from_function<F: Function + ?Sized>(f: &F) -> TestFunc {
        let nb = f.num_blocks();
        let blocks: Vec<InstRange> = (0..nb).map(|b| f.block_insns(Block::new(b))).collect();
        let insts = (0..f.num_insts())
            .map(|i| {
                let inst = Inst::new(i);
                InstData {
                    kind: if f.is_branch(inst) {
                        InstKind::Branch
                    } else if f.is_ret(inst) {
                        InstKind::Ret
                    } else {
                        InstKind::Op
                    },
                    operands: f.inst_operands(inst).to_vec(),
                    clobbers: f.inst_clobbers(inst),
                }
            })
            .collect();
        let branch_args = (0..nb)
            .map(|b| {
                let block = Block::new(b);
                let range = f.block_insns(block);
                let nsucc = f.block_succs(block).len();
                if range.len() == 0 {
                    return vec![vec![]; nsucc];
                }
                let last = range.last();
                (0..nsucc)
                    .map(|s| f.branch_blockparams(block, last, s).to_vec())
                    .collect()
            })
            .collect();
        TestFunc {
            insts,
            blocks,
            entry: f.entry_block(),
            block_succs: (0..nb)
                .map(|b| f.block_succs(Block::new(b)).to_vec())
                .collect(),
            block_preds: (0..nb)
                .map(|b| f.block_preds(Block::new(b)).to_vec())
                .collect(),
            block_params: (0..nb)
                .map(|b| f.block_params(Block::new(b)).to_vec())
                .collect(),
            branch_args,
            num_vregs: f.num_vregs(),
            debug_value_labels: f.debug_value_labels().to_vec(),
            spillslot_size: [
                f.spillslot_size(RegClass::Int),
                f.spillslot_size(RegClass::Float),
                f.spillslot_size(RegClass::Vector),
            ],
            multi_spillslot_named_by_last_slot: f.multi_spillslot_named_by_last_slot(),
            allow_multiple_vreg_defs: f.allow_multiple_vreg_defs(),
        }
    }

    /// Recompute `block_preds` from `block_succs` (one entry per edge, preds in increasing
    /// block order). Successors out of range are ignored here (they stay in `block_succs`).
    pub fn recompute_preds(&mut self) {
        let nb = self.blocks.len();
        let mut preds = vec![vec![]; nb];
        for (b, succs) in self.block_succs.iter().enumerate() {
            for s in succs {
                if s.index() < nb {
                    preds[s.index()].push(Block::new(b));
                }
            }
        }
        self.block_preds = preds;
    }

    /// The block containing `inst` (linear search over the ranges; fine for tests).
    pub fn block_of(&self, inst: Inst) -> Option<Block> {
        block_of(self, inst)
    }
}

impl fmt::Display for TestFunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&listing(self))
    }
}

/// A builder-local instruction handle. Instructions are laid out block by block at
/// [`FuncBuilder::build`], so the final `Inst` is known only then: use
/// [`Built::inst`] to translate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstId(pub usize);

#[derive(Clone, Debug, Default)]
struct BlockData {
    params: Vec<VReg>,
    insts: Vec<usize>,
    succs: Vec<Block>,
    args: Vec<Vec<VReg>>,
}

/// Builds a [`TestFunc`] by hand.
///
/// ```
/// use ragreedy_testkit::builder::FuncBuilder;
/// use regalloc2::{Operand, RegClass};
/// let mut b = FuncBuilder::new();
/// let (b0, b1) = (b.block(), b.block());
/// let v0 = b.vreg(RegClass::Int);
/// let v1 = b.vreg(RegClass::Int);
/// b.set_params(b1, &[v1]);
/// b.inst(b0, &[Operand::reg_def(v0)]);
/// b.jump(b0, b1, &[v0]);
/// b.ret(b1, &[Operand::reg_use(v1)]);
/// let f = b.build().func;
/// assert_eq!(regalloc2::Function::num_insts(&f), 3);
/// ```
#[derive(Clone, Debug)]
pub struct FuncBuilder {
    blocks: Vec<BlockData>,
    insts: Vec<InstData>,
    num_vregs: usize,
    labels: Vec<(VReg, InstId, InstId, u32)>,
    entry: Block,
    spillslot_size: [usize; 3],
    multi_spillslot_named_by_last_slot: bool,
    allow_multiple_vreg_defs: bool,
}

impl Default for FuncBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// The result of [`FuncBuilder::build`]: the function and the `InstId` → `Inst` map.
#[derive(Clone, Debug)]
pub struct Built {
    pub func: TestFunc,
    inst_map: Vec<Inst>,
}

impl Built {
    /// The final `Inst` of a builder handle.
    pub fn inst(&self, id: InstId) -> Inst {
        self.inst_map[id.0]
    }
}

impl FuncBuilder {
    /// An empty function: entry block 0 once created, spill slot size 1 for every class,
    /// one def per vreg.
    pub fn new() -> Self {
        FuncBuilder {
            blocks: vec![],
            insts: vec![],
            num_vregs: 0,
            labels: vec![],
            entry: Block::new(0),
            spillslot_size: [1, 1, 1],
            multi_spillslot_named_by_last_slot: false,
            allow_multiple_vreg_defs: false,
        }
    }

    /// A fresh vreg of `class` (ids are dense, in creation order).
    pub fn vreg(&mut self, class: RegClass) -> VReg {
        let v = VReg::new(self.num_vregs, class);
        self.num_vregs += 1;
        v
    }

    /// `n` fresh vregs of `class`.
    pub fn vregs(&mut self, class: RegClass, n: usize) -> Vec<VReg> {
        (0..n).map(|_| self.vreg(class)).collect()
    }

    /// Reserve vreg ids up to `n` (exclusive) without handing them out; e.g. Cranelift's
    /// 192 pinned vregs, which are then named with `VReg::new(i, class)` directly.
    pub fn reserve_vregs(&mut self, n: usize) {
        self.num_vregs = self.num_vregs.max(n);
    }

    pub fn num_vregs(&self) -> usize {
        self.num_vregs
    }

    /// A new, empty block. Blocks are laid out in creation order.
    pub fn block(&mut self) -> Block {
        self.blocks.push(BlockData::default());
        Block::new(self.blocks.len() - 1)
    }

    /// A new block with parameters.
    pub fn block_with_params(&mut self, params: &[VReg]) -> Block {
        let b = self.block();
        self.set_params(b, params);
        b
    }

    pub fn set_params(&mut self, block: Block, params: &[VReg]) {
        self.blocks[block.index()].params = params.to_vec();
    }

    /// Set the entry block (default: block 0).
    pub fn set_entry(&mut self, block: Block) {
        self.entry = block;
    }

    fn push(&mut self, block: Block, data: InstData) -> InstId {
        self.insts.push(data);
        let id = self.insts.len() - 1;
        self.blocks[block.index()].insts.push(id);
        InstId(id)
    }

    /// Append a plain instruction to `block`.
    pub fn inst(&mut self, block: Block, operands: &[Operand]) -> InstId {
        self.inst_clobbers(block, operands, &[])
    }

    /// Append a plain instruction that also clobbers `clobbers`.
    pub fn inst_clobbers(
        &mut self,
        block: Block,
        operands: &[Operand],
        clobbers: &[PReg],
    ) -> InstId {
        self.push(
            block,
            InstData {
                kind: InstKind::Op,
                operands: operands.to_vec(),
                clobbers: clobbers.iter().copied().collect(),
            },
        )
    }

    /// Add clobbers to an existing instruction.
    pub fn add_clobbers(&mut self, inst: InstId, clobbers: &[PReg]) {
        for &c in clobbers {
            self.insts[inst.0].clobbers.add(c);
        }
    }

    /// End `block` with a branch to `targets`, each with its block args. `operands` are the
    /// branch's own register operands (legal only if no target has several predecessors).
    pub fn branch(
        &mut self,
        block: Block,
        operands: &[Operand],
        targets: &[(Block, &[VReg])],
    ) -> InstId {
        let bd = &mut self.blocks[block.index()];
        for (t, args) in targets {
            bd.succs.push(*t);
            bd.args.push(args.to_vec());
        }
        self.push(
            block,
            InstData {
                kind: InstKind::Branch,
                operands: operands.to_vec(),
                clobbers: PRegSet::empty(),
            },
        )
    }

    /// End `block` with an unconditional jump to `target` passing `args`.
    pub fn jump(&mut self, block: Block, target: Block, args: &[VReg]) -> InstId {
        self.branch(block, &[], &[(target, args)])
    }

    /// End `block` with a return reading `operands`.
    pub fn ret(&mut self, block: Block, operands: &[Operand]) -> InstId {
        self.push(
            block,
            InstData {
                kind: InstKind::Ret,
                operands: operands.to_vec(),
                clobbers: PRegSet::empty(),
            },
        )
    }

    /// A debug value label: `vreg` carries `label` from before `from` to before `to`.
    pub fn debug_label(&mut self, vreg: VReg, from: InstId, to: InstId, label: u32) {
        self.labels.push((vreg, from, to, label));
    }

    pub fn spillslot_size(&mut self, class: RegClass, slots: usize) -> &mut Self {
        self.spillslot_size[class as usize] = slots;
        self
    }

    pub fn multi_spillslot_named_by_last_slot(&mut self, yes: bool) -> &mut Self {
        self.multi_spillslot_named_by_last_slot = yes;
        self
    }

    pub fn allow_multiple_vreg_defs(&mut self, yes: bool) -> &mut Self {
        self.allow_multiple_vreg_defs = yes;
        self
    }

    /// Lay the blocks out in creation order, derive predecessors from successors, translate
    /// and sort the debug labels (regalloc2 wants them sorted by vreg). No validation.
    pub fn build(&self) -> Built {
        let mut insts = Vec::with_capacity(self.insts.len());
        let mut inst_map = vec![Inst::invalid(); self.insts.len()];
        let mut blocks = Vec::with_capacity(self.blocks.len());
        for bd in &self.blocks {
            let start = insts.len();
            for &i in &bd.insts {
                inst_map[i] = Inst::new(insts.len());
                insts.push(self.insts[i].clone());
            }
            blocks.push(InstRange::new(Inst::new(start), Inst::new(insts.len())));
        }
        let mut labels: Vec<_> = self
            .labels
            .iter()
            .map(|&(v, from, to, l)| (v, inst_map[from.0], inst_map[to.0], l))
            .collect();
        labels.sort_unstable();
        let mut func = TestFunc {
            insts,
            blocks,
            entry: self.entry,
            block_succs: self.blocks.iter().map(|b| b.succs.clone()).collect(),
            block_preds: vec![],
            block_params: self.blocks.iter().map(|b| b.params.clone()).collect(),
            branch_args: self.blocks.iter().map(|b| b.args.clone()).collect(),
            num_vregs: self.num_vregs,
            debug_value_labels: labels,
            spillslot_size: self.spillslot_size,
            multi_spillslot_named_by_last_slot: self.multi_spillslot_named_by_last_slot,
            allow_multiple_vreg_defs: self.allow_multiple_vreg_defs,
        };
        func.recompute_preds();
        Built { func, inst_map }
    }
}

/// A `MachineEnv` with, in every class, `preferred` preferred registers `p0..` followed by
/// `non_preferred` non-preferred ones; no scratch, no fixed stack slots.
pub fn env(preferred: usize, non_preferred: usize) -> MachineEnv {
    env_by_class([(preferred, non_preferred); 3], 0)
}

/// Like [`env`] but per class (`[(preferred, non_preferred); Int, Float, Vector]`), plus
/// `fixed_stack_slots` fixed-stack PRegs per class numbered right after the registers.
/// Panics if a class would need more than 64 PRegs (`hw_enc` is 6 bits).
pub fn env_by_class(regs: [(usize, usize); 3], fixed_stack_slots: usize) -> MachineEnv {
    let mut e = MachineEnv {
        preferred_regs_by_class: [PRegSet::empty(); 3],
        non_preferred_regs_by_class: [PRegSet::empty(); 3],
        scratch_by_class: [None; 3],
        fixed_stack_slots: vec![],
    };
    for (c, &(p, n)) in regs.iter().enumerate() {
        let class = CLASSES[c];
        assert!(
            p + n + fixed_stack_slots <= 64,
            "at most 64 PRegs per class"
        );
        for i in 0..p {
            e.preferred_regs_by_class[c].add(PReg::new(i, class));
        }
        for i in p..p + n {
            e.non_preferred_regs_by_class[c].add(PReg::new(i, class));
        }
        for i in p + n..p + n + fixed_stack_slots {
            e.fixed_stack_slots.push(PReg::new(i, class));
        }
    }
    e
}

/// The first difference between `a` and `b` in anything the `Function` trait exposes
/// (`None` if they answer every question alike), for round-trip and shrinker tests.
/// Branch arguments are compared at each block's last instruction, where regalloc2 reads
/// them.
pub fn function_difference<A: Function + ?Sized, B: Function + ?Sized>(
    a: &A,
    b: &B,
) -> Option<String> {
    macro_rules! same {
        ($what:expr, $x:expr, $y:expr) => {
            if $x != $y {
                return Some(format!("{}: {:?} vs {:?}", $what, $x, $y));
            }
        };
    }
    same!("num_insts", a.num_insts(), b.num_insts());
    same!("num_blocks", a.num_blocks(), b.num_blocks());
    same!("entry_block", a.entry_block(), b.entry_block());
    same!("num_vregs", a.num_vregs(), b.num_vregs());
    for c in CLASSES {
        same!(
            format!("spillslot_size({c:?})"),
            a.spillslot_size(c),
            b.spillslot_size(c)
        );
    }
    same!(
        "multi_spillslot_named_by_last_slot",
        a.multi_spillslot_named_by_last_slot(),
        b.multi_spillslot_named_by_last_slot()
    );
    same!(
        "allow_multiple_vreg_defs",
        a.allow_multiple_vreg_defs(),
        b.allow_multiple_vreg_defs()
    );
    same!(
        "debug_value_labels",
        a.debug_value_labels(),
        b.debug_value_labels()
    );
    for i in 0..a.num_insts() {
        let inst = Inst::new(i);
        same!(
            format!("is_branch(i{i})"),
            a.is_branch(inst),
            b.is_branch(inst)
        );
        same!(format!("is_ret(i{i})"), a.is_ret(inst), b.is_ret(inst));
        same!(
            format!("inst_operands(i{i})"),
            a.inst_operands(inst),
            b.inst_operands(inst)
        );
        same!(
            format!("inst_clobbers(i{i})"),
            a.inst_clobbers(inst),
            b.inst_clobbers(inst)
        );
    }
    for n in 0..a.num_blocks() {
        let block = Block::new(n);
        // `InstRange` has no `PartialEq`: compare its first instruction and length.
        let key = |r: InstRange| (r.iter().next(), r.len());
        same!(
            format!("block_insns(block{n})"),
            key(a.block_insns(block)),
            key(b.block_insns(block))
        );
        same!(
            format!("block_succs(block{n})"),
            a.block_succs(block),
            b.block_succs(block)
        );
        same!(
            format!("block_preds(block{n})"),
            a.block_preds(block),
            b.block_preds(block)
        );
        same!(
            format!("block_params(block{n})"),
            a.block_params(block),
            b.block_params(block)
        );
        let range = a.block_insns(block);
        if range.len() > 0 {
            for k in 0..a.block_succs(block).len() {
                same!(
                    format!("branch_blockparams(block{n}, succ {k})"),
                    a.branch_blockparams(block, range.last(), k),
                    b.branch_blockparams(block, range.last(), k)
                );
            }
        }
    }
    None
}

/// The first difference between two environments (`MachineEnv` has no `PartialEq`).
pub fn env_difference(a: &MachineEnv, b: &MachineEnv) -> Option<String> {
    if a.preferred_regs_by_class != b.preferred_regs_by_class {
        return Some("preferred_regs_by_class".into());
    }
    if a.non_preferred_regs_by_class != b.non_preferred_regs_by_class {
        return Some("non_preferred_regs_by_class".into());
    }
    if a.scratch_by_class != b.scratch_by_class {
        return Some("scratch_by_class".into());
    }
    if a.fixed_stack_slots != b.fixed_stack_slots {
        return Some("fixed_stack_slots".into());
    }
    None
}

/// The three register classes in index order.
pub const CLASSES: [RegClass; 3] = [RegClass::Int, RegClass::Float, RegClass::Vector];

/// The block containing `inst`, by binary search over the (contiguous, ordered) block ranges.
pub fn block_of<F: Function + ?Sized>(f: &F, inst: Inst) -> Option<Block> {
    let (mut lo, mut hi) = (0, f.num_blocks());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let r = f.block_insns(Block::new(mid));
        if r.len() == 0 {
            return None; // malformed layout: no answer
        }
        if inst.index() < r.first().index() {
            hi = mid;
        } else if inst.index() >= r.first().index() + r.len() {
            lo = mid + 1;
        } else {
            return Some(Block::new(mid));
        }
    }
    None
}

/// A plain-text listing of `f`: blocks with params, succs, preds; instructions with
/// operands, clobbers and branch args.
pub fn listing<F: Function + ?Sized>(f: &F) -> String {
    listing_impl(f, None)
}

/// Like [`listing`], but with each operand's allocation and the edits interleaved, the way
/// the checker sees them (edits at `after(last inst of a block)` are shown but marked).
pub fn listing_with_output<F: Function + ?Sized>(f: &F, out: &Output) -> String {
    listing_impl(f, Some(out))
}

fn fmt_vregs(v: &[VReg]) -> String {
    v.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt_edit(s: &mut String, pt: ProgPoint, e: &Edit, note: &str) {
    let Edit::Move { from, to } = e;
    let _ = writeln!(s, "      {pt:?}: move {to} <- {from}{note}");
}

fn listing_impl<F: Function + ?Sized>(f: &F, out: Option<&Output>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "function: {} blocks, {} insts, {} vregs, entry {:?}, spillslot sizes i{} f{} v{}{}",
        f.num_blocks(),
        f.num_insts(),
        f.num_vregs(),
        f.entry_block(),
        f.spillslot_size(RegClass::Int),
        f.spillslot_size(RegClass::Float),
        f.spillslot_size(RegClass::Vector),
        if f.allow_multiple_vreg_defs() {
            ", multiple defs allowed"
        } else {
            ""
        }
    );
    let mut edit_idx = 0;
    for b in 0..f.num_blocks() {
        let block = Block::new(b);
        let succs: Vec<String> = f
            .block_succs(block)
            .iter()
            .map(|b| format!("{b:?}"))
            .collect();
        let preds: Vec<String> = f
            .block_preds(block)
            .iter()
            .map(|b| format!("{b:?}"))
            .collect();
        let _ = writeln!(
            s,
            "  {block:?}({}): succs [{}] preds [{}]",
            fmt_vregs(f.block_params(block)),
            succs.join(", "),
            preds.join(", ")
        );
        let range = f.block_insns(block);
        for inst in range.iter() {
            if let Some(out) = out {
                while edit_idx < out.edits.len() && out.edits[edit_idx].0 <= ProgPoint::before(inst)
                {
                    let (pt, e) = &out.edits[edit_idx];
                    fmt_edit(&mut s, *pt, e, "");
                    edit_idx += 1;
                }
            }
            let ops = f.inst_operands(inst);
            let allocs: &[Allocation] = match out {
                Some(out) if inst.index() < out.inst_alloc_offsets.len() => {
                    let start = out.inst_alloc_offsets[inst.index()] as usize;
                    out.allocs.get(start..start + ops.len()).unwrap_or(&[])
                }
                _ => &[],
            };
            let ops_s: Vec<String> = ops
                .iter()
                .enumerate()
                .map(|(i, op)| match allocs.get(i) {
                    Some(a) => format!("{op} => {a}"),
                    None => op.to_string(),
                })
                .collect();
            let kind = if f.is_branch(inst) {
                "branch"
            } else if f.is_ret(inst) {
                "ret"
            } else {
                "op"
            };
            let _ = write!(s, "    {inst:?}: {kind} [{}]", ops_s.join(", "));
            let clobbers = f.inst_clobbers(inst);
            if clobbers != PRegSet::empty() {
                let _ = write!(s, " clobbers {clobbers}");
            }
            if f.is_branch(inst) {
                let args: Vec<String> = f
                    .block_succs(block)
                    .iter()
                    .enumerate()
                    .map(|(i, succ)| {
                        format!(
                            "{succ:?}({})",
                            fmt_vregs(f.branch_blockparams(block, inst, i))
                        )
                    })
                    .collect();
                let _ = write!(s, " -> {}", args.join(", "));
            }
            s.push('\n');
            if let Some(out) = out {
                let last = inst.index() + 1 == range.first().index() + range.len();
                while edit_idx < out.edits.len() && out.edits[edit_idx].0 <= ProgPoint::after(inst)
                {
                    let (pt, e) = &out.edits[edit_idx];
                    let note = if last {
                        "   <-- after a terminator: dropped!"
                    } else {
                        ""
                    };
                    fmt_edit(&mut s, *pt, e, note);
                    edit_idx += 1;
                }
            }
        }
    }
    if let Some(out) = out {
        for (pt, e) in &out.edits[edit_idx..] {
            fmt_edit(&mut s, *pt, e, "   <-- beyond the last inst");
        }
        let _ = writeln!(s, "  num_spillslots: {}", out.num_spillslots);
    }
    s
}
