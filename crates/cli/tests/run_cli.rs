//! `ragreedy run` and `ragreedy compare --run` as a user runs them, on one CLIF program: both
//! compile it through the jit crate's `Program`, so what passes one passes the other. (The
//! `ragreedy` binary links libm, so the JIT's own libm lookup is tested in a process without
//! it: `crates/jit/tests/program.rs`.)

mod common;

use common::{ragreedy, scratch, success_stdout};

/// A bench-style program whose `ceil` and `floor` are libm calls (shared with the jit crate's
/// tests).
const LIBM: &str = include_str!("../../jit/tests/filetests/libm_calls.clif");

#[test]
fn a_program_calling_libm_passes_run_and_compare_run() {
    let dir = scratch("cli-libm");
    std::fs::write(dir.join("libm_calls.clif"), LIBM).unwrap();

    let out = ragreedy(&["run", "libm_calls.clif", "--allocator", "greedy"], &dir);
    let stdout = success_stdout(&out);
    assert!(
        stdout.contains("1 files, 3 run lines passed, 0 failed, 0 skipped"),
        "{stdout}"
    );

    let out = ragreedy(
        &[
            "compare",
            "--run",
            "--programs",
            "libm_calls.clif",
            "--allocators",
            "greedy,ion",
        ],
        &dir,
    );
    let stdout = success_stdout(&out);
    for allocator in ["greedy", "ion"] {
        let summary = format!("summary {allocator} corpus=bench-run programs=1 ");
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&summary))
            .unwrap_or_else(|| panic!("no `{summary}` line: {stdout}"));
        assert!(line.ends_with(" failures=0"), "{line}");
    }
}
