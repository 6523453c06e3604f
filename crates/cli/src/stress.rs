//! `ragreedy stress`: allocate many generated functions with our allocator (and with
//! ion, to compare errors), run regalloc2's checker plus our structural checks on every
//! output, and write each failing function, shrunk while it fails the same way, as a text
//! case (docs/text-format.md) that can become a regression test as it is.

use crate::mechanisms;
use clap::{Args, ValueEnum};
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::{check, cost, cranelift_like, fuzzgen, shrink, text};
use regalloc2::{Function, MachineEnv, RegallocOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Generator {
    /// regalloc2's fuzzing `Func` with ion's fuzz options (options cycled per function).
    Fuzz,
    /// Our Cranelift-shaped generator (stack operands, branch operands, reuse, calls).
    CraneliftLike,
}

#[derive(Args, Debug)]
pub struct StressArgs {
    /// Number of functions to allocate.
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Allocatable registers per class (default: the generator's full environment).
    #[arg(long)]
    pub regs: Option<usize>,
    /// Which generator produces the functions.
    #[arg(long = "gen", value_enum, default_value_t = Generator::Fuzz)]
    pub generator: Generator,
    /// Directory where failing functions are written: `seed-N.txt` shrunk, `seed-N.full.txt`
    /// as generated with the failure's details.
    #[arg(long, default_value = "stress-failures")]
    pub out: PathBuf,
    /// Allocations the shrinker may try per failing function (0: write it unshrunk).
    #[arg(long, default_value_t = 2000)]
    pub shrink_budget: usize,
    /// Print every failure's details, not only the first few.
    #[arg(long)]
    pub verbose: bool,
    /// Which of our allocators to stress: greedy, basic, linear-scan or irc.
    #[arg(long, default_value = "greedy")]
    pub allocator: String,
    /// Turn off live-range splitting (on by default), to measure what it buys.
    #[arg(long)]
    pub no_split: bool,
    /// Print our allocator's statistics summed over the run (split kinds, spills, ...).
    #[arg(long)]
    pub stats: bool,
    /// Turn off mechanisms by name (comma-separated): the names of the `MECHANISMS` table
    /// in `mechanisms.rs` (recoloring, csr, hints, splitting, ...; `ragreedy ablate` lists
    /// them all).
    #[arg(long, value_delimiter = ',')]
    pub disable: Vec<String>,
}

#[derive(Default)]
struct Tally {
    functions: usize,
    checker_failures: usize,
    errors: usize,
    ion_errors: usize,
    errors_where_ion_allocates: usize,
    reported: usize,
    /// Σ ln((ours + 1) / (ion + 1)) of weighted cost, over functions both allocate.
    log_cost_ratio: f64,
    compared: usize,
    ours_cost: u64,
    ion_cost: u64,
    /// Our allocator's statistics, summed over the functions it allocated.
    stats: regalloc_greedy::Stats,
    /// (ratio, seed) of the functions where ours costs most relative to ion.
    worst: Vec<(f64, u64)>,
}

pub fn main(args: StressArgs) -> i32 {
    let mut tally = Tally::default();
    let mut seed = args.seed;
    let mut ctx = regalloc_greedy::Context::new();
    let mut options = regalloc_greedy::Options::default();
    options.splitting = !args.no_split;
    options.algorithm = match regalloc_greedy::Algorithm::from_name(&args.allocator) {
        Some(a) => a,
        None => {
            let names: Vec<&str> = regalloc_greedy::Algorithm::ALL
                .iter()
                .map(|a| a.name())
                .collect();
            eprintln!(
                "unknown allocator {:?} (known: {})",
                args.allocator,
                names.join(", ")
            );
            return 2;
        }
    };
    for name in &args.disable {
        match mechanisms::find(name) {
            Some(m) => (m.disable)(&mut options),
            None => {
                eprintln!(
                    "unknown mechanism {name:?} (known: {})",
                    mechanisms::names()
                );
                return 2;
            }
        }
    }
    // Panics are counted as failures; keep the default hook from flooding the output.
    std::panic::set_hook(Box::new(|_| {}));
    while tally.functions < args.count {
        let s = seed;
        seed += 1;
        match args.generator {
            Generator::Fuzz => {
                let opts = fuzzgen::stress_options(s, args.regs);
                let Some(func) = fuzzgen::func_from_seed(s, &opts) else {
                    continue;
                };
                let env = fuzzgen::stress_env(args.regs);
                one(&args, &mut tally, &mut ctx, &options, s, &func, &env);
            }
            Generator::CraneliftLike => {
                let func = cranelift_like::from_seed(s);
                let env = match args.regs {
                    Some(k) => cranelift_like::x64_env_k(k),
                    None => cranelift_like::x64_env(),
                };
                one(&args, &mut tally, &mut ctx, &options, s, &func, &env);
            }
        }
    }
    let _ = std::panic::take_hook();
    if tally.compared > 0 {
        println!(
            "weighted cost vs ion: geomean ratio {:.4}, total {} vs {} ({} functions)",
            (tally.log_cost_ratio / tally.compared as f64).exp(),
            tally.ours_cost,
            tally.ion_cost,
            tally.compared
        );
        let worst: Vec<String> = tally
            .worst
            .iter()
            .map(|(r, s)| format!("seed {s} ({r:.2})"))
            .collect();
        println!("worst against ion: {}", worst.join(", "));
    }
    if args.stats {
        println!("our stats, summed: {:#?}", tally.stats);
    }
    println!(
        "{} functions, {} checker failures, {} errors (ion errors: {})",
        tally.functions, tally.checker_failures, tally.errors, tally.ion_errors
    );
    if tally.errors_where_ion_allocates > 0 {
        println!(
            "{} errors where ion allocates",
            tally.errors_where_ion_allocates
        );
    }
    i32::from(tally.checker_failures > 0 || tally.errors_where_ion_allocates > 0)
}

#[allow(clippy::too_many_arguments)]
fn one<F: Function>(
    args: &StressArgs,
    tally: &mut Tally,
    ctx: &mut regalloc_greedy::Context,
    options: &regalloc_greedy::Options,
    seed: u64,
    func: &F,
    env: &MachineEnv,
) {
    tally.functions += 1;
    // ion panics on some over-constrained inputs (regalloc2#222); count that as its error.
    let ion = catch_unwind(AssertUnwindSafe(|| {
        regalloc2::run(func, env, &RegallocOptions::default())
    }));
    let ion_ok = matches!(ion, Ok(Ok(_)));
    if !ion_ok {
        tally.ion_errors += 1;
    }
    let ours = catch_unwind(AssertUnwindSafe(|| {
        regalloc_greedy::run_with_context(func, env, options, ctx)
    }));
    let failure = match ours {
        Err(panic) => {
            let msg = ragreedy_jit::panic_message(&*panic);
            *ctx = regalloc_greedy::Context::new();
            tally.checker_failures += 1;
            Some((Failure::Panic, format!("panic: {msg}")))
        }
        Ok(Err(e)) => {
            tally.errors += 1;
            if let (1, true, Ok(Ok(ion_out))) = (args.count, args.verbose, &ion) {
                println!(
                    "ours: {e:?}; ion:\n{}",
                    ragreedy_testkit::builder::listing_with_output(func, ion_out)
                );
            }
            if ion_ok {
                tally.errors_where_ion_allocates += 1;
                Some((
                    Failure::ErrorWhereIonAllocates,
                    format!("error {e:?} where ion allocates"),
                ))
            } else {
                None
            }
        }
        Ok(Ok(out)) => match check::check_output(func, env, &out) {
            Ok(()) => {
                tally.stats += *ctx.stats();
                if let Ok(Ok(ion_out)) = &ion {
                    let (ours_full, theirs_full) =
                        (cost::cost(func, env, &out), cost::cost(func, env, ion_out));
                    if args.count == 1 {
                        println!("ours: {ours_full:?}\nion:  {theirs_full:?}");
                        if args.verbose {
                            println!(
                                "{}",
                                ragreedy_testkit::builder::listing_with_output(func, &out)
                            );
                            println!(
                                "ion:\n{}",
                                ragreedy_testkit::builder::listing_with_output(func, ion_out)
                            );
                        }
                    }
                    let (ours, theirs) = (ours_full.weighted, theirs_full.weighted);
                    let ratio = (ours as f64 + 1.0) / (theirs as f64 + 1.0);
                    tally.log_cost_ratio += ratio.ln();
                    tally.worst.push((ratio, seed));
                    tally.worst.sort_by(|a, b| b.0.total_cmp(&a.0));
                    tally.worst.truncate(5);
                    tally.compared += 1;
                    tally.ours_cost += ours;
                    tally.ion_cost += theirs;
                }
                None
            }
            Err(e) => {
                tally.checker_failures += 1;
                let annotated = ragreedy_testkit::builder::listing_with_output(func, &out);
                let ion_checked = match &ion {
                    Ok(Ok(o)) => {
                        let mut c = regalloc2::checker::Checker::new(func, env);
                        c.prepare(o);
                        format!("{:?}", c.run().err())
                    }
                    _ => "ion failed".to_string(),
                };
                Some((
                    Failure::Checker(checker_error_name(&e)),
                    format!(
                        "checker: {e}\nion's output through the checker: {ion_checked}\nour allocation:\n{annotated}"
                    ),
                ))
            }
        },
    };
    if let Some((kind, msg)) = failure {
        let _ = std::fs::create_dir_all(&args.out);
        let command = format!(
            "ragreedy stress --gen {:?} --allocator {} --seed {seed} --count 1{}",
            args.generator,
            args.allocator,
            args.regs
                .map(|k| format!(" --regs {k}"))
                .unwrap_or_default(),
        );
        let comment = |text: &str| -> String { text.lines().map(|l| format!("; {l}\n")).collect() };
        let first_line = msg.lines().next().unwrap_or("");
        let full = TestFunc::from_function(func);
        let full_path = args.out.join(format!("seed-{seed}.full.txt"));
        let _ = std::fs::write(
            &full_path,
            format!(
                "; {command}\n{}; expect: ok\n{}",
                comment(&msg),
                text::print(&full, env)
            ),
        );
        // Shrinking re-runs the allocators on each candidate; a candidate is kept while
        // our allocator fails on it the same way.
        let shrunk = shrink::shrink(&full, env, args.shrink_budget, |f, e| {
            failure_kind(f, e, options, ctx).as_ref() == Some(&kind)
        });
        let path = args.out.join(format!("seed-{seed}.txt"));
        let _ = std::fs::write(
            &path,
            format!(
                "; {command}\n; {first_line}\n; shrunk from {} to {} instructions ({} \
                 allocations) while it fails the same way; unshrunk: {}\n; expect: ok\n{}",
                full.insts.len(),
                shrunk.func.insts.len(),
                shrunk.calls,
                full_path.display(),
                text::print(&shrunk.func, &shrunk.env)
            ),
        );
        if tally.reported < 5 || args.verbose {
            let short: String = first_line.chars().take(300).collect();
            eprintln!(
                "seed {seed}: {short} (written to {}, {} instructions)",
                path.display(),
                shrunk.func.insts.len()
            );
        }
        tally.reported += 1;
    }
}

/// How our allocator fails on a function, for the shrinker to keep failing the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Failure {
    Panic,
    /// The checker rejects our output, and accepts ion's on the same input: the name of
    /// the first error the checker reports (its variant, or the structural rule's
    /// message). Without ion's acceptance a shrink could keep an input on which the
    /// checker rejects every allocator (a block parameter it cannot follow), and so
    /// write a case that tells nothing about ours; without the name, one that fails in
    /// some other way than the function found.
    Checker(String),
    ErrorWhereIonAllocates,
}

/// The part of a `check_output` error that names what failed: the checker's first error
/// variant (`IncorrectValuesInAllocation`, ...), or the structural message's first line.
fn checker_error_name(e: &str) -> String {
    match e.split_once("errors: [") {
        Some((_, rest)) => rest
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap_or_default()
            .to_string(),
        None => e.lines().next().unwrap_or_default().to_string(),
    }
}

fn failure_kind(
    func: &TestFunc,
    env: &MachineEnv,
    options: &regalloc_greedy::Options,
    ctx: &mut regalloc_greedy::Context,
) -> Option<Failure> {
    let ours = catch_unwind(AssertUnwindSafe(|| {
        regalloc_greedy::run_with_context(func, env, options, ctx)
    }));
    match ours {
        Err(_) => {
            *ctx = regalloc_greedy::Context::new();
            Some(Failure::Panic)
        }
        Ok(Ok(out)) => {
            let name = checker_error_name(&check::check_output(func, env, &out).err()?);
            check::ion_output_passes(func, env).then_some(Failure::Checker(name))
        }
        Ok(Err(_)) => {
            let ion = catch_unwind(AssertUnwindSafe(|| {
                regalloc2::run(func, env, &RegallocOptions::default())
            }));
            matches!(ion, Ok(Ok(_))).then_some(Failure::ErrorWhereIonAllocates)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checker_error_is_named_by_its_first_variant_or_first_line() {
        let checker = "regalloc2 checker: CheckerErrors { errors: [IncorrectValuesInAllocation \
                       { inst: Inst(4), op: Use: v0f fixed(p55f), alloc: p55f, actual: {} }] }";
        assert_eq!(checker_error_name(checker), "IncorrectValuesInAllocation");
        assert_eq!(
            checker_error_name("inst 3: edit after a terminator\nmore"),
            "inst 3: edit after a terminator"
        );
    }

    const CHECKER_REJECTS_ALL: &str =
        include_str!("../../testkit/fixtures/checker-rejects-every-allocation.txt");

    #[test]
    fn a_failure_the_checker_also_finds_in_ions_output_is_not_ours() {
        let (func, env) = text::parse(CHECKER_REJECTS_ALL).expect("valid text");
        let options = regalloc_greedy::Options::default();
        let mut ctx = regalloc_greedy::Context::new();
        let ours =
            regalloc_greedy::run_with_context(&func, &env, &options, &mut ctx).expect("allocates");
        assert!(check::check_output(&func, &env, &ours).is_err());
        assert!(!check::ion_output_passes(&func, &env));
        assert_eq!(failure_kind(&func, &env, &options, &mut ctx), None);
    }
}
