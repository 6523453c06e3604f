//! `ragreedy report`: regenerates `docs/benchmarks.md` and its SVG plots in `docs/img/` in one
//! command, from one run of everything (docs/metrics.md: figures from different runs are never
//! compared): the `cranelift`, `fuzz` and `scale` corpora of `ragreedy compare`, and code speed
//! of the bench programs. The page is generated whole, except for the hand-written notes
//! between its `<!-- notes: KEY -->` markers, which `notes::carry` moves from the page being
//! replaced into the new one.

use crate::ablate::{self, AblateArgs};
use crate::compare::{self, CompareArgs, CorpusResult, CorpusSpec, codespeed, corpora, plot};
use clap::Args;
use ragreedy_jit::Allocator;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

mod notes;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Directory of the page (`benchmarks.md`) and its `img/` plots.
    #[arg(long, default_value = "docs")]
    pub out: PathBuf,
    /// Timed repetitions per function (docs/metrics.md wants >= 5).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Fuzz functions per register pressure.
    #[arg(long, default_value_t = 200)]
    pub count: usize,
    /// Largest scale function, in instructions. The corpus goes to 1M (256k for the shapes
    /// copying real outliers), but past a few tens of thousands of instructions six timed runs
    /// of three allocators plus regalloc2's checker take tens of minutes on a 2-core machine;
    /// `compare --corpus scale` measures the large sizes.
    #[arg(long, default_value_t = 16_384)]
    pub max_insts: usize,
    /// Per-run time budget on the scale corpus (an allocator over it skips larger sizes).
    #[arg(long, default_value_t = 30.0)]
    pub budget_secs: f64,
    /// Largest function that regalloc2's checker verifies (see `compare --check-max-insts`).
    #[arg(long, default_value_t = 100_000)]
    pub check_max_insts: usize,
    /// Skip code speed (the JIT runs).
    #[arg(long)]
    pub no_run: bool,
    /// Time code speed over code placements (`compare --run --layout-shifts`).
    #[arg(long)]
    pub run_layout_shifts: bool,
    /// Also measure real WebAssembly: every module under this folder (Sightglass layout) as
    /// the `wasm:` compile corpus, and its runnable benchmarks with `wasm bench`.
    #[arg(long)]
    pub wasm: Option<PathBuf>,
    /// Iterations per module and allocator for the Wasm benchmarks.
    #[arg(long, default_value_t = 5)]
    pub wasm_iterations: usize,
    /// Shift each Wasm benchmark iteration's code by 0-63 bytes, alike for every allocator
    /// (`wasm bench --layout-shifts`), so run times are medians over code placements.
    #[arg(long)]
    pub wasm_layout_shifts: bool,
    /// Fuzz functions per register count in the ablation section.
    #[arg(long, default_value_t = 1000)]
    pub ablate_count: usize,
}

/// The `compare` settings of one corpus of the report.
fn compare_args(args: &ReportArgs, corpus: &str, allocators: &[Allocator]) -> CompareArgs {
    CompareArgs {
        corpus: corpus.into(),
        allocators: allocators.to_vec(),
        regs: None,
        json: false,
        run: false,
        programs: Vec::new(),
        layout_shifts: false,
        reps: args.reps,
        count: args.count,
        max_insts: args.max_insts,
        budget_secs: args.budget_secs,
        check_max_insts: args.check_max_insts,
        phases: false,
        by_size: false,
        baseline: None,
        // Cranelift's functions get the callee-saved registers the Cranelift hook gives
        // them on this host (`ragreedy_jit::alloc`); the fuzz and scale corpora are not
        // Cranelift's and keep every non-preferred register callee-saved.
        x64_sysv: cfg!(all(target_arch = "x86_64", not(windows)))
            && (corpus == "cranelift" || corpus.starts_with("wasm:")),
    }
}

pub fn main(args: ReportArgs) -> i32 {
    match report(&args) {
        Ok(failed) => i32::from(failed),
        Err(e) => {
            eprintln!("report: {e}");
            2
        }
    }
}

fn report(args: &ReportArgs) -> Result<bool, String> {
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    let path = args.out.join("benchmarks.md");
    if let Ok(old) = std::fs::read_to_string(&path) {
        notes::check(&old).map_err(|e| format!("{}: {e}; nothing was run", path.display()))?;
    }
    // The report's tables are greedy against regalloc2's two; the classic allocators are
    // measured with `compare --allocators`.
    let allocators = vec![Allocator::Greedy, Allocator::Ion, Allocator::Fastalloc];
    let cmp_args = |corpus: &str| compare_args(args, corpus, &allocators);
    let img = args.out.join("img");
    std::fs::create_dir_all(&img).map_err(|e| format!("{}: {e}", img.display()))?;

    let mut results: Vec<CorpusResult> = Vec::new();
    for corpus in ["cranelift", "fuzz", "scale"] {
        let t = Instant::now();
        let r = compare::run_corpus(&CorpusSpec::parse(corpus), &cmp_args(corpus))?;
        eprintln!(
            "{corpus}: {} functions in {:.0} s",
            r.functions.len(),
            t.elapsed().as_secs_f64()
        );
        for l in compare::summary_lines(&r) {
            eprintln!("{l}");
        }
        results.push(r);
    }
    let speed = if args.no_run {
        None
    } else {
        let t = Instant::now();
        let progs = codespeed::measure_all(
            corpora::BENCH_PROGRAMS,
            &allocators,
            args.reps.max(5),
            args.run_layout_shifts,
            |_| {},
        );
        eprintln!(
            "code speed: {} programs in {:.0} s",
            progs.len(),
            t.elapsed().as_secs_f64()
        );
        Some(progs)
    };

    let wasm = match &args.wasm {
        None => None,
        Some(dir) => Some(wasm_section(dir, args, &allocators, &img)?),
    };

    let (cl, fz, sc) = (&results[0], &results[1], &results[2]);
    plot::scale_times(&img.join("scale-time.svg"), sc, &allocators)?;
    plot::cost_ratio_distribution(&img.join("cost-ratio.svg"), &[cl, fz], &allocators)?;
    if let Some(p) = &speed {
        plot::code_speed(&img.join("code-speed.svg"), p, &allocators)?;
    }

    let mut md = page(
        args,
        &results,
        speed.as_deref(),
        &allocators,
        started.elapsed().as_secs_f64(),
    );
    if let Some((section, _)) = &wasm {
        md.push_str(section);
    }
    let t = Instant::now();
    let (section, ablation_failed) = ablation_section(args)?;
    eprintln!("ablation in {:.0} s", t.elapsed().as_secs_f64());
    md.push_str(&section);
    // The hand-written notes of the page being replaced go into the new one; a page whose
    // notes cannot be read stays as it is.
    let md = match std::fs::read_to_string(&path) {
        Ok(old) => notes::carry(&old, &md)
            .map_err(|e| format!("{}: {e}; the page was not rewritten", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => md,
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    std::fs::write(&path, md).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!(
        "wrote {} and {}/*.svg in {:.0} s",
        path.display(),
        img.display(),
        started.elapsed().as_secs_f64()
    );
    let failed = ablation_failed
        || results
            .iter()
            .chain(wasm.as_ref().map(|(_, r)| r))
            .any(|r| {
                r.summaries
                    .iter()
                    .any(|s| s.allocator == "greedy" && s.checker_failures > 0)
            });
    Ok(failed)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn page(
    args: &ReportArgs,
    results: &[CorpusResult],
    speed: Option<&[codespeed::ProgramSpeed]>,
    allocators: &[Allocator],
    secs: f64,
) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "# Benchmarks\n");
    let _ = writeln!(
        w,
        "Generated by `cargo run --release --bin ragreedy -- report` (do not edit the \
         tables by hand; rerun it). Hand-written notes go between `<!-- notes: KEY -->` and \
         `<!-- end notes: KEY -->` lines, which a rerun carries into the new page. All \
         figures on this page come from one run ({secs:.0} s) on {} \
         ({} logical CPUs, shared), so they may be compared with each other and with nothing \
         else. Definitions: [`docs/metrics.md`](metrics.md) (weighted cost, \
         timing, corpora); ion and fastalloc are regalloc2 0.15.2.\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let _ = writeln!(w, "## How to read this page\n");
    let _ = writeln!(
        w,
        "- **cost ratio**: per function `(weighted cost + 1) / (ion weighted cost + 1)`, \
         aggregated as a geometric mean over the functions both the allocator and ion \
         allocated and passed the checker. The `+ 1` (docs/metrics.md): a function where \
         both allocators need no move, spill or callee-saved register counts as 1.0 instead of 0/0, and a function \
         where one of them needs a single register move is not an infinite ratio.\n\
         - **time ratio**: per function, the median of {} timed runs of the allocator over \
         ion's median, geometric mean over the same functions. Runs are interleaved \
         (A B C A B C …), ion and fastalloc run through `regalloc2::run_with_ctx` with one \
         reused `Ctx` (whose `Output` is reused too), greedy through `run_with_context_into` \
         with one reused `Context` and `Output`. The \
         checker runs outside the timed part. Below 1.0 is better than ion.\n\
         - **compared**: the functions both the allocator and ion allocated and passed the \
         checker. **total time, weighted cost, spills, reloads, moves, spill slots, \
         callee-saved regs** are sums over that set (for ion's row: every function ion \
         allocated), so a row compares with ion's row when its errors and failures are 0; \
         counts are unweighted.\n\
         - **errors**: the allocator returned `Err` (e.g. `TooManyLiveRegs` on an \
         over-constrained fuzz input; ion panics on such inputs count here too). \
         **checker failures**: the output was rejected by regalloc2's checker or testkit's \
         structural rules, or the allocator panicked.\n\
         - Timing: the `fuzzing` feature the corpora need turns on regalloc2's `trace-log`; \
         this binary compiles `trace!` out of release builds (log's `release_max_level_debug`), \
         so ion and fastalloc run as in Cranelift's own build, without a log-level check per \
         trace record. The machine is shared with other work, so single small-function \
         timings are noisy; the geometric means over many functions are the stable figures.\n",
        args.reps
    );
    let titles = [
        (
            "cranelift",
            "The regalloc2 inputs Cranelift 0.135 produces for the programs of `bench-programs/` \
             (x64 SysV environment, the file's own Cranelift settings): the committed dump \
             `bench-programs/dump/` written by `ragreedy dump` (embedded in the binary).",
        ),
        (
            "fuzz",
            "regalloc2's fuzzer `Func`s from seeds 0, 1, … (rejected seeds skipped), in the \
             fuzzer's full environment (24 preferred + 8 non-preferred registers per class) \
             and restricted to 8 and 4 allocatable registers per class.",
        ),
        (
            "scale",
            "Generated Cranelift-x64-shaped functions (`crates/testkit/src/scale.rs`): \
             straight code and loops nested up to depth 3, two-address ops, calls with SysV \
             clobbers, a few dozen values live at every point (a long-lived pool plus a \
             window of recent values), so every size spills. The corpus goes from 1k to 1M \
             instructions; this page stops at `--max-insts` (below) to keep `report` under \
             ten minutes on a shared 2-core machine (regalloc2's checker alone takes minutes \
             at 1M); `ragreedy compare --corpus scale --reps 1 --check-max-insts 100000` \
             measures up to 1M.",
        ),
    ];
    for (r, (name, blurb)) in results.iter().zip(titles) {
        let _ = writeln!(w, "## Corpus `{name}`\n\n{blurb}\n");
        for p in &r.problems {
            let _ = writeln!(w, "- note: {p}");
        }
        if !r.problems.is_empty() {
            w.push('\n');
        }
        let _ = writeln!(w, "{}", compare::markdown_table(r));
        if name == "scale" {
            let _ = writeln!(w, "![allocation time vs size](img/scale-time.svg)\n");
            let _ = writeln!(w, "{}", scale_table(r, allocators));
        } else {
            let worst = compare::worst_table(r, 10);
            if !worst.is_empty() {
                let _ = writeln!(
                    w,
                    "Where greedy is worst against ion (weighted cost):\n\n{worst}"
                );
            }
        }
        let failures = compare::failure_lines(r);
        if !failures.is_empty() {
            let _ = writeln!(w, "Checker failures:\n");
            for f in failures {
                let _ = writeln!(w, "- {f}");
            }
            w.push('\n');
        }
        let _ = writeln!(w, "```\n{}\n```\n", compare::summary_lines(r).join("\n"));
    }
    let _ = writeln!(w, "## Distribution of cost ratios\n");
    let _ = writeln!(
        w,
        "Each curve is one allocator on one corpus, its per-function cost ratios against ion \
         sorted ascending: the part of a curve below 1.0 is the share of functions where it \
         allocates more cheaply than ion.\n\n![cost ratio distribution](img/cost-ratio.svg)\n"
    );
    if let Some(progs) = speed {
        let _ = writeln!(w, "## Code speed\n");
        let _ = writeln!(
            w,
            "Each bench program JIT-compiled with each allocator (file settings as in \
             `ragreedy run`, so mostly `opt_level=none`); its last `; run:` line is checked, \
             then its entry function is called with the timing argument of \
             `bench-programs/README.md` (tens to hundreds of ms per call; the result must equal \
             ion's) in samples of at least 20 ms (calls per sample calibrated once per \
             program), samples interleaved across allocators, median of {} samples. The jit \
             crate's trampoline (argument marshalling) is inside the timed call, the same for \
             every allocator and negligible at these call lengths.\n",
            args.reps.max(5)
        );
        let placements = progs.iter().map(|p| p.placements).max().unwrap_or(1);
        if placements > 1 {
            let _ = writeln!(
                w,
                "With `--run-layout-shifts`, round `r` runs every allocator's code compiled \
                 shifted by the same `layout_shift(r)` bytes (self-moves at each function's \
                 entry), so each median is over {} code placements: a short loop's speed \
                 depends on where it lands, and a register choice that changes an encoding's \
                 length moves every loop after it.\n",
                placements
            );
        }
        let _ = writeln!(w, "![code speed](img/code-speed.svg)\n");
        let _ = writeln!(w, "{}", compare::speed_table(progs, allocators));
        let _ = writeln!(
            w,
            "```\n{}\n```\n",
            compare::speed_summary_lines(progs, allocators).join("\n")
        );
        w.push_str(&notes::anchor(notes::CODE_SPEED));
    }
    let _ = writeln!(w, "## Reproducing\n");
    let _ = writeln!(
        w,
        "```\ncargo run --release --bin ragreedy -- report            # this page\n\
         cargo run --release --bin ragreedy -- compare           # cranelift corpus\n\
         cargo run --release --bin ragreedy -- compare --corpus fuzz --regs 8\n\
         cargo run --release --bin ragreedy -- compare --corpus scale --max-insts 100000\n\
         cargo run --release --bin ragreedy -- compare --run     # code speed\n\
         cargo run --release --bin ragreedy -- compare --corpus DIR --json   # dumped functions\n\
         cargo bench --bench alloc                               # criterion, greedy vs ion\n```\n\n\
         This run: `--reps {} --count {} --max-insts {} --budget-secs {} --check-max-insts {}`.",
        args.reps, args.count, args.max_insts, args.budget_secs, args.check_max_insts
    );
    s
}

/// The ablation section: `ragreedy ablate` on the Wasm corpus (when given) and on the fuzz
/// corpus at 4 and 8 registers per class.
fn ablation_section(args: &ReportArgs) -> Result<(String, bool), String> {
    let ablate_args = AblateArgs {
        count: args.ablate_count,
        seed: 0,
        regs: vec![4, 8],
        full: false,
        wasm: args.wasm.iter().cloned().collect(),
        reps: args.reps.clamp(1, 3),
    };
    let (tables, failed) = ablate::tables(&ablate_args).map_err(|(_, e)| e)?;
    let mut md = String::from("\n## Ablation: what each mechanism buys\n\n");
    let _ = writeln!(
        md,
        "`Options::default()`, then each mechanism turned off alone (`ragreedy ablate{} \
         --regs 4 --regs 8 --count {} --reps {}`). Geomean of the weighted-cost ratio against \
         ion over the functions both allocate; time is the sum of each function's fastest of \
         the repetitions, configurations interleaved per function (the first rotating), \
         against the mean of the default configuration's and its control's (the default run \
         again with a context of its own, the last row: its distance from 1.000 is the \
         column's noise floor), which the largest functions decide; time per function is the \
         geometric mean over functions of each one's fastest against the mean of the two \
         default runs' on it, which the many small functions decide; the last columns show \
         the mechanism's own counter (default → off) and checker failures.",
        // The folder is the reader's own: the page names no path of the machine it ran on.
        if args.wasm.is_some() {
            " --wasm DIR"
        } else {
            ""
        },
        ablate_args.count,
        ablate_args.reps
    );
    md.push('\n');
    md.push_str(&notes::anchor(notes::ABLATION));
    md.push_str(&tables);
    Ok((md, failed))
}

/// The Wasm section of the page: the `wasm:` compile corpus (one row group per module) and the
/// benchmarks' compile and run times with their plot. Returns the Markdown and the corpus
/// result (its checker failures fail the report).
fn wasm_section(
    dir: &std::path::Path,
    args: &ReportArgs,
    allocators: &[Allocator],
    img: &std::path::Path,
) -> Result<(String, CorpusResult), String> {
    let t = Instant::now();
    let spec = CorpusSpec::Wasm(vec![dir.to_owned()]);
    let mut corpus = compare::run_corpus(&spec, &compare_args(args, &spec.name(), allocators))?;
    // The page names the folder, not the path it had on the machine that ran the report.
    let folder = dir.file_name().unwrap_or(dir.as_os_str()).to_string_lossy();
    corpus.corpus = format!("wasm:{folder}");
    eprintln!(
        "wasm corpus: {} functions in {:.0} s",
        corpus.functions.len(),
        t.elapsed().as_secs_f64()
    );
    for l in compare::summary_lines(&corpus) {
        eprintln!("{l}");
    }
    let t = Instant::now();
    let modules = ragreedy_wasm::discover::modules(&[dir.to_owned()]).map_err(|e| e.to_string())?;
    let options = ragreedy_wasm::bench::BenchOptions {
        allocators: allocators.to_vec(),
        iterations: args.wasm_iterations,
        layout_shifts: args.wasm_layout_shifts,
    };
    let benches = ragreedy_wasm::bench::bench_modules(&modules, &options, |_| {})?;
    eprintln!(
        "wasm bench: {} modules in {:.0} s",
        benches.len(),
        t.elapsed().as_secs_f64()
    );
    let plotted = plot::wasm_run_ratio(&img.join("wasm-run.svg"), &benches, allocators).is_ok();

    let mut s = String::new();
    let w = &mut s;
    let names: Vec<String> = modules
        .iter()
        .map(|m| ragreedy_wasm::module_name(m))
        .collect();
    let _ = writeln!(w, "## Real WebAssembly (Wasmtime 48)\n");
    let _ = writeln!(
        w,
        "{} modules given with `--wasm` ({}), compiled by Wasmtime 48 (Cranelift 0.135.8, \
         default settings) with each allocator under its Cranelift.\n",
        modules.len(),
        names.join(", ")
    );
    let _ = writeln!(w, "### Compile corpus\n");
    let _ = writeln!(
        w,
        "Every regalloc2 call Wasmtime makes while compiling a module (its Wasm functions and \
         trampolines, compiled on one thread so that `module.wasm#N` names the N-th call), \
         measured, checked and costed as the other corpora are; one row group per module. \
         **total time ratio** is the sum of the allocator's times over the sum of ion's on the \
         compared functions: the figure that decides a module's compile time, where the \
         geometric mean hides the few large functions.\n"
    );
    for p in &corpus.problems {
        let _ = writeln!(w, "- note: {p}");
    }
    if !corpus.problems.is_empty() {
        w.push('\n');
    }
    let _ = writeln!(w, "{}", compare::markdown_table(&corpus));
    let worst = compare::worst_table(&corpus, 10);
    if !worst.is_empty() {
        let _ = writeln!(
            w,
            "Where greedy is worst against ion (weighted cost):\n\n{worst}"
        );
    }
    let failures = compare::failure_lines(&corpus);
    if !failures.is_empty() {
        let _ = writeln!(w, "Checker failures:\n");
        for f in failures {
            let _ = writeln!(w, "- {f}");
        }
        w.push('\n');
    }
    let _ = writeln!(
        w,
        "```\n{}\n```\n",
        compare::summary_lines(&corpus).join("\n")
    );
    w.push_str(&notes::anchor(notes::WASM_COMPILE));
    let _ = writeln!(w, "### Compile and run time (Sightglass protocol)\n");
    let _ = writeln!(
        w,
        "`ragreedy wasm bench`: per module and allocator, {} iterations interleaved across \
         allocators. Compile: the whole module through Wasmtime (parallel compilation, as \
         embedders run it; each pool thread reuses its allocator context). Run: a fresh \
         instance per iteration, the `bench.start`..`bench.end` window, median (min..max). \
         Output compared byte for byte with the module's `*.stdout.expected` / \
         `*.stderr.expected`.{} Why a lower weighted cost has not meant a matching drop in \
         run time: [docs/wasm.md](wasm.md#weighted-cost-and-run-time).\n",
        args.wasm_iterations,
        if args.wasm_layout_shifts {
            " Iteration `i` shifts every allocator's code by the same 0-63 bytes \
             (`--layout-shifts`: self-moves at each function's entry), so each median is \
             over placements and the min..max ranges include the placement noise \
             ([docs/wasm.md](wasm.md#code-placement))."
        } else {
            ""
        }
    );
    if plotted {
        let _ = writeln!(w, "![Wasm run time vs ion](img/wasm-run.svg)\n");
    }
    let _ = writeln!(w, "{}", crate::wasm_cmd::bench_table(&benches, allocators));
    let errors = crate::wasm_cmd::error_lines(&benches, true);
    if !errors.is_empty() {
        let _ = writeln!(w, "Modules that could not be run or measured:\n");
        for e in errors {
            let _ = writeln!(w, "- {e}");
        }
        w.push('\n');
    }
    let lines: Vec<String> = allocators
        .iter()
        .map(|&a| ragreedy_wasm::bench::summary_line(&benches, a))
        .collect();
    let _ = writeln!(w, "```\n{}\n```\n", lines.join("\n"));
    w.push_str(&notes::anchor(notes::WASM_RUN));
    Ok((s, corpus))
}

/// Median time per allocator for each scale size.
fn scale_table(r: &CorpusResult, allocators: &[Allocator]) -> String {
    let mut s = String::from("| function | instructions | blocks | vregs |");
    for a in allocators {
        let _ = write!(s, " {a} |");
    }
    s.push_str("\n|---|---:|---:|---:|");
    for _ in allocators {
        s.push_str("---:|");
    }
    s.push('\n');
    for f in &r.functions {
        let _ = write!(
            s,
            "| {} | {} | {} | {} |",
            f.name, f.insts, f.blocks, f.vregs
        );
        for &a in allocators {
            let cell = match f.get(a) {
                Some(x) => match x.time_ns {
                    Some(ns) => compare::fmt_time(ns),
                    None => format!("{:?}", x.status).to_lowercase(),
                },
                None => "–".into(),
            };
            let _ = write!(s, " {cell} |");
        }
        s.push('\n');
    }
    s
}
