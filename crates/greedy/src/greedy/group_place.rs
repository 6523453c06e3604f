//! Group placement (`Options::group_placement`): the first member of a coalescing group
//! to be dequeued places the whole group in one register when some register is free
//! over every member, as ion allocates a merged bundle and LLVM's coalescer joins
//! copies before allocation. A group that only hints (`Options::group_hints`) lets a
//! value placed between two of its members take their register where they are not yet
//! placed: a value live through a join passed on one edge takes the join parameter's
//! register and every branch argument of the other edges, defined while it is live,
//! misses it (bz2 #91, a function in 16 modules: a move on each of those edges).
//! Placed members are ordinary assigned intervals: eviction, splitting and hint
//! recoloring treat them like any other.

use super::Allocator;
use super::assign::merge_hints;
use super::interval::{IntervalId, IntervalKind, Stage};
use log::debug;
use regalloc2::{Function, PReg, PRegSet};

/// Members a group may have to be placed at once; larger groups only hint. (8: the
/// Wasm geomean 0.8190 -> 0.8235; 128: as 32.)
const MAX_PLACED_MEMBERS: usize = 32;
/// Members a group needs to be placed at once. A pair gains little from it that the
/// direct hint between its two values does not give, and placing pairs early took
/// registers from heavier values at 4 registers per class (fuzz 0.7853 -> 0.7903, for
/// Wasm 0.8190 -> 0.8182).
const MIN_PLACED_MEMBERS: usize = 3;

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Places `id`'s group in one register if every member is an unplaced, queued,
    /// unsplit interval and one register is free over all of them; returns whether it did.
    pub(crate) fn try_place_group(&mut self, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        let v = iv.vreg;
        if iv.stage != Stage::Assign
            || !matches!(iv.kind, IntervalKind::Main)
            || !self.ctx.groups.in_group(v)
            || self.ctx.group_tried[v.vreg()]
        {
            return false;
        }
        let mut members = std::mem::take(&mut self.ctx.scratch_best);
        members.clear();
        let mut eligible = true;
        for m in self.ctx.groups.members(v) {
            self.ctx.group_tried[m.vreg()] = true;
            let pieces = &self.ctx.vreg_pieces[m.vreg()];
            let one = match pieces[..] {
                [one] => one,
                _ => {
                    eligible = false;
                    continue;
                }
            };
            let piece = &self.ctx.intervals[one];
            if members.len() == MAX_PLACED_MEMBERS
                || piece.assigned.is_some()
                || piece.stage != Stage::Assign
                || !matches!(piece.kind, IntervalKind::Main)
                || (one != id && !self.ctx.queue.is_queued(one))
            {
                eligible = false;
            }
            members.push(one);
        }
        let placed = eligible && members.len() >= MIN_PLACED_MEMBERS && {
            // The group's preferences: every member's hints, summed per register.
            let mut hints = std::mem::take(&mut self.ctx.scratch_group_hints);
            hints.clear();
            for &m in &members {
                self.collect_hints(m);
                hints.extend_from_slice(&self.ctx.scratch_hints);
            }
            merge_hints(&mut hints);
            hints.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.index().cmp(&b.0.index())));
            let long = self.options.long_value_order
                && members
                    .iter()
                    .any(|&m| self.ctx.intervals[m].segments.len() >= 2);
            let order = self.probe_order(v.class(), long);
            let fits =
                |p: PReg| !self.ctx.callee_saved.is_untouched(p) && self.free_for_all(p, &members);
            // Hinted registers first, then the rest of the order, each probed once.
            let mut hinted = PRegSet::empty();
            for &(p, _) in &hints {
                hinted.add(p);
            }
            // A hinted register outside the order (a fixed operand's, the client's own
            // choice) may hold the group where it may hold every member.
            let outside_ok = |p: PReg| {
                self.options.outside_hints
                    && members
                        .iter()
                        .all(|&m| self.may_hold_outside(p, &self.ctx.intervals[m], false))
            };
            let found = hints
                .iter()
                .map(|&(p, _)| p)
                .filter(|&p| order.contains(&p) || outside_ok(p))
                .chain(order.iter().copied().filter(|&p| !hinted.contains(p)))
                .find(|&p| fits(p))
                .map(|p| (p, !order.contains(&p)));
            self.ctx.scratch_group_hints = hints;
            match found {
                Some((p, outside)) => {
                    debug!(
                        "{id} ({v}): its group of {} values placed in {p}{}",
                        members.len(),
                        if outside {
                            ", a hinted register outside the allocation order"
                        } else {
                            ""
                        }
                    );
                    if outside {
                        self.stats.outside_hints += members.len();
                    }
                    for &m in &members {
                        self.ctx.queue.remove(m);
                        self.assign(m, p);
                    }
                    self.stats.group_placements += 1;
                    true
                }
                None => false,
            }
        };
        self.ctx.scratch_best = members;
        placed
    }
}
