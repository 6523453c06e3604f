//! `try_assign`: the first register with no interference, hints first. Hints are the
//! registers of copy partners that are already assigned (block-param edges, reuse
//! pairs), the registers of the value's own fixed operands and the register the piece's
//! split found free for it, strongest first. With no hint to take, a value live across
//! blocks prefers, among free registers, one its unplaced group members fit too
//! (`Options::group_free_choice`).

use super::interval::{IntervalId, LiveInterval};
use super::{Allocator, IntervalKind};
use crate::analysis::intervals::{needs_register, point_inst};
use log::debug;
use regalloc2::{Function, Inst, OperandConstraint, PReg, PRegSet, RegClass};

/// Pieces of one value consulted for hints (see `collect_hints`).
pub(crate) const MAX_PIECE_HINTS: usize = 16;
/// Copy partners of one value consulted for hints, strongest first.
const MAX_PARTNER_HINTS: usize = 16;
/// Weight of a group member's register as a hint, relative to the interval's frequency.
const GROUP_HINT_SCALE: f32 = 1e-3;

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Fills `scratch_hints` with (register, frequency) preferences, strongest first.
    pub(crate) fn collect_hints(&mut self, id: IntervalId) {
        let mut hints = std::mem::take(&mut self.ctx.scratch_hints);
        hints.clear();
        let iv = &self.ctx.intervals[id];
        let cfg = &self.an.cfg;
        if self.ctx.vreg_fixed_uses[iv.vreg.vreg()] {
            for u in self.ctx.lists.uses(iv) {
                if let OperandConstraint::FixedReg(p) = u.operand.constraint() {
                    hints.push((p, self.an.freq.of(cfg.block_of(u.inst))));
                }
            }
        }
        // Other pieces of the same value: sharing their register saves the move between
        // pieces, or lets a second reload of the value disappear. Weighted by this
        // piece's own frequency, looked up only once some piece has a register: most
        // intervals are their value's only piece.
        let mut own = None;
        // Only the newest pieces: a value split or reloaded thousands of times would
        // otherwise make every probe of each of its pieces scan all the others.
        for &piece in self.ctx.vreg_pieces[iv.vreg.vreg()]
            .iter()
            .rev()
            .take(MAX_PIECE_HINTS)
        {
            if piece != id
                && let Some(p) = self.ctx.intervals[piece].assigned
            {
                let freq = *own.get_or_insert_with(|| {
                    self.an
                        .freq
                        .of(cfg.block_of(point_inst(self.ctx.lists.segments(iv)[0].start)))
                });
                hints.push((p, freq));
            }
        }
        // The register its split found free for it (a region split's candidate, a local
        // split's window register), at the piece's own frequency, as heavy as another
        // piece's register.
        if let Some(p) = iv.split_hint {
            let freq = *own.get_or_insert_with(|| {
                self.an
                    .freq
                    .of(cfg.block_of(point_inst(self.ctx.lists.segments(iv)[0].start)))
            });
            hints.push((p, freq));
        }
        // The strongest partners only: a value passed to hundreds of block params would
        // otherwise make every probe of it scan them all.
        for &(w, freq) in self.ctx.partners.of(iv.vreg).iter().take(MAX_PARTNER_HINTS) {
            if let Some(p) = self.assigned_reg_of(w) {
                hints.push((p, freq));
            }
        }
        // Members of the value's coalescing group, placed: far weaker than any direct
        // hint (each only breaks ties among registers no partner names), they decide
        // where the first value of a chain of joins goes.
        if self.options.group_hints
            && self.ctx.groups.in_group(iv.vreg)
            && let Some(first) = self.ctx.lists.segments(iv).first()
        {
            let own_reg = self.ctx.vreg_hint_reg[iv.vreg.vreg()];
            for (p, members) in self.ctx.groups.votes(iv.vreg, own_reg) {
                let weak = GROUP_HINT_SCALE
                    * *own.get_or_insert_with(|| {
                        self.an.freq.of(cfg.block_of(point_inst(first.start)))
                    });
                hints.push((p, weak * f32::from(members)));
            }
        }
        if matches!(iv.kind, IntervalKind::Reload { .. }) {
            // A reload piece prefers where its value's other pieces at this instruction went.
            for u in self.ctx.lists.uses(iv) {
                if let OperandConstraint::Reuse(j) = u.operand.constraint() {
                    let input = self.func.inst_operands(u.inst)[j].vreg();
                    if let Some(p) = self.assigned_reg_of(input) {
                        hints.push((p, f32::MAX));
                    }
                }
            }
        }
        if hints.len() >= 2 {
            merge_hints(&mut hints);
            // One entry per register now, so the order is total.
            // Equal weights: a register outside the order first (`Options::outside_hints`),
            // as no other value can take it, then the lower index.
            let order = self.ctx.in_order[iv.vreg.class() as usize];
            let outside = |p: PReg| self.options.outside_hints && !order.contains(p);
            hints.sort_unstable_by(|a, b| {
                b.1.total_cmp(&a.1)
                    .then(outside(b.0).cmp(&outside(a.0)))
                    .then(a.0.index().cmp(&b.0.index()))
            });
        }
        self.ctx.scratch_hints = hints;
    }

    /// Whether `p`, a register outside the allocation order, may hold `iv` (interference
    /// aside): of its class and limit, not a scratch register (the move resolver may
    /// overwrite it at any point), not a fixed stack slot, and not named by a fixed
    /// non-allocatable operand inside the interval (those are not reserved in the
    /// matrix). Callers only offer registers a fixed operand of the value, or of a value
    /// copy-connected to it, names: the client hands the value over in that register.
    pub(crate) fn may_hold_outside(&self, p: PReg, iv: &LiveInterval, stack_ok: bool) -> bool {
        let class = iv.vreg.class();
        if p.class() != class
            || p.hw_enc() >= iv.limit
            || self.ctx.in_order[class as usize].contains(p)
            || self.env.scratch_by_class.contains(&Some(p))
        {
            return false;
        }
        if self.env.fixed_stack_slots.contains(&p)
            && !(stack_ok
                && self.options.outside_stack_hints
                && !self
                    .ctx
                    .lists
                    .uses(iv)
                    .iter()
                    .any(|u| needs_register(self.func, u)))
        {
            return false;
        }
        if !self.an.live.nonallocatable_named.contains(p) {
            return true;
        }
        let (Some(first), Some(last)) = (
            self.ctx.lists.segments(iv).first(),
            self.ctx.lists.segments(iv).last(),
        ) else {
            return false;
        };
        let (first, last) = (
            point_inst(first.start).index(),
            point_inst(last.end - 1).index(),
        );
        !(first..=last).any(|i| {
            self.func
                .inst_operands(Inst::new(i))
                .iter()
                .any(|o| o.as_fixed_nonallocatable() == Some(p))
        })
    }

    /// Whether `iv` living in the fixed stack slot `p`, a hint of weight `hint` (the
    /// frequency of the operands and copies that want it there), saves more than it
    /// costs. An interval that starts where its value's spill slot leaves off is entered
    /// by a slot-to-slot move into `p` (through a register the resolver borrows): at the
    /// entry's frequency, where staying in the spill slot would pay at the operands and
    /// copies instead (without this, a value read by an operand in the slot after a loop
    /// took the slot inside the loop: a slot-to-slot move every iteration). Entered from
    /// a register (a store, as a spill would make) or at its def, the slot costs nothing
    /// more.
    fn fixed_slot_pays(&self, id: IntervalId, p: PReg, hint: f32) -> bool {
        let iv = &self.ctx.intervals[id];
        let Some(first) = self.ctx.lists.segments(iv).first() else {
            return false;
        };
        let from_slot = self.ctx.vreg_pieces[iv.vreg.vreg()].iter().any(|&piece| {
            let other = &self.ctx.intervals[piece];
            piece != id
                && other.in_slot()
                && self
                    .ctx
                    .lists
                    .segments(other)
                    .iter()
                    .any(|s| s.end == first.start)
        });
        if !from_slot {
            return true;
        }
        let entry = self
            .an
            .freq
            .of(self.an.cfg.block_of(point_inst(first.start)));
        let pays = entry <= hint;
        if !pays {
            debug!(
                "{id} ({}): fixed stack slot {p} declined: entered from the spill slot at \
                 frequency {entry}, wanted there at {hint}",
                iv.vreg
            );
        }
        pays
    }

    pub(crate) fn may_hold(&self, p: PReg, iv: &LiveInterval) -> bool {
        p.hw_enc() < iv.limit && self.ctx.in_order[iv.vreg.class() as usize].contains(p)
    }

    fn is_available(&self, p: PReg, iv: &LiveInterval) -> bool {
        !self.fixed_conflict(p, iv) && self.ctx.matrix.is_free(p, self.ctx.lists.runs(iv))
    }

    /// Whether `p` is under every one of `members`' limits and free for each of them (no
    /// occupant, no fixed reservation of another value): a register they could all live
    /// in at once, since they do not overlap (group members).
    pub(crate) fn free_for_all(&self, p: PReg, members: &[IntervalId]) -> bool {
        members.iter().all(|&m| {
            let m = &self.ctx.intervals[m];
            p.hw_enc() < m.limit && self.is_available(p, m)
        })
    }

    /// The first free register, hints first: every register of the allocation order is
    /// probed or ruled out by a fixed reservation (the interval's `fixed_conflicts`).
    pub(crate) fn try_assign(&mut self, id: IntervalId) -> Option<PReg> {
        self.collect_hints(id);
        let iv = &self.ctx.intervals[id];
        let hints = &self.ctx.scratch_hints;
        let mut hinted = PRegSet::empty();
        for &(p, weight) in hints {
            hinted.add(p);
            let in_order = self.may_hold(p, iv);
            let stack_slot = !in_order && self.env.fixed_stack_slots.contains(&p);
            if (in_order || (self.options.outside_hints && self.may_hold_outside(p, iv, true)))
                && !self.fixed_conflict(p, iv)
                && self.ctx.matrix.is_free(p, self.ctx.lists.runs(iv))
                && (!stack_slot || !self.options.fixed_slot_entry_cost || {
                    let pays = self.fixed_slot_pays(id, p, weight);
                    self.stats.fixed_slots_declined += usize::from(!pays);
                    pays
                })
            {
                if !in_order {
                    if stack_slot {
                        debug!(
                            "{id} ({}): needs no register, lives in hinted fixed stack slot {p}",
                            iv.vreg
                        );
                        self.stats.outside_stack_hints += 1;
                    } else {
                        debug!(
                            "{id} ({}): hinted {p} is outside the allocation order and free",
                            iv.vreg
                        );
                    }
                    self.stats.outside_hints += 1;
                }
                return Some(p);
            }
        }
        // Every hint in the allocation order passed `may_hold` and was just found taken,
        // and a register a reservation rules out needs no probe: one set test each.
        let mut skip = hinted;
        skip.union_from(iv.fixed_conflicts);
        let long = self.options.long_value_order && iv.segments.len() >= 2;
        let order = self.probe_order(iv.vreg.class(), long);
        let limit = iv.limit;
        let unprobed = order
            .iter()
            .copied()
            .filter(|&p| p.hw_enc() < limit && !skip.contains(p));
        let found = self
            .ctx
            .matrix
            .first_free(unprobed, self.ctx.lists.runs(iv));
        if long && found.is_some() {
            self.stats.long_order_assignments += 1;
        }
        if let Some(p) = found
            && self.options.group_hints
            && self.options.group_free_choice
            && long
            && self.ctx.groups.in_group(self.ctx.intervals[id].vreg)
        {
            return Some(self.free_for_unplaced_members(id, p, skip));
        }
        found
    }

    /// `first` is free for `id`, a value live across blocks with no hint to take
    /// (`Options::group_free_choice`): if a member of its group not placed yet could not
    /// live in `first`, the first register of its probe order (past `skip`) free for
    /// `id` and for every such member, else `first`. The copies between them then need
    /// no move, at no price to `id`. Group placement does this for groups of three or
    /// more by placing every member at once; a pair, placed so, took registers from
    /// heavier values (`group_place.rs`), where this only steers `id`'s own choice.
    fn free_for_unplaced_members(&mut self, id: IntervalId, first: PReg, skip: PRegSet) -> PReg {
        const MAX_MEMBERS: usize = 8;
        let iv = &self.ctx.intervals[id];
        let mut members = std::mem::take(&mut self.ctx.scratch_best);
        members.clear();
        for m in self.ctx.groups.members(iv.vreg) {
            if members.len() == MAX_MEMBERS {
                break;
            }
            if let [one] = self.ctx.vreg_pieces[m.vreg()][..]
                && one != id
                && self.ctx.intervals[one].assigned.is_none()
                && self.ctx.intervals[one].kind == IntervalKind::Main
            {
                members.push(one);
            }
        }
        let other = if self.free_for_all(first, &members) {
            None
        } else {
            let runs = self.ctx.lists.runs(iv);
            (self.probe_order(iv.vreg.class(), true).iter().copied())
                .filter(|&p| {
                    p != first
                        && p.hw_enc() < iv.limit
                        && !skip.contains(p)
                        && !self.ctx.callee_saved.is_untouched(p)
                })
                .find(|&p| self.ctx.matrix.is_free(p, runs) && self.free_for_all(p, &members))
        };
        self.ctx.scratch_best = members;
        let Some(p) = other else {
            return first;
        };
        debug!(
            "{id} ({}): takes {p}, free for its unplaced group members too, not {first}",
            self.ctx.intervals[id].vreg
        );
        self.stats.group_free_choices += 1;
        p
    }

    /// The order free registers are probed in: `long_order` for a value live across
    /// blocks (`Options::long_value_order`), else the allocation order.
    pub(crate) fn probe_order(&self, class: RegClass, long: bool) -> &[PReg] {
        if long {
            &self.ctx.long_order[class as usize]
        } else {
            &self.out.order[class as usize]
        }
    }

    /// Builds `long_order`, the order a value live across blocks tries: the preferred
    /// registers from the back of the environment's list, stably sorted by how many
    /// fixed-register operands of this function name each, then the non-preferred ones
    /// as listed. Environments put first the registers that calls, returns and special
    /// instructions name (Cranelift's x64 lists rax, rcx, rdx, rsi, rdi first), which
    /// the short values beside those operands get anyway through their hints; a long
    /// value in one of them collides with its fixed operands and is evicted or split
    /// around them. Wasm corpus (1,449 functions): cost geomean against ion 0.8275 ->
    /// 0.8236 from the back alone, 0.8232 with the count; summed 0.7142 -> 0.6999.
    /// Weighting each operand by its block's frequency changed nothing measurable; every
    /// value taking this order (the short ones too) was worse (0.8282), and so were the
    /// short ones taking the most-named registers first (0.8250).
    pub(crate) fn build_long_order(&mut self) {
        let mut named = [0u32; PReg::NUM_INDEX];
        for &(_, _, p, _) in &self.ctx.partners.fixed {
            named[p.index()] += 1;
        }
        for (c, long) in self.ctx.long_order.iter_mut().enumerate() {
            let order = &self.out.order[c];
            let preferred = self.env.preferred_regs_by_class[c];
            long.clear();
            long.extend(order.iter().rev().filter(|p| preferred.contains(**p)));
            long.sort_by_key(|p| named[p.index()]);
            long.extend(order.iter().filter(|p| !preferred.contains(**p)));
        }
    }
}

/// Hint lists up to this long are merged by a scan for earlier entries rather than by
/// sums kept per register.
const SCAN_MERGE: usize = 8;

/// Sums the frequencies of hints naming one register into its first entry, adding in
/// list order either way so that the sums do not depend on the method.
pub(super) fn merge_hints(hints: &mut Vec<(PReg, f32)>) {
    let mut out = 0;
    if hints.len() <= SCAN_MERGE {
        for i in 0..hints.len() {
            let (p, freq) = hints[i];
            match hints[..out].iter_mut().find(|h| h.0 == p) {
                Some(h) => h.1 += freq,
                None => {
                    hints[out] = (p, freq);
                    out += 1;
                }
            }
        }
        hints.truncate(out);
        return;
    }
    // A long list is a value with many pieces or partners: one pass, each register's
    // sum started by its first entry, so no sort and no quadratic scan.
    let mut sums = [0.0f32; PReg::NUM_INDEX];
    let mut seen = PRegSet::empty();
    for i in 0..hints.len() {
        let (p, freq) = hints[i];
        if seen.contains(p) {
            sums[p.index()] += freq;
        } else {
            seen.add(p);
            sums[p.index()] = freq;
            hints[out] = (p, freq);
            out += 1;
        }
    }
    hints.truncate(out);
    for h in hints.iter_mut() {
        h.1 = sums[h.0.index()];
    }
}

/// Values, the interval's own first, whose fixed registers the last resort of
/// `try_assign_named_outside_order` considers.
const MAX_FALLBACK_VALUES: usize = 32;

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Last resort for an unspillable interval that no allocatable register can hold
    /// (say, a def at an instruction that clobbers every register of its class): a free
    /// register outside the allocation order that a fixed-register operand names, of the
    /// same value or of one copy-connected to it (block-param edges and reuse pairs,
    /// transitively, nearest first, at most `MAX_FALLBACK_VALUES` values). The client
    /// hands the value (or what it is copied to) over in that register, so it is one the
    /// value may occupy: ion, which merges copy-connected values into one bundle, places
    /// the whole bundle there. Never a scratch register (the move resolver may overwrite
    /// it at any point), a fixed stack slot (not a register), or one a non-allocatable
    /// fixed operand names inside the interval (those are not reserved in the matrix).
    pub(crate) fn try_assign_named_outside_order(&mut self, id: IntervalId) -> Option<PReg> {
        let iv = &self.ctx.intervals[id];
        self.ctx.lists.segments(iv).first()?;
        let usable = |p: PReg| self.may_hold_outside(p, iv, false) && self.is_available(p, iv);
        // Breadth first over the copy graph: `values[..next]` have been scanned.
        let mut values = vec![iv.vreg];
        let mut next = 0;
        while next < values.len() {
            let v = values[next];
            next += 1;
            if self.ctx.vreg_fixed_uses[v.vreg()] {
                for u in self.an.intervals.uses_of(v) {
                    if let OperandConstraint::FixedReg(p) = u.operand.constraint()
                        && usable(p)
                    {
                        return Some(p);
                    }
                }
            }
            for &(w, _) in self.ctx.partners.of(v) {
                if values.len() < MAX_FALLBACK_VALUES && !values.contains(&w) {
                    values.push(w);
                }
            }
        }
        None
    }
}
