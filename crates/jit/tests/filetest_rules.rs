//! Cranelift's filetest rules as `ragreedy run` applies them: one CLIF file per rule under
//! `tests/filetests/`, run under greedy and under ion with exact passed/failed/skipped counts,
//! plus variants of each file whose counts differ exactly where the rule decides.

use cranelift_codegen::settings::OptLevel;
use cranelift_reader::{ParseOptions, parse_test};
use ragreedy_jit::host::{self, Target};
use ragreedy_jit::{Allocator, FileReport, run_file, run_source};
use std::path::PathBuf;

const ALLOCATORS: [Allocator; 2] = [Allocator::Greedy, Allocator::Ion];

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/filetests")
        .join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(path(name)).expect("rule file")
}

/// `text` with `from` replaced, which must occur exactly once.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once");
    text.replacen(from, to, 1)
}

#[track_caller]
fn assert_counts(alloc: Allocator, r: &FileReport, passed: usize, failed: usize, skipped: usize) {
    assert_eq!(
        (r.passed, r.failed, r.skipped),
        (passed, failed, skipped),
        "{alloc} {}: (passed, failed, skipped)\nfailures: {:#?}\nskips: {:#?}",
        r.path,
        r.failures,
        r.skips
    );
}

/// Allocations routed through the switch on this thread while `body` ran.
fn allocations<R>(alloc: Allocator, body: impl FnOnce() -> R) -> (R, usize) {
    alloc.with(|| {
        let before = regalloc2::thread_calls();
        let r = body();
        (r, regalloc2::thread_calls() - before)
    })
}

/// Rule 1: a file whose only test is `test interpret` runs on cranelift-interpreter and is not
/// compiled (compiling it would fail every line: i128 parameters without the LLVM ABI flag).
#[test]
fn interpret_only_file_is_interpreted_not_compiled() {
    let src = text("interpret_only.clif");
    for alloc in ALLOCATORS {
        let (r, calls) = allocations(alloc, || run_file(&path("interpret_only.clif")));
        assert_counts(alloc, &r, 6, 0, 0);
        assert_eq!(calls, 0, "{alloc}: an interpret-only file was compiled");

        // The interpreter's result is checked against the written expectation.
        let wrong = edit(&src, "%add128(-1, 1) == 0", "%add128(-1, 1) == 1");
        let r = alloc.with(|| run_source("wrong", &wrong));
        assert_counts(alloc, &r, 5, 1, 0);

        // A target line does not make `test interpret` compile the file either.
        let targeted = edit(&src, "test interpret\n", "test interpret\ntarget x86_64\n");
        let (r, calls) = allocations(alloc, || run_source("targeted", &targeted));
        assert_counts(alloc, &r, 6, 0, 0);
        assert_eq!(
            calls, 0,
            "{alloc}: `test interpret` with a target was compiled"
        );

        // With `test run` as well, the file is compiled for the target, and fails there.
        let compiled = edit(
            &src,
            "test interpret\n",
            "test interpret\ntest run\ntarget x86_64\n",
        );
        let r = alloc.with(|| run_source("compiled", &compiled));
        assert_counts(alloc, &r, 0, 6, 0);
        assert!(r.failures[0].contains("i128"), "{:?}", r.failures);
    }
}

/// Rule 2: a bare `; run` calls the function it follows with no arguments and expects a
/// non-zero integer of the function's return type.
#[test]
fn bare_run_calls_the_function_it_follows_and_expects_true() {
    for alloc in ALLOCATORS {
        let r = alloc.with(|| run_file(&path("bare_run.clif")));
        assert_counts(alloc, &r, 4, 0, 0);

        let src = text("bare_run.clif");
        let false_i8 = edit(&src, "v2 = icmp ult v0, v1", "v2 = icmp ugt v0, v1");
        let r = alloc.with(|| run_source("false_i8", &false_i8));
        assert_counts(alloc, &r, 3, 1, 0);
        assert!(r.failures[0].contains("%true_i8"), "{:?}", r.failures);

        // Zero in a result wider than i8 is false too.
        let false_i32 = edit(&src, "v0 = iconst.i32 0x100", "v0 = iconst.i32 0");
        let r = alloc.with(|| run_source("false_i32", &false_i32));
        assert_counts(alloc, &r, 3, 1, 0);
        assert!(r.failures[0].contains("%true_i32"), "{:?}", r.failures);

        // A bare run of a function that takes arguments is a bad run line.
        let with_args = "test run\ntarget x86_64\nfunction %f(i8) -> i8 {\nblock0(v0: i8):\n    return v0\n}\n; run\n";
        let r = alloc.with(|| run_source("with_args", with_args));
        assert_counts(alloc, &r, 0, 1, 0);
    }
}

/// Rule 3: a run line belongs to the function it follows, even when another function of the
/// file has the same name; under `test run` and under `test interpret` alike.
#[test]
fn run_lines_belong_to_the_function_they_follow() {
    let src = text("same_name.clif");
    let interpreted = edit(&src, "test run\ntarget x86_64\n", "test interpret\n");
    for alloc in ALLOCATORS {
        let r = alloc.with(|| run_file(&path("same_name.clif")));
        assert_counts(alloc, &r, 4, 0, 0);
        let r = alloc.with(|| run_source("interpreted", &interpreted));
        assert_counts(alloc, &r, 4, 0, 0);

        // Each expectation moved under the other %f: both lines fail, by either executor.
        for (label, base) in [("compiled", &src), ("interpreted", &interpreted)] {
            let swapped = edit(base, "%f(10) == 11", "%f(10) == @");
            let swapped = edit(&swapped, "%f(10) == 30", "%f(10) == 11");
            let swapped = edit(&swapped, "%f(10) == @", "%f(10) == 30");
            let r = alloc.with(|| run_source(label, &swapped));
            assert_counts(alloc, &r, 2, 2, 0);
        }
    }
}

/// Rule 4: every `set` line and every ISA flag of a `target` line applies to that target's
/// compile; a target whose flags the host lacks is skipped with the reason.
#[test]
fn set_lines_and_isa_flags_reach_each_target() {
    let vnni = std::is_x86_feature_detected!("avxvnni");
    for alloc in ALLOCATORS {
        let r = alloc.with(|| run_file(&path("settings.clif")));
        // Three lines on each of three x86_64 targets; aarch64 is not this host's.
        if vnni {
            assert_counts(alloc, &r, 9, 0, 0);
        } else {
            assert_counts(alloc, &r, 6, 0, 3);
            assert!(r.skips[0].contains("has_avx_vnni"), "{:?}", r.skips);
        }

        // A `set` line applies to the targets after it only: the first target compiles
        // without the LLVM ABI flag, and its i128 lines fail.
        let src = text("settings.clif");
        let late = edit(
            &src,
            "set enable_llvm_abi_extensions\ntarget x86_64\n",
            "target x86_64\nset enable_llvm_abi_extensions\n",
        );
        let r = alloc.with(|| run_source("late", &late));
        let (passed, skipped) = if vnni { (6, 0) } else { (3, 3) };
        assert_counts(alloc, &r, passed, 3, skipped);
        assert!(r.failures[0].contains("[x86_64]"), "{:?}", r.failures);
    }

    // The ISAs built for the host carry exactly what each target line asked for.
    let (rewritten, header) = host::rewrite_header(&text("settings.clif"));
    let test = parse_test(&rewritten, ParseOptions::default()).expect("parses");
    let targets = host::host_targets(&test.isa_spec, &header, false);
    assert_eq!(targets.len(), 3, "the three x86_64 targets");
    let flag = |isa: &dyn cranelift_codegen::isa::TargetIsa, name: &str| {
        isa.isa_flags()
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.as_bool())
    };
    for (i, target) in targets.iter().enumerate() {
        match target {
            Target::Run { label, isa } => {
                assert!(isa.flags().enable_llvm_abi_extensions(), "{label}");
                assert!(isa.flags().regalloc_checker(), "{label}");
                assert_eq!(isa.flags().opt_level(), OptLevel::Speed, "{label}");
                // Nothing is inferred from the host CPU: only target 1 asked for AVX.
                assert_eq!(flag(&**isa, "has_avx"), Some(i == 1), "{label}");
                assert_eq!(flag(&**isa, "has_sse41"), Some(i == 1), "{label}");
                assert_eq!(flag(&**isa, "has_avx_vnni"), Some(i == 2), "{label}");
            }
            Target::Skip { label, reason } => {
                assert!(i == 2 && !vnni, "{label} skipped: {reason}");
                assert!(reason.contains("has_avx_vnni"), "{reason}");
            }
        }
    }
}
