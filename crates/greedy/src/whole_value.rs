//! Mechanism shared by the allocators that give each value one home, in a register or in
//! its slot, and never split it (basic, linear scan, iterated register coalescing): a
//! value's spill weight and `Limit`, its runs, the reload pieces a spilled value needs at
//! its operands, per-register occupancy with overlap queries, and [`Ledger`], the table of
//! intervals (values and reload pieces) with their registers that basic and linear scan
//! both work on and hand to `Assignment`. Nothing here chooses a register or a victim;
//! each allocator's policy lives in its own module.

use crate::Stats;
use crate::analysis::Analyses;
use crate::analysis::copies::Partners;
use crate::analysis::intervals::{Segment, UseSite, fixed_conflict, needs_register};
use crate::assignment::{Assignment, ReloadPiece};
use log::debug;
use regalloc2::{Allocation, Function, OperandConstraint, PReg, PRegSet, RegAllocError, VReg};
use std::collections::BTreeMap;

/// LLVM's normalized spill weight of a whole value: Σ block frequency over its operands
/// and copies, divided by its size in instructions plus 25, so that short busy values
/// weigh most.
pub(crate) fn spill_weight(an: &Analyses, partners: &Partners, v: VReg) -> f32 {
    let cfg = &an.cfg;
    let segments = an.intervals.segments_of(v);
    let mut sum: f32 = an
        .intervals
        .uses_of(v)
        .iter()
        .map(|u| an.freq.of(cfg.block_of(u.inst)))
        .sum();
    sum += partners.copy_freq_in(v, segments);
    let points: u32 = segments.iter().map(Segment::len).sum();
    sum / (points as f32 / 2.0 + 25.0)
}

/// Registers with `hw_enc` at or past this may not hold a value with these operands (the
/// lowest `Limit` among them; `usize::MAX` without one).
pub(crate) fn use_limit<'u>(uses: impl IntoIterator<Item = &'u UseSite>) -> usize {
    uses.into_iter()
        .fold(usize::MAX, |m, u| match u.operand.constraint() {
            OperandConstraint::Limit(n) => m.min(n),
            _ => m,
        })
}

/// Does some operand of the value demand the stack (so the value can only live there)?
pub(crate) fn must_spill(uses: &[UseSite]) -> bool {
    uses.iter()
        .any(|u| u.operand.constraint() == OperandConstraint::Stack)
}

/// Appends `segments` to `out` with touching neighbours joined: a value live through
/// consecutive blocks has one segment per block, and one run per stretch of them is what
/// the occupancy stores and every probe walks.
pub(crate) fn push_runs(segments: &[Segment], out: &mut Vec<Segment>) {
    let mut i = 0;
    while let Some(&first) = segments.get(i) {
        let mut run = first;
        i += 1;
        while let Some(next) = segments.get(i).filter(|n| n.start == run.end) {
            run.end = next.end;
            i += 1;
        }
        out.push(run);
    }
}

/// Where a spilled value needs a register at one instruction: before it for its uses
/// (`is_def == false`), after it for its defs, over `seg`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReloadSite {
    pub inst: u32,
    pub is_def: bool,
    pub seg: Segment,
    pub limit: usize,
}

impl ReloadSite {
    pub fn piece(&self, vreg: VReg, reg: PReg) -> ReloadPiece {
        ReloadPiece {
            inst: self.inst,
            vreg: vreg.vreg() as u32,
            is_def: self.is_def,
            reg,
            start: self.seg.start,
            end: self.seg.end,
        }
    }
}

/// Appends to `out` the reload sites of a value whose operands are `uses` (sorted by
/// instruction) when it lives in its slot: one per instruction and side whose operands
/// need a register. Operands that accept the stack read the slot, and fixed-register
/// operands are served by a copy, so neither gets one.
pub(crate) fn push_reload_sites<F: Function + ?Sized>(
    func: &F,
    uses: &[UseSite],
    out: &mut Vec<ReloadSite>,
) {
    let mut i = 0;
    while i < uses.len() {
        let inst = uses[i].inst;
        let n = uses[i..].iter().take_while(|u| u.inst == inst).count();
        let at_inst = &uses[i..i + n];
        for is_def in [false, true] {
            let group = at_inst
                .iter()
                .filter(|u| u.is_def() == is_def && needs_register(func, u));
            if let Some(seg) = ReloadPiece::span(inst, is_def, group.clone()) {
                out.push(ReloadSite {
                    inst: inst.index() as u32,
                    is_def,
                    seg,
                    limit: use_limit(group),
                });
            }
        }
        i += n;
    }
}

/// Per register, the runs of the intervals assigned to it, keyed by start as
/// `start → (end, owner)`. Runs in one register never overlap, so their ends grow with
/// their starts, which is what lets an overlap query walk back from one lookup.
#[derive(Default)]
pub(crate) struct RegOccupancy {
    per_reg: Vec<BTreeMap<u32, (u32, u32)>>,
    /// Registers holding something since the last reset: only those need clearing.
    touched: PRegSet,
}

impl RegOccupancy {
    pub fn reset(&mut self) {
        self.per_reg.resize_with(PReg::NUM_INDEX, BTreeMap::new);
        for r in std::mem::replace(&mut self.touched, PRegSet::empty()) {
            self.per_reg[r.index()].clear();
        }
    }

    /// Records `owner` in `r` over `runs`, which must be free there.
    pub fn insert(&mut self, r: PReg, runs: &[Segment], owner: u32) {
        self.touched.add(r);
        let map = &mut self.per_reg[r.index()];
        for s in runs {
            map.insert(s.start, (s.end, owner));
        }
    }

    /// Removes the runs inserted for an owner by `insert(r, runs, _)`.
    pub fn remove(&mut self, r: PReg, runs: &[Segment]) {
        let map = &mut self.per_reg[r.index()];
        for s in runs {
            map.remove(&s.start);
        }
    }

    /// Is `r` free over all of `runs`?
    pub fn is_free(&self, r: PReg, runs: &[Segment]) -> bool {
        let map = &self.per_reg[r.index()];
        map.is_empty()
            || runs.iter().all(|s| {
                map.range(..s.end)
                    .next_back()
                    .is_none_or(|(_, &(end, _))| end <= s.start)
            })
    }

    /// The owners in `r` overlapping `runs`, each once and in increasing order, into `out`
    /// (cleared first).
    pub fn overlapping(&self, r: PReg, runs: &[Segment], out: &mut Vec<u32>) {
        out.clear();
        let map = &self.per_reg[r.index()];
        if map.is_empty() {
            return;
        }
        for s in runs {
            for (_, &(end, owner)) in map.range(..s.end).rev() {
                if end <= s.start {
                    break;
                }
                out.push(owner);
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}

/// A value's whole live range, or one of its reload pieces.
pub(crate) struct Interval {
    pub vreg: VReg,
    /// Set for a reload piece: where it serves its value's operands.
    pub site: Option<ReloadSite>,
    /// Its runs: `runs[runs_range.0..runs_range.1]` of the ledger.
    runs_range: (u32, u32),
    /// `f32::INFINITY` for a reload piece (unspillable).
    pub weight: f32,
    pub limit: usize,
    pub reg: Option<PReg>,
    /// A value some operand of which demands the stack.
    pub stack_only: bool,
    pub spilled: bool,
}

impl Interval {
    pub fn is_spillable(&self) -> bool {
        self.weight.is_finite()
    }
}

/// The intervals of one function and the registers they hold, buffers kept across
/// functions. Ids are indices into `intervals`: the values first, in vreg order, then
/// reload pieces in the order their values were spilled.
#[derive(Default)]
pub(crate) struct Ledger {
    pub intervals: Vec<Interval>,
    runs: Vec<Segment>,
    occupancy: RegOccupancy,
    pub partners: Partners,
    /// Per vreg, the id of its value's interval (`u32::MAX`: not live).
    value_of: Vec<u32>,
    sites: Vec<ReloadSite>,
    /// Occupants moved by `make_room`, with the register each came from.
    moved: Vec<(u32, PReg)>,
}

impl Ledger {
    /// An interval per live value of `func`.
    pub fn reset<F: Function + ?Sized>(&mut self, func: &F, an: &Analyses, stats: &mut Stats) {
        self.intervals.clear();
        self.runs.clear();
        self.occupancy.reset();
        self.partners.compute(func, &an.freq);
        self.value_of.clear();
        self.value_of.resize(func.num_vregs(), u32::MAX);
        for v in 0..func.num_vregs() {
            let Some(class) = an.live.class[v] else {
                continue;
            };
            let vreg = VReg::new(v, class);
            let segments = an.intervals.segments_of(vreg);
            if segments.is_empty() {
                continue;
            }
            let uses = an.intervals.uses_of(vreg);
            let start = self.runs.len() as u32;
            push_runs(segments, &mut self.runs);
            self.value_of[v] = self.intervals.len() as u32;
            self.intervals.push(Interval {
                vreg,
                site: None,
                runs_range: (start, self.runs.len() as u32),
                weight: spill_weight(an, &self.partners, vreg),
                limit: use_limit(uses),
                reg: None,
                stack_only: must_spill(uses),
                spilled: false,
            });
            stats.intervals += 1;
        }
    }

    pub fn len(&self) -> u32 {
        self.intervals.len() as u32
    }

    /// The interval of vreg `v`'s value, if it is live.
    pub fn value_interval(&self, v: usize) -> Option<u32> {
        self.value_of.get(v).copied().filter(|&id| id != u32::MAX)
    }

    pub fn get(&self, id: u32) -> &Interval {
        &self.intervals[id as usize]
    }

    pub fn runs(&self, id: u32) -> &[Segment] {
        let (a, b) = self.intervals[id as usize].runs_range;
        &self.runs[a as usize..b as usize]
    }

    /// First point of the interval.
    pub fn start(&self, id: u32) -> u32 {
        self.runs(id).first().map_or(0, |s| s.start)
    }

    /// One past its last point.
    pub fn end(&self, id: u32) -> u32 {
        self.runs(id).last().map_or(0, |s| s.end)
    }

    /// The register `id` would rather have, as LLVM's allocation order puts copy hints
    /// first: for a value, the register of its heaviest fixed-register operand, else of
    /// its strongest copy partner that has one; for a reload piece, its value's fixed
    /// register at that instruction, if any. Only the strongest few partners are read,
    /// so a value copied to hundreds of block parameters stays cheap to probe.
    pub fn hint(&self, an: &Analyses, id: u32) -> Option<PReg> {
        const MAX_PARTNERS: usize = 8;
        let iv = self.get(id);
        let uses = an.intervals.uses_of(iv.vreg);
        let fixed = |u: &UseSite| match u.operand.constraint() {
            OperandConstraint::FixedReg(p) => Some(p),
            _ => None,
        };
        if let Some(site) = iv.site {
            return uses
                .iter()
                .filter(|u| u.inst.index() as u32 == site.inst && u.is_def() == site.is_def)
                .find_map(fixed);
        }
        let cfg = &an.cfg;
        let by_fixed = uses
            .iter()
            .filter_map(|u| Some((fixed(u)?, an.freq.of(cfg.block_of(u.inst)))))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let by_partner = self
            .partners
            .of(iv.vreg)
            .iter()
            .take(MAX_PARTNERS)
            .find_map(|&(w, freq)| {
                let other = self.value_interval(w.vreg())?;
                Some((self.get(other).reg?, freq))
            });
        match (by_fixed, by_partner) {
            (Some(f), Some(p)) => Some(if p.1 > f.1 { p.0 } else { f.0 }),
            (f, p) => f.or(p).map(|(r, _)| r),
        }
    }

    /// May `r` hold interval `id` as far as its `Limit` and the fixed reservations of
    /// other values go (whoever else holds `r`)?
    pub fn may_hold(&self, an: &Analyses, id: u32, r: PReg) -> bool {
        let iv = self.get(id);
        r.hw_enc() < iv.limit
            && !fixed_conflict(&an.intervals.fixed[r.index()], self.runs(id), iv.vreg)
    }

    /// Is `r` free of other intervals over `id`?
    /// The hint if it is in `order` and free, else the first free register of `order`
    /// that may hold `id`: the "assign" step every one of these allocators starts with.
    pub fn first_free(&self, an: &Analyses, id: u32, order: &[PReg]) -> Option<PReg> {
        let hint = self.hint(an, id).filter(|r| order.contains(r));
        hint.into_iter()
            .chain(order.iter().copied())
            .find(|&r| self.may_hold(an, id, r) && self.is_free(id, r))
    }

    pub fn is_free(&self, id: u32, r: PReg) -> bool {
        self.occupancy.is_free(r, self.runs(id))
    }

    /// The intervals in `r` overlapping `id`, into `out`.
    pub fn in_the_way(&self, id: u32, r: PReg, out: &mut Vec<u32>) {
        self.occupancy.overlapping(r, self.runs(id), out);
    }

    pub fn assign(&mut self, id: u32, r: PReg, stats: &mut Stats) {
        let (a, b) = self.intervals[id as usize].runs_range;
        self.occupancy
            .insert(r, &self.runs[a as usize..b as usize], id);
        self.set_reg(id, r, stats);
    }

    /// Records `r` as the register of `id` for an allocator that keeps its own account of
    /// interference (no occupancy is recorded).
    pub fn set_reg(&mut self, id: u32, r: PReg, stats: &mut Stats) {
        let iv = &mut self.intervals[id as usize];
        iv.reg = Some(r);
        debug!(
            "{} {}assigned {r}",
            iv.vreg,
            if iv.site.is_some() {
                "reload piece "
            } else {
                ""
            }
        );
        stats.assignments += 1;
    }

    pub fn unassign(&mut self, id: u32) {
        let (a, b) = self.intervals[id as usize].runs_range;
        if let Some(r) = self.intervals[id as usize].reg.take() {
            self.occupancy.remove(r, &self.runs[a as usize..b as usize]);
        }
    }

    /// Moves each unspillable interval of `in_the_way` (those in `r` overlapping `id`) to
    /// another register free for it, so that spilling the spillable rest frees `r` for
    /// `id`. Two reload pieces at one instruction may have taken the registers in the
    /// wrong order (the first the only register a clobber or a `Limit` leaves the
    /// second); this is the one-level repair. Returns false, with every move undone, if
    /// some unspillable occupant has nowhere else to go.
    pub fn make_room(
        &mut self,
        an: &Analyses,
        order: &[PReg],
        r: PReg,
        in_the_way: &[u32],
        stats: &mut Stats,
    ) -> bool {
        self.moved.clear();
        for &j in in_the_way {
            if self.get(j).is_spillable() {
                continue;
            }
            let target = order
                .iter()
                .copied()
                .filter(|&p| p != r)
                .find(|&p| self.may_hold(an, j, p) && self.is_free(j, p));
            let Some(p) = target else {
                while let Some((k, from)) = self.moved.pop() {
                    self.unassign(k);
                    self.assign(k, from, stats);
                }
                return false;
            };
            debug!("{} moved from {r} to {p} to make room", self.get(j).vreg);
            self.unassign(j);
            self.assign(j, p, stats);
            self.moved.push((j, r));
        }
        true
    }

    /// The value of `id` lives in its slot from now on; each instruction whose operands
    /// need it in a register gets a reload piece (uses) or store piece (defs), pushed as
    /// new intervals (the returned range of ids) for the caller to place.
    pub fn spill<F: Function + ?Sized>(
        &mut self,
        func: &F,
        an: &Analyses,
        out: &mut Assignment,
        id: u32,
        stats: &mut Stats,
    ) -> std::ops::Range<u32> {
        self.unassign(id);
        let vreg = self.get(id).vreg;
        debug!("{vreg} spilled, weight {}", self.get(id).weight);
        self.intervals[id as usize].spilled = true;
        out.slots.mark_needed(vreg);
        stats.spills += 1;
        let mut sites = std::mem::take(&mut self.sites);
        sites.clear();
        push_reload_sites(func, an.intervals.uses_of(vreg), &mut sites);
        let first = self.len();
        for site in &sites {
            let start = self.runs.len() as u32;
            self.runs.push(site.seg);
            self.intervals.push(Interval {
                vreg,
                site: Some(*site),
                runs_range: (start, start + 1),
                weight: f32::INFINITY,
                limit: site.limit,
                reg: None,
                stack_only: false,
                spilled: false,
            });
            stats.intervals += 1;
        }
        self.sites = sites;
        first..self.len()
    }

    /// Hands every interval's location to `out`: a home piece per run of each value (its
    /// register, or its slot once laid out), a reload piece per placed reload piece.
    pub fn export(&self, out: &mut Assignment) -> Result<(), RegAllocError> {
        for (id, iv) in self.intervals.iter().enumerate() {
            if let Some(site) = iv.site {
                let reg = iv.reg.ok_or(RegAllocError::TooManyLiveRegs)?;
                out.reloads.push(site.piece(iv.vreg, reg));
                continue;
            }
            let loc = match (iv.reg, iv.spilled) {
                (Some(r), _) => Allocation::reg(r),
                (None, true) => out
                    .slots
                    .slot_of(iv.vreg)
                    .ok_or(RegAllocError::TooManyLiveRegs)?,
                (None, false) => return Err(RegAllocError::TooManyLiveRegs),
            };
            let v = iv.vreg.vreg() as u32;
            for s in self.runs(id as u32) {
                out.pieces.push((v, (s.start, s.end, loc)));
            }
        }
        Ok(())
    }
}
