//! `REGALLOC` selects the allocator when no API call did. This is its own test binary (its own
//! process), because the switch reads the variable once per process.

use ragreedy_jit::run_source;

#[test]
fn regalloc_env_var_selects_the_allocator() {
    // SAFETY: the only test in this process, run before anything reads the environment.
    unsafe { std::env::set_var("REGALLOC", "fastalloc") };
    ragreedy_jit::install();
    let r = run_source(
        "env",
        "test run\ntarget x86_64\nfunction %f(i64) -> i64 {\nblock0(v0: i64):\n    v1 = iadd v0, v0\n    return v1\n}\n; run: %f(21) == 42\n",
    );
    assert_eq!((r.passed, r.failed), (1, 0), "{:?}", r.failures);
    assert_eq!(regalloc2::thread_last_allocator(), Some("fastalloc"));
    for name in ["greedy", "basic", "linear-scan", "irc"] {
        assert!(
            matches!(regalloc2::Selection::parse(name), Ok(regalloc2::Selection::Named(n)) if n == name),
            "{name}"
        );
    }
    assert!(regalloc2::Selection::parse("nonsense").is_err());
}
