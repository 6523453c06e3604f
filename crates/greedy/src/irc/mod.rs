//! Iterated register coalescing (`Algorithm::Irc`), after George and Appel, on our live
//! intervals. Each round builds an interference graph (`graph.rs`) from scratch: a node
//! per value not yet spilled and per reload piece of the spilled ones (unspillable), two
//! nodes adjacent when their runs overlap; a precoloured node per allocatable register,
//! adjacent to each node its fixed reservations (fixed operands of other values,
//! clobbers) or its `Limit` rule out there. Moves are the copies between values
//! (block-parameter edges, reuse pairs) and, towards the precoloured nodes, the fixed
//! operands of each value, weighted by block frequency. The graph is coloured; if nodes
//! were spilled, each spilled value moves to its slot with a reload piece at every
//! instruction whose operands need it in a register, and the next round starts, until a
//! round spills nothing. A round spills at least one value, so there are at most as many
//! rounds as values.

mod graph;

use crate::analysis::Analyses;
use crate::analysis::intervals::fixed_conflict;
use crate::assignment::Assignment;
use crate::slots::SlotLayout;
use crate::whole_value::Ledger;
use crate::{Options, Phase, Stats, phase_clock};
use graph::Graph;
use log::debug;
use regalloc2::{Function, RegAllocError};

/// The allocator's buffers, kept across functions.
#[derive(Default)]
pub(crate) struct IrcCtx {
    pub ledger: Ledger,
    pub graph: Graph,
    /// Per ledger interval, its node in this round's graph (`NO_NODE` once spilled).
    node_of: Vec<u32>,
    /// Per graph node, its ledger interval (`NO_NODE` for a precoloured node).
    interval_of: Vec<u32>,
    /// Per class, the precoloured node of each register of the allocation order.
    precoloured: [Vec<u32>; 3],
    /// This round's runs as (start, end, node), sorted by start for the sweep.
    runs: Vec<(u32, u32, u32)>,
    /// Runs overlapping the sweep's position, per class, as (end, node).
    active: [Vec<(u32, u32)>; 3],
}

const NO_NODE: u32 = u32::MAX;

pub(crate) struct Irc<'a, F: Function + ?Sized> {
    pub func: &'a F,
    pub options: &'a Options,
    pub an: &'a Analyses,
    pub ctx: &'a mut IrcCtx,
    pub out: &'a mut Assignment,
    pub stats: &'a mut Stats,
}

impl<F: Function + ?Sized> Irc<'_, F> {
    pub fn run(&mut self) -> Result<(), RegAllocError> {
        let t = phase_clock(self.options);
        self.ctx.ledger.reset(self.func, self.an, self.stats);
        for id in 0..self.ctx.ledger.len() {
            if self.ctx.ledger.get(id).stack_only {
                debug!(
                    "irc: {} spilled up front, an operand needs it on the stack",
                    self.ctx.ledger.get(id).vreg
                );
                self.ctx
                    .ledger
                    .spill(self.func, self.an, self.out, id, self.stats);
            }
        }
        self.stats.phases.since(Phase::Setup, t);
        let t = phase_clock(self.options);
        loop {
            self.stats.colouring_rounds += 1;
            self.build();
            let coloured = self.ctx.graph.colour();
            let counts = self.ctx.graph.counts;
            self.stats.coalesced_copies += counts.coalesced;
            self.stats.evictions += counts.repairs;
            match coloured {
                Ok(true) => break,
                Ok(false) => self.rewrite(),
                Err(node) => {
                    let id = self.ctx.interval_of[node as usize];
                    debug!(
                        "irc: reload piece of {} finds no register",
                        self.ctx.ledger.get(id).vreg
                    );
                    return Err(RegAllocError::TooManyLiveRegs);
                }
            }
        }
        self.finish();
        self.stats.phases.since(Phase::Assignment, t);
        let t = phase_clock(self.options);
        SlotLayout::run(
            self.func,
            self.an,
            &self.ctx.ledger.partners,
            self.options,
            &mut self.out.slots,
            self.stats,
        );
        self.stats.phases.since(Phase::SlotSharing, t);
        self.ctx.ledger.export(self.out)
    }

    /// This round's graph: nodes, precoloured nodes and their edges, interference from a
    /// sweep over the runs by start, and the moves.
    fn build(&mut self) {
        let ctx = &mut *self.ctx;
        let (ledger, graph) = (&ctx.ledger, &mut ctx.graph);
        graph.reset();
        ctx.interval_of.clear();
        ctx.node_of.clear();
        ctx.node_of.resize(ledger.len() as usize, NO_NODE);
        for class in 0..3 {
            let order = &self.out.order[class];
            ctx.precoloured[class].clear();
            for c in 0..order.len() as u32 {
                ctx.precoloured[class].push(graph.add_node(order.len() as u32, 0.0, Some(c)));
                ctx.interval_of.push(NO_NODE);
            }
        }
        ctx.runs.clear();
        for id in 0..ledger.len() {
            let iv = ledger.get(id);
            if iv.spilled {
                continue;
            }
            let class = iv.vreg.class() as usize;
            let order = &self.out.order[class];
            let node = graph.add_node(order.len() as u32, iv.weight, None);
            ctx.node_of[id as usize] = node;
            ctx.interval_of.push(id);
            for s in ledger.runs(id) {
                ctx.runs.push((s.start, s.end, node));
            }
            let reservations = &self.an.intervals.fixed;
            for (c, &r) in order.iter().enumerate() {
                if r.hw_enc() >= iv.limit
                    || fixed_conflict(&reservations[r.index()], ledger.runs(id), iv.vreg)
                {
                    graph.add_edge(node, ctx.precoloured[class][c]);
                }
            }
        }
        ctx.runs.sort_unstable();
        for a in &mut ctx.active {
            a.clear();
        }
        for &(start, end, node) in &ctx.runs {
            let id = ctx.interval_of[node as usize];
            let active = &mut ctx.active[ledger.get(id).vreg.class() as usize];
            active.retain(|&(e, _)| e > start);
            for &(_, other) in active.iter() {
                graph.add_edge(node, other);
            }
            active.push((end, node));
        }
        let node_of = &ctx.node_of;
        let value_node = |v: usize| {
            ledger
                .value_interval(v)
                .map_or(NO_NODE, |id| node_of[id as usize])
        };
        for copy in &ledger.partners.copies {
            let (a, b) = (value_node(copy.a.vreg()), value_node(copy.b.vreg()));
            if a != NO_NODE && b != NO_NODE {
                graph.add_move(a, b, copy.freq);
            }
        }
        for &(v, _, p, freq) in &ledger.partners.fixed {
            let a = value_node(v.vreg());
            let class = v.class() as usize;
            let order = &self.out.order[class];
            if let (true, Some(c)) = (a != NO_NODE, order.iter().position(|&r| r == p)) {
                graph.add_move(a, ctx.precoloured[class][c], freq);
            }
        }
    }

    /// Spilled nodes' values move to their slots, with reload pieces for the next round.
    fn rewrite(&mut self) {
        for id in 0..self.ctx.ledger.len() {
            let node = self
                .ctx
                .node_of
                .get(id as usize)
                .copied()
                .unwrap_or(NO_NODE);
            if node != NO_NODE && self.ctx.graph.is_spilled(node) {
                self.ctx
                    .ledger
                    .spill(self.func, self.an, self.out, id, self.stats);
            }
        }
    }

    /// Every interval takes its node's colour.
    fn finish(&mut self) {
        for id in 0..self.ctx.ledger.len() {
            let node = self.ctx.node_of[id as usize];
            if node == NO_NODE {
                continue;
            }
            let class = self.ctx.ledger.get(id).vreg.class() as usize;
            if let Some(c) = self.ctx.graph.colour_of(node) {
                let r = self.out.order[class][c as usize];
                self.ctx.ledger.set_reg(id, r, self.stats);
            }
        }
    }
}
