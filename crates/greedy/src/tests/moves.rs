//! The parallel-move resolver against a model machine.

use crate::fuzzing::check_parallel_moves;

#[test]
fn swap_without_free_register_goes_through_a_slot() {
    // p0 <-> p1, no free register: flags 0.
    check_parallel_moves(&[0, 0, 1, 1, 0]);
}

#[test]
fn stack_rotation_with_and_without_scratch() {
    // slot0 -> slot1 -> slot2 -> slot0 (locations 6, 7, 8).
    check_parallel_moves(&[0, 6, 7, 7, 8, 8, 6]);
    check_parallel_moves(&[0xff, 6, 7, 7, 8, 8, 6]);
}

#[test]
fn random_parallel_moves() {
    let mut x: u64 = 0x1234_5678;
    for _ in 0..20_000 {
        let mut data = Vec::new();
        let n = 1 + (x % 24) as usize;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            data.push(x as u8);
        }
        check_parallel_moves(&data);
    }
}
