//! `dump` captures one regalloc2 input per CLIF function, and the testkit corpus format
//! round-trips it.

mod common;

use ragreedy_testkit::corpus;

#[test]
fn dump_captures_every_function_and_round_trips() {
    let text = std::fs::read_to_string(common::bench_dir().join("bignum_fib.clif")).unwrap();
    let (captured, errors) = ragreedy_jit::dump::dump_source(&text).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let names: Vec<&str> = captured.iter().map(|c| c.func_name.as_str()).collect();
    assert_eq!(names, ["add_with_carry", "bignum_fib"]);

    let dir = std::env::temp_dir().join(format!("ragreedy-dump-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for c in &captured {
        corpus::save_function(
            &dir.join(format!("bignum_fib.{}.json", c.func_name)),
            &c.function,
        )
        .unwrap();
    }
    let loaded = corpus::load_dir(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded[1].0, "bignum_fib.bignum_fib");
    use regalloc2::Function;
    let (orig, back) = (&captured[1].function, &loaded[1].1);
    assert_eq!(orig.num_insts(), back.num_insts());
    assert_eq!(orig.num_vregs(), back.num_vregs());
    assert!(orig.num_insts() > 20);
    // The loaded input is allocatable as is: ion accepts it.
    regalloc2::original_run(back, back.machine_env(), &Default::default()).unwrap();
}
