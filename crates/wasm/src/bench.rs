//! Sightglass's protocol, per module and allocator: compile the whole module as Wasmtime does
//! (parallel compilation, each pool thread keeping its allocator context), run it in a fresh
//! store with its own folder pre-opened as `.`, time the `bench.start`..`bench.end` window, and
//! compare standard output and error byte for byte with `NAME.stdout.expected` /
//! `NAME.stderr.expected` where the folder has them (`NAME` is the module's file stem).
//!
//! Iterations are interleaved across allocators (A B A B …, the first allocator rotating each
//! iteration) so that machine noise falls on all of them alike; compile and run times are the
//! medians over the iterations, with min..max kept for noise bars. An allocator whose compile,
//! run or output fails on a module is marked failed there and not run again on it; the other
//! allocators and modules are still measured.
//!
//! With [`BenchOptions::layout_shifts`], iteration `i` compiles every allocator's code shifted
//! by the same [`layout_shift`] of 0-63 bytes (self-moves at each function's entry; the
//! `ragreedy_jit::layout` module says why), so the medians are taken over code placements
//! rather than at the one placement each allocator happens to produce.
//!
//! The geometric means over modules come with a 95% interval ([`ratio_interval`]): a paired
//! bootstrap over the iterations, which says how far another run of as many iterations could
//! land from this one (placements and machine noise both), so that a target such as "at most
//! 0.96 of ion's run time" can be read against the run's own spread rather than one figure.

use crate::engine::{self, Compilation};
use crate::wasi::{self, RunSetup, Stdio};
use crate::{FileError, module_name, one_line};
use ragreedy_jit::Allocator;
use ragreedy_jit::layout::with_layout_shift;
use ragreedy_testkit::cost::geomean;
use ragreedy_testkit::fuzzgen::SplitMix64;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wasmtime::Engine;

/// What `ragreedy wasm bench` measures.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub allocators: Vec<Allocator>,
    pub iterations: usize,
    /// Shift each iteration's code by [`layout_shift`] bytes (x86-64 hosts only).
    pub layout_shifts: bool,
}

pub use ragreedy_jit::layout::{entry_padding, layout_shift};

/// Median and spread of a set of durations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    pub median: Duration,
    pub min: Duration,
    pub max: Duration,
}

impl Spread {
    pub fn of(samples: &[Duration]) -> Option<Spread> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_unstable();
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// How the module's output compared with the expected files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputCheck {
    /// Every expected file present matched, on every iteration.
    Ok,
    /// The folder has no expected output for this module.
    NoExpectation,
    /// A stream differed from its expected file (which one, and where).
    Mismatch(String),
}

/// One allocator on one module.
#[derive(Clone, Debug)]
pub struct AllocatorBench {
    pub allocator: Allocator,
    pub compile: Vec<Duration>,
    pub run: Vec<Duration>,
    /// Bytes of machine code in the module's functions (Wasmtime's trampolines and the
    /// alignment between functions left out), from an iteration compiled without a layout
    /// shift: iteration 0's shift is 0, and the same input always compiles to the same code.
    pub code_bytes: Option<u64>,
    pub output: OutputCheck,
    /// A compile error, trap, non-zero exit or broken `bench.*` protocol.
    pub error: Option<String>,
}

impl AllocatorBench {
    pub fn failed(&self) -> bool {
        self.error.is_some() || matches!(self.output, OutputCheck::Mismatch(_))
    }
    pub fn compile_spread(&self) -> Option<Spread> {
        Spread::of(&self.compile)
    }
    pub fn run_spread(&self) -> Option<Spread> {
        Spread::of(&self.run)
    }
}

/// One module.
#[derive(Clone, Debug)]
pub struct ModuleBench {
    pub path: PathBuf,
    /// The file name (`benchmark.wasm` files are named by their folder: `bz2/benchmark.wasm`).
    pub name: String,
    /// Set when the module could not be measured at all (unreadable, invalid).
    pub error: Option<String>,
    pub results: Vec<AllocatorBench>,
}

impl ModuleBench {
    pub fn get(&self, a: Allocator) -> Option<&AllocatorBench> {
        self.results.iter().find(|r| r.allocator == a)
    }

    fn ratio(&self, a: Allocator, pick: impl Fn(&AllocatorBench) -> Option<Spread>) -> Option<f64> {
        let x = self.get(a).filter(|r| !r.failed()).and_then(&pick)?;
        let ion = self
            .get(Allocator::Ion)
            .filter(|r| !r.failed())
            .and_then(&pick)?;
        Some(x.median.as_secs_f64() / ion.median.as_secs_f64().max(1e-12))
    }

    /// Median compile time against ion's.
    pub fn compile_ratio(&self, a: Allocator) -> Option<f64> {
        self.ratio(a, AllocatorBench::compile_spread)
    }

    /// Median run time against ion's.
    pub fn run_ratio(&self, a: Allocator) -> Option<f64> {
        self.ratio(a, AllocatorBench::run_spread)
    }

    /// Machine code bytes against ion's, where both ran correctly (as for the time ratios).
    pub fn code_ratio(&self, a: Allocator) -> Option<f64> {
        let bytes = |a| {
            self.get(a)
                .filter(|r| !r.failed())
                .and_then(|r| r.code_bytes)
        };
        let (ours, ion) = (bytes(a)?, bytes(Allocator::Ion)?);
        Some(ours as f64 / (ion as f64).max(1.0))
    }
}

/// Measure every module; `progress` is told each module's name before it starts.
pub fn bench_modules(
    modules: &[PathBuf],
    options: &BenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<Vec<ModuleBench>, String> {
    if options.layout_shifts && !ragreedy_jit::layout::SUPPORTED {
        return Err("layout shifts pad with x86-64 encodings: they need an x86-64 host".into());
    }
    let engine = engine::engine(Compilation::Parallel)?;
    Ok(modules
        .iter()
        .map(|m| {
            progress(&module_name(m));
            bench_module(&engine, m, options)
        })
        .collect())
}

/// Measure one module with every allocator of `options`.
pub fn bench_module(engine: &Engine, path: &Path, options: &BenchOptions) -> ModuleBench {
    let mut mb = ModuleBench {
        path: path.to_owned(),
        name: module_name(path),
        error: None,
        results: options
            .allocators
            .iter()
            .map(|&allocator| AllocatorBench {
                allocator,
                compile: Vec::new(),
                run: Vec::new(),
                code_bytes: None,
                output: OutputCheck::NoExpectation,
                error: None,
            })
            .collect(),
    };
    let bytes = match engine::read(path) {
        Ok(b) => b,
        Err(e) => {
            mb.error = Some(e.cause);
            return mb;
        }
    };
    let expected = Expected::for_module(path);
    let setup = RunSetup {
        dir: path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_owned(),
        args: vec![wasi::program_name(path)],
        stdio: Stdio::Capture,
    };
    let n = mb.results.len();
    for iteration in 0..options.iterations.max(1) {
        for k in 0..n {
            let r = &mut mb.results[(k + iteration) % n];
            if r.failed() {
                continue;
            }
            let shift = if options.layout_shifts {
                layout_shift(iteration)
            } else {
                0
            };
            let result = with_layout_shift(shift, || {
                one_iteration(engine, path, &bytes, &setup, &expected, r, shift == 0)
            });
            if let Err(e) = result {
                r.error = Some(e);
            }
        }
        // An invalid module fails every allocator alike: that is the module's error.
        if iteration == 0
            && mb.results.iter().all(|r| r.compile.is_empty())
            && let Some(e) = mb.results.iter().find_map(|r| r.error.clone())
        {
            mb.error = Some(e);
            return mb;
        }
    }
    mb
}

fn one_iteration(
    engine: &Engine,
    path: &Path,
    bytes: &[u8],
    setup: &RunSetup,
    expected: &Expected,
    r: &mut AllocatorBench,
    unshifted: bool,
) -> Result<(), String> {
    r.allocator.select_process_wide();
    let compiled = engine::compile(engine, path, bytes);
    regalloc2::set_allocator(None);
    let (module, compile_time) = compiled.map_err(|e: FileError| e.cause)?;
    r.compile.push(compile_time);
    if unshifted && r.code_bytes.is_none() {
        r.code_bytes = Some(engine::code_bytes(&module));
    }
    let result = wasi::run(engine, &module, setup)?;
    if result.exit_code != 0 {
        return Err(format!("exited with code {}", result.exit_code));
    }
    match (result.bench_starts, result.bench_ends) {
        (1, 1) => {}
        (0, _) => return Err("never called bench.start".into()),
        (_, 0) => return Err("never called bench.end".into()),
        (s, e) => {
            return Err(format!(
                "called bench.start {s} times and bench.end {e} times (once each expected)"
            ));
        }
    }
    let window = result
        .bench_window
        .ok_or("called bench.end before bench.start")?;
    r.run.push(window);
    r.output = expected.compare(&result.stdout, &result.stderr);
    Ok(())
}

/// The expected output files of a module, read once.
pub(crate) struct Expected {
    stdout: Option<(PathBuf, Vec<u8>)>,
    stderr: Option<(PathBuf, Vec<u8>)>,
}

impl Expected {
    pub(crate) fn for_module(path: &Path) -> Expected {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let read = |suffix: &str| {
            let p = path.with_file_name(format!("{stem}.{suffix}.expected"));
            std::fs::read(&p).ok().map(|b| (p, b))
        };
        Expected {
            stdout: read("stdout"),
            stderr: read("stderr"),
        }
    }

    pub(crate) fn compare(&self, stdout: &[u8], stderr: &[u8]) -> OutputCheck {
        if self.stdout.is_none() && self.stderr.is_none() {
            return OutputCheck::NoExpectation;
        }
        for (what, got, want) in [
            ("stdout", stdout, &self.stdout),
            ("stderr", stderr, &self.stderr),
        ] {
            if let Some((file, want)) = want
                && got != want.as_slice()
            {
                return OutputCheck::Mismatch(describe_difference(what, file, got, want));
            }
        }
        OutputCheck::Ok
    }
}

fn describe_difference(what: &str, file: &Path, got: &[u8], want: &[u8]) -> String {
    let at = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let line = want[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let snippet = |b: &[u8]| {
        one_line(&String::from_utf8_lossy(
            &b[at.min(b.len())..(at + 40).min(b.len())],
        ))
    };
    format!(
        "{what} differs from {} at byte {at} (line {line}; {} bytes vs {} expected): got `{}`, expected `{}`",
        file.display(),
        got.len(),
        want.len(),
        snippet(got),
        snippet(want)
    )
}

/// Resamples of the bootstrap behind [`ratio_interval`] in [`summary_line`].
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Which times a ratio compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    Compile,
    Run,
}

impl Measure {
    fn samples(self, r: &AllocatorBench) -> &[Duration] {
        match self {
            Measure::Compile => &r.compile,
            Measure::Run => &r.run,
        }
    }
}

/// The middle `level` (0.95 for a 95% interval) of the geometric mean over modules of `a`'s
/// median time against ion's (`measure`), by a paired bootstrap over iterations: each of
/// `resamples` draws picks, per module, as many iterations as were measured, with
/// replacement, and takes both allocators' times from the same picked iterations (an
/// iteration is one placement and one stretch of machine time for both), then their
/// medians' ratio; the interval is the draws' percentiles. Deterministic (a fixed seed).
/// `None` where no module has both allocators measured.
pub fn ratio_interval(
    results: &[ModuleBench],
    a: Allocator,
    measure: Measure,
    level: f64,
    resamples: usize,
) -> Option<(f64, f64)> {
    // Per module, the iterations both measured, paired by index (iteration `i` of each).
    let pairs: Vec<(&[Duration], &[Duration])> = results
        .iter()
        .filter_map(|m| {
            let ours = m.get(a).filter(|r| !r.failed())?;
            let ion = m.get(Allocator::Ion).filter(|r| !r.failed())?;
            let n = measure.samples(ours).len().min(measure.samples(ion).len());
            (n > 0).then(|| (&measure.samples(ours)[..n], &measure.samples(ion)[..n]))
        })
        .collect();
    if pairs.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64(0x5eed_b007);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut draws: Vec<f64> = (0..resamples)
        .map(|_| {
            let log_sum: f64 = pairs
                .iter()
                .map(|&(ours, ion)| {
                    x.clear();
                    y.clear();
                    for _ in 0..ours.len() {
                        let i = rng.below(ours.len() as u64) as usize;
                        x.push(ours[i]);
                        y.push(ion[i]);
                    }
                    let median =
                        |v: &[Duration]| Spread::of(v).map_or(0.0, |s| s.median.as_secs_f64());
                    (median(&x) / median(&y).max(1e-12)).max(1e-12).ln()
                })
                .sum();
            (log_sum / pairs.len() as f64).exp()
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    Some((at((1.0 - level) / 2.0), at((1.0 + level) / 2.0)))
}

/// The closing line per allocator:
/// `wasm-bench ALLOC modules=N compile_ratio=X run_ratio=Y code_ratio=C mismatches=M
/// compile_ratio_95=L..H run_ratio_95=L..H` (ratios: geomeans over the modules both this
/// allocator and ion measured, `code_ratio` of machine code bytes; mismatches: modules whose
/// output differed; `_95`: [`ratio_interval`]'s 95% interval).
pub fn summary_line(results: &[ModuleBench], a: Allocator) -> String {
    let measured = results
        .iter()
        .filter(|m| m.get(a).is_some_and(|r| !r.failed() && !r.run.is_empty()))
        .count();
    let mismatches = results
        .iter()
        .filter(|m| {
            m.get(a)
                .is_some_and(|r| matches!(r.output, OutputCheck::Mismatch(_)))
        })
        .count();
    let fmt = |x: Option<f64>| x.map_or("nan".to_owned(), |x| format!("{x:.4}"));
    let interval = |m: Measure| {
        ratio_interval(results, a, m, 0.95, BOOTSTRAP_RESAMPLES)
            .map_or("nan".to_owned(), |(lo, hi)| format!("{lo:.4}..{hi:.4}"))
    };
    format!(
        "wasm-bench {a} modules={measured} compile_ratio={} run_ratio={} code_ratio={} mismatches={mismatches} compile_ratio_95={} run_ratio_95={}",
        fmt(geomean(results.iter().filter_map(|m| m.compile_ratio(a)))),
        fmt(geomean(results.iter().filter_map(|m| m.run_ratio(a)))),
        fmt(geomean(results.iter().filter_map(|m| m.code_ratio(a)))),
        interval(Measure::Compile),
        interval(Measure::Run),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(name: &str, ours: Vec<Duration>, ion: Vec<Duration>) -> ModuleBench {
        let bench = |allocator, run: Vec<Duration>| AllocatorBench {
            allocator,
            compile: run.clone(),
            run,
            code_bytes: None,
            output: OutputCheck::Ok,
            error: None,
        };
        ModuleBench {
            path: PathBuf::from(name),
            name: name.into(),
            error: None,
            results: vec![bench(Allocator::Greedy, ours), bench(Allocator::Ion, ion)],
        }
    }

    /// Times around `base` µs, the same placement effect for both allocators at each
    /// iteration (up to `spread` of `base`), ours scaled by `factor`, and machine noise of
    /// up to a fifth on each.
    fn paired(
        rng: &mut SplitMix64,
        n: usize,
        base: f64,
        spread: f64,
        factor: f64,
    ) -> Vec<(Duration, Duration)> {
        (0..n)
            .map(|_| {
                let mut unit = || rng.below(1_000_001) as f64 / 1e6;
                let placement = base * (1.0 + spread * unit());
                let ours = placement * factor * (1.0 + 0.2 * unit());
                let ion = placement * (1.0 + 0.2 * unit());
                (
                    Duration::from_secs_f64(ours * 1e-6),
                    Duration::from_secs_f64(ion * 1e-6),
                )
            })
            .collect()
    }

    fn modules(seed: u64, iterations: usize, factor: f64) -> Vec<ModuleBench> {
        let mut rng = SplitMix64(seed);
        (0..12)
            .map(|k| {
                let (ours, ion) = paired(&mut rng, iterations, 100.0 * (k + 1) as f64, 0.5, factor)
                    .into_iter()
                    .unzip();
                module(&format!("m{k}"), ours, ion)
            })
            .collect()
    }

    #[test]
    fn identical_times_give_a_point_interval_at_one() {
        // Resampling pairs iterations: drawn apart, the two medians would differ.
        let mut rng = SplitMix64(7);
        let times: Vec<Duration> = (0..16)
            .map(|_| Duration::from_micros(100 + rng.below(900)))
            .collect();
        let results = vec![module("same", times.clone(), times)];
        let (lo, hi) = ratio_interval(&results, Allocator::Greedy, Measure::Run, 0.95, 500)
            .expect("both measured");
        assert_eq!((lo, hi), (1.0, 1.0));
    }

    #[test]
    fn interval_holds_the_geomean_and_narrows_with_iterations() {
        let width = |iterations| {
            let results = modules(11, iterations, 0.9);
            let point = geomean(
                results
                    .iter()
                    .filter_map(|m| m.run_ratio(Allocator::Greedy)),
            )
            .expect("measured");
            let (lo, hi) = ratio_interval(&results, Allocator::Greedy, Measure::Run, 0.95, 1000)
                .expect("measured");
            assert!(lo <= point && point <= hi, "{lo} {point} {hi}");
            assert!(lo > 0.8 && hi < 1.0, "{lo}..{hi} around 0.9");
            hi - lo
        };
        let (short, long) = (width(8), width(128));
        assert!(long < short / 2.0, "8 iterations: {short}, 128: {long}");
    }

    #[test]
    fn summary_line_carries_the_intervals() {
        let results = modules(3, 16, 1.1);
        let line = summary_line(&results, Allocator::Greedy);
        let field = |key: &str| {
            let v = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .unwrap_or_else(|| panic!("{key} in {line}"));
            let (lo, hi) = v.split_once("..").expect("lo..hi");
            (
                lo.parse::<f64>().expect("lo"),
                hi.parse::<f64>().expect("hi"),
            )
        };
        let (lo, hi) = field("run_ratio_95=");
        assert!(lo < 1.1 && 1.1 < hi + 0.02 && lo < hi, "{line}");
        assert_eq!(
            field("compile_ratio_95="),
            (lo, hi),
            "compile holds the same times here"
        );
        // Ion against itself: exactly one.
        let ion = summary_line(&results, Allocator::Ion);
        assert!(ion.contains("run_ratio_95=1.0000..1.0000"), "{ion}");
    }

    #[test]
    fn code_ratio_needs_both_sizes_and_is_a_geomean_in_the_summary() {
        let times = vec![Duration::from_millis(1); 3];
        let mut results = vec![
            module("a", times.clone(), times.clone()),
            module("b", times.clone(), times),
        ];
        assert_eq!(results[0].code_ratio(Allocator::Greedy), None);
        for (m, (ours, ion)) in results.iter_mut().zip([(800, 1000), (450, 500)]) {
            m.results[0].code_bytes = Some(ours);
            m.results[1].code_bytes = Some(ion);
        }
        assert_eq!(results[0].code_ratio(Allocator::Greedy), Some(0.8));
        // sqrt(0.8 * 0.9)
        let line = summary_line(&results, Allocator::Greedy);
        assert!(line.contains(" code_ratio=0.8485 "), "{line}");
        // A failed run (an error, or wrong output) leaves the module out.
        results[1].results[0].error = Some("failed".into());
        assert_eq!(results[1].code_ratio(Allocator::Greedy), None);
        let line = summary_line(&results, Allocator::Greedy);
        assert!(line.contains(" code_ratio=0.8000 "), "{line}");
        results[0].results[1].output = OutputCheck::Mismatch("stdout".into());
        assert_eq!(results[0].code_ratio(Allocator::Greedy), None);
    }

    #[test]
    fn no_interval_without_both_allocators() {
        let mut m = module("one", vec![Duration::from_millis(1)], vec![]);
        m.results.truncate(1);
        assert_eq!(
            ratio_interval(&[m], Allocator::Greedy, Measure::Run, 0.95, 100),
            None
        );
    }
}
