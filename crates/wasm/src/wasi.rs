//! Running a compiled module under WASI preview 1: a fresh store and instance per run, a folder
//! pre-opened as `.`, `_start` called, the Sightglass `bench.start`/`bench.end` imports defined
//! (harmless for modules that do not import them) and their window recorded.
//!
//! Outcome rules: returning from `_start` is exit code 0, `proc_exit(n)` is exit code `n`;
//! anything else that stops the module (a trap, a missing import, a failed instantiation) is an
//! error with the cause on one line.

use crate::wasmtime_cause;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmtime::{Engine, Linker, Module, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

/// Where a run's standard output and error go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdio {
    /// The host process's own streams (`ragreedy wasm run`).
    Inherit,
    /// Memory, returned in [`RunResult`] (`ragreedy wasm bench` compares them).
    Capture,
}

/// How to run a module.
#[derive(Clone, Debug)]
pub struct RunSetup {
    /// Host folder pre-opened as `.` (relative paths in the guest resolve against it).
    pub dir: PathBuf,
    /// `argv`, program name first.
    pub args: Vec<String>,
    pub stdio: Stdio,
}

/// What one run produced.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub exit_code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `bench.start` .. `bench.end`, when both were called (in that order).
    pub bench_window: Option<Duration>,
    pub bench_starts: u32,
    pub bench_ends: u32,
}

struct Host {
    wasi: WasiP1Ctx,
    bench_start: Option<Instant>,
    bench_end: Option<Instant>,
    bench_starts: u32,
    bench_ends: u32,
}

/// Captured output beyond this is cut off (a runaway module must not fill memory).
const CAPTURE_LIMIT: usize = 256 << 20;

/// Instantiate `module` in a fresh store and call its `_start`.
pub fn run(engine: &Engine, module: &Module, setup: &RunSetup) -> Result<RunResult, String> {
    let mut builder = WasiCtxBuilder::new();
    builder.args(&setup.args);
    builder
        .preopened_dir(&setup.dir, ".", FsPerms::ReadWrite)
        .map_err(|e| {
            format!(
                "cannot pre-open {}: {}",
                setup.dir.display(),
                wasmtime_cause(&e)
            )
        })?;
    let pipes = match setup.stdio {
        Stdio::Inherit => {
            builder.inherit_stdio();
            None
        }
        Stdio::Capture => {
            let out = MemoryOutputPipe::new(CAPTURE_LIMIT);
            let err = MemoryOutputPipe::new(CAPTURE_LIMIT);
            builder.stdout(out.clone()).stderr(err.clone());
            Some((out, err))
        }
    };
    let host = Host {
        wasi: builder.build_p1(),
        bench_start: None,
        bench_end: None,
        bench_starts: 0,
        bench_ends: 0,
    };
    let mut store = Store::new(engine, host);
    let mut linker: Linker<Host> = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |h: &mut Host| &mut h.wasi)
        .map_err(|e| wasmtime_cause(&e))?;
    linker
        .func_wrap("bench", "start", |mut c: wasmtime::Caller<'_, Host>| {
            let h = c.data_mut();
            h.bench_starts += 1;
            h.bench_start = Some(Instant::now());
            bench_window_opens();
        })
        .and_then(|l| {
            l.func_wrap("bench", "end", |mut c: wasmtime::Caller<'_, Host>| {
                bench_window_closes();
                let h = c.data_mut();
                h.bench_ends += 1;
                h.bench_end = Some(Instant::now());
            })
        })
        .map_err(|e| wasmtime_cause(&e))?;
    let instance = linker
        .instantiate(&mut store, module)
        .map_err(|e| format!("instantiation failed: {}", wasmtime_cause(&e)))?;
    let start = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .map_err(|e| format!("no usable `_start` export: {}", wasmtime_cause(&e)))?;
    let exit_code = match start.call(&mut store, ()) {
        Ok(()) => 0,
        Err(e) => match e.downcast_ref::<I32Exit>() {
            Some(I32Exit(code)) => *code,
            None => return Err(format!("trapped: {}", wasmtime_cause(&e))),
        },
    };
    let h = store.data();
    let bench_window = match (h.bench_start, h.bench_end) {
        (Some(s), Some(e)) if e >= s => Some(e - s),
        _ => None,
    };
    let (bench_starts, bench_ends) = (h.bench_starts, h.bench_ends);
    drop(store);
    let (stdout, stderr) = match pipes {
        Some((out, err)) => (out.contents().to_vec(), err.contents().to_vec()),
        None => (Vec::new(), Vec::new()),
    };
    Ok(RunResult {
        exit_code,
        stdout,
        stderr,
        bench_window,
        bench_starts,
        bench_ends,
    })
}

/// `argv[0]` for a module: its file name, as a shell would pass it.
pub fn program_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Called last in the module's `bench.start`: where an instruction count of the window starts
/// (`count` has callgrind dump on entry here). Does nothing; a body of its own keeps the
/// linker from folding it into `bench_window_closes`.
#[inline(never)]
pub fn bench_window_opens() {
    std::hint::black_box(1u8);
}

/// Called first in the module's `bench.end`: where an instruction count of the window ends
/// (`count` has callgrind dump on entry here). Does nothing.
#[inline(never)]
pub fn bench_window_closes() {
    std::hint::black_box(2u8);
}
