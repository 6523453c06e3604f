//! Copy-only values follow their partners to the stack (`Options::copy_spilling`), after
//! hint recoloring. A value none of whose operands needs a register — a block parameter
//! only passed on as a branch argument, a Wasm local carried through a merge block — is
//! placed by the main loop like any other, and a free register is where it lands. When
//! the values it is copied from and to live on the stack, that register costs a reload on
//! each edge in and a store on each edge out, where the slot would cost nothing: the
//! partner slots (`slots::sharing`) put copy partners in one slot and the copy becomes a
//! self-move. ion gets this by merging block parameters with their arguments into one
//! bundle before allocating; LLVM by coalescing the copies away before greedy runs.
//!
//! Each candidate (a value with one piece, in a register, no operand needing one) weighs
//! its copies and fixed operands where its partners are now: in its own register 0,
//! another register a move, the stack a load or store; on the stack, a partner in a
//! register costs a load or store, one on the stack nothing if their live segments are
//! disjoint (the slots can merge) and a load and a store otherwise. It moves to the stack
//! when that is strictly cheaper. Candidates are revisited while some moved, at most
//! `MAX_PASSES` times: one leaving for the stack can tip its neighbour in a chain.

use super::Allocator;
use super::interval::{IntervalId, IntervalKind};
use crate::analysis::intervals::Segment;
use log::debug;
use regalloc2::{Function, PReg, VReg};

const MAX_PASSES: usize = 3;
/// A partner with more pieces than this is not looked up (its location counts as
/// unknown, the same on both sides).
const MAX_PIECES: usize = 32;
const NONE: u32 = u32::MAX;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct CopySpillScratch {
    /// The candidate intervals.
    candidates: Vec<IntervalId>,
    /// Per vreg index: its index in `candidates`, or `NONE`. Only candidates' entries
    /// are set, and they are reset before returning.
    index_of: Vec<u32>,
    /// (candidate index, partner, point where the partner takes part, frequency).
    copies: Vec<(u32, VReg, u32, f32)>,
    /// Per candidate, its range in `copies`.
    copy_range: Vec<(u32, u32)>,
    /// (candidate index, fixed register, frequency).
    fixed: Vec<(u32, PReg, f32)>,
    fixed_range: Vec<(u32, u32)>,
}

/// Where a partner is at the point of a copy.
#[derive(Clone, Copy, PartialEq)]
enum Location {
    Reg(PReg),
    Stack,
    Unknown,
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    pub(crate) fn spill_copy_only_values(&mut self) {
        let mut s = std::mem::take(&mut self.ctx.copy_spill);
        s.candidates.clear();
        let nv = self.func.num_vregs();
        if s.index_of.len() < nv {
            s.index_of.resize(nv, NONE);
        }
        for (id, iv) in self.ctx.intervals.iter() {
            if iv.kind == IntervalKind::Main
                && iv.assigned.is_some()
                && self.ctx.vreg_pieces[iv.vreg.vreg()].len() == 1
                && !self.ctx.partners.of(iv.vreg).is_empty()
                && !iv.uses.iter().any(|u| self.needs_register(u))
            {
                s.index_of[iv.vreg.vreg()] = s.candidates.len() as u32;
                s.candidates.push(id);
            }
        }
        if s.candidates.is_empty() {
            self.ctx.copy_spill = s;
            return;
        }
        s.copies.clear();
        s.fixed.clear();
        let partners = &self.ctx.partners;
        for c in &partners.copies {
            let (ia, ib) = (s.index_of[c.a.vreg()], s.index_of[c.b.vreg()]);
            if ia != NONE {
                s.copies.push((ia, c.b, c.at_b, c.freq));
            }
            if ib != NONE {
                s.copies.push((ib, c.a, c.at_a, c.freq));
            }
        }
        for &(v, _, reg, freq) in &partners.fixed {
            let i = s.index_of[v.vreg()];
            if i != NONE {
                s.fixed.push((i, reg, freq));
            }
        }
        s.copies.sort_by_key(|c| c.0);
        s.fixed.sort_by_key(|c| c.0);
        fill_ranges(
            &mut s.copy_range,
            s.candidates.len(),
            s.copies.iter().map(|c| c.0),
        );
        fill_ranges(
            &mut s.fixed_range,
            s.candidates.len(),
            s.fixed.iter().map(|c| c.0),
        );

        for _ in 0..MAX_PASSES {
            let mut moved = false;
            for k in 0..s.candidates.len() {
                let id = s.candidates[k];
                let Some(reg) = self.ctx.intervals[id].assigned else {
                    continue;
                };
                let vreg = self.ctx.intervals[id].vreg;
                let (mut in_reg, mut on_stack) = (0.0f64, 0.0f64);
                let (a, b) = s.copy_range[k];
                for &(_, partner, at, freq) in &s.copies[a as usize..b as usize] {
                    let freq = f64::from(freq);
                    match self.location_at(partner, at) {
                        Location::Reg(r) => {
                            in_reg += if r == reg { 0.0 } else { freq };
                            on_stack += 2.0 * freq;
                        }
                        Location::Stack => {
                            in_reg += 2.0 * freq;
                            if !self.disjoint(vreg, partner) {
                                on_stack += 4.0 * freq;
                            }
                        }
                        Location::Unknown => {}
                    }
                }
                let (a, b) = s.fixed_range[k];
                for &(_, r, freq) in &s.fixed[a as usize..b as usize] {
                    let freq = f64::from(freq);
                    in_reg += if r == reg { 0.0 } else { freq };
                    on_stack += 2.0 * freq;
                }
                if on_stack < in_reg {
                    debug!(
                        "{id} ({vreg}): copy-only value leaves {reg} for the stack \
                         (copies {in_reg} in the register, {on_stack} on the stack)"
                    );
                    self.unassign(id);
                    self.spill(id);
                    self.stats.copy_spills += 1;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        for &id in &s.candidates {
            s.index_of[self.ctx.intervals[id].vreg.vreg()] = NONE;
        }
        self.ctx.copy_spill = s;
    }

    /// Where `v` is at point `at`: the piece of it whose runs hold the point.
    fn location_at(&self, v: VReg, at: u32) -> Location {
        let pieces = &self.ctx.vreg_pieces[v.vreg()];
        if pieces.len() > MAX_PIECES {
            return Location::Unknown;
        }
        for &p in pieces {
            let iv = &self.ctx.intervals[p];
            if iv.kind != IntervalKind::Main {
                continue;
            }
            let i = iv.runs.partition_point(|r| r.end <= at);
            if iv.runs.get(i).is_some_and(|r| r.start <= at) {
                return match (iv.spilled, iv.assigned) {
                    (true, _) => Location::Stack,
                    (false, Some(r)) => Location::Reg(r),
                    (false, None) => Location::Unknown,
                };
            }
        }
        Location::Unknown
    }

    /// Whether the live segments of `a` and `b` never overlap (so their slots can merge).
    fn disjoint(&self, a: VReg, b: VReg) -> bool {
        let (x, y) = (
            self.an.intervals.segments_of(a),
            self.an.intervals.segments_of(b),
        );
        let (short, long) = if x.len() <= y.len() { (x, y) } else { (y, x) };
        !short.iter().any(|s: &Segment| {
            let i = long.partition_point(|t| t.end <= s.start);
            long.get(i).is_some_and(|t| t.start < s.end)
        })
    }
}

/// Per candidate, its range in a list sorted by candidate index.
fn fill_ranges(ranges: &mut Vec<(u32, u32)>, n: usize, keys: impl Iterator<Item = u32>) {
    ranges.clear();
    ranges.resize(n, (0, 0));
    let mut at = 0u32;
    let mut keys = keys.peekable();
    for (k, range) in ranges.iter_mut().enumerate() {
        let start = at;
        while keys.next_if(|&key| key as usize == k).is_some() {
            at += 1;
        }
        *range = (start, at);
    }
}
