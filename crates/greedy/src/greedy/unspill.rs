//! Spilled pieces back into registers, after the main loop (`Options::unspilling`), as
//! ion gives each spill bundle a last try at a register before it goes to the stack.
//! The main loop spills a piece when no register is free over it *at that moment*;
//! evictions, splits and spills decided after that often leave a register free over
//! the whole piece by the end (a value spilled around a call, say, while a callee-saved
//! register it could have used was taken by a short value that was later split).
//!
//! A spilled piece takes a free register when that removes more load and store cost
//! than the moves it adds: its reload pieces go (each a load or store at its
//! instruction's frequency), a boundary with a register piece of the same value turns
//! a load (or a store the def's slot write does not cover) into a move, and a boundary
//! with another stack piece turns nothing into a load. Untouched callee-saved registers
//! are not taken (their save and restore is the callee-saved first-use cost's to
//! weigh), nor are pieces whose boundary lies inside an instruction (a bridge stays in
//! the slot: no move can be placed there).
//!
//! Bridges get the same second chance, differently (`unspill_bridges`): a one-point piece
//! left in the slot by a region split's cut inside a call moves, with the call's early
//! point, into a register that survives the call.
//!
//! Most spilled pieces still have no register by the end, so each is first filtered
//! cheaply: only registers freed (or callee-saved ones paid for) since its spill, as the
//! spill log records the moment, and among those only the ones its own reload pieces
//! hold are probed. That is where the free register is as a rule, since nothing else
//! needed it there. The exception is a register copy spilling has just emptied (a chain
//! of copy-only values that held it through a loop nest): with
//! `Options::unspill_copy_freed` copy spilling runs first, and a piece with reload pieces
//! also probes the registers it emptied near the piece.

use super::Allocator;
use super::interval::{IntervalId, IntervalKind, IntervalLists, LiveInterval};
use crate::analysis::intervals::{Segment, point_inst};
use log::debug;
use regalloc2::{Function, OperandConstraint, PReg, PRegSet};

/// A reload or a store costs this many moves (docs/metrics.md: 2 against 1).
const MEMORY_MOVES: f32 = 2.0;
/// A value with more pieces than this is not looked at (its pieces' scan would make the
/// pass quadratic in them).
const MAX_PIECES: usize = 32;
/// `spill_log`'s epoch of a piece spilled without looking for a register.
const NOT_TRIED: u32 = u32::MAX;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct UnspillScratch {
    /// Spilled pieces with the loads and stores of their reload pieces, heaviest first.
    candidates: Vec<(f32, IntervalId, PRegSet)>,
    /// Occupants found by a probe (unused: a probe only asks whether all are own).
    occupants: Vec<IntervalId>,
    /// The reload pieces of the candidate at hand, with their registers.
    reloads: Vec<(IntervalId, PReg)>,
    /// The candidate's boundaries (`Allocator::boundaries`).
    boundaries: Vec<(f32, Side, bool)>,
    /// Per vreg with a candidate: its ranges in `runs` and `reload_pieces`, and its
    /// number of pieces on the stack. Only those vregs' entries are set (`vregs`).
    index: Vec<SpilledValue>,
    vregs: Vec<u32>,
    /// The `Main` pieces' runs (start, end, piece) and the reload pieces' segments, each
    /// vreg's sorted by start: a neighbour or a reload piece is a search, not a scan of
    /// every piece of a value split or reloaded hundreds of times.
    runs: Vec<(u32, u32, IntervalId)>,
    reload_pieces: Vec<(u32, u32, IntervalId)>,
}

#[derive(Clone, Copy, Default)]
struct SpilledValue {
    runs: (u32, u32),
    reloads: (u32, u32),
    on_stack: u32,
    listed: bool,
}

/// Where a neighbouring piece of the same value is.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Reg(PReg),
    Stack,
    None,
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// What `spill_log` records of the moment of a spill: a spill found no register it
    /// could take, and one can have become free since only by losing an occupant (a
    /// release after this epoch) or, callee-saved, by being paid for meanwhile.
    pub(crate) fn spill_moment(&self) -> (u32, PRegSet) {
        (self.ctx.matrix.releases(), self.ctx.callee_saved.touched())
    }

    /// Registers that may have become free over `id` since its spill at `moment`.
    fn fresh_registers(&self, id: IntervalId, (epoch, touched): (u32, PRegSet)) -> PRegSet {
        let iv = &self.ctx.intervals[id];
        let mut fresh = PRegSet::empty();
        for &p in &self.out.order[iv.vreg.class() as usize] {
            if epoch == NOT_TRIED
                || self.ctx.matrix.released_since(p, epoch)
                || (!touched.contains(p) && !self.ctx.callee_saved.is_untouched(p))
            {
                fresh.add(p);
            }
        }
        fresh
    }

    /// `spill`, for a piece that never looked for a register (a split's bridge).
    pub(crate) fn spill_untried(&mut self, id: IntervalId) {
        self.spill(id);
        if let Some(last) = self.ctx.spill_log.last_mut() {
            debug_assert_eq!(last.0, id);
            last.1.0 = NOT_TRIED;
        }
    }

    pub(crate) fn unspill_pieces(&mut self, copy_freed: PRegSet) {
        self.unspill_bridges();
        let mut s = self.ctx.unspill.take();
        s.candidates.clear();
        for &(id, moment) in &self.ctx.spill_log {
            let iv = &self.ctx.intervals[id];
            if iv.in_slot()
                && !self
                    .ctx
                    .lists
                    .uses(iv)
                    .iter()
                    .any(|u| u.operand.constraint() == OperandConstraint::Stack)
            {
                // A register free over the piece at the end is, as a rule, one its own
                // reload pieces took (nothing else needed it there): only those are
                // probed, most pieces settled before their value's pieces are indexed.
                let v = iv.vreg;
                let own_reload = |j: IntervalId| {
                    let o = &self.ctx.intervals[j];
                    o.vreg == v && matches!(o.kind, IntervalKind::Reload { .. })
                };
                let pieces = &self.ctx.vreg_pieces[v.vreg()];
                if pieces.len() > MAX_PIECES {
                    continue;
                }
                let mut held = PRegSet::empty();
                for &j in pieces.iter() {
                    let o = &self.ctx.intervals[j];
                    if let (IntervalKind::Reload { .. }, Some(r), Some(seg)) =
                        (o.kind, o.assigned, self.ctx.lists.segments(o).first())
                        && overlaps(self.ctx.lists.runs(iv), *seg)
                    {
                        held.add(r);
                    }
                }
                if held == PRegSet::empty() {
                    continue;
                }
                // And the registers copy spilling emptied where the piece lives.
                for p in copy_freed {
                    if self
                        .ctx
                        .copy_spill
                        .get()
                        .is_some_and(|c| c.freed_over(p, self.ctx.lists.runs(iv)))
                    {
                        held.add(p);
                    }
                }
                let fresh = self.fresh_registers(id, moment);
                let free_one = (held & fresh).into_iter().any(|p| {
                    self.may_hold(p, iv)
                        && !self.ctx.callee_saved.is_untouched(p)
                        && !self.fixed_conflict(p, iv)
                        && self.ctx.matrix.interference_while(
                            p,
                            self.ctx.lists.runs(iv),
                            &mut s.occupants,
                            usize::MAX,
                            own_reload,
                        )
                });
                s.occupants.clear();
                if free_one {
                    s.candidates.push((0.0, id, fresh));
                }
            }
        }
        if s.candidates.is_empty() {
            self.ctx.unspill.put(s);
            return;
        }
        self.index_spilled_values(&mut s);
        // Heaviest first: the reload pieces' loads and stores each would save.
        let cfg = &self.an.cfg;
        for k in 0..s.candidates.len() {
            let id = s.candidates[k].1;
            let mut cost = 0.0;
            for_reload_pieces(&s, &self.ctx.lists, &self.ctx.intervals[id], |seg, _| {
                cost += MEMORY_MOVES * self.an.freq.of(cfg.block_of(point_inst(seg.start)));
            });
            s.candidates[k].0 = cost;
        }
        s.candidates
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut unspilled_any = false;
        for k in 0..s.candidates.len() {
            let (reloads, id, fresh) = s.candidates[k];
            let mut boundaries = std::mem::take(&mut s.boundaries);
            let ok = self.boundaries(&s, id, &mut boundaries);
            s.boundaries = boundaries;
            if !ok {
                continue;
            }
            let base = reloads + self.def_store_saved(&s, id);
            // No register does better than one that needs no move at any boundary.
            if base + upper_gain(&s.boundaries) <= 0.0 {
                continue;
            }
            let vreg = self.ctx.intervals[id].vreg;
            // Its reload pieces leave the matrix while a register is looked for.
            let mut reloads = std::mem::take(&mut s.reloads);
            reloads.clear();
            for_reload_pieces(&s, &self.ctx.lists, &self.ctx.intervals[id], |_, piece| {
                if let Some(reg) = self.ctx.intervals[piece].assigned {
                    reloads.push((piece, reg));
                }
            });
            for &(piece, reg) in &reloads {
                self.ctx
                    .matrix
                    .unassign(reg, self.ctx.lists.runs(&self.ctx.intervals[piece]));
            }
            match self.unspill_register(id, base, &s.boundaries, fresh) {
                Some((p, gain)) => {
                    for &(piece, _) in &reloads {
                        self.ctx.intervals[piece].retire();
                        let pieces = &mut self.ctx.vreg_pieces[vreg.vreg()];
                        if let Some(i) = pieces.iter().position(|&x| x == piece) {
                            pieces.remove(i);
                        }
                    }
                    self.ctx.intervals[id].spilled = false;
                    s.index[vreg.vreg()].on_stack -= 1;
                    debug!(
                        "{id} ({vreg}): back from the slot into {p}, {} reload pieces dropped, gain {gain}",
                        reloads.len()
                    );
                    self.assign(id, p);
                    self.stats.unspilled += 1;
                    unspilled_any = true;
                }
                None => {
                    for &(piece, reg) in &reloads {
                        self.ctx.matrix.assign(
                            reg,
                            piece,
                            self.ctx.lists.runs(&self.ctx.intervals[piece]),
                        );
                    }
                }
            }
            s.reloads = reloads;
        }
        if unspilled_any {
            // A value none of whose pieces is left on the stack needs no slot (nor the
            // store at its def).
            let index = &s.index;
            self.out.slots.retain_needed(|v| {
                let e = index.get(v as usize).copied().unwrap_or_default();
                !e.listed || e.on_stack > 0
            });
        }
        for &v in &s.vregs {
            s.index[v as usize] = SpilledValue::default();
        }
        self.ctx.unspill.put(s);
    }

    /// Bridges out of the slot. A region split that cuts a value inside an instruction
    /// (a call that clobbers its register) leaves a one-point piece in the slot after the
    /// cut, which no move can leave; a value kept in a register on both sides pays a
    /// store (at its def) and a load for it. Where another register is free over the
    /// instruction and survives it, the bridge and the instruction's early point (taken
    /// from the register piece before, with its operands there) move into that register:
    /// a move before the instruction, and one after it unless the piece after is in the
    /// same register. The def's store goes with the bridge when nothing else reads the
    /// slot (`edits`' unread stores).
    fn unspill_bridges(&mut self) {
        let cfg = &self.an.cfg;
        for k in 0..self.ctx.spill_log.len() {
            let (b, (epoch, _)) = self.ctx.spill_log[k];
            let iv = &self.ctx.intervals[b];
            let [run] = self.ctx.lists.runs(iv)[..] else {
                continue;
            };
            if epoch != NOT_TRIED || !iv.in_slot() || run.start % 2 == 0 || run.end != run.start + 1
            {
                continue;
            }
            let v = iv.vreg;
            let pieces = &self.ctx.vreg_pieces[v.vreg()];
            if pieces.len() > MAX_PIECES {
                continue;
            }
            // The register piece before (holding the instruction's early point) and the
            // one after.
            let early = run.start - 1;
            let covering = |point: u32| {
                pieces.iter().copied().find(|&j| {
                    let p = &self.ctx.intervals[j];
                    j != b
                        && p.kind == IntervalKind::Main
                        && overlaps(
                            self.ctx.lists.runs(p),
                            Segment {
                                start: point,
                                end: point + 1,
                            },
                        )
                })
            };
            let (Some(before), Some(after)) = (covering(early), covering(run.end)) else {
                continue;
            };
            let (r, a) = (&self.ctx.intervals[before], &self.ctx.intervals[after]);
            let (Some(p_before), Some(p_after)) = (r.assigned, a.assigned) else {
                continue;
            };
            // The piece before must keep something of its own.
            let Some(last_seg) = self
                .ctx
                .lists
                .segments(r)
                .iter()
                .find(|s| s.end == run.start)
            else {
                continue;
            };
            if last_seg.start >= early || r.spilled || a.spilled {
                continue;
            }
            let bridge = Segment {
                start: early,
                end: run.end,
            };
            let freq = self.an.freq.of(cfg.block_of(point_inst(early)));
            // The def's store goes too when the bridge is the value's last piece on the
            // stack.
            let on_stack = pieces
                .iter()
                .filter(|&&j| self.ctx.intervals[j].in_slot())
                .count();
            let def_block = self.an.live.def_block[v.vreg()];
            let def_store = if on_stack == 1 && def_block.is_valid() {
                MEMORY_MOVES * self.an.freq.of(def_block)
            } else {
                0.0
            };
            // The load after the bridge goes; the moves around it come.
            let candidates = std::iter::once(p_after).chain(
                self.out.order[v.class() as usize]
                    .iter()
                    .copied()
                    .filter(move |&q| q != p_after),
            );
            let reserved = self.an.intervals.fixed_index.conflicts(&[bridge], v);
            let limit = r.limit.min(a.limit);
            let mut chosen = None;
            for q in candidates {
                if q == p_before
                    || q.hw_enc() >= limit
                    || reserved.contains(q)
                    || !self.out.order[v.class() as usize].contains(&q)
                    || self.ctx.callee_saved.is_untouched(q)
                    || !self.ctx.matrix.is_free(q, &[bridge])
                {
                    continue;
                }
                let moves = freq + if q == p_after { 0.0 } else { freq };
                if MEMORY_MOVES * freq + def_store > moves {
                    chosen = Some(q);
                }
                break;
            }
            let Some(q) = chosen else { continue };
            // The piece before gives up the instruction's early point and its operands
            // there.
            let ctx = &mut *self.ctx;
            let r = &mut ctx.intervals[before];
            ctx.matrix.unassign(p_before, ctx.lists.runs(r));
            let inst = point_inst(early);
            // Runs that share the segments' range are changed with them.
            let runs = (r.runs != r.segments).then_some(r.runs);
            for range in std::iter::once(r.segments).chain(runs) {
                for seg in ctx.lists.segments_mut(range) {
                    if seg.end == run.start {
                        seg.end = early;
                    }
                }
            }
            let moved: super::interval::UseList = ctx
                .lists
                .uses(r)
                .iter()
                .filter(|u| u.inst == inst)
                .copied()
                .collect();
            r.uses = ctx.lists.retain_uses(r.uses, |u| u.inst != inst);
            r.limit = super::split::use_limit(ctx.lists.uses(r));
            r.fixed_conflicts = (self.an.intervals.fixed_index).conflicts(ctx.lists.runs(r), v);
            ctx.matrix.assign(p_before, before, ctx.lists.runs(r));
            let m = &mut ctx.intervals[b];
            ctx.lists.segments_mut(m.segments)[0] = bridge;
            ctx.lists.segments_mut(m.runs)[0] = bridge;
            m.limit = super::split::use_limit(&moved);
            m.uses = ctx.lists.add_uses(&moved);
            m.fixed_conflicts = reserved;
            m.spilled = false;
            debug!(
                "{b} ({v}): bridge out of the slot into {q} over [{early}, {}), from {p_before} to {p_after}",
                run.end
            );
            self.assign(b, q);
            self.stats.unspilled += 1;
        }
    }

    /// Lists the pieces of every candidate's value, sorted, in `s`'s index.
    fn index_spilled_values(&self, s: &mut UnspillScratch) {
        s.vregs.clear();
        s.runs.clear();
        s.reload_pieces.clear();
        if s.index.len() < self.func.num_vregs() {
            s.index
                .resize(self.func.num_vregs(), SpilledValue::default());
        }
        for k in 0..s.candidates.len() {
            let v = self.ctx.intervals[s.candidates[k].1].vreg.vreg();
            if s.index[v].listed {
                continue;
            }
            s.vregs.push(v as u32);
            let (r0, l0) = (s.runs.len(), s.reload_pieces.len());
            let mut on_stack = 0;
            for &piece in self.ctx.vreg_pieces[v].iter() {
                let p = &self.ctx.intervals[piece];
                match p.kind {
                    IntervalKind::Main => {
                        on_stack += u32::from(p.in_slot());
                        s.runs.extend(
                            self.ctx
                                .lists
                                .runs(p)
                                .iter()
                                .map(|r| (r.start, r.end, piece)),
                        );
                    }
                    IntervalKind::Reload { .. } => {
                        if let (Some(_), Some(seg)) =
                            (p.assigned, self.ctx.lists.segments(p).first())
                        {
                            s.reload_pieces.push((seg.start, seg.end, piece));
                        }
                    }
                }
            }
            s.runs[r0..].sort_unstable();
            s.reload_pieces[l0..].sort_unstable();
            s.index[v] = SpilledValue {
                runs: (r0 as u32, s.runs.len() as u32),
                reloads: (l0 as u32, s.reload_pieces.len() as u32),
                on_stack,
                listed: true,
            };
        }
    }

    /// The store right after the def that the edit builder writes for a value with a
    /// slot, if `id` is its last piece on the stack and does not hold the def (whose
    /// store is then a reload piece of `id`'s).
    fn def_store_saved(&self, s: &UnspillScratch, id: IntervalId) -> f32 {
        let iv = &self.ctx.intervals[id];
        let v = iv.vreg;
        let block = self.an.live.def_block[v.vreg()];
        if s.index[v.vreg()].on_stack > 1 || !block.is_valid() {
            return 0.0;
        }
        let def = match self.an.live.def_inst(v) {
            Some(inst) => inst,
            None => self.func.block_insns(block).first(),
        };
        let at = Segment {
            start: 2 * def.index() as u32,
            end: 2 * def.index() as u32 + 2,
        };
        if overlaps(self.ctx.lists.runs(iv), at) {
            0.0
        } else {
            MEMORY_MOVES * self.an.freq.of(block)
        }
    }

    /// Fills `out` with `id`'s boundaries with the rest of its value: (frequency, the
    /// neighbour's location, whether the value enters `id` there). False if a boundary
    /// lies inside an instruction, where no move can go.
    fn boundaries(
        &self,
        s: &UnspillScratch,
        id: IntervalId,
        out: &mut Vec<(f32, Side, bool)>,
    ) -> bool {
        out.clear();
        let iv = &self.ctx.intervals[id];
        let f = self.func;
        let cfg = &self.an.cfg;
        let side_at = |point: u32| self.side_at(s, id, point);
        for r in self.ctx.lists.runs(iv) {
            let first_block = cfg.block_of(point_inst(r.start));
            if r.start == 2 * f.block_insns(first_block).first().index() as u32 {
                let preds = f.block_preds(first_block);
                for &pred in preds {
                    let end = 2 * f.block_insns(pred).last().index() as u32 + 1;
                    let freq = if preds.len() == 1 {
                        self.an.freq.of(first_block)
                    } else {
                        self.an.freq.of(pred)
                    };
                    out.push((freq, side_at(end), true));
                }
            } else {
                let side = side_at(r.start - 1);
                if r.start % 2 == 1 && side != Side::None {
                    return false;
                }
                out.push((self.an.freq.of(first_block), side, true));
            }
            let last_block = cfg.block_of(point_inst(r.end - 1));
            if r.end == 2 * f.block_insns(last_block).last().index() as u32 + 2 {
                for &succ in f.block_succs(last_block) {
                    let start = 2 * f.block_insns(succ).first().index() as u32;
                    let freq = if f.block_preds(succ).len() == 1 {
                        self.an.freq.of(succ)
                    } else {
                        self.an.freq.of(last_block)
                    };
                    out.push((freq, side_at(start), false));
                }
            } else {
                let side = side_at(r.end);
                if r.end % 2 == 1 && side != Side::None {
                    return false;
                }
                out.push((self.an.freq.of(last_block), side, false));
            }
        }
        true
    }

    /// The best register for `id` by the gain over `base` its `boundaries` leave, if
    /// any gains at all. Registers differ only in the moves at boundaries with register
    /// neighbours, so those neighbours' registers are weighed, and then the first free
    /// one of the allocation order (the moves at every such boundary).
    fn unspill_register(
        &mut self,
        id: IntervalId,
        base: f32,
        boundaries: &[(f32, Side, bool)],
        fresh: PRegSet,
    ) -> Option<(PReg, f32)> {
        let iv = &self.ctx.intervals[id];
        let usable = |p: PReg| {
            fresh.contains(p)
                && self.may_hold(p, iv)
                && !self.ctx.callee_saved.is_untouched(p)
                && !self.fixed_conflict(p, iv)
        };
        let mut best: Option<(PReg, f32)> = None;
        let mut tried = PRegSet::empty();
        for &(_, side, _) in boundaries {
            let Side::Reg(p) = side else { continue };
            if tried.contains(p) {
                continue;
            }
            tried.add(p);
            if usable(p) && self.ctx.matrix.is_free(p, self.ctx.lists.runs(iv)) {
                let gain = base + boundary_gain(boundaries, p);
                if gain > 0.0 && best.is_none_or(|(_, g)| gain > g) {
                    best = Some((p, gain));
                }
            }
        }
        // Any other register pays a move at every register boundary: the neighbours'
        // registers, when free, are never worse.
        if best.is_none() {
            let order = &self.out.order[iv.vreg.class() as usize];
            let others = order
                .iter()
                .copied()
                .filter(|&p| !tried.contains(p) && usable(p));
            if let Some(p) = self.ctx.matrix.first_free(others, self.ctx.lists.runs(iv)) {
                let gain = base + boundary_gain(boundaries, p);
                if gain > 0.0 {
                    best = Some((p, gain));
                }
            }
        }
        best
    }

    /// Where the piece of `id`'s value other than `id` covering `point` lives.
    fn side_at(&self, s: &UnspillScratch, id: IntervalId, point: u32) -> Side {
        let v = self.ctx.intervals[id].vreg.vreg();
        let (a, b) = s.index[v].runs;
        let runs = &s.runs[a as usize..b as usize];
        let i = runs.partition_point(|&(_, end, _)| end <= point);
        match runs.get(i) {
            Some(&(start, _, piece)) if start <= point && piece != id => {
                let p = &self.ctx.intervals[piece];
                match (p.spilled, p.assigned) {
                    (true, _) => Side::Stack,
                    (false, Some(q)) => Side::Reg(q),
                    (false, None) => Side::None,
                }
            }
            _ => Side::None,
        }
    }
}

/// Calls `f` with each reload piece (still assigned) inside `iv`'s runs.
fn for_reload_pieces(
    s: &UnspillScratch,
    lists: &IntervalLists,
    iv: &LiveInterval,
    mut f: impl FnMut(Segment, IntervalId),
) {
    let (a, b) = s.index[iv.vreg.vreg()].reloads;
    let pieces = &s.reload_pieces[a as usize..b as usize];
    for r in lists.runs(iv) {
        // A reload piece spans at most its instruction's two points.
        let lo = pieces.partition_point(|&(start, _, _)| start + 2 < r.start);
        for &(start, end, piece) in &pieces[lo..] {
            if start >= r.end {
                break;
            }
            if end > r.start {
                f(Segment { start, end }, piece);
            }
        }
    }
}

/// What the boundaries gain when their piece moves from the slot into `p`. The slot is
/// written at the def, so entering it costs nothing: from a register neighbour the way
/// in becomes a move (nothing in the same register), and the way out a move instead of
/// a load; a stack neighbour costs a load on the way in and nothing on the way out.
fn boundary_gain(boundaries: &[(f32, Side, bool)], p: PReg) -> f32 {
    gain_where(boundaries, |q| q == p)
}

/// `boundary_gain` for a register that every register neighbour holds.
fn upper_gain(boundaries: &[(f32, Side, bool)]) -> f32 {
    gain_where(boundaries, |_| true)
}

/// `boundary_gain` where the register taken is the one of each register neighbour for
/// which `same` holds.
fn gain_where(boundaries: &[(f32, Side, bool)], same: impl Fn(PReg) -> bool) -> f32 {
    boundaries
        .iter()
        .map(|&(freq, side, enters)| match side {
            // Into the slot cost nothing (the slot holds the value since its def).
            Side::Reg(q) => {
                let moved = if same(q) { 0.0 } else { freq };
                if enters {
                    -moved
                } else {
                    MEMORY_MOVES * freq - moved
                }
            }
            Side::Stack if enters => -MEMORY_MOVES * freq,
            Side::Stack | Side::None => 0.0,
        })
        .sum()
}

fn overlaps(runs: &[Segment], s: Segment) -> bool {
    let i = runs.partition_point(|r| r.end <= s.start);
    runs.get(i).is_some_and(|r| r.start < s.end)
}
