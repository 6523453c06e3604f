//! Every bench program's `; run:` expectations hold through the Cranelift JIT, with the
//! regalloc checker on, under each allocator: greedy is the allocator under test; ion and
//! fastalloc validate the programs and the harness themselves.

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
