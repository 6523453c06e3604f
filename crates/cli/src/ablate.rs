//! `ragreedy ablate`: what each of our mechanisms buys. On the fuzz corpus (the seeds and
//! generator options of `ragreedy stress`, so figures are comparable) and, with `--wasm`,
//! on real modules compiled by Wasmtime, allocate every function with ion once and with
//! our allocator at `Options::default()` and with one option turned off at a time; check
//! every output; print one Markdown table per corpus: geomean weighted-cost ratio against
//! ion, total weighted cost, Σ spill slots, Σ moves, allocation time against the default
//! configuration, and the statistics counter of the mechanism turned off.
//!
//! Time: each configuration allocates the whole corpus `--reps` times, configurations
//! interleaved per function (all of them allocate one function, the first rotating, before
//! the next), and keeps each function's fastest run. Two columns: the sum of those over
//! the mean of the default configuration's sum and its control's (the default run again
//! with a context of its own, the last row: its distance from 1.000 is the column's noise
//! floor), which the largest functions decide; and the geometric mean over functions of
//! each one's time against the mean of the default's and the control's on it, which the
//! many small functions decide (a mechanism that costs a fixed amount per function shows
//! there, not in the sum).

use crate::mechanisms::{MECHANISMS, Mechanism};
use clap::Args;
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::{check, cost, fuzzgen};
use regalloc_greedy::{Options, Stats};
use regalloc2::{MachineEnv, RegallocOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
    /// Also a table over every function Wasmtime compiles from these modules (`.wasm`
    /// files or folders searched for them), each in its own environment.
    #[arg(long)]
    pub wasm: Vec<PathBuf>,
    /// Timed passes over each corpus per configuration (each function's fastest kept).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
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
    // The default again, with a context of its own: how far its time lands from the first
    // default's is the noise floor of the time column (a mechanism whose row is closer to
    // 1.000 than this one costs nothing measurable).
    v.push(Config {
        name: CONTROL.into(),
        options: default,
        off: None,
    });
    v
}

/// The name of the control row (`configs`).
const CONTROL: &str = "default (control)";

/// One function of the corpus with ion's result.
struct Case {
    func: TestFunc,
    env: MachineEnv,
    /// ion's weighted cost and spill slots, when it allocates.
    ion: Option<cost::Cost>,
}

impl Case {
    fn new(func: TestFunc, env: MachineEnv) -> Case {
        // ion panics on some over-constrained inputs (regalloc2#222): no ion figure then.
        let ion = catch_unwind(AssertUnwindSafe(|| {
            regalloc2::run(&func, &env, &RegallocOptions::default())
        }));
        let ion = match ion {
            Ok(Ok(out)) => Some(cost::cost(&func, &env, &out)),
            _ => None,
        };
        Case { func, env, ion }
    }
}

#[derive(Default)]
struct Row {
    log_ratio: f64,
    compared: usize,
    total: cost::Cost,
    /// ion's cost over the same functions as `total`.
    ion_total: cost::Cost,
    stats: Stats,
    /// Per function, the fastest allocation.
    fastest: Vec<Duration>,
    checker_failures: usize,
    errors: usize,
    errors_where_ion_allocates: usize,
}

pub fn main(args: AblateArgs) -> i32 {
    match tables(&args) {
        Ok((md, failed)) => {
            print!("{md}");
            i32::from(failed)
        }
        Err((md, e)) => {
            print!("{md}");
            eprintln!("error: {e}");
            1
        }
    }
}

/// The Markdown tables `ablate` prints (also a section of `ragreedy report`), and whether
/// any configuration failed the checker or erred where ion allocates. A Wasm corpus that
/// cannot be read is an error, returned with the tables made without it.
pub fn tables(args: &AblateArgs) -> Result<(String, bool), (String, String)> {
    let mut envs: Vec<Option<usize>> = args.regs.iter().map(|&k| Some(k)).collect();
    if envs.is_empty() {
        envs = vec![Some(4), Some(8), None];
    } else if args.full {
        envs.push(None);
    }
    let configs = configs();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failed = false;
    let mut wasm_error = None;
    let mut tables: Vec<(String, Vec<Case>)> = Vec::new();
    if !args.wasm.is_empty() {
        match wasm_corpus(&args.wasm) {
            Ok(cases) => tables.push(("Wasm modules (as compiled by Wasmtime)".into(), cases)),
            Err(e) => wasm_error = Some(e),
        }
    }
    for regs in envs {
        let title = match regs {
            Some(k) => format!("fuzz corpus, {k} registers per class"),
            None => "fuzz corpus, full environment".into(),
        };
        tables.push((title, fuzz_corpus(args, regs)));
    }
    let mut md = String::new();
    for (title, cases) in &tables {
        let rows = measure(cases, &configs, args.reps.max(1));
        failed |= rows
            .iter()
            .any(|r| r.checker_failures > 0 || r.errors_where_ion_allocates > 0);
        md.push_str(&table(title, cases, &configs, &rows));
    }
    std::panic::set_hook(hook);
    match wasm_error {
        Some(e) => Err((md, e)),
        None => Ok((md, failed)),
    }
}

/// The functions `ragreedy stress --seed S --count N [--regs K]` allocates, in order.
fn fuzz_corpus(args: &AblateArgs, regs: Option<usize>) -> Vec<Case> {
    let env = fuzzgen::stress_env(regs);
    let mut cases = Vec::with_capacity(args.count);
    let mut s = args.seed;
    while cases.len() < args.count {
        let opts = fuzzgen::stress_options(s, regs);
        let seed = s;
        s += 1;
        let Some(func) = fuzzgen::func_from_seed(seed, &opts) else {
            continue;
        };
        cases.push(Case::new(TestFunc::from_function(&func), env.clone()));
    }
    cases
}

/// Every regalloc2 call Wasmtime makes compiling the modules found at `paths`.
fn wasm_corpus(paths: &[PathBuf]) -> Result<Vec<Case>, String> {
    let modules = ragreedy_wasm::discover::modules(paths).map_err(|e| e.to_string())?;
    let mut cases = Vec::new();
    for m in &modules {
        let captured = ragreedy_wasm::capture::capture_file(m).map_err(|e| e.to_string())?;
        cases.extend(captured.into_iter().map(|c| Case::new(c.func, c.env)));
    }
    Ok(cases)
}

/// Allocates `cases` with every configuration, `reps` times, configurations interleaved
/// per function so that a slow stretch of the machine hits them all alike (interleaved per
/// whole pass, options that change nothing measured 0.77-0.94 of the default's time);
/// outcomes are taken from the first repetition (allocation is deterministic).
fn measure(cases: &[Case], configs: &[Config], reps: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = configs.iter().map(|_| Row::default()).collect();
    let mut fastest = vec![vec![Duration::MAX; cases.len()]; configs.len()];
    let mut ctxs: Vec<regalloc_greedy::Context> = configs
        .iter()
        .map(|_| regalloc_greedy::Context::new())
        .collect();
    let n = configs.len();
    for rep in 0..reps {
        for (i, case) in cases.iter().enumerate() {
            // Every configuration allocates this function before the next function, the
            // first of them rotating, so that neither a slow stretch of the machine nor the
            // warm caches of running first favour one configuration.
            for j in 0..n {
                let k = (i + rep + j) % n;
                let (row, ctx) = (&mut rows[k], &mut ctxs[k]);
                let options = &configs[k].options;
                let start = Instant::now();
                let result = catch_unwind(AssertUnwindSafe(|| {
                    regalloc_greedy::run_with_context(&case.func, &case.env, options, ctx)
                }));
                fastest[k][i] = fastest[k][i].min(start.elapsed());
                if rep == 0 {
                    record(row, case, ctx, result);
                }
            }
        }
    }
    for (row, times) in rows.iter_mut().zip(fastest) {
        row.fastest = times;
    }
    rows
}

/// Checks one allocation and adds it to `row`.
fn record(
    row: &mut Row,
    case: &Case,
    ctx: &mut regalloc_greedy::Context,
    result: std::thread::Result<Result<regalloc2::Output, regalloc2::RegAllocError>>,
) {
    let out = match result {
        Err(_) => {
            *ctx = regalloc_greedy::Context::new();
            row.checker_failures += 1;
            return;
        }
        Ok(Err(_)) => {
            row.errors += 1;
            row.errors_where_ion_allocates += usize::from(case.ion.is_some());
            return;
        }
        Ok(Ok(out)) => out,
    };
    if check::check_output(&case.func, &case.env, &out).is_err() {
        row.checker_failures += 1;
        return;
    }
    row.stats += *ctx.stats();
    let ours = cost::cost(&case.func, &case.env, &out);
    if let Some(ion) = case.ion {
        row.log_ratio += ((ours.weighted as f64 + 1.0) / (ion.weighted as f64 + 1.0)).ln();
        row.compared += 1;
        row.total += ours;
        row.ion_total += ion;
    }
}

fn table(title: &str, cases: &[Case], configs: &[Config], rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut md = String::new();
    let ion = rows[0].ion_total;
    let ion_ok = cases.iter().filter(|c| c.ion.is_some()).count();
    let _ = writeln!(md, "\n### {title}\n");
    let _ = writeln!(
        md,
        "{} functions, ion allocates {ion_ok}; costs over the functions both allocate (ion's row: beside the default).\n",
        cases.len()
    );
    let _ = writeln!(
        md,
        "| configuration | geomean vs ion | weighted cost | Σ spill slots | Σ moves | time vs default | time per function vs default (geomean) | mechanism counter (default → off) | failures |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---|---:|");
    let _ = writeln!(
        md,
        "| ion | 1.0000 | {} | {} | {} | | | | |",
        ion.weighted,
        ion.num_spillslots,
        moves(&ion)
    );
    let default = &rows[0];
    // Times are against the mean of the default and its control, the two runs of the
    // same configuration.
    let control = configs
        .iter()
        .position(|c| c.name == CONTROL)
        .map_or(default, |i| &rows[i]);
    let baseline = (summed(default) + summed(control)) / 2.0;
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
        let time = summed(row) / baseline.max(1e-9);
        let per_function = per_function_time(&row.fastest, &default.fastest, &control.fastest);
        let _ = writeln!(
            md,
            "| {} | {geomean:.4} | {} | {} | {} | {time:.3} | {per_function:.3} | {counter} | {} |",
            config.name,
            row.total.weighted,
            row.total.num_spillslots,
            moves(&row.total),
            failures(row),
        );
    }
    md
}

/// Σ over functions of the fastest allocation, in seconds.
fn summed(row: &Row) -> f64 {
    row.fastest.iter().sum::<Duration>().as_secs_f64()
}

/// The geometric mean over functions of `times[i]` against the mean of the two default
/// runs' times on function `i` (functions too fast for the clock are left out).
fn per_function_time(times: &[Duration], default: &[Duration], control: &[Duration]) -> f64 {
    let mut log_sum = 0.0;
    let mut n = 0usize;
    for ((t, d), c) in times.iter().zip(default).zip(control) {
        let base = (d.as_secs_f64() + c.as_secs_f64()) / 2.0;
        if base > 0.0 && t.as_secs_f64() > 0.0 {
            log_sum += (t.as_secs_f64() / base).ln();
            n += 1;
        }
    }
    if n == 0 {
        f64::NAN
    } else {
        (log_sum / n as f64).exp()
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
