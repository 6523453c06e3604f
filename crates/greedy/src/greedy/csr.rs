//! The callee-saved first-use cost (LLVM's `tryAssignCSRFirstTime`). The callee-saved
//! registers are `Options::callee_saved`, by default `non_preferred_regs_by_class` (in
//! Cranelift's environments those are callee-saved but for x64's float ones): the first
//! value to touch one makes the function save it in the prologue and restore it in the
//! epilogue. An interval whose only free register is an untouched callee-saved one takes
//! it only when spilling it would cost at least as much as that save and restore; once a
//! callee-saved register is touched it is as good as any other.
//!
//! Before it takes one in its first round, an interval tries LLVM's pre-split: a region
//! split over the registers that are not untouched callee-saved ones (typically keeping a
//! caller-saved register up to a call and the stack across it), made when it costs less
//! than the save and restore plus the moves the callee-saved register would need at the
//! value's fixed-register operands (a callee-saved register is never an argument or
//! result register, so those moves are certain).

use super::Allocator;
use super::interval::{IntervalId, IntervalKind, Stage};
use crate::Phase;
use log::debug;
use regalloc2::{Function, Inst, OperandConstraint, PReg, PRegSet, RegClass, VReg};

/// Save plus restore, in entry-block frequency units (docs/metrics.md charges 4).
pub(crate) const CSR_COST: f32 = 4.0;
/// A spill costs a store or a reload per register operand, 2 units each.
const SPILL_MOVE_COST: f32 = 2.0;

/// Which callee-saved registers the function already pays for.
#[derive(Default)]
pub(crate) struct CalleeSaved {
    /// `Options::callee_saved`, or every non-preferred register.
    registers: PRegSet,
    touched: PRegSet,
    /// Per class: more values are live at once somewhere than there are registers, so
    /// every callee-saved one will likely be opened anyway and declining one would only
    /// spill for nothing.
    pressure_exceeds_registers: [bool; 3],
    /// Per class, per program point: segments starting there minus segments ending.
    /// All zero between functions: `measure_pressure` clears each entry as it reads it.
    delta: Vec<i32>,
}

impl CalleeSaved {
    /// Starts a function whose callee-saved registers are `sets` (`Allocator::callee_saved_sets`).
    pub fn reset(&mut self, sets: &[PRegSet; 3]) {
        self.registers = PRegSet::empty();
        for set in sets {
            self.registers.union_from(*set);
        }
        self.touched = PRegSet::empty();
        self.pressure_exceeds_registers = [false; 3];
    }

    pub fn touch(&mut self, p: PReg) {
        self.touched.add(p);
    }

    /// The registers paid for so far, for an undo log.
    pub fn touched(&self) -> PRegSet {
        self.touched
    }

    /// Back to a set `touched` returned earlier: the registers touched since were only
    /// tried, never kept.
    pub fn restore_touched(&mut self, touched: PRegSet) {
        self.touched = touched;
    }

    /// Would using `p` make the function save and restore it?
    pub fn is_untouched(&self, p: PReg) -> bool {
        self.registers.contains(p) && !self.touched.contains(p)
    }
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// The callee-saved registers per class: `Options::callee_saved`, or every
    /// non-preferred register.
    pub(crate) fn callee_saved_sets(&self) -> [PRegSet; 3] {
        self.options
            .callee_saved
            .unwrap_or(self.env.non_preferred_regs_by_class)
    }

    /// A fixed operand in a callee-saved register already makes the function pay for it.
    /// Reads the fixed operands `Partners::compute` listed (it must have run): the
    /// registers' reservations hold them too, but among every call's clobbers.
    pub(crate) fn touch_fixed_callee_saved(&mut self) {
        for &(_, _, p, _) in &self.ctx.partners.fixed {
            self.ctx.callee_saved.touch(p);
        }
    }

    /// Finds each class's peak register pressure from one pass over every value's
    /// segments: +1 at a segment's start and -1 at its end, summed per point and
    /// accumulated in point order (touching segments do not overlap: at a shared point
    /// the end cancels the start). Counting per point needs no sort of the events.
    pub(crate) fn measure_pressure(&mut self) {
        let mut delta = std::mem::take(&mut self.ctx.callee_saved.delta);
        let points = 2 * self.func.num_insts() + 1;
        let sets = self.callee_saved_sets();
        let measured = [RegClass::Int, RegClass::Float, RegClass::Vector]
            .map(|class| sets[class as usize] != PRegSet::empty());
        debug_assert!(delta.iter().all(|&d| d == 0));
        if delta.len() < 3 * points {
            delta.resize(3 * points, 0);
        }
        let live = &self.an.live;
        for v in live.mentioned() {
            let Some(class) = live.class[v] else {
                continue;
            };
            let c = class as usize;
            if !measured[c] {
                continue;
            }
            let row = &mut delta[c * points..(c + 1) * points];
            for s in self.an.intervals.segments_of(VReg::new(v, class)) {
                row[s.start as usize] += 1;
                row[s.end as usize] -= 1;
            }
        }
        for (c, row) in delta.chunks_exact_mut(points).take(3).enumerate() {
            if !measured[c] {
                continue;
            }
            let all = self.out.order[c].len() as i32;
            let mut live = 0;
            let mut peak = 0;
            for d in row {
                live += std::mem::take(d);
                peak = peak.max(live);
            }
            self.ctx.callee_saved.pressure_exceeds_registers[c] = peak > all;
        }
        self.ctx.callee_saved.delta = delta;
    }

    /// LLVM's pre-split: `id`, in its first round, found only untouched callee-saved `p`
    /// free. Region-splits it over the other registers if that costs less than `p` would
    /// (its save and restore, and a move at each fixed operand naming another register);
    /// true if it did.
    pub(crate) fn try_csr_pre_split(&mut self, id: IntervalId, p: PReg) -> bool {
        let cs = &self.ctx.callee_saved;
        let iv = &self.ctx.intervals[id];
        if !self.options.csr_pre_split
            || !self.options.splitting
            || !self.options.csr_first_use_cost
            || !cs.is_untouched(p)
            || cs.pressure_exceeds_registers[p.class() as usize]
            || iv.kind != IntervalKind::Main
            || iv.stage != Stage::Assign
            || !iv.is_spillable()
            || iv.segments.len() > super::split::MAX_REGION_SEGMENTS
        {
            return false;
        }
        let cfg = &self.an.cfg;
        let mut cap = CSR_COST;
        if self.ctx.vreg_fixed_uses[iv.vreg.vreg()] {
            for u in self.ctx.lists.uses(iv) {
                if let OperandConstraint::FixedReg(q) = u.operand.constraint()
                    && q != p
                {
                    cap += self.an.freq.of(cfg.block_of(u.inst));
                }
            }
        }
        // With no fixed operand in another register, a pre-split only trades the save and
        // restore for the store at the def (unless the value has a slot already) and, as
        // a rule, a reload at some register use (there is none only when every register
        // use comes before the interference). When those reach the cap the region split's
        // setup is wasted: on the Wasm corpus 609 of 654 such attempts failed, and leaving
        // out the ones this bound rules out changed no function's cost (1,449 Wasm and 400
        // fuzz functions), while with fixed operands elsewhere the same bound did (+1 in a
        // function of 15 modules): there the moves the split saves pay for the reload.
        if cap <= CSR_COST {
            let def_block = self.an.live.def_block[iv.vreg.vreg()];
            let store = if self.out.slots.has_slot(iv.vreg) || !def_block.is_valid() {
                0.0
            } else {
                self.an.freq.of(def_block)
            };
            let coldest_use = self
                .ctx
                .lists
                .uses(iv)
                .iter()
                .filter(|u| self.needs_register(u))
                .map(|u| self.an.freq.of(cfg.block_of(u.inst)))
                .fold(f32::INFINITY, f32::min);
            if SPILL_MOVE_COST * (store + coldest_use) >= cap {
                return false;
            }
        }
        let split = self.timed(Phase::RegionSplit, |a| a.try_region_split_under(id, cap));
        if split {
            debug!("{id}: pre-split instead of a first use of callee-saved {p} (cost cap {cap})");
            self.stats.csr_pre_splits += 1;
        }
        split
    }

    /// Should `id` rather split or spill than be the first to use callee-saved `p`?
    pub(crate) fn declines_first_csr_use(&self, id: IntervalId, p: PReg) -> bool {
        let cs = &self.ctx.callee_saved;
        if !self.options.csr_first_use_cost
            || !cs.is_untouched(p)
            || cs.pressure_exceeds_registers[p.class() as usize]
        {
            return false;
        }
        let iv = &self.ctx.intervals[id];
        if !iv.is_spillable() {
            return false;
        }
        let cfg = &self.an.cfg;
        let mut spill_cost = 0.0;
        // An instruction taking the value in fixed registers costs both ways: from a
        // callee-saved register a move per operand, from the stack a reload into one of
        // them and a move per other operand, so one unit more. Counted, a value whose
        // only uses are a call's arguments in a loop (a Wasm callee's context, passed in
        // two registers) no longer looks free to spill (shootout-ackermann #4: 48 -> 41,
        // ion 50); the Wasm geomean against ion went 0.8292 -> 0.8275. Counting the store
        // at the def as well was worse (0.8317).
        if self.ctx.vreg_fixed_uses[iv.vreg.vreg()] {
            let mut last_inst = None;
            for u in self.ctx.lists.uses(iv).iter() {
                if let OperandConstraint::FixedReg(_) = u.operand.constraint()
                    && !u.is_def()
                    && last_inst != Some(u.inst)
                {
                    last_inst = Some(u.inst);
                    spill_cost += self.an.freq.of(cfg.block_of(u.inst));
                }
            }
        }
        // A value live across a call needs a callee-saved register only to survive the
        // call: split around it instead, a register use right after the previous use or
        // the def, in the same block with no call between, reads the caller-saved
        // register the value is still in and needs no reload. (A value crossing no call
        // wants the register for want of any other: every use of it spilled reloads.)
        let intervals = &self.an.intervals;
        // A call at instruction i clobbers at point 2i + 1.
        let crosses_call = self.ctx.lists.segments(iv).iter().any(|s| {
            intervals.call_between(
                Inst::new(s.start as usize / 2),
                Inst::new(s.end as usize / 2),
            )
        });
        let mut prev: Option<Inst> = None;
        for u in self.ctx.lists.uses(iv).iter() {
            let free = crosses_call
                && prev.is_some_and(|p| {
                    cfg.block_of(p) == cfg.block_of(u.inst) && !intervals.call_between(p, u.inst)
                });
            prev = Some(u.inst);
            if free || !self.needs_register(u) {
                continue;
            }
            spill_cost += SPILL_MOVE_COST * self.an.freq.of(cfg.block_of(u.inst));
            if spill_cost >= CSR_COST {
                return false;
            }
        }
        spill_cost < CSR_COST
    }
}
