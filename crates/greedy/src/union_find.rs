//! Union-find over a flat parent vector (`parent[i] == i` at a root), for the passes that
//! group values by merging: spill-slot sharing and copy spilling's chains.

/// The root of `i`'s set, halving the path on the way.
pub(crate) fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}
