//! Criterion benchmarks of allocation time: greedy and ion side by side on the same
//! representative functions from testkit's generators (regalloc2 fuzzer `Func`s in the full
//! and in an 8-register environment, Cranelift-shaped functions of ~300 and ~5000
//! instructions in the x64 environment). Each allocator reuses its context across
//! iterations, as Cranelift does (`run_with_ctx` for ion, `run_with_context` for greedy).
//!
//! Run: `cargo bench --bench alloc` (add `-- --quick` for a short run). `ragreedy compare`
//! is the tool for corpus-wide figures; these are for tracking individual hot spots.

use arbitrary::Unstructured;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::{cranelift_like, fuzzgen};
use regalloc2::{Function, MachineEnv, RegallocOptions};
use std::hint::black_box;

/// (name, function, environment) of every benchmark. Seeds are fixed; the functions are
/// checked to be allocatable by both allocators before being timed.
fn cases() -> Vec<(String, TestFunc, MachineEnv)> {
    let mut v = Vec::new();
    // The largest of the first valid fuzz functions, so the benchmark measures real work.
    let biggest = |opts: &regalloc2::fuzzing::func::Options| {
        (0..40u64)
            .filter_map(|s| fuzzgen::func_from_seed(s, opts).map(|f| (s, f)))
            .max_by_key(|(_, f)| f.num_insts())
            .expect("some seed yields a function")
    };
    let (s, f) = biggest(&fuzzgen::fuzz_options());
    v.push((
        format!("fuzz-full-s{s}"),
        TestFunc::from_function(&f),
        fuzzgen::machine_env(),
    ));
    let (s, f) = biggest(&fuzzgen::small_env_options(8));
    v.push((
        format!("fuzz-k8-s{s}"),
        TestFunc::from_function(&f),
        fuzzgen::restrict_env(&fuzzgen::machine_env(), 8),
    ));
    v.push((
        "cranelift-like-s1".into(),
        cranelift_like::from_seed(1),
        cranelift_like::x64_env(),
    ));
    let bytes = fuzzgen::seed_bytes(7, 1 << 16);
    let big = cranelift_like::generate(
        &mut Unstructured::new(&bytes),
        &cranelift_like::Config {
            max_insts: 5000,
            ..Default::default()
        },
    );
    v.push(("cranelift-like-5k".into(), big, cranelift_like::x64_env()));
    v
}

fn bench(c: &mut Criterion) {
    let mut greedy_ctx = regalloc_greedy::Context::new();
    let greedy_opts = regalloc_greedy::Options::default();
    let mut ion_ctx = regalloc2::Ctx::default();
    let ion_opts = RegallocOptions::default();
    for (name, f, env) in cases() {
        let ours = regalloc_greedy::run(&f, &env, &greedy_opts);
        let ion = regalloc2::run(&f, &env, &ion_opts);
        if ours.is_err() || ion.is_err() {
            eprintln!(
                "skipping {name}: greedy {:?}, ion {:?}",
                ours.err(),
                ion.err()
            );
            continue;
        }
        let mut g = c.benchmark_group(format!("{name} ({} insts)", f.num_insts()));
        g.bench_with_input(BenchmarkId::new("greedy", &name), &f, |b, f| {
            b.iter(|| {
                regalloc_greedy::run_with_context(black_box(f), &env, &greedy_opts, &mut greedy_ctx)
            })
        });
        g.bench_with_input(BenchmarkId::new("ion", &name), &f, |b, f| {
            b.iter(|| {
                regalloc2::run_with_ctx(black_box(f), &env, &ion_opts, &mut ion_ctx)
                    .map(|o| o.edits.len())
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
