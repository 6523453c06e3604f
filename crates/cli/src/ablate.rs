//! `ragreedy ablate`: what each of our mechanisms buys. On the fuzz corpus (the seeds and
//! generator options of `ragreedy stress`, so figures are comparable), allocate every
//! function with ion once and with our allocator at `Options::default()` and with one
//! option turned off at a time; check every output; print one Markdown table per
//! register count: geomean weighted-cost ratio against ion, total weighted cost, Σ spill
//! slots, Σ moves, and the statistics counter of the mechanism turned off.

use crate::mechanisms::{MECHANISMS, Mechanism};
use clap::Args;
use ragreedy_testkit::{check, cost, fuzzgen};
use regalloc_greedy::{Options, Stats};
use regalloc2::fuzzing::func::Func;
use regalloc2::{MachineEnv, RegallocOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};

#[derive(Args, Debug)]
pub struct AblateArgs {
    /// Number of functions per register count.
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Allocatable registers per class; repeat for several tables (default: 4, 8 and the
    /// full environment).
    #[arg(long)]
    pub regs: Vec<usize>,
    /// Also a table for the full environment when `--regs` is given.
    #[arg(long)]
    pub full: bool,
}

/// One configuration: its name, the options, and the mechanism turned off (whose counter
/// the table shows).
struct Config {
    name: String,
    options: Options,
    off: Option<&'static Mechanism>,
}

/// `Options::default()`, then each mechanism turned off alone.
fn configs() -> Vec<Config> {
    let default = Options::default();
    let mut v = vec![Config {
        name: "default".into(),
        options: default.clone(),
        off: None,
    }];
    v.extend(MECHANISMS.iter().map(|m| Config {
        name: format!("-{}", m.option),
        options: m.off(&default),
        off: Some(m),
    }));
    v
}

/// One function of the corpus with ion's result.
struct Case {
    func: Func,
    /// ion's weighted cost and spill slots, when it allocates.
    ion: Option<cost::Cost>,
}

#[derive(Default)]
struct Row {
    log_ratio: f64,
    compared: usize,
    total: cost::Cost,
    /// ion's cost over the same functions as `total`.
    ion_total: cost::Cost,
    stats: Stats,
    checker_failures: usize,
    errors: usize,
    errors_where_ion_allocates: usize,
}

pub fn main(args: AblateArgs) -> i32 {
    let mut envs: Vec<Option<usize>> = args.regs.iter().map(|&k| Some(k)).collect();
    if envs.is_empty() {
        envs = vec![Some(4), Some(8), None];
    } else if args.full {
        envs.push(None);
    }
    let configs = configs();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failed = false;
    for regs in envs {
        let env = fuzzgen::stress_env(regs);
        let cases = corpus(&args, regs, &env);
        let rows: Vec<Row> = configs.iter().map(|c| measure(&cases, &env, c)).collect();
        failed |= rows
            .iter()
            .any(|r| r.checker_failures > 0 || r.errors_where_ion_allocates > 0);
        print_table(regs, &cases, &configs, &rows);
    }
    let _ = std::panic::take_hook();
    i32::from(failed)
}

/// The functions `ragreedy stress --seed S --count N [--regs K]` allocates, in order.
fn corpus(args: &AblateArgs, regs: Option<usize>, env: &MachineEnv) -> Vec<Case> {
    let mut cases = Vec::with_capacity(args.count);
    let mut s = args.seed;
    while cases.len() < args.count {
        let opts = fuzzgen::stress_options(s, regs);
        let seed = s;
        s += 1;
        let Some(func) = fuzzgen::func_from_seed(seed, &opts) else {
            continue;
        };
        // ion panics on some over-constrained inputs (regalloc2#222): no ion figure then.
        let ion = catch_unwind(AssertUnwindSafe(|| {
            regalloc2::run(&func, env, &RegallocOptions::default())
        }));
        let ion = match ion {
            Ok(Ok(out)) => Some(cost::cost(&func, env, &out)),
            _ => None,
        };
        cases.push(Case { func, ion });
    }
    cases
}

fn measure(cases: &[Case], env: &MachineEnv, config: &Config) -> Row {
    let mut row = Row::default();
    let mut ctx = regalloc_greedy::Context::new();
    for case in cases {
        let result = catch_unwind(AssertUnwindSafe(|| {
            regalloc_greedy::run_with_context(&case.func, env, &config.options, &mut ctx)
        }));
        let out = match result {
            Err(_) => {
                ctx = regalloc_greedy::Context::new();
                row.checker_failures += 1;
                continue;
            }
            Ok(Err(_)) => {
                row.errors += 1;
                row.errors_where_ion_allocates += usize::from(case.ion.is_some());
                continue;
            }
            Ok(Ok(out)) => out,
        };
        if check::check_output(&case.func, env, &out).is_err() {
            row.checker_failures += 1;
            continue;
        }
        row.stats += *ctx.stats();
        let ours = cost::cost(&case.func, env, &out);
        if let Some(ion) = case.ion {
            row.log_ratio += ((ours.weighted as f64 + 1.0) / (ion.weighted as f64 + 1.0)).ln();
            row.compared += 1;
            row.total += ours;
            row.ion_total += ion;
        }
    }
    row
}

fn print_table(regs: Option<usize>, cases: &[Case], configs: &[Config], rows: &[Row]) {
    let ion = rows[0].ion_total;
    let ion_ok = cases.iter().filter(|c| c.ion.is_some()).count();
    match regs {
        Some(k) => println!("\n### fuzz corpus, {k} registers per class\n"),
        None => println!("\n### fuzz corpus, full environment\n"),
    }
    println!(
        "{} functions, ion allocates {ion_ok}; costs over the functions both allocate (ion's row: beside the default).\n",
        cases.len()
    );
    println!(
        "| configuration | geomean vs ion | weighted cost | Σ spill slots | Σ moves | mechanism counter (default → off) | failures |"
    );
    println!("|---|---:|---:|---:|---:|---|---:|");
    println!(
        "| ion | 1.0000 | {} | {} | {} | | |",
        ion.weighted,
        ion.num_spillslots,
        moves(&ion)
    );
    let default = &rows[0];
    for (config, row) in configs.iter().zip(rows) {
        let counter = match config.off {
            Some(m) => format!(
                "{}: {} → {}",
                m.counter,
                (m.count)(&default.stats),
                (m.count)(&row.stats)
            ),
            None => String::new(),
        };
        let geomean = if row.compared > 0 {
            (row.log_ratio / row.compared as f64).exp()
        } else {
            f64::NAN
        };
        println!(
            "| {} | {geomean:.4} | {} | {} | {} | {counter} | {} |",
            config.name,
            row.total.weighted,
            row.total.num_spillslots,
            moves(&row.total),
            failures(row),
        );
    }
}

fn moves(c: &cost::Cost) -> usize {
    c.moves + c.spills + c.reloads + c.stack_moves
}

fn failures(row: &Row) -> String {
    let mut s = format!("{}", row.checker_failures);
    if row.errors > 0 {
        s += &format!(
            " ({} errors, {} where ion allocates)",
            row.errors, row.errors_where_ion_allocates
        );
    }
    s
}
