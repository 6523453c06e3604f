//! `ragreedy-wasm`: real WebAssembly through Wasmtime 48, with whichever allocator the regalloc2
//! switch selects under Wasmtime's Cranelift (the root workspace patches the switch in, so every
//! function Wasmtime compiles, Wasm bodies and trampolines alike, is allocated through it).
//!
//! - [`engine`]: the Wasmtime engine and module compilation, with errors as one line each.
//! - [`capture`]: a module's allocation problems, one per regalloc2 call, captured while
//!   Wasmtime compiles it on one thread (stable order, stable names `module.wasm#N`).
//! - [`wasi`]: running a WASI preview-1 module (`_start`) with the current folder pre-opened.
//! - [`bench`]: the Sightglass protocol (`bench.start`/`bench.end`, expected output files),
//!   compile and run time per allocator, interleaved.
//! - [`count`]: instructions executed in the `bench.start`..`bench.end` window, counted by
//!   callgrind (deterministic, unlike run time).
//! - [`discover`]: the `.wasm` files under a path.
//! - [`x64`]: which executed instructions are moves, spills and reloads (for `count`).

pub mod bench;
pub mod capture;
pub mod count;
pub mod discover;
pub mod engine;
pub mod wasi;
pub mod x64;

use std::fmt;
use std::path::{Path, PathBuf};

/// Why one file could not be compiled, run or measured: the file and the cause, printed as one
/// line so that a run over many modules reports each failure and goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub path: PathBuf,
    pub cause: String,
}

impl FileError {
    pub fn new(path: &Path, cause: impl Into<String>) -> Self {
        FileError {
            path: path.to_owned(),
            cause: one_line(&cause.into()),
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.cause)
    }
}

impl std::error::Error for FileError {}

/// A module's display name: its file name, or `FOLDER/benchmark.wasm` for Sightglass's layout
/// (where every module is called `benchmark.wasm`), so names stay unique across folders.
pub fn module_name(path: &Path) -> String {
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match path.parent().and_then(|p| p.file_name()) {
        Some(dir) if path.file_stem().is_some_and(|s| s == "benchmark") => {
            format!("{}/{file}", dir.to_string_lossy())
        }
        _ => file,
    }
}

/// Collapse a (possibly multi-line) message into one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A Wasmtime error with its whole chain of causes, on one line.
pub(crate) fn wasmtime_cause(e: &wasmtime::Error) -> String {
    one_line(&format!("{e:#}"))
}
