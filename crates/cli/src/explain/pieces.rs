//! Which vreg is in which location over which program points, reconstructed from an
//! allocator's `Output` alone (operand allocations, moves, clobbers) plus liveness of the
//! input, so the same picture can be drawn for any allocator.
//!
//! Points are `2 × inst` (an instruction's early point, where its uses read and its
//! before-moves land) and `2 × inst + 1` (its late point, where its defs write). A
//! location holds the vreg last written into it: by a def operand, by a use operand
//! (the allocator promises the value is there), or by a move (which carries whatever its
//! source held). A holding ends where the location is overwritten or clobbered, or where
//! the vreg dies. At a block's start a location holds what every already-walked
//! predecessor agrees it holds at its end, with branch arguments renamed to the block's
//! params when the argument itself does not live on.

use regalloc2::{Allocation, Block, Edit, Function, Inst, InstPosition, OperandKind, OperandPos};
use regalloc2::{Output, VReg};
use std::collections::{HashMap, HashSet};

/// One bar of the picture: `vreg` in `loc` over points `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub vreg: VReg,
    pub loc: Allocation,
    pub start: u32,
    pub end: u32,
}

/// What a move does, for its marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveKind {
    /// Register to register (or stack to stack).
    Move,
    /// Register to stack: a store.
    Spill,
    /// Stack to register.
    Reload,
}

/// One move of the output, at the point where its destination changes.
#[derive(Clone, Copy, Debug)]
pub struct MoveMark {
    pub point: u32,
    pub from: Allocation,
    pub to: Allocation,
    pub kind: MoveKind,
    /// The vreg the source held, if known.
    pub vreg: Option<VReg>,
}

/// The reconstructed picture of one allocation.
pub struct Layout {
    pub pieces: Vec<Piece>,
    pub moves: Vec<MoveMark>,
}

/// Is `a` a stack location (a spill slot or one of the environment's fixed stack slots)?
pub fn is_stack(a: Allocation, fixed_stack: &[regalloc2::PReg]) -> bool {
    match a.as_reg() {
        Some(r) => fixed_stack.contains(&r),
        None => a.is_stack(),
    }
}

/// Vregs live into and out of each block (block params are defined at their block's
/// start, so live into none; branch arguments are uses of the branch).
#[allow(clippy::type_complexity)]
fn liveness<F: Function + ?Sized>(f: &F) -> (Vec<HashSet<VReg>>, Vec<HashSet<VReg>>) {
    let nb = f.num_blocks();
    // Per block: vregs read before any def in the block (upward exposed), and defined.
    let mut gen_: Vec<HashSet<VReg>> = vec![HashSet::new(); nb];
    let mut kill: Vec<HashSet<VReg>> = vec![HashSet::new(); nb];
    for b in 0..nb {
        let block = Block::new(b);
        for &p in f.block_params(block) {
            kill[b].insert(p);
        }
        for inst in f.block_insns(block).iter() {
            for op in f.inst_operands(inst) {
                if op.vreg() == VReg::invalid() {
                    continue;
                }
                match op.kind() {
                    OperandKind::Use => {
                        if !kill[b].contains(&op.vreg()) {
                            gen_[b].insert(op.vreg());
                        }
                    }
                    OperandKind::Def => {
                        kill[b].insert(op.vreg());
                    }
                }
            }
            if f.is_branch(inst) {
                for k in 0..f.block_succs(block).len() {
                    for &a in f.branch_blockparams(block, inst, k) {
                        if !kill[b].contains(&a) {
                            gen_[b].insert(a);
                        }
                    }
                }
            }
        }
    }
    let mut live_in: Vec<HashSet<VReg>> = gen_.clone();
    let mut out: Vec<HashSet<VReg>> = vec![HashSet::new(); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut o = HashSet::new();
            for &s in f.block_succs(Block::new(b)) {
                o.extend(live_in[s.index()].iter().copied());
            }
            for &v in &o {
                if !kill[b].contains(&v) && live_in[b].insert(v) {
                    changed = true;
                }
            }
            out[b] = o;
        }
    }
    (live_in, out)
}

/// Per block, per vreg mentioned in it: the last instruction that mentions it (operand or
/// branch argument).
fn last_mentions<F: Function + ?Sized>(f: &F, block: Block) -> HashMap<VReg, Inst> {
    let mut last = HashMap::new();
    for inst in f.block_insns(block).iter() {
        for op in f.inst_operands(inst) {
            last.insert(op.vreg(), inst);
        }
        if f.is_branch(inst) {
            for k in 0..f.block_succs(block).len() {
                for &a in f.branch_blockparams(block, inst, k) {
                    last.insert(a, inst);
                }
            }
        }
    }
    last
}

/// Open holdings while walking: location → (vreg, start point).
type Holdings = HashMap<Allocation, (VReg, u32)>;

struct Walk<'p> {
    pieces: &'p mut Vec<Piece>,
    open: Holdings,
}

impl Walk<'_> {
    fn close(&mut self, loc: Allocation, at: u32) {
        if let Some((vreg, start)) = self.open.remove(&loc)
            && at > start
        {
            self.pieces.push(Piece {
                vreg,
                loc,
                start,
                end: at,
            });
        }
    }

    /// `loc` holds `vreg` from `at` on (a no-op if it already does).
    fn write(&mut self, loc: Allocation, vreg: Option<VReg>, at: u32) {
        if loc.is_none() {
            return;
        }
        if let (Some(v), Some(&(held, _))) = (vreg, self.open.get(&loc))
            && held == v
        {
            return;
        }
        self.close(loc, at);
        if let Some(v) = vreg {
            self.open.insert(loc, (v, at));
        }
    }
}

/// Reconstructs where each vreg lives from `out`, an allocation of `f`.
pub fn layout<F: Function + ?Sized>(
    f: &F,
    out: &Output,
    fixed_stack: &[regalloc2::PReg],
) -> Layout {
    let (live_in, live_out) = liveness(f);
    let mut pieces = Vec::new();
    let mut moves = Vec::new();
    // Holdings at the end of each walked block, after its branch (what successors see).
    let mut at_end: Vec<Option<HashMap<Allocation, VReg>>> = vec![None; f.num_blocks()];
    // Edits are sorted by program point: walk them alongside the instructions.
    let mut next_edit = 0;
    let mut preds: Vec<Vec<Block>> = vec![Vec::new(); f.num_blocks()];
    for b in 0..f.num_blocks() {
        for &s in f.block_succs(Block::new(b)) {
            preds[s.index()].push(Block::new(b));
        }
    }
    let mut walk = Walk {
        pieces: &mut pieces,
        open: HashMap::new(),
    };
    let mut prev_end: Option<u32> = None;
    for b in 0..f.num_blocks() {
        let block = Block::new(b);
        let range = f.block_insns(block);
        if range.len() == 0 {
            continue;
        }
        let start = 2 * range.first().index() as u32;
        let end = 2 * range.last().index() as u32 + 2;
        // What every walked predecessor agrees on, params renamed from their arguments.
        let mut entry: Option<HashMap<Allocation, VReg>> = None;
        for &p in &preds[b] {
            let Some(held) = &at_end[p.index()] else {
                continue;
            };
            let mut renamed = held.clone();
            let pblock = f.block_insns(p);
            let branch = pblock.last();
            if f.is_branch(branch) {
                let succs = f.block_succs(p);
                for (k, &s) in succs.iter().enumerate() {
                    if s != block {
                        continue;
                    }
                    let args = f.branch_blockparams(p, branch, k);
                    for (&a, &param) in args.iter().zip(f.block_params(block)) {
                        let a_lives = live_out[p.index()].contains(&a)
                            && f.block_params(block).iter().all(|&q| q != a);
                        if !a_lives {
                            for v in renamed.values_mut() {
                                if *v == a {
                                    *v = param;
                                }
                            }
                        }
                    }
                }
            }
            entry = Some(match entry {
                None => renamed,
                Some(e) => e
                    .into_iter()
                    .filter(|(l, v)| renamed.get(l) == Some(v))
                    .collect(),
            });
        }
        // Only what the block needs: a value dead here is not drawn here.
        let mut entry = entry.unwrap_or_default();
        entry.retain(|_, v| live_in[b].contains(v) || f.block_params(block).contains(v));
        // Continue a holding across the boundary only with the block laid out just before.
        let contiguous = prev_end == Some(start);
        let carried: Holdings = std::mem::take(&mut walk.open);
        for (loc, (v, s)) in carried {
            walk.open.insert(loc, (v, s));
            if !(contiguous && entry.get(&loc) == Some(&v)) {
                walk.close(loc, prev_end.unwrap_or(start));
            }
        }
        for (&loc, &v) in &entry {
            walk.open.entry(loc).or_insert((v, start));
        }
        let last = last_mentions(f, block);
        let lives_out = &live_out[b];
        for inst in range.iter() {
            let i = inst.index() as u32;
            // Before-moves and the early operands.
            apply_edits(
                out,
                &mut next_edit,
                inst,
                InstPosition::Before,
                2 * i,
                &mut walk,
                &mut moves,
                fixed_stack,
            );
            let ops = f.inst_operands(inst);
            let allocs = out.inst_allocs(inst);
            // Allocations pair with operands by index; fixed non-allocatable operands
            // name a register no vreg lives in.
            let pairs = ops
                .iter()
                .zip(allocs)
                .filter(|(op, _)| op.as_fixed_nonallocatable().is_none());
            for (op, &a) in pairs.clone() {
                if op.kind() == OperandKind::Use || op.pos() == OperandPos::Early {
                    walk.write(a, Some(op.vreg()), 2 * i);
                }
            }
            for r in f.inst_clobbers(inst) {
                walk.close(Allocation::reg(r), 2 * i + 1);
            }
            for (op, &a) in pairs {
                if op.kind() == OperandKind::Def && op.pos() == OperandPos::Late {
                    walk.write(a, Some(op.vreg()), 2 * i + 1);
                }
            }
            apply_edits(
                out,
                &mut next_edit,
                inst,
                InstPosition::After,
                2 * i + 2,
                &mut walk,
                &mut moves,
                fixed_stack,
            );
            // Values whose last mention in a block they do not live out of die here. At
            // the block's last instruction the end of the block takes over, after the
            // holdings were recorded for the successors (branch arguments pass there).
            if inst == range.last() {
                continue;
            }
            let dead: Vec<Allocation> = walk
                .open
                .iter()
                .filter(|(_, (v, _))| {
                    !lives_out.contains(v) && last.get(v).is_none_or(|&l| l <= inst)
                })
                .map(|(&l, _)| l)
                .collect();
            for l in dead {
                walk.close(l, 2 * i + 2);
            }
        }
        at_end[b] = Some(walk.open.iter().map(|(&l, &(v, _))| (l, v)).collect());
        // Holdings of values that do not live out end with the block.
        let dead: Vec<Allocation> = walk
            .open
            .iter()
            .filter(|(_, (v, _))| !lives_out.contains(v))
            .map(|(&l, _)| l)
            .collect();
        for l in dead {
            walk.close(l, end);
        }
        prev_end = Some(end);
    }
    let open: Vec<Allocation> = walk.open.keys().copied().collect();
    for l in open {
        walk.close(l, prev_end.unwrap_or(0));
    }
    pieces.sort_by_key(|p| (p.start, p.loc.bits(), p.vreg.vreg()));
    Layout { pieces, moves }
}

#[allow(clippy::too_many_arguments)]
fn apply_edits(
    out: &Output,
    next: &mut usize,
    inst: Inst,
    pos: InstPosition,
    point: u32,
    walk: &mut Walk<'_>,
    moves: &mut Vec<MoveMark>,
    fixed_stack: &[regalloc2::PReg],
) {
    while let Some(&(pt, Edit::Move { from, to })) = out.edits.get(*next) {
        if pt.inst() > inst || (pt.inst() == inst && pt.pos() > pos) {
            break;
        }
        *next += 1;
        let vreg = walk.open.get(&from).map(|&(v, _)| v);
        let kind = match (is_stack(from, fixed_stack), is_stack(to, fixed_stack)) {
            (false, true) => MoveKind::Spill,
            (true, false) => MoveKind::Reload,
            _ => MoveKind::Move,
        };
        moves.push(MoveMark {
            point,
            from,
            to,
            kind,
            vreg,
        });
        walk.write(to, vreg, point);
    }
}
