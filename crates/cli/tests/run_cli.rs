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

/// `compare --run --layout-shifts` times every allocator at one placement per round (on an
/// x86-64 host; elsewhere it refuses with exit code 2), each shifted compilation checked.
#[test]
fn compare_run_with_layout_shifts_times_every_placement() {
    let dir = scratch("cli-shifts");
    std::fs::write(dir.join("libm_calls.clif"), LIBM).unwrap();
    let args = [
        "compare",
        "--run",
        "--layout-shifts",
        "--programs",
        "libm_calls.clif",
        "--allocators",
        "greedy,ion",
        "--reps",
        "6",
        "--json",
    ];
    let out = ragreedy(&args, &dir);
    if !cfg!(target_arch = "x86_64") {
        assert_eq!(out.status.code(), Some(2));
        return;
    }
    let json: serde_json::Value = serde_json::from_str(&success_stdout(&out)).unwrap();
    let programs = json.as_array().unwrap();
    assert_eq!(programs.len(), 1, "{json}");
    assert_eq!(programs[0]["placements"], 6, "{json}");
    let results = programs[0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{json}");
    for r in results {
        assert!(r["error"].is_null(), "{r}");
        assert!(r["ns_per_call"].as_f64().is_some_and(|ns| ns > 0.0), "{r}");
    }
}
