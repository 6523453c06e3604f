//! `Lists`: one vector per index (per block, per vreg), kept across functions. A plain
//! `Vec<Vec<T>>` resized per function either walks every list of the largest function
//! seen so far to clear it, or truncates and frees them, so that the next large function
//! allocates them again; this table clears only the lists the previous function used
//! and never drops one. `reset_span` does the same for a plain per-vreg table.

use std::ops::{Index, IndexMut, Range};

pub(crate) struct Lists<T> {
    lists: Vec<Vec<T>>,
    /// The indices in use. Invariant: every list outside it is empty.
    live: Range<usize>,
}

impl<T> Default for Lists<T> {
    fn default() -> Self {
        Lists {
            lists: Vec::new(),
            live: 0..0,
        }
    }
}

impl<T> Lists<T> {
    /// Empty lists indexed by `span` (a function's `Liveness::vreg_span` for per-vreg
    /// lists): no index outside it may be used until the next reset.
    pub fn reset_span(&mut self, span: Range<usize>) {
        for l in &mut self.lists[self.live.clone()] {
            l.clear();
        }
        if self.lists.len() < span.end {
            self.lists.resize_with(span.end, Vec::new);
        }
        self.live = span;
    }

    /// The lists in use, with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Vec<T>)> {
        self.live.clone().zip(&self.lists[self.live.clone()])
    }
}

impl<T> Index<usize> for Lists<T> {
    type Output = Vec<T>;
    fn index(&self, i: usize) -> &Vec<T> {
        debug_assert!(self.live.contains(&i), "list {i} of {:?}", self.live);
        &self.lists[i]
    }
}

impl<T> IndexMut<usize> for Lists<T> {
    fn index_mut(&mut self, i: usize) -> &mut Vec<T> {
        debug_assert!(self.live.contains(&i), "list {i} of {:?}", self.live);
        &mut self.lists[i]
    }
}

/// Makes `table` (a per-vreg table kept across functions) at least `nv` long with the
/// entries of `span` at `value`. Entries outside `span` keep what earlier functions
/// left: callers read only the vregs `Liveness::vreg_span` holds.
pub(crate) fn reset_span<T: Clone>(table: &mut Vec<T>, nv: usize, span: Range<usize>, value: T) {
    if table.len() < nv {
        table.resize(nv, value.clone());
    }
    table[span].fill(value);
}
