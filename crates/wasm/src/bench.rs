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
//! by the same [`layout_shift`] of 0-63 bytes (self-moves at each function's entry, see
//! [`entry_padding`]), so the medians are taken over code placements rather than at the one
//! placement each allocator happens to produce. Loop heads are not aligned by Cranelift, so a
//! hot loop that straddles one more cache line or fetch window than another allocator's can
//! run 20% slower with the same instructions; shifting both alike makes that a noise both
//! share (the idea behind Stabilizer's layout randomisation, Curtsinger and Berger, 2013).

use crate::engine::{self, Compilation};
use crate::wasi::{self, RunSetup, Stdio};
use crate::{FileError, module_name, one_line};
use ragreedy_jit::Allocator;
use ragreedy_testkit::cost::geomean;
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

/// The code shift of iteration `i`, in bytes: 41 is odd, so 64 consecutive iterations take
/// every shift in 0..64 once, and any run of them spreads over the range (0, 41, 18, 59, ...).
pub fn layout_shift(iteration: usize) -> u32 {
    (iteration as u32).wrapping_mul(41) % 64
}

/// Self-moves whose x86-64 encodings add up to `bytes`, or to `bytes + 64` where `bytes` is
/// 1, 2 or 5 (the shifts no sum of 3s and 4s makes; a cache line more is the same placement):
/// `mov %rax,%rax` (`48 89 c0`, 3 bytes) and `movdqa %xmm0,%xmm0` (`66 0f 6f c0`, 4 bytes;
/// Cranelift moves a float register as a whole vector), as few as possible. Neither register
/// is callee-saved in any x86-64 convention Cranelift uses for Wasm (System V, Wasmtime's
/// tail calls), so no save is added to the prologue.
pub fn entry_padding(bytes: u32) -> Vec<regalloc2::PReg> {
    use regalloc2::{PReg, RegClass};
    let bytes = if matches!(bytes, 1 | 2 | 5) {
        bytes + 64
    } else {
        bytes
    };
    let fours = (0..=bytes / 4)
        .rev()
        .find(|&f| (bytes - 4 * f) % 3 == 0)
        .expect("every shift but 1, 2 and 5 is a sum of 3s and 4s");
    let threes = (bytes - 4 * fours) / 3;
    let mut v = vec![PReg::new(0, RegClass::Float); fours as usize];
    v.extend(std::iter::repeat_n(
        PReg::new(0, RegClass::Int),
        threes as usize,
    ));
    v
}

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
}

/// Measure every module; `progress` is told each module's name before it starts.
pub fn bench_modules(
    modules: &[PathBuf],
    options: &BenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<Vec<ModuleBench>, String> {
    if options.layout_shifts && !cfg!(target_arch = "x86_64") {
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
            if options.layout_shifts {
                regalloc2::set_entry_padding(&entry_padding(layout_shift(iteration)));
            }
            let result = one_iteration(engine, path, &bytes, &setup, &expected, r);
            regalloc2::set_entry_padding(&[]);
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
) -> Result<(), String> {
    r.allocator.select_process_wide();
    let compiled = engine::compile(engine, path, bytes);
    regalloc2::set_allocator(None);
    let (module, compile_time) = compiled.map_err(|e: FileError| e.cause)?;
    r.compile.push(compile_time);
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
struct Expected {
    stdout: Option<(PathBuf, Vec<u8>)>,
    stderr: Option<(PathBuf, Vec<u8>)>,
}

impl Expected {
    fn for_module(path: &Path) -> Expected {
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

    fn compare(&self, stdout: &[u8], stderr: &[u8]) -> OutputCheck {
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

/// The closing line per allocator:
/// `wasm-bench ALLOC modules=N compile_ratio=X run_ratio=Y mismatches=M` (ratios: geomeans over
/// the modules both this allocator and ion measured; mismatches: modules whose output differed).
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
    format!(
        "wasm-bench {a} modules={measured} compile_ratio={} run_ratio={} mismatches={mismatches}",
        fmt(geomean(results.iter().filter_map(|m| m.compile_ratio(a)))),
        fmt(geomean(results.iter().filter_map(|m| m.run_ratio(a)))),
    )
}
