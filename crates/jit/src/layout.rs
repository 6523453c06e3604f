//! Code placement for benchmarks: x86-64 does not align Cranelift's loop heads, so a hot
//! loop that straddles one more cache line or fetch window under one allocator than under
//! another can run 20-50% slower with the same instructions. A timed comparison therefore
//! compiles each round's code shifted by the same number of bytes under every allocator
//! (self-moves at each function's entry, the switch's `set_entry_padding`) and takes its
//! medians over placements rather than at the one placement each allocator happens to
//! produce (the idea behind Stabilizer's layout randomisation, Curtsinger and Berger, 2013).
//! `ragreedy wasm bench --layout-shifts` and `ragreedy compare --run --layout-shifts` both
//! shift this way.

use regalloc2::{PReg, RegClass};

/// The code shift of round `i`, in bytes: 41 is odd, so 64 consecutive rounds take every
/// shift in 0..64 once, and any run of them spreads over the range (0, 41, 18, 59, ...).
pub fn layout_shift(round: usize) -> u32 {
    (round as u32).wrapping_mul(41) % 64
}

/// Self-moves whose x86-64 encodings add up to `bytes`, or to `bytes + 64` where `bytes` is
/// 1, 2 or 5 (the shifts no sum of 3s and 4s makes; a cache line more is the same placement):
/// `mov %rax,%rax` (`48 89 c0`, 3 bytes) and `movdqa %xmm0,%xmm0` (`66 0f 6f c0`, 4 bytes;
/// Cranelift moves a float register as a whole vector), as few as possible. Neither register
/// is callee-saved in any x86-64 convention Cranelift uses (System V, Wasmtime's tail calls),
/// so no save is added to the prologue.
pub fn entry_padding(bytes: u32) -> Vec<PReg> {
    let bytes = if matches!(bytes, 1 | 2 | 5) {
        bytes + 64
    } else {
        bytes
    };
    let fours = (0..=bytes / 4)
        .rev()
        .find(|&f| (bytes - 4 * f) % 3 == 0)
        .expect("every shift but 1, 2 and 5 is a sum of 3s and 4s");
    let threes = (bytes - 4 * fours) / 3;
    let mut v = vec![PReg::new(0, RegClass::Float); fours as usize];
    v.extend(std::iter::repeat_n(
        PReg::new(0, RegClass::Int),
        threes as usize,
    ));
    v
}

/// Runs `body` (a compilation) with every allocation's code shifted by `bytes` (none for
/// 0), and turns the shift off afterwards, also when `body` panics. The shift is
/// process-wide: compilations on other threads meanwhile are shifted too.
pub fn with_layout_shift<R>(bytes: u32, body: impl FnOnce() -> R) -> R {
    struct Off;
    impl Drop for Off {
        fn drop(&mut self) {
            regalloc2::set_entry_padding(&[]);
        }
    }
    let _off = Off;
    if bytes != 0 {
        regalloc2::set_entry_padding(&entry_padding(bytes));
    }
    body()
}

/// Whether this host runs the x86-64 code the padding is written in.
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_cover_every_placement_with_few_moves() {
        for b in 0..64 {
            let pad = entry_padding(b);
            let size: u32 = pad
                .iter()
                .map(|r| match r.class() {
                    RegClass::Int => 3,
                    _ => 4,
                })
                .sum();
            let want = if matches!(b, 1 | 2 | 5) { b + 64 } else { b };
            assert_eq!(size, want, "padding for a {b}-byte shift");
            assert!(pad.len() <= 18, "{} moves for {b} bytes", pad.len());
        }
        let shifts: std::collections::BTreeSet<u32> = (0..64).map(layout_shift).collect();
        assert_eq!(shifts.len(), 64);
        assert!((0..64).all(|s| shifts.contains(&s)));
    }
}
