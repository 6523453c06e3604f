//! Galloping search: the first item of a sorted slice, at or after a cursor, where a
//! predicate holding on a prefix stops holding. Walks that move a cursor forward over
//! long lists (segments between uses, reservations, runs of spilled segments) pass over
//! n items in O(log n) probes instead of n.

/// The first index at or after `from` where `before` fails, given that `before` holds on
/// a prefix of `items`: `from` itself when it fails there, else found by doubling steps
/// and a binary search over the last one.
#[inline]
pub(crate) fn gallop<T>(items: &[T], from: usize, before: impl Fn(&T) -> bool) -> usize {
    // Every item before `low` is before; the one at `high`, if any, is not.
    let (mut low, mut high, mut step) = (from, from, 1);
    while high < items.len() && before(&items[high]) {
        low = high + 1;
        high = low + step;
        step *= 2;
    }
    let high = high.min(items.len());
    low + items[low..high].partition_point(before)
}
