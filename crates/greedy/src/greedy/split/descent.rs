//! Region splitting's labelling search: the links between an interval's block segments
//! (`Adjacency`), the bounded descent that flips single segments while the cost drops
//! (`descend`), and the lower bound that lets a candidate skip its descents
//! (`lower_bound`).

/// Improvement passes of the region labelling.
const MAX_REGION_PASSES: usize = 8;

/// Up to 64 flags as the bits of one word, the first flag lowest.
pub(super) fn bit_word(flags: impl IntoIterator<Item = bool>) -> u64 {
    flags
        .into_iter()
        .enumerate()
        .fold(0u64, |w, (i, x)| w | (u64::from(x) << i))
}

pub(super) fn bit_words(flags: &[bool]) -> Vec<u64> {
    flags
        .chunks(64)
        .map(|c| bit_word(c.iter().copied()))
        .collect()
}

/// A lower bound on the cost of every labelling with these `free` segments: the others
/// stay on the stack, so a free segment pays either its stack cost or, in a register,
/// its boundary plus every link in from a segment that is not free. Each link is charged
/// to the segment it enters, as the descent's total does, so nothing is counted twice.
/// The bound is lowered by a millionth, far more than the rounding of its own sum or the
/// descent's (both summed in `f64` from `f32` weights), so it never exceeds the cost a
/// descent reports for the same `free`.
pub(super) fn lower_bound(
    free: &[bool],
    stack_cost: &[f32],
    boundary: &[f32],
    adj: &Adjacency,
    work: &mut Descent,
) -> f32 {
    let in_register = &mut work.into_from_stack;
    in_register.clear();
    in_register.extend(boundary.iter().map(|&b| f64::from(b)));
    for &(a, b, w) in &adj.links {
        if !free[a as usize] {
            in_register[b as usize] += f64::from(w);
        }
    }
    let total: f64 = free
        .iter()
        .zip(stack_cost)
        .zip(&*in_register)
        .map(|((&free, &stack), &in_register)| {
            let stack = f64::from(stack);
            if free { stack.min(in_register) } else { stack }
        })
        .sum();
    (total * (1.0 - 1e-6)) as f32
}

/// Bounded descent over the region labelling: flip single free segments while the total
/// (stack cost of stack segments, boundary cost of register segments, reload cost of
/// every link from a stack segment to a register segment) drops.
///
/// Each segment carries two sums over its links: the weight of the links into it from
/// stack segments (what it pays as a register) and of the links out of it into register
/// segments (what it pays as the stack). They are set up in one pass over the links, so
/// a look at a segment is constant time and only a flip walks its links, to update its
/// neighbours' sums; the total is read from the sums at the end. Weights are `f32` and
/// the sums `f64`, so adding and removing a link's weight is exact (no drift), and a
/// flip back is exactly as dear as the flip was cheap.
pub(super) fn descend(
    label: &mut [bool],
    free: &[bool],
    free_words: &[u64],
    stack_cost: &[f32],
    boundary: &[f32],
    adj: &Adjacency,
    work: &mut Descent,
) -> f32 {
    let n = label.len();
    let own = |k: usize, reg: bool| f64::from(if reg { boundary[k] } else { stack_cost[k] });
    let Descent {
        dirty,
        into_from_stack,
        out_to_register,
        charged,
    } = work;
    debug_assert!((0..n).all(|k| label[k] || !free[k] || stack_cost[k] == 0.0));
    debug_assert!((0..n).all(|k| boundary[k] == 0.0 || charged.contains(&(k as u32))));
    dirty.clear();
    dirty.resize(free_words.len(), 0);
    into_from_stack.clear();
    into_from_stack.resize(n, 0.0);
    out_to_register.clear();
    out_to_register.resize(n, 0.0);
    for &(a, b, w) in &adj.links {
        let (a, b) = (a as usize, b as usize);
        if !label[a] {
            into_from_stack[b] += f64::from(w);
            if label[b] {
                dirty[a / 64] |= 1 << (a % 64);
                dirty[b / 64] |= 1 << (b % 64);
            }
        }
        if label[b] {
            out_to_register[a] += f64::from(w);
        }
    }
    // A segment's flip decision depends on its own label and its neighbours' only, so
    // one that did not flip is looked at again only once one of them has changed (a
    // segment that just flipped would not flip back either). Dirty segments are bits
    // (only free ones are ever set), found a word at a time.
    //
    // Every cost is at least zero. So at the start a register segment with no boundary
    // cost and no link in from the stack gains nothing by going to the stack, and a stack
    // segment with no link out into a register nothing by taking one (it has no stack
    // cost to save: the start puts every free segment with one in the register). Looking
    // at such a segment would not flip it: only the ends of links from the stack into a
    // register and the register segments with a boundary cost start dirty, and the others
    // are marked by a neighbour's flip before they could change their mind.
    debug_assert_eq!(free_words, bit_words(free));
    for &k in charged.iter() {
        let k = k as usize;
        if label[k] {
            dirty[k / 64] |= 1 << (k % 64);
        }
    }
    for (d, &free) in dirty.iter_mut().zip(free_words) {
        *d &= free;
    }
    for _ in 0..MAX_REGION_PASSES {
        let mut changed = false;
        let mut k = 0;
        while k < n {
            let word = k / 64;
            let bits = dirty[word] & (!0u64 << (k % 64));
            if bits == 0 {
                k = (word + 1) * 64;
                continue;
            }
            k = word * 64 + bits.trailing_zeros() as usize;
            dirty[word] &= !(1 << (k % 64));
            let now = label[k];
            // To a register: the links in from stack neighbours start costing and those
            // out to register neighbours stop; to the stack, the reverse.
            let links = into_from_stack[k] - out_to_register[k];
            let delta = own(k, !now) - own(k, now) + if now { -links } else { links };
            if delta < 0.0 {
                label[k] = !now;
                changed = true;
                for &(j, w, out) in adj.of(k) {
                    let (j, w) = (j as usize, f64::from(w));
                    // `now` is what `k` was: a register going to the stack (or back).
                    match (out, now) {
                        (true, true) => into_from_stack[j] += w,
                        (true, false) => into_from_stack[j] -= w,
                        (false, true) => out_to_register[j] -= w,
                        (false, false) => out_to_register[j] += w,
                    }
                    if free[j] {
                        dirty[j / 64] |= 1 << (j % 64);
                    }
                }
            }
            k += 1;
        }
        if !changed {
            break;
        }
    }
    // Each costly link is counted once, at the register segment it enters.
    let cost: f64 = label
        .iter()
        .zip(stack_cost.iter().zip(boundary))
        .zip(&*into_from_stack)
        .map(|((&reg, (&stack, &boundary)), &into)| {
            if reg {
                f64::from(boundary) + into
            } else {
                f64::from(stack)
            }
        })
        .sum();
    cost as f32
}

/// The buffers of `descend`, kept across descents.
#[derive(Default)]
pub(super) struct Descent {
    dirty: Vec<u64>,
    /// Per segment: the weight of its links in from stack segments, and of its links
    /// out to register segments, under the current labelling.
    into_from_stack: Vec<f64>,
    out_to_register: Vec<f64>,
    /// The segments with a boundary cost (perhaps some without, and some twice), set for
    /// each attempt.
    pub(super) charged: Vec<u32>,
}

/// The links between an interval's block segments, per segment, in one flat list (a
/// vector per segment cost an allocation per block at every region split attempt).
#[derive(Default)]
pub(super) struct Adjacency {
    /// `list[start[k]..start[k + 1]]` are segment `k`'s neighbours with the link cost and
    /// whether the edge leaves `k`.
    start: Vec<usize>,
    list: Vec<(u32, f32, bool)>,
    fill: Vec<usize>,
    /// The links themselves: (from, to, weight).
    links: Vec<(u32, u32, f32)>,
    /// Per link: its entries in `list`, in its source's and in its target's neighbours.
    at: Vec<(u32, u32)>,
}

impl Adjacency {
    /// Each link `(a, b, w)` (an edge from `a` to `b`) makes `b` a neighbour of `a` and
    /// `a` one of `b`, each segment's neighbours in the order of `links`.
    pub(super) fn fill(&mut self, n: usize, links: &[(usize, usize, f32)]) {
        let start = &mut self.start;
        start.clear();
        start.resize(n + 1, 0);
        for &(a, b, _) in links {
            start[a + 1] += 1;
            start[b + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let fill = &mut self.fill;
        fill.clone_from(start);
        let list = &mut self.list;
        list.clear();
        list.resize(2 * links.len(), (0, 0.0, false));
        self.at.clear();
        for &(a, b, w) in links {
            list[fill[a]] = (b as u32, w, true);
            list[fill[b]] = (a as u32, w, false);
            self.at.push((fill[a] as u32, fill[b] as u32));
            fill[a] += 1;
            fill[b] += 1;
        }
        self.links.clear();
        self.links
            .extend(links.iter().map(|&(a, b, w)| (a as u32, b as u32, w)));
    }

    /// Becomes a copy of `other`.
    pub(super) fn copy_from(&mut self, other: &Adjacency) {
        self.start.clone_from(&other.start);
        self.list.clone_from(&other.list);
        self.links.clone_from(&other.links);
        self.at.clone_from(&other.at);
    }

    /// Link `i` (in the order `fill` was given them) weighs nothing from now on.
    pub(super) fn zero(&mut self, i: usize) {
        let (x, y) = self.at[i];
        self.list[x as usize].1 = 0.0;
        self.list[y as usize].1 = 0.0;
        self.links[i].2 = 0.0;
    }

    pub(super) fn of(&self, k: usize) -> &[(u32, f32, bool)] {
        &self.list[self.start[k]..self.start[k + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The objective from scratch: stack cost of stack segments, boundary cost of
    /// register segments, and every link from a stack segment into a register one.
    fn total(
        label: &[bool],
        stack: &[f32],
        boundary: &[f32],
        links: &[(usize, usize, f32)],
    ) -> f64 {
        let own: f64 = (0..label.len())
            .map(|k| f64::from(if label[k] { boundary[k] } else { stack[k] }))
            .sum();
        let reloads: f64 = links
            .iter()
            .filter(|&&(a, b, _)| !label[a] && label[b])
            .map(|&(_, _, w)| f64::from(w))
            .sum();
        own + reloads
    }

    /// Segment count, stack costs, boundary costs and links of a test graph.
    type Graph = (usize, Vec<f32>, Vec<f32>, Vec<(usize, usize, f32)>);

    /// A random segment graph of 1 to `max` segments: stack costs, boundary costs (one
    /// segment in `boundary_one_in` has one) and up to three links out of each segment.
    fn random_graph(next: &mut impl FnMut(u64) -> u64, max: u64, boundary_one_in: u64) -> Graph {
        let n = 1 + next(max) as usize;
        let weight = |x: u64| [0.0, 1.0, 2.0, 8.0, 16.0, 0.5][x as usize];
        let stack: Vec<f32> = (0..n).map(|_| weight(next(6))).collect();
        let boundary: Vec<f32> = (0..n)
            .map(|_| {
                if next(boundary_one_in) == 0 {
                    weight(next(6))
                } else {
                    0.0
                }
            })
            .collect();
        let mut links = Vec::new();
        for a in 0..n {
            for _ in 0..next(4) {
                let b = next(n as u64) as usize;
                if b != a {
                    links.push((a, b, weight(1 + next(5))));
                }
            }
        }
        (n, stack, boundary, links)
    }

    /// On random segment graphs, the descent returns the true cost of its labelling,
    /// keeps forced segments on the stack, and ends where no single free flip helps
    /// (unless it ran out of passes).
    #[test]
    fn descent_reaches_a_local_minimum_and_reports_its_cost() {
        let mut next = crate::tests::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut adj = Adjacency::default();
        let mut work = Descent::default();
        let mut minima = 0;
        let mut tight = 0;
        for _ in 0..500 {
            let (n, stack, boundary, links) = random_graph(&mut next, 150, 4);
            adj.fill(n, &links);
            work.charged.clear();
            work.charged
                .extend((0..n as u32).filter(|&k| boundary[k as usize] > 0.0));
            let free: Vec<bool> = (0..n).map(|_| next(5) != 0).collect();
            let mut label = if next(2) == 0 {
                free.clone()
            } else {
                (0..n).map(|k| free[k] && stack[k] > 0.0).collect()
            };
            let words = bit_words(&free);
            let cost = descend(
                &mut label, &free, &words, &stack, &boundary, &adj, &mut work,
            );
            let truth = total(&label, &stack, &boundary, &links);
            assert!(
                (f64::from(cost) - truth).abs() <= 1e-3 * truth.max(1.0),
                "{cost} vs {truth}"
            );
            // The bound that lets a candidate skip its descents holds for the descent's
            // labelling and for any other that keeps the forced segments on the stack.
            let bound = lower_bound(&free, &stack, &boundary, &adj, &mut work);
            assert!(bound <= cost, "bound {bound} above the descent's {cost}");
            let other: Vec<bool> = (0..n).map(|k| free[k] && next(2) == 0).collect();
            let other_cost = total(&other, &stack, &boundary, &links);
            assert!(
                f64::from(bound) <= other_cost,
                "bound {bound} above a labelling costing {other_cost}"
            );
            if f64::from(bound) >= 0.999 * truth && truth > 0.0 {
                tight += 1;
            }
            assert!(
                (0..n).all(|k| free[k] || !label[k]),
                "a forced segment took the register"
            );
            let improvable = (0..n).filter(|&k| free[k]).any(|k| {
                let mut flipped = label.clone();
                flipped[k] = !flipped[k];
                total(&flipped, &stack, &boundary, &links) < truth - 1e-9
            });
            if !improvable {
                minima += 1;
            }
        }
        // The pass bound cuts only the rare long chain of flips short.
        assert!(
            minima >= 490,
            "only {minima} of 500 descents ended at a local minimum"
        );
        // A bound that is never reached would skip nothing.
        assert!(
            tight >= 10,
            "the bound met the descent's cost {tight} times in 500"
        );
    }

    /// A copy of an adjacency with some links zeroed descends to the same labelling and
    /// cost, and bounds them the same, as an adjacency built from the other links alone
    /// (what a partial candidate's region split relies on).
    #[test]
    fn zeroed_links_are_dropped_links() {
        let mut next = crate::tests::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let (mut full, mut zeroed, mut kept) = (
            Adjacency::default(),
            Adjacency::default(),
            Adjacency::default(),
        );
        let (mut work_a, mut work_b) = (Descent::default(), Descent::default());
        let mut dropped_some = 0;
        for _ in 0..300 {
            let (n, stack, boundary, links) = random_graph(&mut next, 80, 3);
            let drop: Vec<bool> = links.iter().map(|_| next(3) == 0).collect();
            full.fill(n, &links);
            zeroed.copy_from(&full);
            for (i, _) in drop.iter().enumerate().filter(|(_, d)| **d) {
                zeroed.zero(i);
            }
            let kept_links: Vec<_> = links
                .iter()
                .zip(&drop)
                .filter(|(_, d)| !**d)
                .map(|(l, _)| *l)
                .collect();
            dropped_some += usize::from(kept_links.len() < links.len());
            kept.fill(n, &kept_links);
            let free: Vec<bool> = (0..n).map(|_| next(4) != 0).collect();
            let words = bit_words(&free);
            for work in [&mut work_a, &mut work_b] {
                work.charged.clear();
                work.charged
                    .extend((0..n as u32).filter(|&k| boundary[k as usize] > 0.0));
            }
            let (mut label_a, mut label_b) = (free.clone(), free.clone());
            let cost_a = descend(
                &mut label_a,
                &free,
                &words,
                &stack,
                &boundary,
                &zeroed,
                &mut work_a,
            );
            let cost_b = descend(
                &mut label_b,
                &free,
                &words,
                &stack,
                &boundary,
                &kept,
                &mut work_b,
            );
            assert_eq!(label_a, label_b);
            assert_eq!(cost_a, cost_b);
            assert_eq!(
                lower_bound(&free, &stack, &boundary, &zeroed, &mut work_a),
                lower_bound(&free, &stack, &boundary, &kept, &mut work_b)
            );
        }
        assert!(
            dropped_some >= 200,
            "only {dropped_some} graphs lost a link"
        );
    }
}
