//! `Lists`: one vector per index (per block, per vreg), kept across functions. A plain
//! `Vec<Vec<T>>` resized per function either walks every list of the largest function
//! seen so far to clear it, or truncates and frees them, so that the next large function
//! allocates them again; this table clears only the lists the previous function used
//! and never drops one.

use std::ops::{Index, IndexMut};

pub(crate) struct Lists<T> {
    lists: Vec<Vec<T>>,
    /// Invariant: every list at or past `live` is empty.
    live: usize,
}

impl<T> Default for Lists<T> {
    fn default() -> Self {
        Lists {
            lists: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Lists<T> {
    /// `n` empty lists, indexed `0..n`.
    pub fn reset(&mut self, n: usize) {
        for l in &mut self.lists[..self.live] {
            l.clear();
        }
        if self.lists.len() < n {
            self.lists.resize_with(n, Vec::new);
        }
        self.live = n;
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Vec<T>> {
        self.lists[..self.live].iter()
    }
}

impl<T> Index<usize> for Lists<T> {
    type Output = Vec<T>;
    fn index(&self, i: usize) -> &Vec<T> {
        debug_assert!(i < self.live, "list {i} of {}", self.live);
        &self.lists[i]
    }
}

impl<T> IndexMut<usize> for Lists<T> {
    fn index_mut(&mut self, i: usize) -> &mut Vec<T> {
        debug_assert!(i < self.live, "list {i} of {}", self.live);
        &mut self.lists[i]
    }
}
