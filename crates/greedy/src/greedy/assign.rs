//! `try_assign`: the first register with no interference, hints first. Hints are the
//! registers of copy partners that are already assigned (block-param edges, reuse
//! pairs) and the registers of the value's own fixed operands, strongest first.

use super::interval::{IntervalId, LiveInterval};
use super::{Allocator, IntervalKind};
use crate::analysis::intervals::point_inst;
use regalloc2::{Function, OperandConstraint, PReg};

/// Pieces of one value consulted for hints (see `collect_hints`).
pub(crate) const MAX_PIECE_HINTS: usize = 16;
/// Copy partners of one value consulted for hints, strongest first.
const MAX_PARTNER_HINTS: usize = 16;

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Fills `scratch_hints` with (register, frequency) preferences, strongest first.
    pub(crate) fn collect_hints(&mut self, id: IntervalId) {
        let mut hints = std::mem::take(&mut self.ctx.scratch_hints);
        hints.clear();
        let iv = &self.ctx.intervals[id];
        let cfg = &self.an.cfg;
        if self.ctx.vreg_fixed_uses[iv.vreg.vreg()] {
            for u in &iv.uses {
                if let OperandConstraint::FixedReg(p) = u.operand.constraint() {
                    hints.push((p, self.an.freq.of(cfg.block_of(u.inst))));
                }
            }
        }
        // Other pieces of the same value: sharing their register saves the move between
        // pieces, or lets a second reload of the value disappear.
        let own = self
            .an
            .freq
            .of(cfg.block_of(point_inst(iv.segments[0].start)));
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
                hints.push((p, own));
            }
        }
        // The strongest partners only: a value passed to hundreds of block params would
        // otherwise make every probe of it scan them all.
        for &(w, freq) in self.ctx.partners.of(iv.vreg).iter().take(MAX_PARTNER_HINTS) {
            if let Some(p) = self.assigned_reg_of(w) {
                hints.push((p, freq));
            }
        }
        if matches!(iv.kind, IntervalKind::Reload { .. }) {
            // A reload piece prefers where its value's other pieces at this instruction went.
            for u in &iv.uses {
                if let OperandConstraint::Reuse(j) = u.operand.constraint() {
                    let input = self.func.inst_operands(u.inst)[j].vreg();
                    if let Some(p) = self.assigned_reg_of(input) {
                        hints.push((p, f32::MAX));
                    }
                }
            }
        }
        hints.sort_by_key(|&(p, _)| p.index());
        let mut out = 0;
        for i in 0..hints.len() {
            if out > 0 && hints[out - 1].0 == hints[i].0 {
                hints[out - 1].1 += hints[i].1;
            } else {
                hints[out] = hints[i];
                out += 1;
            }
        }
        hints.truncate(out);
        hints.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.index().cmp(&b.0.index())));
        self.ctx.scratch_hints = hints;
    }

    pub(crate) fn may_hold(&self, p: PReg, iv: &LiveInterval) -> bool {
        p.hw_enc() < iv.limit && self.ctx.order[iv.vreg.class() as usize].contains(&p)
    }

    fn is_available(&self, p: PReg, iv: &LiveInterval) -> bool {
        !self.fixed_conflict(p, iv) && self.ctx.matrix.is_free(p, &iv.runs)
    }

    pub(crate) fn try_assign(&mut self, id: IntervalId) -> Option<PReg> {
        self.collect_hints(id);
        let iv = &self.ctx.intervals[id];
        let hints = &self.ctx.scratch_hints;
        for &(p, _) in hints {
            if self.may_hold(p, iv) && self.is_available(p, iv) {
                return Some(p);
            }
        }
        // Every hint in the allocation order passed `may_hold` and was just found taken.
        self.order_for(iv)
            .find(|&p| !hints.iter().any(|&(h, _)| h == p) && self.is_available(p, iv))
    }
}
