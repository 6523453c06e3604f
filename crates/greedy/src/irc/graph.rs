//! George and Appel's iterated register coalescing on an abstract interference graph:
//! nodes with a spill cost (infinite: unspillable) and a number of colours `k` (their
//! class's registers), precoloured nodes, edges and weighted moves. `colour` runs the
//! worklist algorithm (simplify, coalesce with the Briggs test or, against a precoloured
//! node, the George test, freeze, potential spill by cost / degree, then optimistic
//! select biased towards move partners) and reports a colour per node or the nodes to
//! spill. Nothing here knows about live intervals; `irc/mod.rs` builds the graph.
//!
//! Edges live in a hash set of node pairs beside one adjacency list per node that is not
//! precoloured (precoloured nodes have every register's clobbers and fixed operands as
//! neighbours, and the algorithm never walks their lists), so memory follows the edges,
//! not the square of the nodes.

use hashbrown::HashSet;
use log::debug;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Where a node is in the algorithm (Appel's node sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeState {
    Precoloured,
    Simplify,
    Freeze,
    Spill,
    OnStack,
    Coalesced,
    Coloured,
    Spilled,
}

/// Where a move is (Appel's move sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MoveState {
    Worklist,
    Active,
    Coalesced,
    Constrained,
    Frozen,
}

/// Neighbours the Briggs and George tests read at most; beyond, they answer no (never
/// coalescing is always safe). A value live across a whole huge function has a neighbour
/// per value there, and its moves are retried each time a neighbour's degree drops, so an
/// unbounded test made coalescing quadratic in the function.
const MAX_TEST_NEIGHBOURS: usize = 256;

/// Degree of a precoloured node: never low, never decremented.
const PRECOLOURED_DEGREE: u32 = u32::MAX;

/// A potential-spill candidate: cost / degree when queued, lowest first; stale entries
/// (the node left the spill worklist, or its degree changed) are dropped or requeued.
#[derive(PartialEq)]
struct SpillCandidate {
    priority: f32,
    degree: u32,
    node: u32,
}

impl Eq for SpillCandidate {}

impl PartialOrd for SpillCandidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SpillCandidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // The heap is a max-heap: the lowest priority (then node) is the greatest.
        other
            .priority
            .total_cmp(&self.priority)
            .then(other.node.cmp(&self.node))
    }
}

/// What one `colour` run did, for statistics and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ColouringCounts {
    /// Moves whose ends were merged (Briggs or George), and of those the George ones.
    pub coalesced: usize,
    pub george: usize,
    /// Moves given up because their ends interfere.
    pub constrained: usize,
    /// Moves given up by freezing.
    pub frozen: usize,
    /// Nodes pushed as potential spills, and of those the ones select still coloured.
    pub potential_spills: usize,
    pub optimistic: usize,
    /// Unspillable nodes coloured only after moving or spilling neighbours.
    pub repairs: usize,
}

/// The interference graph and the algorithm's state, buffers kept across functions.
#[derive(Default)]
pub(crate) struct Graph {
    k: Vec<u32>,
    cost: Vec<f32>,
    colour: Vec<Option<u32>>,
    state: Vec<NodeState>,
    degree: Vec<u32>,
    alias: Vec<u32>,
    adj: Vec<Vec<u32>>,
    /// Per node, every move of it (and of the nodes merged into it): select's bias reads
    /// the settled ones too.
    move_list: Vec<Vec<u32>>,
    /// Per node, its moves not known to be settled (coalesced, constrained or frozen);
    /// settled ones are pruned lazily.
    live_moves: Vec<Vec<u32>>,
    edges: HashSet<(u32, u32)>,
    moves: Vec<(u32, u32, f32)>,
    move_state: Vec<MoveState>,
    simplify: Vec<u32>,
    freeze: Vec<u32>,
    spill: BinaryHeap<SpillCandidate>,
    worklist_moves: Vec<u32>,
    stack: Vec<u32>,
    stamp: Vec<u32>,
    stamp_now: u32,
    /// Nodes that were pushed as potential spills.
    potential: Vec<bool>,
    pub counts: ColouringCounts,
}

impl Graph {
    pub fn reset(&mut self) {
        self.k.clear();
        self.cost.clear();
        self.colour.clear();
        self.state.clear();
        self.degree.clear();
        self.alias.clear();
        self.potential.clear();
        self.edges.clear();
        self.moves.clear();
        self.move_state.clear();
        self.simplify.clear();
        self.freeze.clear();
        self.spill.clear();
        self.worklist_moves.clear();
        self.stack.clear();
        self.counts = ColouringCounts::default();
    }

    pub fn num_nodes(&self) -> u32 {
        self.k.len() as u32
    }

    /// A node with `k` colours (`0..k`), its spill cost (`f32::INFINITY`: unspillable)
    /// and, for a precoloured node, its colour.
    pub fn add_node(&mut self, k: u32, cost: f32, precolour: Option<u32>) -> u32 {
        let n = self.k.len();
        self.k.push(k);
        self.cost.push(cost);
        self.colour.push(precolour);
        let pre = precolour.is_some();
        self.state.push(if pre {
            NodeState::Precoloured
        } else {
            NodeState::Simplify
        });
        self.degree.push(if pre { PRECOLOURED_DEGREE } else { 0 });
        self.alias.push(n as u32);
        self.potential.push(false);
        // Lists of earlier functions are reused, emptied.
        if self.adj.len() <= n {
            self.adj.push(Vec::new());
            self.move_list.push(Vec::new());
            self.live_moves.push(Vec::new());
        } else {
            self.adj[n].clear();
            self.move_list[n].clear();
            self.live_moves[n].clear();
        }
        if self.stamp.len() <= n {
            self.stamp.push(0);
        }
        n as u32
    }

    fn is_pre(&self, n: u32) -> bool {
        self.state[n as usize] == NodeState::Precoloured
    }

    /// Adds the edge `a`-`b`; false if it was there already (or `a == b`).
    pub fn add_edge(&mut self, a: u32, b: u32) -> bool {
        if a == b || !self.edges.insert((a.min(b), a.max(b))) {
            return false;
        }
        for (x, y) in [(a, b), (b, a)] {
            if !self.is_pre(x) {
                self.adj[x as usize].push(y);
                self.degree[x as usize] += 1;
            }
        }
        true
    }

    fn adjacent_set(&self, a: u32, b: u32) -> bool {
        self.edges.contains(&(a.min(b), a.max(b)))
    }

    /// A copy between `a` and `b` executed `freq` times.
    pub fn add_move(&mut self, a: u32, b: u32, freq: f32) {
        if a == b || (self.is_pre(a) && self.is_pre(b)) {
            return;
        }
        let m = self.moves.len() as u32;
        self.moves.push((a, b, freq));
        self.move_state.push(MoveState::Worklist);
        for end in [a, b] {
            self.move_list[end as usize].push(m);
            self.live_moves[end as usize].push(m);
        }
    }

    /// The colour of node `n` after a successful `colour` (its representative's when it
    /// was coalesced).
    pub fn colour_of(&self, n: u32) -> Option<u32> {
        self.colour[self.alias_of(n) as usize]
    }

    /// Was `n` (or the node it was merged into) spilled by the last `colour`?
    pub fn is_spilled(&self, n: u32) -> bool {
        self.state[self.alias_of(n) as usize] == NodeState::Spilled
    }

    /// Colours the graph. `Ok(true)`: every node is coloured; `Ok(false)`: some nodes
    /// are spilled (`is_spilled`) and the caller rewrites and rebuilds; `Err(n)`: the
    /// unspillable node `n` found no colour, even after moving or spilling neighbours.
    pub fn colour(&mut self) -> Result<bool, u32> {
        self.make_worklists();
        loop {
            if let Some(n) = self.pop_simplify() {
                self.simplify_node(n);
            } else if let Some(m) = self.pop_move() {
                self.coalesce(m);
            } else if let Some(n) = self.pop_freeze() {
                self.simplify.push(n);
                self.state[n as usize] = NodeState::Simplify;
                self.freeze_moves(n);
            } else if let Some(n) = self.pop_spill() {
                debug!("irc: node {n} is a potential spill");
                self.counts.potential_spills += 1;
                self.potential[n as usize] = true;
                self.simplify.push(n);
                self.state[n as usize] = NodeState::Simplify;
                self.freeze_moves(n);
            } else {
                break;
            }
        }
        self.assign_colours()
    }

    fn make_worklists(&mut self) {
        // Heaviest moves are tried first: `worklist_moves` is popped from the back.
        let mut order: Vec<u32> = (0..self.moves.len() as u32).collect();
        order.sort_by(|&a, &b| {
            self.moves[a as usize]
                .2
                .total_cmp(&self.moves[b as usize].2)
                .then(b.cmp(&a))
        });
        self.worklist_moves = order;
        for n in 0..self.num_nodes() {
            if self.is_pre(n) {
                continue;
            }
            self.sort_node(n);
        }
    }

    /// Puts a node that is not precoloured on the worklist its degree and moves call for.
    fn sort_node(&mut self, n: u32) {
        let i = n as usize;
        if self.degree[i] >= self.k[i] {
            self.state[i] = NodeState::Spill;
            self.push_spill(n);
        } else if self.move_related(n) {
            self.state[i] = NodeState::Freeze;
            self.freeze.push(n);
        } else {
            self.state[i] = NodeState::Simplify;
            self.simplify.push(n);
        }
    }

    fn push_spill(&mut self, n: u32) {
        let d = self.degree[n as usize];
        self.spill.push(SpillCandidate {
            priority: self.cost[n as usize] / d.max(1) as f32,
            degree: d,
            node: n,
        });
    }

    fn pop_simplify(&mut self) -> Option<u32> {
        while let Some(n) = self.simplify.pop() {
            if self.state[n as usize] == NodeState::Simplify {
                return Some(n);
            }
        }
        None
    }

    fn pop_freeze(&mut self) -> Option<u32> {
        while let Some(n) = self.freeze.pop() {
            if self.state[n as usize] == NodeState::Freeze {
                return Some(n);
            }
        }
        None
    }

    fn pop_move(&mut self) -> Option<u32> {
        while let Some(m) = self.worklist_moves.pop() {
            if self.move_state[m as usize] == MoveState::Worklist {
                return Some(m);
            }
        }
        None
    }

    /// The cheapest spill per degree; entries whose degree changed are requeued.
    fn pop_spill(&mut self) -> Option<u32> {
        while let Some(c) = self.spill.pop() {
            let i = c.node as usize;
            if self.state[i] != NodeState::Spill {
                continue;
            }
            if self.degree[i] != c.degree {
                self.push_spill(c.node);
                continue;
            }
            return Some(c.node);
        }
        None
    }

    fn is_gone(&self, n: u32) -> bool {
        matches!(
            self.state[n as usize],
            NodeState::OnStack | NodeState::Coalesced
        )
    }

    fn move_is_live(&self, m: u32) -> bool {
        matches!(
            self.move_state[m as usize],
            MoveState::Active | MoveState::Worklist
        )
    }

    fn move_related(&self, n: u32) -> bool {
        self.live_moves[n as usize]
            .iter()
            .any(|&m| self.move_is_live(m))
    }

    fn alias_of(&self, mut n: u32) -> u32 {
        while self.state[n as usize] == NodeState::Coalesced {
            n = self.alias[n as usize];
        }
        n
    }

    fn simplify_node(&mut self, n: u32) {
        self.state[n as usize] = NodeState::OnStack;
        self.stack.push(n);
        for k in 0..self.adj[n as usize].len() {
            let m = self.adj[n as usize][k];
            if !self.is_gone(m) {
                self.decrement_degree(m);
            }
        }
    }

    fn decrement_degree(&mut self, m: u32) {
        let i = m as usize;
        if self.is_pre(m) {
            return;
        }
        let d = self.degree[i];
        self.degree[i] = d - 1;
        if d == self.k[i] {
            self.enable_moves(m);
            for k in 0..self.adj[i].len() {
                let a = self.adj[i][k];
                if !self.is_gone(a) {
                    self.enable_moves(a);
                }
            }
            if self.state[i] == NodeState::Spill {
                if self.move_related(m) {
                    self.state[i] = NodeState::Freeze;
                    self.freeze.push(m);
                } else {
                    self.state[i] = NodeState::Simplify;
                    self.simplify.push(m);
                }
            }
        }
    }

    /// Moves of `n` set aside as not yet coalescible go back on the worklist. Not those of
    /// a precoloured node: each of its moves is also on the list of its other end, which
    /// is enabled when a neighbour's degree drops (the only event that makes a move
    /// coalescible), and a register's list holds every fixed operand naming it, so
    /// walking it at each such event made coalescing quadratic. Settled moves are dropped
    /// from `live_moves` here for the same reason.
    fn enable_moves(&mut self, n: u32) {
        if self.is_pre(n) {
            return;
        }
        let mut live = std::mem::take(&mut self.live_moves[n as usize]);
        live.retain(|&m| self.move_is_live(m));
        for &m in &live {
            if self.move_state[m as usize] == MoveState::Active {
                self.move_state[m as usize] = MoveState::Worklist;
                self.worklist_moves.push(m);
            }
        }
        self.live_moves[n as usize] = live;
    }

    /// A node that is no longer move-related and has low degree may be simplified.
    fn add_work_list(&mut self, u: u32) {
        let i = u as usize;
        if !self.is_pre(u)
            && self.state[i] == NodeState::Freeze
            && !self.move_related(u)
            && self.degree[i] < self.k[i]
        {
            self.state[i] = NodeState::Simplify;
            self.simplify.push(u);
        }
    }

    /// George: every neighbour of `v` is low-degree, precoloured, or already a neighbour
    /// of `u`.
    fn george(&self, u: u32, v: u32) -> bool {
        self.adj[v as usize].len() <= MAX_TEST_NEIGHBOURS
            && self.adj[v as usize].iter().all(|&t| {
                self.is_gone(t)
                    || self.is_pre(t)
                    || self.degree[t as usize] < self.k[t as usize]
                    || self.adjacent_set(t, u)
            })
    }

    /// Briggs: fewer than `k` neighbours of the merged node have significant degree.
    fn briggs(&mut self, u: u32, v: u32) -> bool {
        if self.adj[u as usize].len() + self.adj[v as usize].len() > MAX_TEST_NEIGHBOURS {
            return false;
        }
        self.stamp_now = self.stamp_now.wrapping_add(1);
        if self.stamp_now == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.stamp_now = 1;
        }
        let k = self.k[u as usize];
        let mut significant = 0;
        for n in [u, v] {
            for j in 0..self.adj[n as usize].len() {
                let t = self.adj[n as usize][j];
                if self.is_gone(t) || self.stamp[t as usize] == self.stamp_now {
                    continue;
                }
                self.stamp[t as usize] = self.stamp_now;
                if self.degree[t as usize] >= self.k[t as usize] {
                    significant += 1;
                    if significant >= k {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn coalesce(&mut self, m: u32) {
        let (a, b, _) = self.moves[m as usize];
        let (x, y) = (self.alias_of(a), self.alias_of(b));
        let (u, v) = if self.is_pre(y) { (y, x) } else { (x, y) };
        if u == v {
            self.move_state[m as usize] = MoveState::Coalesced;
            self.counts.coalesced += 1;
            self.add_work_list(u);
        } else if self.is_pre(v) || self.adjacent_set(u, v) {
            self.move_state[m as usize] = MoveState::Constrained;
            self.counts.constrained += 1;
            self.add_work_list(u);
            self.add_work_list(v);
        } else if (self.is_pre(u) && self.george(u, v)) || (!self.is_pre(u) && self.briggs(u, v)) {
            // The smaller adjacency is the one copied into the other.
            let (u, v) =
                if !self.is_pre(u) && self.adj[u as usize].len() < self.adj[v as usize].len() {
                    (v, u)
                } else {
                    (u, v)
                };
            self.move_state[m as usize] = MoveState::Coalesced;
            self.counts.coalesced += 1;
            if self.is_pre(u) {
                self.counts.george += 1;
            }
            debug!("irc: node {v} coalesced into {u}");
            self.combine(u, v);
            self.add_work_list(u);
        } else {
            self.move_state[m as usize] = MoveState::Active;
        }
    }

    fn combine(&mut self, u: u32, v: u32) {
        let (ui, vi) = (u as usize, v as usize);
        self.state[vi] = NodeState::Coalesced;
        self.alias[vi] = u;
        // The merged node is unspillable if either part is; otherwise both costs count.
        self.cost[ui] += self.cost[vi];
        self.enable_moves(v);
        let moves = std::mem::take(&mut self.move_list[vi]);
        self.move_list[ui].extend_from_slice(&moves);
        self.move_list[vi] = moves;
        let mut live = std::mem::take(&mut self.live_moves[vi]);
        live.retain(|&m| self.move_is_live(m));
        self.live_moves[ui].extend_from_slice(&live);
        self.live_moves[vi] = live;
        for k in 0..self.adj[vi].len() {
            let t = self.adj[vi][k];
            if self.is_gone(t) {
                continue;
            }
            // A neighbour of `v` new to `u` keeps its degree (one edge for another); one
            // already beside `u` loses one. Appel's add-then-decrement passes the former
            // through degree `k` and re-enables the moves of its whole neighbourhood for
            // nothing, which made merges into long-lived values quadratic.
            if !self.add_edge(t, u) {
                self.decrement_degree(t);
            }
        }
        if !self.is_pre(u) && self.degree[ui] >= self.k[ui] && self.state[ui] == NodeState::Freeze {
            self.state[ui] = NodeState::Spill;
            self.push_spill(u);
        }
    }

    fn freeze_moves(&mut self, u: u32) {
        for k in 0..self.live_moves[u as usize].len() {
            let m = self.live_moves[u as usize][k];
            if !self.move_is_live(m) {
                continue;
            }
            let (a, b, _) = self.moves[m as usize];
            let v = if self.alias_of(b) == self.alias_of(u) {
                self.alias_of(a)
            } else {
                self.alias_of(b)
            };
            self.move_state[m as usize] = MoveState::Frozen;
            self.counts.frozen += 1;
            if !self.is_pre(v)
                && self.state[v as usize] == NodeState::Freeze
                && !self.move_related(v)
                && self.degree[v as usize] < self.k[v as usize]
            {
                self.state[v as usize] = NodeState::Simplify;
                self.simplify.push(v);
            }
        }
    }

    /// Colours taken by the coloured or precoloured neighbours of `n`, as a bit mask.
    fn taken_around(&self, n: u32) -> u64 {
        let mut taken = 0u64;
        for &w in &self.adj[n as usize] {
            let a = self.alias_of(w);
            if matches!(
                self.state[a as usize],
                NodeState::Coloured | NodeState::Precoloured
            ) && let Some(c) = self.colour[a as usize]
            {
                taken |= 1 << c;
            }
        }
        taken
    }

    fn all_colours(&self, n: u32) -> u64 {
        let k = self.k[n as usize];
        if k >= 64 { u64::MAX } else { (1 << k) - 1 }
    }

    /// The colour of the heaviest coloured move partner of `n` among `ok`, if any.
    fn partner_colour(&self, n: u32, ok: u64) -> Option<u32> {
        let mut best: Option<(f32, u32)> = None;
        for &m in &self.move_list[n as usize] {
            let (a, b, freq) = self.moves[m as usize];
            let (a, b) = (self.alias_of(a), self.alias_of(b));
            let other = if a == n { b } else { a };
            if other == n
                || !matches!(
                    self.state[other as usize],
                    NodeState::Coloured | NodeState::Precoloured
                )
            {
                continue;
            }
            if let Some(c) = self.colour[other as usize]
                && ok & (1 << c) != 0
                && best.is_none_or(|(f, _)| freq > f)
            {
                best = Some((freq, c));
            }
        }
        best.map(|(_, c)| c)
    }

    fn assign_colours(&mut self) -> Result<bool, u32> {
        let mut spilled_any = false;
        while let Some(n) = self.stack.pop() {
            let i = n as usize;
            let ok = self.all_colours(n) & !self.taken_around(n);
            if ok != 0 {
                let c = self.partner_colour(n, ok).unwrap_or(ok.trailing_zeros());
                self.state[i] = NodeState::Coloured;
                self.colour[i] = Some(c);
                continue;
            }
            if self.cost[i].is_finite() {
                debug!("irc: node {n} actually spilled");
                self.state[i] = NodeState::Spilled;
                spilled_any = true;
                continue;
            }
            if !self.repair(n) {
                return Err(n);
            }
            spilled_any |= self.state.contains(&NodeState::Spilled);
        }
        self.counts.optimistic = (0..self.num_nodes() as usize)
            .filter(|&i| self.potential[i] && self.state[i] == NodeState::Coloured)
            .count();
        Ok(!spilled_any)
    }

    /// An unspillable node found every colour taken: take the colour whose holders can
    /// all leave it, unspillable holders to another colour free around them (two holders
    /// of one colour are never adjacent, so they may move to the same one), spillable
    /// ones by being spilled; the cheapest such colour. False if there is none.
    fn repair(&mut self, n: u32) -> bool {
        let mut best: Option<(f32, u32)> = None;
        let all = self.all_colours(n);
        'colours: for c in 0..self.k[n as usize].min(64) {
            if all & (1 << c) == 0 {
                continue;
            }
            let mut cost = 0.0;
            for &w in &self.adj[n as usize] {
                let h = self.alias_of(w);
                let hi = h as usize;
                if self.colour[hi] != Some(c) {
                    continue;
                }
                match self.state[hi] {
                    NodeState::Precoloured => continue 'colours,
                    NodeState::Coloured => {}
                    _ => continue,
                }
                if self.cost[hi].is_finite() {
                    cost += self.cost[hi];
                } else if self.all_colours(h) & !self.taken_around(h) & !(1 << c) == 0 {
                    continue 'colours;
                }
            }
            if best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, c));
            }
        }
        let Some((_, c)) = best else {
            return false;
        };
        self.counts.repairs += 1;
        for k in 0..self.adj[n as usize].len() {
            let h = self.alias_of(self.adj[n as usize][k]);
            let hi = h as usize;
            if self.state[hi] != NodeState::Coloured || self.colour[hi] != Some(c) {
                continue;
            }
            if self.cost[hi].is_finite() {
                debug!("irc: node {h} spilled to free colour {c} for unspillable node {n}");
                self.state[hi] = NodeState::Spilled;
                self.colour[hi] = None;
            } else {
                let free = self.all_colours(h) & !self.taken_around(h) & !(1 << c);
                let to = free.trailing_zeros();
                debug!("irc: unspillable node {h} moved from colour {c} to {to} for node {n}");
                self.colour[hi] = Some(to);
            }
        }
        self.state[n as usize] = NodeState::Coloured;
        self.colour[n as usize] = Some(c);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two colours throughout.
    const K: u32 = 2;

    fn graph(nodes: usize, edges: &[(u32, u32)], moves: &[(u32, u32)]) -> Graph {
        let mut g = Graph::default();
        for _ in 0..nodes {
            g.add_node(K, 1.0, None);
        }
        for &(a, b) in edges {
            g.add_edge(a, b);
        }
        for &(a, b) in moves {
            g.add_move(a, b, 1.0);
        }
        g
    }

    fn assert_proper(g: &Graph, edges: &[(u32, u32)]) {
        for &(a, b) in edges {
            assert_ne!(g.colour_of(a), g.colour_of(b), "edge {a}-{b}");
        }
    }

    /// `a` and `b` are joined by a move and share their only neighbour `x`: the merged
    /// node has one neighbour of significant degree, fewer than two colours, so the Briggs
    /// test lets them coalesce, and they share a colour.
    #[test]
    fn briggs_safe_coalesce() {
        let (a, b, x) = (0, 1, 2);
        let edges = [(a, x), (b, x)];
        let mut g = graph(3, &edges, &[(a, b)]);
        assert_eq!(g.colour(), Ok(true));
        assert_eq!(g.counts.coalesced, 1);
        assert_eq!(g.counts.george, 0);
        assert_eq!(g.counts.frozen, 0);
        assert_eq!(g.colour_of(a), g.colour_of(b));
        assert_proper(&g, &edges);
    }

    /// `v` moves to the precoloured node of colour 1; its only other neighbours are a
    /// low-degree node and the precoloured node of colour 0 (a clobber). George's test
    /// holds (every neighbour of `v` is low-degree or precoloured), so `v` is merged into
    /// the register and takes colour 1.
    #[test]
    fn george_safe_coalesce_with_a_register() {
        let mut g = Graph::default();
        let p0 = g.add_node(K, 0.0, Some(0));
        let p1 = g.add_node(K, 0.0, Some(1));
        let v = g.add_node(K, 1.0, None);
        let t = g.add_node(K, 1.0, None);
        g.add_edge(v, t);
        g.add_edge(v, p0);
        g.add_move(v, p1, 1.0);
        assert_eq!(g.colour(), Ok(true));
        assert_eq!(g.counts.coalesced, 1);
        assert_eq!(g.counts.george, 1);
        assert_eq!(g.colour_of(v), Some(1));
        assert_eq!(g.colour_of(t), Some(0));
    }

    /// `a` and `b` are move-related, `a`'s neighbour `x` and `b`'s neighbour `y` are
    /// adjacent, so both have significant degree: merged, `ab` would have two such
    /// neighbours with two colours, and Briggs says no. Nothing is simplifiable, the move
    /// stays active, and the allocator freezes it rather than spill: all is coloured.
    #[test]
    fn freeze_gives_up_a_move_instead_of_spilling() {
        let (a, b, x, y) = (0, 1, 2, 3);
        let edges = [(a, x), (b, y), (x, y)];
        let mut g = graph(4, &edges, &[(a, b)]);
        assert_eq!(g.colour(), Ok(true));
        assert_eq!(g.counts.coalesced, 0);
        assert_eq!(g.counts.frozen, 1);
        assert_eq!(g.counts.potential_spills, 0);
        assert_proper(&g, &edges);
    }

    /// A four-cycle with two colours: every node has degree two, so the degree test finds
    /// nothing to simplify and a node is pushed as a potential spill; select still colours
    /// it (the cycle is bipartite), so nothing is spilled.
    #[test]
    fn optimistic_colouring_succeeds_where_the_degree_test_spills() {
        let edges = [(0, 1), (1, 2), (2, 3), (3, 0)];
        let mut g = graph(4, &edges, &[]);
        assert_eq!(g.colour(), Ok(true));
        assert!(g.counts.potential_spills >= 1, "{:?}", g.counts);
        assert!(g.counts.optimistic >= 1, "{:?}", g.counts);
        assert!((0..4).all(|n| !g.is_spilled(n)));
        assert_proper(&g, &edges);
    }

    /// A triangle with two colours cannot be coloured: the cheapest node per degree is the
    /// one spilled.
    #[test]
    fn a_triangle_spills_its_cheapest_node() {
        let mut g = Graph::default();
        let costs = [5.0, 1.0, 3.0];
        for c in costs {
            g.add_node(K, c, None);
        }
        for (a, b) in [(0, 1), (1, 2), (2, 0)] {
            g.add_edge(a, b);
        }
        assert_eq!(g.colour(), Ok(false));
        assert!(g.is_spilled(1));
        assert!(!g.is_spilled(0) && !g.is_spilled(2));
    }
}
