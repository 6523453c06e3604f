//! What a failing fuzz check writes when `RAGREEDY_FUZZ_SHRINK_DIR` is set: the function,
//! shrunk while it still fails, as a text case that parses back. The failure comes from
//! `Options::debug_break_rule` (a deliberately broken allocation rule, test-only).

use ragreedy_fuzz_checks::{ours_fails, write_shrunk};
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::check::check_output;
use ragreedy_testkit::{fuzzgen, text};
use regalloc_greedy::Options;
use regalloc2::MachineEnv;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn fails_with_broken_rule(f: &TestFunc, env: &MachineEnv) -> bool {
    let mut options = Options::default();
    options.debug_break_rule = true;
    let out = catch_unwind(AssertUnwindSafe(|| regalloc_greedy::run(f, env, &options)));
    matches!(out, Ok(Ok(out)) if check_output(f, env, &out).is_err())
}

#[test]
fn a_failing_function_is_written_shrunk_in_the_text_format() {
    let env = fuzzgen::stress_env(Some(2));
    let f = (0..3000)
        .filter_map(|s| fuzzgen::func_from_seed(s, &fuzzgen::stress_options(s, Some(2))))
        .map(|f| TestFunc::from_function(&f))
        .filter(|f| f.insts.len() >= 100)
        .find(|f| !ours_fails(f, &env) && fails_with_broken_rule(f, &env))
        .expect("a 100-instruction function the broken rule makes fail");
    let dir = std::env::temp_dir().join(format!("ragreedy-shrink-dir-{}", std::process::id()));
    let (path, n) = write_shrunk(&dir, "small_env: checker", &f, &env, fails_with_broken_rule)
        .expect("the case is written");
    let written = std::fs::read_to_string(&path).expect("the file is there");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        path.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("small-env--checker-"),
        "{}",
        path.display()
    );
    assert!(written.contains("; expect: ok"));
    let (g, genv) = text::parse(&written).expect("the case parses");
    assert_eq!(g.insts.len(), n);
    assert!(n <= 10, "{} -> {n} instructions\n{written}", f.insts.len());
    // Still failing the same way, and only because of the broken rule.
    assert!(fails_with_broken_rule(&g, &genv));
    assert!(!ours_fails(&g, &genv));
}

#[test]
fn a_checker_failure_ion_shares_is_not_ours() {
    let (f, env) = text::parse(include_str!(
        "../../testkit/fixtures/checker-rejects-every-allocation.txt"
    ))
    .expect("the fixture parses");
    let out = regalloc_greedy::run(&f, &env, &Options::default()).expect("allocates");
    assert!(check_output(&f, &env, &out).is_err());
    assert!(!ours_fails(&f, &env));
}
