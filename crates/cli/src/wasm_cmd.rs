//! `ragreedy wasm`: real WebAssembly through Wasmtime with a chosen allocator under its
//! Cranelift. `run` executes one WASI module (its exit code becomes ours), `bench` times
//! Sightglass-layout modules per allocator (compile and run, outputs compared), `count` counts
//! the instructions their `bench.start`..`bench.end` windows execute under callgrind, `dump`
//! writes a module's allocation problems as JSON for `compare --corpus DIR`.
//!
//! Bad input (not Wasm, invalid, missing import, trap, broken `bench.*` protocol) is one line
//! naming the file and the cause; the other modules of the run are still measured, and the exit
//! code is non-zero.

use crate::compare::fmt_time;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use ragreedy_jit::Allocator;
use ragreedy_wasm::bench::{self, BenchOptions, ModuleBench, OutputCheck};
use ragreedy_wasm::count::{self, CountOptions, ModuleCount, WindowCounts};
use ragreedy_wasm::engine::{self, Compilation};
use ragreedy_wasm::wasi::{self, RunSetup, Stdio};
use ragreedy_wasm::{capture, discover};
use regalloc2::serialize::SerializableFunction;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct WasmArgs {
    #[command(subcommand)]
    pub command: WasmCommand,
}

#[derive(Subcommand, Debug)]
pub enum WasmCommand {
    /// Compile a WASI module with the chosen allocator and run its `_start`, with the current
    /// folder pre-opened as `.`; the module's exit code becomes ours.
    Run(RunArgs),
    /// Sightglass protocol: compile and run each module per allocator, interleaved; compile
    /// time, run time (`bench.start`..`bench.end`, median) and output checked against
    /// `NAME.stdout.expected` / `NAME.stderr.expected`.
    Bench(BenchArgs),
    /// Count the instructions each module's `bench.start`..`bench.end` window executes per
    /// allocator, under valgrind's callgrind (one run each; deterministic, where run time
    /// moves with code placement and machine load). Needs `valgrind` installed.
    Count(CountArgs),
    /// Write every regalloc2 call of compiling the modules as JSON, one folder per module
    /// (readable by `ragreedy compare --corpus DIR`).
    Dump(DumpArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The module (`.wasm`, or `.wat` text).
    pub file: PathBuf,
    /// Allocator under Wasmtime's Cranelift (greedy, basic, linear-scan, irc, ion, fastalloc).
    #[arg(long, default_value = "greedy")]
    pub allocator: Allocator,
    /// Write `/tmp/perf-PID.map` naming the compiled functions before running, so that
    /// `perf record -e cpu-clock ragreedy wasm run --perf-map ...` and `perf report` show
    /// which Wasm functions the time goes to.
    #[arg(long)]
    pub perf_map: bool,
    /// Write the compiled functions' machine code to this file before running (one line
    /// each: the name `--perf-map` gives it, then its bytes in hex), for tools that decode
    /// what this very run executes.
    #[arg(long, value_name = "FILE")]
    pub save_code: Option<PathBuf>,
    /// Arguments passed to the module (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// What `bench` and `count` measure: the modules under some paths, per allocator.
#[derive(Args, Debug)]
pub struct MeasuredModules {
    /// Modules, or folders searched for `*.wasm`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Allocators to measure (ratios are against ion, which is always measured).
    #[arg(long, value_delimiter = ',', default_value = "greedy,ion")]
    pub allocators: Vec<Allocator>,
}

impl MeasuredModules {
    /// The module files, and the allocators with ion among them; `None` once the error
    /// is printed.
    fn resolve(&self) -> Option<(Vec<PathBuf>, Vec<Allocator>)> {
        match discover::modules(&self.paths) {
            Ok(m) => Some((m, crate::compare::with_ion(&self.allocators))),
            Err(e) => {
                eprintln!("error: {e}");
                None
            }
        }
    }
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub measured: MeasuredModules,
    /// Compile+run iterations per module and allocator (medians taken).
    #[arg(long, default_value_t = 5)]
    pub iterations: usize,
    /// Shift every function's code by 0-63 bytes, the same for every allocator of an
    /// iteration and different between iterations, so that the medians are over code
    /// placements (x86-64 hosts; see `docs/wasm.md`).
    #[arg(long)]
    pub layout_shifts: bool,
    /// Print JSON on stdout instead of Markdown (summary lines then go to stderr).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CountArgs {
    #[command(flatten)]
    pub measured: MeasuredModules,
    /// Also simulate caches and branch prediction, for callgrind's cycle estimate
    /// (several times slower).
    #[arg(long)]
    pub simulate: bool,
    /// The valgrind program.
    #[arg(long, default_value = "valgrind")]
    pub valgrind: PathBuf,
    /// Also split each window's instructions by Wasm function (the run writes a perf map of
    /// its compiled code; callgrind's addresses are looked up in it): a table of the
    /// functions with at least 1% of the instructions the module's functions executed.
    #[arg(long)]
    pub by_function: bool,
    /// Print JSON on stdout instead of Markdown (summary lines then go to stderr).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// Modules, or folders searched for `*.wasm`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output folder; each module gets a sub-folder of `N.json` files.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn main(args: WasmArgs) -> i32 {
    match args.command {
        WasmCommand::Run(a) => run(a),
        WasmCommand::Bench(a) => bench_main(a),
        WasmCommand::Count(a) => count_main(a),
        WasmCommand::Dump(a) => dump(a),
    }
}

fn run(args: RunArgs) -> i32 {
    let result = (|| {
        let engine = engine::engine(Compilation::Parallel)
            .map_err(|e| format!("{}: {e}", args.file.display()))?;
        let bytes = engine::read(&args.file).map_err(|e| e.to_string())?;
        args.allocator.select_process_wide();
        let (module, _) =
            engine::compile(&engine, &args.file, &bytes).map_err(|e| e.to_string())?;
        if args.perf_map {
            let path = format!("/tmp/perf-{}.map", std::process::id());
            std::fs::write(&path, engine::perf_map(&module))
                .map_err(|e| format!("{path}: cannot write: {e}"))?;
        }
        if let Some(path) = &args.save_code {
            std::fs::write(path, engine::code_listing(&module))
                .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        }
        let dir = std::env::current_dir().map_err(|e| format!("current folder: {e}"))?;
        let mut argv = vec![wasi::program_name(&args.file)];
        argv.extend(args.args.iter().cloned());
        let setup = RunSetup {
            dir,
            args: argv,
            stdio: Stdio::Inherit,
        };
        wasi::run(&engine, &module, &setup).map_err(|e| format!("{}: {e}", args.file.display()))
    })();
    match result {
        Ok(r) => r.exit_code,
        Err(e) => {
            eprintln!("error: {e}");
            // Distinct from the small exit codes modules use for themselves.
            125
        }
    }
}

fn progress_bar(len: u64) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("wasm bench [{bar:30}] {pos}/{len} {elapsed} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb
}

fn bench_main(args: BenchArgs) -> i32 {
    let Some((modules, allocators)) = args.measured.resolve() else {
        return 2;
    };
    let options = BenchOptions {
        allocators: allocators.clone(),
        iterations: args.iterations,
        layout_shifts: args.layout_shifts,
    };
    let pb = progress_bar(modules.len() as u64);
    let mut first = true;
    let results = bench::bench_modules(&modules, &options, |name| {
        if !first {
            pb.inc(1);
        }
        first = false;
        pb.set_message(name.to_owned());
    });
    pb.finish_and_clear();
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let lines: Vec<String> = allocators
        .iter()
        .map(|&a| bench::summary_line(&results, a))
        .collect();
    let errors = error_lines(&results, false);
    let output = if args.json {
        Output::Json(bench_json(&results))
    } else {
        Output::Markdown(format!(
            "## Wasm benchmarks ({} modules, {} iterations{})\n\n{}",
            results.len(),
            args.iterations,
            if args.layout_shifts {
                ", code shifted 0-63 bytes per iteration"
            } else {
                ""
            },
            bench_table(&results, &allocators)
        ))
    };
    print_report(output, &errors, &lines)
}

/// What a measuring command prints on stdout: JSON, or a Markdown heading and table.
enum Output {
    Json(String),
    Markdown(String),
}

/// Prints a command's output with its failures and closing lines (with JSON, those go to
/// stderr), then each failure on stderr as `error: ...`; the exit code is 1 if any.
fn print_report(output: Output, errors: &[String], lines: &[String]) -> i32 {
    match output {
        Output::Json(json) => {
            println!("{json}");
            errors.iter().for_each(|l| eprintln!("{l}"));
            lines.iter().for_each(|l| eprintln!("{l}"));
        }
        Output::Markdown(table) => {
            println!("{table}");
            if !errors.is_empty() {
                println!("### Failures\n");
                errors.iter().for_each(|l| println!("- {l}"));
                println!();
            }
            lines.iter().for_each(|l| println!("{l}"));
        }
    }
    for e in errors {
        eprintln!("error: {e}");
    }
    i32::from(!errors.is_empty())
}

/// One line per module and allocator that failed: `path: [allocator] cause` (with
/// `by_name`, the module's display name instead of its path).
pub fn error_lines(results: &[ModuleBench], by_name: bool) -> Vec<String> {
    let mut v = Vec::new();
    for m in results {
        let who = if by_name {
            m.name.clone()
        } else {
            m.path.display().to_string()
        };
        if let Some(e) = &m.error {
            v.push(format!("{who}: {e}"));
            continue;
        }
        for r in &m.results {
            if let Some(e) = &r.error {
                v.push(format!("{who}: [{}] {e}", r.allocator));
            } else if let OutputCheck::Mismatch(d) = &r.output {
                v.push(format!("{who}: [{}] MISMATCH: {d}", r.allocator));
            }
        }
    }
    v
}

fn spread_cell(s: Option<bench::Spread>) -> String {
    s.map_or("–".into(), |s| {
        format!(
            "{} ({}..{})",
            fmt_time(s.median.as_nanos() as u64),
            fmt_time(s.min.as_nanos() as u64),
            fmt_time(s.max.as_nanos() as u64)
        )
    })
}

fn ratio_cell(r: Option<f64>) -> String {
    r.map_or("–".into(), |r| format!("{r:.3}"))
}

/// Markdown: one row per module and allocator.
pub fn bench_table(results: &[ModuleBench], allocators: &[Allocator]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| module | allocator | compile, median (min..max) | compile / ion | run, median (min..max) | run / ion | code bytes | code / ion | output |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---|");
    for m in results {
        if let Some(e) = &m.error {
            let _ = writeln!(s, "| {} | all | | | | | | | error: {e} |", m.name);
            continue;
        }
        for &a in allocators {
            let Some(r) = m.get(a) else { continue };
            let output = match (&r.error, &r.output) {
                (Some(e), _) => format!("error: {e}"),
                (None, OutputCheck::Ok) => "ok".into(),
                (None, OutputCheck::NoExpectation) => "no expectation".into(),
                (None, OutputCheck::Mismatch(_)) => "MISMATCH".into(),
            };
            let _ = writeln!(
                s,
                "| {} | {a} | {} | {} | {} | {} | {} | {} | {output} |",
                m.name,
                spread_cell(r.compile_spread()),
                ratio_cell(m.compile_ratio(a)),
                spread_cell(r.run_spread()),
                ratio_cell(m.run_ratio(a)),
                r.code_bytes.map_or("–".into(), |b| b.to_string()),
                ratio_cell(m.code_ratio(a)),
            );
        }
    }
    s
}

/// How a module's output compared, as the JSON reports say it.
fn output_json(o: &OutputCheck) -> String {
    match o {
        OutputCheck::Ok => "ok".to_owned(),
        OutputCheck::NoExpectation => "no expectation".to_owned(),
        OutputCheck::Mismatch(d) => format!("MISMATCH: {d}"),
    }
}

fn bench_json(results: &[ModuleBench]) -> String {
    let v: Vec<serde_json::Value> = results
        .iter()
        .map(|m| {
            serde_json::json!({
                "module": m.name,
                "path": m.path.display().to_string(),
                "error": m.error,
                "results": m.results.iter().map(|r| serde_json::json!({
                    "allocator": r.allocator.name(),
                    "compile_ns": r.compile.iter().map(|d| d.as_nanos() as u64).collect::<Vec<_>>(),
                    "run_ns": r.run.iter().map(|d| d.as_nanos() as u64).collect::<Vec<_>>(),
                    "compile_ratio": m.compile_ratio(r.allocator),
                    "run_ratio": m.run_ratio(r.allocator),
                    "code_bytes": r.code_bytes,
                    "code_ratio": m.code_ratio(r.allocator),
                    "output": output_json(&r.output),
                    "error": r.error,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&v).expect("serializable")
}

fn count_main(args: CountArgs) -> i32 {
    let Some((modules, allocators)) = args.measured.resolve() else {
        return 2;
    };
    let runner = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot find this program to run the modules: {e}");
            return 2;
        }
    };
    let scratch = std::env::temp_dir();
    let options = CountOptions {
        allocators: allocators.clone(),
        simulate: args.simulate,
        valgrind: args.valgrind,
        runner,
        scratch,
        by_function: args.by_function,
    };
    let pb = progress_bar(modules.len() as u64);
    let results: Vec<ModuleCount> = modules
        .iter()
        .map(|m| {
            pb.set_message(ragreedy_wasm::module_name(m));
            let r = count::count_module(m, &options);
            pb.inc(1);
            r
        })
        .collect();
    pb.finish_and_clear();
    let lines: Vec<String> = allocators
        .iter()
        .map(|&a| count::summary_line(&results, a, args.simulate))
        .collect();
    let errors = count_errors(&results);
    let output = if args.json {
        Output::Json(count_json(&results))
    } else {
        Output::Markdown(
            format!(
                "## Instructions in the bench window ({} modules, callgrind{})\n\n{}",
                results.len(),
                if args.simulate {
                    ", caches and branches simulated"
                } else {
                    ""
                },
                count_table(&results, &allocators, args.simulate)
            ) + &if args.by_function {
                format!(
                    "\n## Instructions by function (1% of the module's own or more)\n\n{}",
                    count_function_table(&results, &allocators)
                )
            } else {
                String::new()
            },
        )
    };
    print_report(output, &errors, &lines)
}

/// One line per module and allocator whose count failed or whose output was wrong.
fn count_errors(results: &[ModuleCount]) -> Vec<String> {
    let mut v = Vec::new();
    for m in results {
        for r in &m.results {
            match (&r.counts, &r.output) {
                (Err(e), _) => v.push(format!("{}: [{}] {e}", m.path.display(), r.allocator)),
                (Ok(_), OutputCheck::Mismatch(d)) => v.push(format!(
                    "{}: [{}] MISMATCH: {d}",
                    m.path.display(),
                    r.allocator
                )),
                _ => {}
            }
        }
    }
    v
}

/// Markdown: per module, one row per function with at least 1% of the instructions the
/// module's functions executed under some allocator (the host's share of the window is
/// left out: it is not the allocators' code), by the largest count over the allocators,
/// most first: each allocator's count, each one's ratio to ion's, then each allocator's
/// moves, stack stores and stack loads among those instructions.
fn count_function_table(results: &[ModuleCount], allocators: &[Allocator]) -> String {
    let mut s = String::new();
    let others: Vec<Allocator> = allocators
        .iter()
        .copied()
        .filter(|&a| a != Allocator::Ion)
        .collect();
    let _ = write!(s, "| module | function |");
    for a in allocators {
        let _ = write!(s, " {a} |");
    }
    for a in &others {
        let _ = write!(s, " {a} / ion |");
    }
    for a in allocators {
        let _ = write!(s, " {a}: moves / stores / loads |");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "|---|---|{}",
        "---:|".repeat(2 * allocators.len() + others.len())
    );
    for m in results {
        let counted: Vec<(Allocator, &WindowCounts)> = allocators
            .iter()
            .filter_map(|&a| m.get(a).map(|c| (a, c)))
            .collect();
        let of = |a: Allocator, f: &str| {
            counted
                .iter()
                .find(|(b, _)| *b == a)
                .and_then(|(_, c)| c.functions.iter().find(|c| c.name == f))
        };
        let mut rows: Vec<(&str, u64)> = Vec::new();
        for (_, c) in &counted {
            let window: u64 = c.functions.iter().map(|f| f.instructions).sum();
            for f in &c.functions {
                if f.instructions * 100 >= window && !rows.iter().any(|r| r.0 == f.name) {
                    let most = counted
                        .iter()
                        .filter_map(|&(a, _)| of(a, &f.name).map(|c| c.instructions))
                        .max()
                        .unwrap_or(0);
                    rows.push((&f.name, most));
                }
            }
        }
        rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        for (name, _) in rows {
            let _ = write!(s, "| {} | {name} |", m.name);
            for &a in allocators {
                let n = of(a, name).map_or("–".into(), |c| c.instructions.to_string());
                let _ = write!(s, " {n} |");
            }
            for &a in &others {
                let r = match (of(a, name), of(Allocator::Ion, name)) {
                    (Some(x), Some(ion)) if ion.instructions > 0 => {
                        Some(x.instructions as f64 / ion.instructions as f64)
                    }
                    _ => None,
                };
                let _ = write!(s, " {} |", ratio_cell(r));
            }
            for &a in allocators {
                let cell = of(a, name).map_or("–".into(), |c| {
                    format!("{} / {} / {}", c.moves, c.stores, c.loads)
                });
                let _ = write!(s, " {cell} |");
            }
            let _ = writeln!(s);
        }
    }
    s
}

/// Markdown: one row per module and allocator.
fn count_table(results: &[ModuleCount], allocators: &[Allocator], simulate: bool) -> String {
    let mut s = String::new();
    let sim_head = if simulate {
        " first-level misses | last-level misses | mispredicted branches | cycle estimate | cycle estimate / ion |"
    } else {
        ""
    };
    let sim_rule = if simulate {
        "---:|---:|---:|---:|---:|"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "| module | allocator | instructions | instructions / ion |{sim_head} output |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|{sim_rule}---|");
    for m in results {
        for &a in allocators {
            let Some(r) = m.results.iter().find(|r| r.allocator == a) else {
                continue;
            };
            let Ok(c) = &r.counts else {
                let cells = if simulate { 7 } else { 2 };
                let _ = writeln!(s, "| {} | {a} |{} error |", m.name, " |".repeat(cells));
                continue;
            };
            let n = |x: Option<u64>| x.map_or("–".to_owned(), |x| x.to_string());
            let sum = |names: &[&str]| names.iter().map(|e| c.get(e)).sum::<Option<u64>>();
            let sim = if simulate {
                format!(
                    " {} | {} | {} | {} | {} |",
                    n(sum(&["I1mr", "D1mr", "D1mw"])),
                    n(sum(&["ILmr", "DLmr", "DLmw"])),
                    n(sum(&["Bcm", "Bim"])),
                    n(c.cycle_estimate()),
                    ratio_cell(m.ratio(a, WindowCounts::cycle_estimate)),
                )
            } else {
                String::new()
            };
            let output = match &r.output {
                OutputCheck::Ok => "ok",
                OutputCheck::NoExpectation => "no expectation",
                OutputCheck::Mismatch(_) => "MISMATCH",
            };
            let _ = writeln!(
                s,
                "| {} | {a} | {} | {} |{sim} {output} |",
                m.name,
                n(c.instructions()),
                ratio_cell(m.ratio(a, WindowCounts::instructions)),
            );
        }
    }
    s
}

fn count_json(results: &[ModuleCount]) -> String {
    let v: Vec<serde_json::Value> = results
        .iter()
        .map(|m| {
            serde_json::json!({
                "module": m.name,
                "path": m.path.display().to_string(),
                "results": m.results.iter().map(|r| serde_json::json!({
                    "allocator": r.allocator.name(),
                    "events": r.counts.as_ref().ok().map(|c| c
                        .events
                        .iter()
                        .map(|(k, v)| (k.clone(), serde_json::json!(v)))
                        .collect::<serde_json::Map<_, _>>()),
                    "functions": r.counts.as_ref().ok().map(|c| c
                        .functions
                        .iter()
                        .map(|f| serde_json::json!({
                            "function": f.name,
                            "Ir": f.instructions,
                            "moves": f.moves,
                            "stack_stores": f.stores,
                            "stack_loads": f.loads,
                        }))
                        .collect::<Vec<_>>()),
                    "instructions_ratio": m.ratio(r.allocator, WindowCounts::instructions),
                    "cycle_estimate_ratio": m.ratio(r.allocator, WindowCounts::cycle_estimate),
                    "output": output_json(&r.output),
                    "error": r.counts.as_ref().err(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&v).expect("serializable")
}

fn dump(args: DumpArgs) -> i32 {
    let modules = match discover::modules(&args.paths) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut failed = false;
    for m in &modules {
        match dump_module(m, &args.out) {
            Ok((dir, n)) => eprintln!("{}: {n} functions -> {}", m.display(), dir.display()),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    i32::from(failed)
}

fn dump_module(path: &Path, out: &Path) -> Result<(PathBuf, usize), String> {
    let captured = capture::capture_file(path).map_err(|e| e.to_string())?;
    let dir = out.join(ragreedy_wasm::module_name(path).replace('/', "-"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for c in &captured {
        let file = dir.join(format!("{:05}.json", c.index));
        let f = SerializableFunction::new(&c.func, c.env.clone());
        ragreedy_testkit::corpus::save_function(&file, &f)
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok((dir, captured.len()))
}
