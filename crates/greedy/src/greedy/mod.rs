//! The greedy allocator's driver: a priority queue of live intervals and LLVM's stage
//! machine (`select_or_split`). Each dequeued interval is assigned a free register
//! (`assign`), or takes one from lighter intervals (`evict`), or waits for a second
//! round, or goes to the spiller (`spill`); every decision is logged at debug level.

pub(crate) mod advisor;
mod assign;
mod csr;
mod evict;
mod hint_recolor;
pub(crate) mod interval;
pub(crate) mod matrix;
mod queue;
mod recolor;
mod slot_sharing;
mod spill;
mod split;

use crate::Stats;
use crate::analysis::Analyses;
use crate::analysis::intervals::{Segment, point_bound, point_inst};
use crate::lists::Lists;
use crate::slots::SpillSlots;
use crate::{Options, Phase, phase_clock};
use advisor::{DefaultEviction, DefaultPriority, PriorityAdvisor};
use cranelift_entity::PrimaryMap;
use interval::{Cascade, IntervalId, IntervalKind, LiveInterval, SegmentList, Stage, UseList};
use log::debug;
use matrix::InterferenceMatrix;
use queue::IntervalQueue;
use regalloc2::{
    Function, MachineEnv, OperandConstraint, OperandKind, PReg, RegAllocError, RegClass, VReg,
};

/// `GreedyCtx::vreg_slot` markers: no slot, and spilled but not laid out yet.
pub(crate) const NO_SLOT: usize = usize::MAX;
pub(crate) const NEEDS_SLOT: usize = usize::MAX - 1;

/// Copy-related partners of each vreg (block-param edges, reuse pairs) with the
/// frequency of the copy, for hints and hint-aware weights; each vreg's partners are
/// sorted by that frequency, strongest first.
#[derive(Default)]
pub(crate) struct Partners {
    range: Vec<(u32, u32)>,
    list: Vec<(VReg, f32)>,
    raw: Vec<(u32, VReg, f32)>,
    /// Per vreg, its copies as (program point, frequency), sorted by point: the point
    /// lies in the segment of the vreg that takes part in the copy, so a piece of a split
    /// value can weigh only the copies it holds.
    site_range: Vec<(u32, u32)>,
    sites: Vec<(u32, f32)>,
    raw_sites: Vec<(u32, (u32, f32))>,
    /// Every copy in program order (block by block: reuse pairs, then the block's branch
    /// arguments), each end with the point where it is read or written.
    pub copies: Vec<CopySite>,
    /// Every fixed-register operand in program order: the value, the point where it is
    /// in that register, the register and the block frequency.
    pub fixed: Vec<(VReg, u32, PReg, f32)>,
}

/// One copy between two values: `a` at point `at_a`, `b` at `at_b`.
#[derive(Clone, Copy)]
pub(crate) struct CopySite {
    pub a: VReg,
    pub at_a: u32,
    pub b: VReg,
    pub at_b: u32,
    pub freq: f32,
}

impl Partners {
    pub fn of(&self, v: VReg) -> &[(VReg, f32)] {
        let (a, b) = self.range[v.vreg()];
        &self.list[a as usize..b as usize]
    }

    /// Σ frequency of `v`'s copies at points inside `segments` (sorted, disjoint).
    pub fn copy_freq_in(&self, v: VReg, segments: &[Segment]) -> f32 {
        let (a, b) = self.site_range[v.vreg()];
        let sites = &self.sites[a as usize..b as usize];
        if sites.is_empty() {
            return 0.0;
        }
        let mut sum = 0.0;
        for s in segments {
            let lo = sites.partition_point(|&(p, _)| p < s.start);
            sum += sites[lo..]
                .iter()
                .take_while(|&&(p, _)| p < s.end)
                .map(|&(_, f)| f)
                .sum::<f32>();
        }
        sum
    }
}

/// Allocator state kept across functions for its buffers.
#[derive(Default)]
pub(crate) struct GreedyCtx {
    pub intervals: PrimaryMap<IntervalId, LiveInterval>,
    /// The pieces of each vreg: `Main` ones (split products included; retired ones
    /// have no segments) and reload pieces.
    pub vreg_pieces: Lists<IntervalId>,
    /// Per vreg, the register of its newest assigned piece among the newest
    /// `MAX_PIECE_HINTS` of `vreg_pieces` (what copy partners hint). Kept current by
    /// `refresh_hint_reg` whenever a piece list or a piece's assignment changes, since
    /// hints read it for every partner of every probed interval.
    pub vreg_hint_reg: Vec<Option<PReg>>,
    /// First unit of each vreg's spill slot: `NO_SLOT`, `NEEDS_SLOT` until the slots are
    /// laid out after the main loop, then the unit.
    pub vreg_slot: Vec<usize>,
    /// Per vreg: some operand of it names a fixed register. Hint collection and eviction
    /// scan an interval's uses for those only when this is set, the uses of long
    /// intervals being the bulk of a probe otherwise.
    pub vreg_fixed_uses: Vec<bool>,
    pub(crate) scratch_slot_ranges: Vec<slot_sharing::GroupHull>,
    pub matrix: InterferenceMatrix,
    pub queue: IntervalQueue,
    pub next_cascade: Cascade,
    pub partners: Partners,
    pub slots: SpillSlots,
    /// Allocation order per class: preferred, then non-preferred registers.
    pub order: [Vec<PReg>; 3],
    pub scratch_intf: Vec<IntervalId>,
    pub scratch_best: Vec<IntervalId>,
    pub scratch_hints: Vec<(PReg, f32)>,
    /// The registers fixed reservations rule out for the interval whose `try_assign`
    /// failed last (see `Allocator::reserved_for`).
    pub reserved_for: Option<(IntervalId, regalloc2::PRegSet)>,
    recolor: recolor::RecolorCtx,
    callee_saved: csr::CalleeSaved,
    copy_graph: hint_recolor::CopyGraph,
    region_scratch: split::RegionScratch,
}

pub(crate) struct Allocator<'a, F: Function + ?Sized> {
    pub func: &'a F,
    pub env: &'a MachineEnv,
    pub options: &'a Options,
    pub an: &'a Analyses,
    pub ctx: &'a mut GreedyCtx,
    pub stats: &'a mut Stats,
    pub priority: DefaultPriority,
    pub eviction: DefaultEviction,
}

impl<'a, F: Function + ?Sized> Allocator<'a, F> {
    pub fn run(&mut self) -> Result<(), RegAllocError> {
        let t = phase_clock(self.options);
        self.reset();
        if self.options.csr_first_use_cost {
            self.touch_fixed_callee_saved();
            self.measure_pressure();
        }
        self.build_partners();
        self.create_intervals();
        self.stats.phases.since(Phase::Setup, t);
        let t = phase_clock(self.options);
        let nested = self.stats.phases.in_main_loop();
        while let Some(id) = self.ctx.queue.pop() {
            self.select_or_split(id)?;
        }
        if let Some(t) = t {
            // The phases the loop called were timed on their own.
            let nested = self.stats.phases.in_main_loop() - nested;
            let main_loop = t.elapsed().saturating_sub(nested);
            self.stats.phases.add(Phase::Assignment, main_loop);
        }
        if self.options.hint_recoloring {
            let t = phase_clock(self.options);
            self.recolor_hints();
            self.stats.phases.since(Phase::HintRecoloring, t);
        }
        let t = phase_clock(self.options);
        self.assign_spill_slots();
        self.stats.phases.since(Phase::SlotSharing, t);
        Ok(())
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
        let ctx = &mut *self.ctx;
        ctx.intervals.clear();
        ctx.vreg_pieces.reset(nv);
        ctx.vreg_hint_reg.clear();
        ctx.vreg_hint_reg.resize(nv, None);
        ctx.vreg_slot.clear();
        ctx.vreg_slot.resize(nv, NO_SLOT);
        ctx.vreg_fixed_uses.clear();
        ctx.vreg_fixed_uses.resize(nv, false);
        ctx.matrix.reset(point_bound(self.func));
        ctx.queue.clear();
        ctx.next_cascade = 1;
        ctx.reserved_for = None;
        ctx.recolor.reset(self.func.num_insts());
        ctx.callee_saved.reset(self.env);
        ctx.slots.reset(self.func);
        let stack: Vec<PReg> = self.env.fixed_stack_slots.clone();
        for class in [RegClass::Int, RegClass::Float, RegClass::Vector] {
            let c = class as usize;
            let order = &mut ctx.order[c];
            order.clear();
            order.extend(
                self.env.preferred_regs_by_class[c]
                    .into_iter()
                    .chain(self.env.non_preferred_regs_by_class[c])
                    .filter(|p| p.class() == class && !stack.contains(p)),
            );
            let mut seen = 0u64;
            order.retain(|p| {
                let bit = 1u64 << p.hw_enc();
                let fresh = seen & bit == 0;
                seen |= bit;
                fresh
            });
        }
    }

    fn build_partners(&mut self) {
        let f = self.func;
        let p = &mut self.ctx.partners;
        p.raw.clear();
        p.raw_sites.clear();
        p.copies.clear();
        p.fixed.clear();
        for b in 0..f.num_blocks() {
            let block = regalloc2::Block::new(b);
            let insns = f.block_insns(block);
            let freq = self.an.freq.of(block);
            for inst in insns.iter() {
                let ops = f.inst_operands(inst);
                for op in ops {
                    match op.constraint() {
                        OperandConstraint::Reuse(j) => {
                            let input = ops[j].vreg();
                            p.raw.push((op.vreg().vreg() as u32, input, freq));
                            p.raw.push((input.vreg() as u32, op.vreg(), freq));
                            // The input is read at the early point, the def written late.
                            let early = 2 * inst.index() as u32;
                            p.raw_sites
                                .push((op.vreg().vreg() as u32, (early + 1, freq)));
                            p.raw_sites.push((input.vreg() as u32, (early, freq)));
                            p.copies.push(CopySite {
                                a: op.vreg(),
                                at_a: early + 1,
                                b: input,
                                at_b: early,
                                freq,
                            });
                        }
                        OperandConstraint::FixedReg(reg)
                            if op.as_fixed_nonallocatable().is_none() =>
                        {
                            // A fixed def's value is in its register after the instruction.
                            let at = 2 * inst.index() as u32
                                + if op.kind() == OperandKind::Def { 2 } else { 0 };
                            p.fixed.push((op.vreg(), at, reg, freq));
                        }
                        _ => {}
                    }
                }
            }
            let last = insns.last();
            if f.is_branch(last) {
                for (i, &succ) in f.block_succs(block).iter().enumerate() {
                    let params = f.block_params(succ);
                    // The argument is live out of this block (through its branch), the
                    // parameter from the successor's first point.
                    let arg_point = 2 * last.index() as u32 + 1;
                    let param_point = 2 * f.block_insns(succ).first().index() as u32;
                    for (&arg, &param) in f.branch_blockparams(block, last, i).iter().zip(params) {
                        p.raw.push((arg.vreg() as u32, param, freq));
                        p.raw.push((param.vreg() as u32, arg, freq));
                        p.raw_sites.push((arg.vreg() as u32, (arg_point, freq)));
                        p.raw_sites.push((param.vreg() as u32, (param_point, freq)));
                        p.copies.push(CopySite {
                            a: arg,
                            at_a: arg_point,
                            b: param,
                            at_b: param_point,
                            freq,
                        });
                    }
                }
            }
        }
        crate::analysis::intervals::group(
            &p.raw_sites,
            f.num_vregs(),
            &mut p.site_range,
            &mut p.sites,
            |run| run.sort_unstable_by_key(|&(point, _)| point),
        );
        p.raw.sort_unstable_by_key(|&(v, w, _)| (v, w.vreg()));
        p.range.clear();
        p.range.resize(f.num_vregs(), (0, 0));
        p.list.clear();
        let mut i = 0;
        while i < p.raw.len() {
            let v = p.raw[i].0;
            let start = p.list.len() as u32;
            while i < p.raw.len() && p.raw[i].0 == v {
                let (_, w, freq) = p.raw[i];
                let len = p.list.len() as u32;
                match p.list.last_mut() {
                    Some(last) if len > start && last.0 == w => last.1 += freq,
                    _ => p.list.push((w, freq)),
                }
                i += 1;
            }
            p.range[v as usize] = (start, p.list.len() as u32);
            // Strongest copies first: hints read only the head of the list.
            p.list[start as usize..].sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        }
    }

    fn create_intervals(&mut self) {
        let li = &self.an.intervals;
        // All flags first: spilling a value up front below may already probe registers.
        for (v, flag) in self.ctx.vreg_fixed_uses.iter_mut().enumerate() {
            let Some(class) = self.an.live.class[v] else {
                continue;
            };
            *flag = li
                .uses_of(VReg::new(v, class))
                .iter()
                .any(|u| matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)));
        }
        for v in 0..self.func.num_vregs() {
            let Some(class) = self.an.live.class[v] else {
                continue;
            };
            let vreg = VReg::new(v, class);
            let segments = li.segments_of(vreg);
            if segments.is_empty() {
                continue;
            }
            let uses = li.uses_of(vreg);
            let must_spill = uses
                .iter()
                .any(|u| u.operand.constraint() == OperandConstraint::Stack);
            let limit = split::use_limit(uses);
            let iv = LiveInterval {
                vreg,
                kind: IntervalKind::Main,
                segments: SegmentList::from_slice(segments),
                runs: matrix::merged(segments).collect(),
                uses: UseList::from_slice(uses),
                stage: Stage::New,
                cascade: 0,
                weight: 0.0,
                assigned: None,
                limit,
                deferred: false,
                spilled: false,
            };
            let id = self.ctx.intervals.push(iv);
            self.ctx.vreg_pieces[v].push(id);
            self.ctx.intervals[id].weight = self.spill_weight(id);
            self.stats.intervals += 1;
            if must_spill {
                debug!("{id} ({vreg}): spilled up front, an operand needs it on the stack");
                self.spill(id);
            } else {
                self.enqueue(id);
            }
        }
    }

    /// LLVM's normalized spill weight: Σ (uses + defs + copies) × frequency divided by
    /// the size in instructions plus a constant, so short dense intervals weigh most.
    /// Only the copies inside the interval's segments count: a piece of a split value
    /// that holds none of its copies saves none of them by keeping a register.
    pub(crate) fn spill_weight(&self, id: IntervalId) -> f32 {
        let iv = &self.ctx.intervals[id];
        if iv.kind != IntervalKind::Main {
            return f32::INFINITY;
        }
        let cfg = &self.an.cfg;
        let mut sum: f32 = iv
            .uses
            .iter()
            .map(|u| self.an.freq.of(cfg.block_of(u.inst)))
            .sum();
        sum += self.ctx.partners.copy_freq_in(iv.vreg, &iv.segments);
        let insts = iv.size() as f32 / 2.0;
        sum / (insts + 25.0)
    }

    fn weighted_size(&self, iv: &LiveInterval) -> f32 {
        let cfg = &self.an.cfg;
        iv.segments
            .iter()
            .map(|s: &Segment| s.len() as f32 * self.an.freq.of(cfg.block_of(point_inst(s.start))))
            .sum()
    }

    pub(crate) fn enqueue(&mut self, id: IntervalId) {
        let iv = &mut self.ctx.intervals[id];
        if iv.stage == Stage::New {
            iv.stage = Stage::Assign;
        }
        let iv = &self.ctx.intervals[id];
        let has_hint = iv
            .uses
            .iter()
            .any(|u| matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)))
            || !self.ctx.partners.of(iv.vreg).is_empty();
        let prio = self.priority.priority(iv, self.weighted_size(iv), has_hint);
        self.ctx.queue.push(id, prio);
    }

    fn select_or_split(&mut self, id: IntervalId) -> Result<(), RegAllocError> {
        // Set when the only free register is an untouched callee-saved one that costs
        // more than spilling: eviction and recoloring then leave such registers alone.
        let mut avoid_csr = false;
        if let Some(p) = self.try_assign(id) {
            if !self.declines_first_csr_use(id, p) {
                if self.ctx.callee_saved.is_untouched(p) {
                    debug!("{id}: first use of callee-saved {p}, cheaper than spilling");
                    self.stats.csr_first_uses += 1;
                }
                self.assign(id, p);
                return Ok(());
            }
            avoid_csr = true;
            debug!(
                "{id} ({}): spilling is cheaper than a first use of callee-saved {p}",
                self.ctx.intervals[id].vreg
            );
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

    pub(crate) fn assign(&mut self, id: IntervalId, p: PReg) {
        let iv = &mut self.ctx.intervals[id];
        debug!("{id} ({}): assigned {p}", iv.vreg);
        iv.assigned = Some(p);
        let vreg = iv.vreg;
        self.ctx.callee_saved.touch(p);
        self.ctx.matrix.assign(p, id, &self.ctx.intervals[id]);
        self.refresh_hint_reg(vreg);
        self.stats.assignments += 1;
    }

    pub(crate) fn unassign(&mut self, id: IntervalId) {
        let iv = &mut self.ctx.intervals[id];
        if let Some(p) = iv.assigned.take() {
            let vreg = iv.vreg;
            self.ctx.matrix.unassign(p, &self.ctx.intervals[id]);
            self.refresh_hint_reg(vreg);
        }
    }

    /// Registers an interval may take, in allocation order, honouring `Limit`.
    pub(crate) fn order_for(&self, iv: &LiveInterval) -> impl Iterator<Item = PReg> + '_ {
        let limit = iv.limit;
        self.ctx.order[iv.vreg.class() as usize]
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
        ctx.vreg_hint_reg[v.vreg()] = ctx.vreg_pieces[v.vreg()]
            .iter()
            .rev()
            .take(assign::MAX_PIECE_HINTS)
            .find_map(|&m| ctx.intervals[m].assigned);
    }

    pub(crate) fn fixed_conflict(&self, p: PReg, iv: &LiveInterval) -> bool {
        matrix::fixed_conflict(&self.an.intervals.fixed[p.index()], &iv.runs, iv.vreg)
    }
}
