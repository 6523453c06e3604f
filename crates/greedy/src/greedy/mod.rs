//! The greedy allocator's driver: a priority queue of live intervals and LLVM's stage
//! machine (`select_or_split`). Each dequeued interval is assigned a free register
//! (`assign`), or takes one from lighter intervals (`evict`), or waits for a second
//! round, or goes to the spiller (`spill`); every decision is logged at debug level.

pub(crate) mod advisor;
mod assign;
mod copy_spill;
mod csr;
mod events;
mod evict;
mod group_place;
mod groups;
mod head;
mod hint_recolor;
pub(crate) mod interval;
pub(crate) mod matrix;
mod queue;
mod recolor;
mod spill;
mod split;
mod unspill;

/// Tests build values on either side of the region split's length limits.
#[cfg(test)]
pub(crate) use split::{MAX_REGION_SEGMENTS, SPARSE_NESTED_REGION_SEGMENTS};

use crate::Stats;
use crate::analysis::Analyses;
use crate::analysis::copies::Partners;
use crate::analysis::intervals::{point_bound, point_inst};
use crate::assignment::{Assignment, ReloadPiece};
use crate::lists::{Lists, reset_span};
use crate::observe::observe;
use crate::slots::SlotLayout;
use crate::{Options, Phase, phase_clock};
use advisor::{DefaultEviction, DefaultPriority, PriorityAdvisor};
use cranelift_entity::PrimaryMap;
use interval::{Cascade, IntervalId, IntervalKind, IntervalLists, LiveInterval, Stage};
use log::debug;
use matrix::InterferenceMatrix;
use queue::{IntervalQueue, IntervalShape};
use regalloc2::{
    Allocation, Function, MachineEnv, OperandConstraint, PReg, PRegSet, RegAllocError, VReg,
};

/// Allocator state kept across functions for its buffers.
#[derive(Default)]
pub(crate) struct GreedyCtx {
    pub intervals: PrimaryMap<IntervalId, LiveInterval>,
    /// The intervals' segments, runs and operands.
    pub lists: IntervalLists,
    /// Scratch of `slots::home_in_fixed_slots`: who names each fixed stack slot.
    pub fixed_slot_namers: Vec<(PReg, u32, bool)>,
    /// The pieces of each vreg: `Main` ones (split products included; retired ones
    /// have no segments) and reload pieces.
    pub vreg_pieces: Lists<IntervalId>,
    /// Per vreg, the register of its newest assigned piece among the newest
    /// `MAX_PIECE_HINTS` of `vreg_pieces` (what copy partners hint). Kept current by
    /// `refresh_hint_reg` whenever a piece list or a piece's assignment changes, since
    /// hints read it for every partner of every probed interval.
    pub vreg_hint_reg: Vec<Option<PReg>>,
    /// Per vreg: some operand of it names a fixed register. Hint collection and eviction
    /// scan an interval's uses for those only when this is set, the uses of long
    /// intervals being the bulk of a probe otherwise.
    pub vreg_fixed_uses: Vec<bool>,
    /// Per vreg: its group was already considered for placement (`try_place_group`).
    pub group_tried: Vec<bool>,
    pub matrix: InterferenceMatrix,
    pub queue: IntervalQueue,
    pub next_cascade: Cascade,
    pub partners: Partners,
    /// Copy-connected values with disjoint live ranges (`Options::group_hints`).
    pub(crate) groups: groups::CoalesceGroups,
    /// The allocation order of values live across blocks (`build_long_order`).
    pub long_order: [Vec<PReg>; 3],
    /// Per class, the registers of the allocation order (`Assignment::order`): whether
    /// a register is in it is one bit test, where hints ask it of every register they
    /// name.
    pub in_order: [PRegSet; 3],
    pub scratch_intf: Vec<IntervalId>,
    pub scratch_best: Vec<IntervalId>,
    pub scratch_hints: Vec<(PReg, f32)>,
    /// The summed hints of a group's members (`try_place_group`).
    pub scratch_group_hints: Vec<(PReg, f32)>,
    /// The uses of one split product, gathered before its list is made.
    pub scratch_uses: Vec<crate::analysis::intervals::UseSite>,
    pub(crate) recolor: recolor::RecolorCtx,
    callee_saved: csr::CalleeSaved,
    copy_graph: Lent<hint_recolor::CopyGraph>,
    copy_spill: Lent<copy_spill::CopySpillScratch>,
    unspill: Lent<unspill::UnspillScratch>,
    /// Every interval spilled, with the moment (`spill_moment`; epoch `NOT_TRIED` for a
    /// piece spilled without a look for a register): the candidates of `unspill_pieces`.
    spill_log: Vec<(IntervalId, (u32, PRegSet))>,
    region_scratch: Lent<split::RegionScratch>,
    local_scratch: Lent<split::LocalScratch>,
    block_scratch: Lent<split::BlockScratch>,
}

/// A stage's scratch structure, lent out whole while the stage also needs `&mut self`.
/// Only a pointer moves out and back: taking the structure itself (`mem::take`) copied
/// its hundreds of bytes of vector headers twice per call and ran the drop glue of the
/// placeholder left behind, on every split attempt.
pub(crate) struct Lent<T>(Option<Box<T>>);

impl<T> Default for Lent<T> {
    fn default() -> Self {
        Lent(None)
    }
}

impl<T: Default> Lent<T> {
    /// The structure, with the buffers of its last use (a fresh one the first time).
    pub(crate) fn take(&mut self) -> Box<T> {
        self.0.take().unwrap_or_default()
    }

    pub(crate) fn put(&mut self, t: Box<T>) {
        self.0 = Some(t);
    }

    /// The structure while it is not lent out, if it was ever used.
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.as_deref()
    }
}

pub(crate) struct Allocator<'a, F: Function + ?Sized> {
    pub func: &'a F,
    pub env: &'a MachineEnv,
    pub options: &'a Options,
    pub an: &'a Analyses,
    pub ctx: &'a mut GreedyCtx,
    /// Where the result goes; its slots and allocation order are read while allocating.
    pub out: &'a mut Assignment,
    pub stats: &'a mut Stats,
    pub priority: DefaultPriority,
    pub eviction: DefaultEviction,
    /// Told every decision when attached (`crate::run_observed`); see `observe!`.
    pub observer: Option<&'a mut dyn crate::Observer>,
}

impl<'a, F: Function + ?Sized> Allocator<'a, F> {
    pub fn run(&mut self) -> Result<(), RegAllocError> {
        let t = phase_clock(self.options);
        self.reset();
        // First: the callee-saved setup and the intervals read its list of fixed operands.
        self.ctx.partners.join_params_once = self.options.join_stores;
        self.ctx.partners.sibling_reuses = self.options.sibling_reuse_copies;
        self.ctx.partners.fallthrough_copies = self.options.fallthrough_copies;
        self.ctx.partners.compute_listed(
            self.func,
            &self.an.freq,
            &self.an.live.copy_or_fixed_insts,
        );
        self.stats.fallthrough_copies = self.ctx.partners.fallthrough_weighted;
        if self.options.long_value_order {
            self.build_long_order();
        }
        if self.options.group_hints {
            self.stats.group_unions += self.ctx.groups.compute(
                self.func.num_vregs(),
                &self.ctx.partners,
                &self.an.intervals,
            );
        }
        if self.options.csr_first_use_cost {
            self.touch_fixed_callee_saved();
            self.measure_pressure();
        }
        self.create_intervals();
        self.stats.phases.since(Phase::Setup, t);
        let t = phase_clock(self.options);
        let nested = self.stats.phases.in_main_loop();
        while let Some((id, priority)) = self.ctx.queue.pop() {
            observe!(self, self.dequeue_event(id, priority));
            self.select_or_split(id)?;
        }
        if let Some(t) = t {
            // The phases the loop called were timed on their own.
            let nested = self.stats.phases.in_main_loop() - nested;
            let main_loop = t.elapsed().saturating_sub(nested);
            self.stats.phases.add(Phase::Assignment, main_loop);
        }
        // Copy spilling, unspilling and head splits act on pieces in a slot, or on values
        // copied to one: with nothing spilled (593 of the 1,449 Wasm functions) each is a
        // no-op, and skipping them keeps their code out of the instruction cache.
        if !self.ctx.spill_log.is_empty() {
            self.revisit_spilled();
        }
        if self.options.hint_recoloring {
            let t = phase_clock(self.options);
            self.recolor_hints();
            self.stats.phases.since(Phase::HintRecoloring, t);
        }
        let t = phase_clock(self.options);
        if self.options.fixed_slot_homes && !self.env.fixed_stack_slots.is_empty() {
            self.stats.fixed_slot_homes = self.home_in_fixed_slots();
        }
        SlotLayout::run(
            self.func,
            self.an,
            &self.ctx.partners,
            self.options,
            &mut self.out.slots,
            self.stats,
        );
        self.stats.phases.since(Phase::SlotSharing, t);
        self.export();
        Ok(())
    }

    /// The passes after the main loop that revisit spilled pieces and the values copied
    /// to them: copy spilling, unspilling, head splits.
    fn revisit_spilled(&mut self) {
        // With `unspill_copy_freed`, copy spilling goes first and unspilling also probes
        // the registers its values left: a chain of copy-only values held registers
        // through a hot loop where the values spilled beside it can take them now.
        let copy_first = self.options.copy_spilling && self.options.unspill_copy_freed;
        let mut copy_freed = PRegSet::empty();
        if copy_first {
            let t = phase_clock(self.options);
            copy_freed = self.spill_copy_only_values();
            self.stats.phases.since(Phase::HintRecoloring, t);
        }
        if self.options.unspilling {
            let t = phase_clock(self.options);
            self.unspill_pieces(copy_freed);
            self.stats.phases.since(Phase::HintRecoloring, t);
        }
        if self.options.copy_spilling && !copy_first {
            let t = phase_clock(self.options);
            self.spill_copy_only_values();
            self.stats.phases.since(Phase::HintRecoloring, t);
        }
        if self.options.head_splits {
            let t = phase_clock(self.options);
            self.keep_spilled_heads();
            self.stats.phases.since(Phase::HintRecoloring, t);
        }
    }

    /// Homes spilled values in their def's fixed stack slot where nothing else names it
    /// (`slots::home_in_fixed_slots`); no piece may have been given that slot.
    fn home_in_fixed_slots(&mut self) -> usize {
        let mut taken = PRegSet::empty();
        for (_, iv) in self.ctx.intervals.iter() {
            if let Some(r) = iv.assigned {
                taken.add(r);
            }
        }
        crate::slots::home_in_fixed_slots(
            self.func,
            self.env,
            self.an,
            taken,
            &mut self.out.slots,
            &mut self.ctx.fixed_slot_namers,
        )
    }

    /// Hands the intervals' final locations to `out`: a home piece per run of each
    /// assigned or spilled `Main` interval, and every reload piece.
    fn export(&mut self) {
        let out = &mut *self.out;
        let options = self.options;
        let lists = &self.ctx.lists;
        for (_, iv) in self.ctx.intervals.iter() {
            let v = iv.vreg.vreg() as u32;
            match iv.kind {
                // Retired intervals (replaced by split products) have no segments.
                IntervalKind::Main if !iv.segments.is_empty() => {
                    let loc = if iv.spilled {
                        out.slots.slot_of(iv.vreg).unwrap_or_else(Allocation::none)
                    } else {
                        iv.assigned.map_or_else(Allocation::none, Allocation::reg)
                    };
                    // Runs, not block segments: a value live through many blocks is one
                    // piece per stretch, so every location lookup searches fewer.
                    for s in lists.runs(iv) {
                        out.pieces.push((v, (s.start, s.end, loc)));
                    }
                }
                // The deliberately broken rule (`Options::debug_break_rule`).
                IntervalKind::Reload { is_def: true } if options.debug_break_rule => {}
                IntervalKind::Reload { is_def } => {
                    if let (Some(reg), Some(u), Some(s)) = (
                        iv.assigned,
                        lists.uses(iv).first(),
                        lists.segments(iv).first(),
                    ) {
                        out.reloads.push(ReloadPiece {
                            inst: u.inst.index() as u32,
                            vreg: v,
                            is_def,
                            reg,
                            start: s.start,
                            end: s.end,
                        });
                    }
                }
                IntervalKind::Main => {}
            }
        }
    }

    /// Runs `f`, its time counted in `phase`.
    pub(crate) fn timed<R>(&mut self, phase: Phase, f: impl FnOnce(&mut Self) -> R) -> R {
        if !self.options.phase_times {
            return f(self);
        }
        let t = phase_clock(self.options);
        let r = f(self);
        self.stats.phases.since(phase, t);
        r
    }

    fn reset(&mut self) {
        let nv = self.func.num_vregs();
        let span = self.an.live.vreg_span();
        let ctx = &mut *self.ctx;
        ctx.intervals.clear();
        ctx.lists.clear();
        ctx.vreg_pieces.reset_span(span.clone());
        reset_span(&mut ctx.vreg_hint_reg, nv, span.clone(), None);
        reset_span(&mut ctx.vreg_fixed_uses, nv, span.clone(), false);
        reset_span(&mut ctx.group_tried, nv, span, false);
        ctx.matrix.reset(point_bound(self.func));
        ctx.queue.clear();
        ctx.spill_log.clear();
        ctx.next_cascade = 1;
        ctx.recolor.reset(self.func.num_insts());
        for (set, order) in ctx.in_order.iter_mut().zip(&self.out.order) {
            *set = PRegSet::empty();
            for &p in order {
                set.add(p);
            }
        }
        let callee_saved = self.callee_saved_sets();
        self.ctx.callee_saved.reset(&callee_saved);
    }

    fn create_intervals(&mut self) {
        // All flags first: spilling a value up front below may already probe registers.
        // `Partners` lists every fixed-register operand (the non-allocatable ones aside,
        // which no vreg's uses hold): far fewer than the vregs whose uses would be
        // scanned.
        for &(v, ..) in &self.ctx.partners.fixed {
            self.ctx.vreg_fixed_uses[v.vreg()] = true;
        }
        // In increasing vreg order, as interval ids have always been handed out.
        let live = &self.an.live;
        for v in live.mentioned() {
            let Some(class) = live.class[v] else {
                continue;
            };
            self.create_interval(VReg::new(v, class));
        }
    }

    /// The `Main` interval of `vreg` (if it is live anywhere), queued or spilled.
    fn create_interval(&mut self, vreg: VReg) {
        let li = &self.an.intervals;
        let v = vreg.vreg();
        let segments = li.segments_of(vreg);
        if segments.is_empty() {
            return;
        }
        let uses = li.uses_of(vreg);
        let (must_spill, limit) = if self.an.live.has_stack_or_limit_operand(vreg) {
            (
                uses.iter()
                    .any(|u| u.operand.constraint() == OperandConstraint::Stack),
                split::use_limit(uses),
            )
        } else {
            (false, usize::MAX)
        };
        let lists = &mut self.ctx.lists;
        let segments = lists.add_segments(segments);
        let runs = lists.add_runs_of(segments);
        let iv = LiveInterval {
            vreg,
            kind: IntervalKind::Main,
            segments,
            fixed_conflicts: li.fixed_index.conflicts(lists.segments_at(runs), vreg),
            runs,
            uses: lists.add_uses(uses),
            stage: Stage::New,
            cascade: 0,
            weight: 0.0,
            assigned: None,
            split_hint: None,
            limit,
            deferred: false,
            spilled: false,
        };
        let id = self.ctx.intervals.push(iv);
        self.ctx.vreg_pieces[v].push(id);
        // One walk of the segments for the spill weight and the queue's shape.
        let iv = &self.ctx.intervals[id];
        let (size, weighted_size) = self.sizes(iv);
        let weight = self.main_spill_weight(iv, size);
        self.ctx.intervals[id].weight = weight;
        self.stats.intervals += 1;
        if must_spill {
            if self.options.stack_use_pieces && self.split_off_stack_uses(id) {
                return;
            }
            debug!("{id} ({vreg}): spilled up front, an operand needs it on the stack");
            self.spill(id);
        } else {
            let iv = &self.ctx.intervals[id];
            let shape = IntervalShape {
                weighted_size,
                local_fixed_hint: self.local_fixed_hint(iv),
            };
            self.ctx.queue.set_shape(id, shape);
            self.enqueue(id);
        }
    }

    /// LLVM's normalized spill weight: Σ (uses + defs + copies) × frequency divided by
    /// the size in instructions plus a constant, so short dense intervals weigh most.
    /// Only the copies inside the interval's segments count: a piece of a split value
    /// that holds none of its copies saves none of them by keeping a register. With
    /// `Options::any_uses_weightless`, operands that accept the stack do not count.
    pub(crate) fn spill_weight(&self, id: IntervalId) -> f32 {
        let iv = &self.ctx.intervals[id];
        if iv.kind != IntervalKind::Main {
            return f32::INFINITY;
        }
        self.main_spill_weight(iv, iv.size(&self.ctx.lists))
    }

    /// `spill_weight` of a `Main` interval of `size` points.
    fn main_spill_weight(&self, iv: &LiveInterval, size: u32) -> f32 {
        let cfg = &self.an.cfg;
        let free_any = self.options.any_uses_weightless;
        let lists = &self.ctx.lists;
        let mut sum: f32 = lists
            .uses(iv)
            .iter()
            .filter(|u| {
                !(free_any
                    && matches!(
                        u.operand.constraint(),
                        OperandConstraint::Any | OperandConstraint::Stack
                    ))
            })
            .map(|u| self.an.freq.of(cfg.block_of(u.inst)))
            .sum();
        sum += self.ctx.partners.copy_freq_in(iv.vreg, lists.segments(iv));
        let insts = size as f32 / 2.0;
        sum / (insts + 25.0)
    }

    /// The points `iv` covers (`LiveInterval::size`) and Σ segment length × block
    /// frequency.
    fn sizes(&self, iv: &LiveInterval) -> (u32, f32) {
        let cfg = &self.an.cfg;
        let mut size = 0;
        let mut weighted = 0.0f32;
        for s in self.ctx.lists.segments(iv) {
            size += s.len();
            weighted += s.len() as f32 * self.an.freq.of(cfg.block_of(point_inst(s.start)));
        }
        (size, weighted)
    }

    /// Only a value inside one block: there the fixed operand is most of its life, and
    /// it must claim that register before a longer value passes through. A value live
    /// across blocks is ordered by size like any other; its fixed operand still steers
    /// `try_assign`. Copy partners never count: at first enqueue none has a register, so
    /// they are no known preference (LLVM's condition for the bit).
    fn local_fixed_hint(&self, iv: &LiveInterval) -> bool {
        iv.segments.len() == 1
            && self.ctx.vreg_fixed_uses[iv.vreg.vreg()]
            && self
                .ctx
                .lists
                .uses(iv)
                .iter()
                .any(|u| matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)))
    }

    /// The parts of `iv`'s priority its stage does not decide.
    fn shape_of(&self, iv: &LiveInterval) -> IntervalShape {
        IntervalShape {
            weighted_size: self.sizes(iv).1,
            local_fixed_hint: self.local_fixed_hint(iv),
        }
    }

    pub(crate) fn enqueue(&mut self, id: IntervalId) {
        let iv = &mut self.ctx.intervals[id];
        if iv.stage == Stage::New {
            iv.stage = Stage::Assign;
        }
        let iv = &self.ctx.intervals[id];
        let shape = match self.ctx.queue.cached_shape(id) {
            Some(shape) => {
                debug_assert_eq!(shape, self.shape_of(iv));
                shape
            }
            None => {
                let shape = self.shape_of(iv);
                self.ctx.queue.set_shape(id, shape);
                shape
            }
        };
        let prio = self
            .priority
            .priority(iv, shape.weighted_size, shape.local_fixed_hint);
        self.ctx.queue.push(id, prio);
    }

    fn select_or_split(&mut self, id: IntervalId) -> Result<(), RegAllocError> {
        // Set when the only free register is an untouched callee-saved one that costs
        // more than spilling: eviction and recoloring then leave such registers alone.
        let mut avoid_csr = false;
        // Groups are formed only with `group_hints`: without it the table holds an
        // earlier function's groups.
        if self.options.group_hints && self.options.group_placement && self.try_place_group(id) {
            return Ok(());
        }
        if self.options.weightless_to_stack && self.is_weightless(id) {
            self.place_weightless(id);
            return Ok(());
        }
        if let Some(p) = self.try_assign(id) {
            if !self.declines_first_csr_use(id, p) {
                if self.ctx.callee_saved.is_untouched(p) && self.try_csr_pre_split(id, p) {
                    return Ok(());
                }
                if self.ctx.callee_saved.is_untouched(p) {
                    debug!("{id}: first use of callee-saved {p}, cheaper than spilling");
                    self.stats.csr_first_uses += 1;
                }
                self.assign(id, p);
                return Ok(());
            }
            avoid_csr = true;
            observe!(self, self.csr_refusal_event(id, p));
            debug!(
                "{id} ({}): spilling is cheaper than a first use of callee-saved {p}",
                self.ctx.intervals[id].vreg
            );
        } else if self.observer.is_some() {
            self.report_refusals(id);
        }
        let iv = &self.ctx.intervals[id];
        let spillable = iv.is_spillable();
        if (iv.stage == Stage::Assign || !spillable)
            && self.timed(Phase::Eviction, |a| a.try_evict(id, avoid_csr))
        {
            return Ok(());
        }
        if !spillable {
            if self.timed(Phase::Recoloring, |a| {
                a.last_chance_recolor(id, "unspillable", false)
            }) {
                return Ok(());
            }
            if let Some(p) = self.try_assign_named_outside_order(id) {
                debug!(
                    "{id} ({}): no allocatable register can hold it, takes {p} named by a fixed operand of its value",
                    self.ctx.intervals[id].vreg
                );
                self.stats.fixed_register_fallbacks += 1;
                self.assign(id, p);
                return Ok(());
            }
            debug!(
                "{id} ({}): unspillable and no register can be freed",
                self.ctx.intervals[id].vreg
            );
            return Err(RegAllocError::TooManyLiveRegs);
        }
        let iv = &mut self.ctx.intervals[id];
        if iv.stage < Stage::Split {
            iv.stage = Stage::Split;
            debug!("{id} ({}): wait for second round", iv.vreg);
            observe!(self, self.requeued_event(id, "second round"));
            self.enqueue(id);
            return Ok(());
        }
        if iv.stage < Stage::Spill {
            if self.options.splitting && self.try_split(id, avoid_csr) {
                return Ok(());
            }
            self.ctx.intervals[id].stage = Stage::Spill;
        }
        let iv = &mut self.ctx.intervals[id];
        // Declining a callee-saved register is myopic: some later interval may pay for
        // it anyway. Waiting until everything else is placed lets this one use it then.
        if (self.options.deferred_spilling || avoid_csr) && !iv.deferred {
            iv.deferred = true;
            debug!("{id} ({}): spill deferred to the end of the queue", iv.vreg);
            observe!(self, self.requeued_event(id, "deferred spill"));
            self.stats.deferred_spills += 1;
            self.enqueue(id);
            return Ok(());
        }
        if self.options.spill_recoloring
            && self.timed(Phase::Recoloring, |a| {
                a.last_chance_recolor(id, "instead of a spill", avoid_csr)
            })
        {
            return Ok(());
        }
        if avoid_csr {
            self.stats.csr_declined += 1;
        }
        self.spill(id);
        Ok(())
    }

    /// A piece of a value with operands here, none of which needs a register, and with no
    /// copy or fixed operand to weigh: its spill weight is zero, so a register would
    /// save it nothing (the slot serves its operands as they are). A piece without
    /// operands is not one: between two pieces in registers it saves the store and the
    /// reload around it.
    fn is_weightless(&self, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        iv.kind == IntervalKind::Main && iv.weight == 0.0 && !iv.uses.is_empty()
    }

    /// A weightless piece waits until everything queued before it has its place, then
    /// takes a register only if one is free and already in use elsewhere; otherwise its
    /// slot. Taken when dequeued, a register could be the one a value needing it asks for
    /// next (a dead `Any` def at a loop's instruction left the loop's invariant to be
    /// reloaded), and an untouched callee-saved register would cost its save and restore
    /// for nothing. Sent to the slot at once instead of last, such pieces saved a little
    /// more weighted cost but used 70% more spill slots than ion on the fuzz corpus at 8
    /// registers (every dead def at an instruction in a slot of its own).
    fn place_weightless(&mut self, id: IntervalId) {
        let iv = &mut self.ctx.intervals[id];
        if !iv.deferred {
            iv.deferred = true;
            debug!(
                "{id} ({}): weightless, waits for the end of the queue",
                iv.vreg
            );
            observe!(self, self.requeued_event(id, "weightless"));
            self.enqueue(id);
            return;
        }
        match self.try_assign(id) {
            Some(p) if !self.ctx.callee_saved.is_untouched(p) => self.assign(id, p),
            _ => {
                debug!(
                    "{id} ({}): spilled up front, weightless and no register free in use",
                    self.ctx.intervals[id].vreg
                );
                self.stats.weightless_spills += 1;
                self.spill(id);
            }
        }
    }

    pub(crate) fn assign(&mut self, id: IntervalId, p: PReg) {
        observe!(self, self.assigned_event(id, p));
        let iv = &mut self.ctx.intervals[id];
        debug!("{id} ({}): assigned {p}", iv.vreg);
        iv.assigned = Some(p);
        let vreg = iv.vreg;
        self.ctx.callee_saved.touch(p);
        self.ctx
            .matrix
            .assign(p, id, self.ctx.lists.runs(&self.ctx.intervals[id]));
        self.refresh_hint_reg(vreg);
        self.stats.assignments += 1;
    }

    pub(crate) fn unassign(&mut self, id: IntervalId) {
        let iv = &mut self.ctx.intervals[id];
        if let Some(p) = iv.assigned.take() {
            let vreg = iv.vreg;
            self.ctx
                .matrix
                .unassign(p, self.ctx.lists.runs(&self.ctx.intervals[id]));
            self.refresh_hint_reg(vreg);
        }
    }

    /// Registers an interval may take, in allocation order, honouring `Limit`.
    pub(crate) fn order_for(&self, iv: &LiveInterval) -> impl Iterator<Item = PReg> + '_ {
        let limit = iv.limit;
        self.out.order[iv.vreg.class() as usize]
            .iter()
            .copied()
            .filter(move |p| p.hw_enc() < limit)
    }

    /// The register of some assigned piece of `v`, for hints.
    pub(crate) fn assigned_reg_of(&self, v: VReg) -> Option<PReg> {
        self.ctx.vreg_hint_reg[v.vreg()]
    }

    /// Recomputes `vreg_hint_reg[v]` after `v`'s pieces or their assignments changed.
    pub(crate) fn refresh_hint_reg(&mut self, v: VReg) {
        let ctx = &mut *self.ctx;
        let new = ctx.vreg_pieces[v.vreg()]
            .iter()
            .rev()
            .take(assign::MAX_PIECE_HINTS)
            .find_map(|&m| ctx.intervals[m].assigned);
        let old = std::mem::replace(&mut ctx.vreg_hint_reg[v.vreg()], new);
        if self.options.group_hints && old != new && ctx.groups.in_group(v) {
            ctx.groups.moved(v, old, new);
        }
    }

    pub(crate) fn fixed_conflict(&self, p: PReg, iv: &LiveInterval) -> bool {
        let conflict = iv.fixed_conflicts.contains(p);
        debug_assert_eq!(
            conflict,
            matrix::fixed_conflict(
                &self.an.intervals.fixed[p.index()],
                self.ctx.lists.runs(iv),
                iv.vreg
            )
        );
        conflict
    }
}
