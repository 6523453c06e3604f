//! Regression cases as text files (`tests/cases/*.txt`, the format of docs/text-format.md):
//! each is allocated with default `Options`, every allocation goes through the checker,
//! and the file's `; expect:` lines are checked:
//!
//! - `ok`: allocated, and the checker accepts it;
//! - `cost <= N`: allocated, checked, weighted cost (docs/metrics.md) at most N;
//! - `error NAME`: our allocator returns the `RegAllocError` whose variant is `NAME`;
//! - `STAT >= N`: allocated, checked, and `Stats::STAT` (one of [`STATS`]) at least N;
//! - `broken_fallthroughs <= N`: allocated, checked, and `cost::broken_fallthroughs` (the
//!   frequency of the branches an edited edge block turns into taken ones) at most N.
//!
//! A `; with: OPTION` line turns on an `Options` flag that is off by default (one of
//! [`OPTIONS`]) for that case; a `; without: OPTION` line turns off one that is on (one of
//! [`OFF_OPTIONS`]), for a case written for a mechanism that a later one made unneeded.
//!
//! The folder lives here, not in the testkit, because running a case needs this crate,
//! which the testkit must not depend on. `regenerate_seed_cases` (ignored) rewrites the
//! `seed-*` cases from the stress generator by shrinking.

use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::check::{Strictness, check_output, check_output_with};
use ragreedy_testkit::shrink::shrink;
use ragreedy_testkit::text::{expectations, parse, print};
use ragreedy_testkit::{cost, fuzzgen};
use regalloc_greedy::{Context, Options, Stats};
use regalloc2::{MachineEnv, RegallocOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

type StatReader = fn(&Stats) -> usize;

/// The statistics a case may name in a `STAT >= N` expectation.
const STATS: &[(&str, StatReader)] = &[
    ("fixed_register_fallbacks", |s| s.fixed_register_fallbacks),
    ("outside_hints", |s| s.outside_hints),
    // Either way into a register outside the allocation order that a fixed operand names.
    ("outside_registers", |s| {
        s.fixed_register_fallbacks + s.outside_hints
    }),
    ("spills", |s| s.spills),
    ("evictions", |s| s.evictions),
    ("local_splits", |s| s.local_splits),
    ("region_splits", |s| s.region_splits),
    ("last_chance_recolorings", |s| s.last_chance_recolorings),
    ("reloads_from_copies", |s| s.reloads_from_copies),
    ("copy_spills", |s| s.copy_spills),
    ("chain_copy_spills", |s| s.chain_copy_spills),
    ("group_unions", |s| s.group_unions),
    ("group_free_choices", |s| s.group_free_choices),
    ("aside_exchanges", |s| s.aside_exchanges),
    ("join_stores", |s| s.join_stores),
    ("hoisted_moves", |s| s.hoisted_moves),
    ("sunk_moves", |s| s.sunk_moves),
    ("partially_dead_moves", |s| s.partially_dead_moves),
    ("head_splits", |s| s.head_splits),
    ("stack_use_pieces", |s| s.stack_use_pieces),
    ("region_islands", |s| s.region_islands),
    ("fallthrough_copies", |s| s.fallthrough_copies),
    ("fixed_slots_declined", |s| s.fixed_slots_declined),
    ("weightless_spills", |s| s.weightless_spills),
    ("forwarded_stores", |s| s.forwarded_stores),
    ("early_fixed_slot_writes", |s| s.early_fixed_slot_writes),
    ("fixed_slot_writes_at_def", |s| s.fixed_slot_writes_at_def),
    ("fixed_slot_homes", |s| s.fixed_slot_homes),
];

type OptionSetter = fn(&mut Options);

/// The off-by-default options a case may turn on with `; with: OPTION`.
const OPTIONS: &[(&str, OptionSetter)] = &[];

/// The on-by-default options a case may turn off with `; without: OPTION`.
const OFF_OPTIONS: &[(&str, OptionSetter)] = &[
    ("group_placement", |o| o.group_placement = false),
    ("hint_recoloring", |o| o.hint_recoloring = false),
    ("exchange_aside", |o| o.exchange_aside = false),
    ("join_stores", |o| o.join_stores = false),
    ("copy_spill_chains", |o| o.copy_spill_chains = false),
    ("unspill_copy_freed", |o| o.unspill_copy_freed = false),
    ("head_splits", |o| o.head_splits = false),
    ("stack_use_pieces", |o| o.stack_use_pieces = false),
    ("sibling_reuse_copies", |o| o.sibling_reuse_copies = false),
    ("fallthrough_copies", |o| o.fallthrough_copies = false),
    ("region_islands", |o| o.region_islands = false),
    ("queue_split_parts", |o| o.queue_split_parts = false),
];

/// The default options with the case's `; with:` and `; without:` lines applied.
fn case_options(text: &str) -> Result<Options, String> {
    let mut options = Options::default();
    for line in text.lines() {
        let (name, table) = if let Some(name) = line.strip_prefix("; with:") {
            (name, OPTIONS)
        } else if let Some(name) = line.strip_prefix("; without:") {
            (name, OFF_OPTIONS)
        } else {
            continue;
        };
        let name = name.trim();
        let Some((_, set)) = table.iter().find(|(n, _)| *n == name) else {
            return Err(format!("unknown option `{name}`"));
        };
        set(&mut options);
    }
    Ok(options)
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

/// Checks one expectation against the allocation; `Ok(())` if it holds.
fn check_expectation(
    exp: &str,
    result: &Result<regalloc2::Output, regalloc2::RegAllocError>,
    f: &TestFunc,
    env: &MachineEnv,
    stats: &Stats,
) -> Result<(), String> {
    let words: Vec<&str> = exp.split_whitespace().collect();
    let number = |w: &str| {
        w.parse::<u64>()
            .map_err(|_| format!("`{exp}`: `{w}` is not a number"))
    };
    let allocated = || match result {
        Ok(out) => Ok(out),
        Err(e) => Err(format!("`{exp}`: allocation failed with {e:?}")),
    };
    match words[..] {
        ["ok"] => allocated().map(|_| ()),
        ["cost", "<=", n] => {
            let bound = number(n)?;
            let c = cost::cost(f, env, allocated()?).weighted;
            if c <= bound {
                Ok(())
            } else {
                Err(format!("weighted cost {c} above {bound}"))
            }
        }
        ["broken_fallthroughs", "<=", n] => {
            let bound = number(n)?;
            let b = cost::broken_fallthroughs(f, allocated()?);
            if b <= bound {
                Ok(())
            } else {
                Err(format!("broken fallthroughs {b} above {bound}"))
            }
        }
        ["error", name] => match result {
            Err(e) if format!("{e:?}").split('(').next() == Some(name) => Ok(()),
            Err(e) => Err(format!("expected error {name}, got {e:?}")),
            Ok(_) => Err(format!("expected error {name}, but it allocated")),
        },
        [stat, ">=", n] => {
            let bound = number(n)?;
            let Some((_, get)) = STATS.iter().find(|(s, _)| *s == stat) else {
                return Err(format!("unknown expectation `{exp}`"));
            };
            allocated()?;
            let v = get(stats) as u64;
            if v >= bound {
                Ok(())
            } else {
                Err(format!("{stat} is {v}, expected at least {bound}"))
            }
        }
        _ => Err(format!("unknown expectation `{exp}`")),
    }
}

fn run_case(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (f, env) = parse(&text).map_err(|e| e.to_string())?;
    let exps = expectations(&text);
    if exps.is_empty() {
        return Err("no `; expect:` line".into());
    }
    let options = case_options(&text)?;
    let mut ctx = Context::new();
    let result = regalloc_greedy::run_with_context(&f, &env, &options, &mut ctx);
    if let Ok(out) = &result {
        check_output(&f, &env, out).map_err(|e| format!("checker: {e}"))?;
    }
    for exp in &exps {
        check_expectation(exp, &result, &f, &env, ctx.stats())?;
    }
    Ok(())
}

#[test]
fn every_case_meets_its_expectations() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/cases")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            run_case(p)
                .err()
                .map(|e| format!("{}: {e}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The hand-written cases plus the six seeds; an emptied folder must not pass.
    assert!(paths.len() >= 12, "only {} cases", paths.len());
}

/// The runner's verdicts can fail: each kind of expectation is checked against a case
/// that meets it and one that does not.
#[test]
fn expectations_can_fail() {
    let text = "env int preferred [p0i]\nblock0:\n  def v0i reg\n  def v1i reg\n  \
                ret use v0i reg, use v1i reg\n";
    let (f, env) = parse(text).expect("parses");
    let mut ctx = Context::new();
    let result = regalloc_greedy::run_with_context(&f, &env, &Options::default(), &mut ctx);
    let check = |exp: &str| check_expectation(exp, &result, &f, &env, ctx.stats());
    assert!(check("error TooManyLiveRegs").is_ok());
    assert!(check("error SSA").is_err());
    assert!(check("ok").is_err());
    assert!(check("cost <= 1000").is_err());
    assert!(check("spills >= 0").is_err());
    let text = "env int preferred [p0i, p1i]\nblock0:\n  def v0i reg\n  ret use v0i fixed p1i\n";
    let (f, env) = parse(text).expect("parses");
    let result = regalloc_greedy::run_with_context(&f, &env, &Options::default(), &mut ctx);
    let out = result.as_ref().expect("allocates");
    check_output(&f, &env, out).expect("checker");
    let c = cost::cost(&f, &env, out).weighted;
    let check = |exp: &str| check_expectation(exp, &result, &f, &env, ctx.stats());
    assert!(check("ok").is_ok());
    assert!(check(&format!("cost <= {c}")).is_ok());
    assert!(check(&format!("cost <= {}", c.saturating_sub(1))).is_err() || c == 0);
    assert!(check("error TooManyLiveRegs").is_err());
    assert!(check("spills >= 1").is_err());
    assert!(check("bogus").is_err());
}

/// `broken_fallthroughs <= N` can fail: heapsort's case meets its bound with fallthrough
/// copies and misses it without them (the exit value's moves back on the exit edges).
#[test]
fn broken_fallthroughs_expectation_can_fail() {
    let text = std::fs::read_to_string(cases_dir().join("wasm-exit-edge-fallthrough.txt"))
        .expect("the heapsort case");
    let (f, env) = parse(&text).expect("parses");
    for on in [true, false] {
        let mut options = Options::default();
        options.fallthrough_copies = on;
        let mut ctx = Context::new();
        let result = regalloc_greedy::run_with_context(&f, &env, &options, &mut ctx);
        check_output(&f, &env, result.as_ref().expect("allocates")).expect("checker");
        let verdict =
            check_expectation("broken_fallthroughs <= 211", &result, &f, &env, ctx.stats());
        assert_eq!(verdict.is_ok(), on, "fallthrough copies {on}: {verdict:?}");
    }
}

/// Stress seeds that once failed here (a def at an instruction clobbering every register of its
/// class, at 2 registers), each shrunk while ion allocates it with its output passing the
/// checker, and ours too, using the fixed-register fallback that fixed them.
const SEEDS: [u64; 6] = [3711, 4308, 7552, 22394, 22564, 30820];

fn ion_allocates(f: &TestFunc, env: &MachineEnv) -> bool {
    let ion = catch_unwind(AssertUnwindSafe(|| {
        regalloc2::run(f, env, &RegallocOptions::default())
    }));
    matches!(ion, Ok(Ok(out)) if check_output_with(f, env, &out, Strictness::Baseline).is_ok())
}

fn uses_fallback(f: &TestFunc, env: &MachineEnv, ctx: &mut Context) -> bool {
    let ours = catch_unwind(AssertUnwindSafe(|| {
        regalloc_greedy::run_with_context(f, env, &Options::default(), ctx)
    }));
    match ours {
        Ok(Ok(out)) => {
            check_output(f, env, &out).is_ok() && ctx.stats().fixed_register_fallbacks > 0
        }
        _ => {
            *ctx = Context::new();
            false
        }
    }
}

/// Rewrites `tests/cases/seed-*.txt`. Run with
/// `cargo test --release --test cases -- --ignored regenerate_seed_cases`.
#[test]
#[ignore]
fn regenerate_seed_cases() {
    let env = fuzzgen::stress_env(Some(2));
    let mut ctx = Context::new();
    // ion's panics on some candidates are caught and count as failures; keep them quiet.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for seed in SEEDS {
        let opts = fuzzgen::stress_options(seed, Some(2));
        let f = fuzzgen::func_from_seed(seed, &opts).expect("the seed makes a function");
        let f = TestFunc::from_function(&f);
        let r = shrink(&f, &env, 20_000, |c, e| {
            ion_allocates(c, e) && uses_fallback(c, e, &mut ctx)
        });
        assert!(r.held, "seed {seed} no longer uses the fallback");
        let text = format!(
            "; ragreedy stress --seed {seed} --count 1 --regs 2, shrunk ({} -> {} instructions, \
             {} predicate calls) while\n; ion allocates it (checker passes) and ours does \
             through the fixed-register fallback:\n; a def at an instruction clobbering every \
             allocatable register of its class.\n; expect: ok\n; expect: \
             fixed_register_fallbacks >= 1\n{}",
            f.insts.len(),
            r.func.insts.len(),
            r.calls,
            print(&r.func, &r.env)
        );
        let path = cases_dir().join(format!("seed-{seed}-regs2.txt"));
        std::fs::write(&path, text).expect("write case");
        println!("{}: {} instructions", path.display(), r.func.insts.len());
    }
    std::panic::set_hook(hook);
}
