//! Every bench program's `; run:` expectations hold through the Cranelift JIT, with the
//! regalloc checker on, under each allocator: greedy and the classic allocators (basic,
//! linear scan, IRC) are under test; ion and fastalloc validate the programs and the
//! harness themselves.

mod common;

use ragreedy_jit::Allocator;

#[test]
fn bench_programs_pass_with_ion() {
    common::assert_all_pass(Allocator::Ion);
}

#[test]
fn bench_programs_pass_with_fastalloc() {
    common::assert_all_pass(Allocator::Fastalloc);
}

#[test]
fn bench_programs_pass_with_greedy() {
    common::assert_all_pass(Allocator::Greedy);
}

#[test]
fn bench_programs_pass_with_basic() {
    common::assert_all_pass(Allocator::Basic);
}

#[test]
fn bench_programs_pass_with_linear_scan() {
    common::assert_all_pass(Allocator::LinearScan);
}

#[test]
fn bench_programs_pass_with_irc() {
    common::assert_all_pass(Allocator::Irc);
}
