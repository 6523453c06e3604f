//! The Wasmtime engine every tool of this crate compiles with, and module compilation.
//!
//! The engine is Wasmtime's default configuration (Cranelift, optimising for speed) with one
//! knob: whether functions are compiled on Wasmtime's thread pool (what embedders run, the
//! default) or one after another on the calling thread (what a stable capture order needs).
//! Which allocator runs under Cranelift is not an engine setting: the regalloc2 switch decides
//! at each call, so one engine serves every allocator.

use crate::{FileError, wasmtime_cause};
use std::path::Path;
use std::time::{Duration, Instant};
use wasmtime::{Config, Engine, Module};

/// How functions of a module are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compilation {
    /// On Wasmtime's thread pool, as embedders run it.
    Parallel,
    /// On the calling thread, in the module's order.
    OneThread,
}

/// A Wasmtime engine for `compilation`.
pub fn engine(compilation: Compilation) -> Result<Engine, String> {
    ragreedy_jit::install();
    let mut config = Config::new();
    config.parallel_compilation(compilation == Compilation::Parallel);
    Engine::new(&config).map_err(|e| wasmtime_cause(&e))
}

/// Read a module (binary `.wasm`, or `.wat` text) from `path`.
pub fn read(path: &Path) -> Result<Vec<u8>, FileError> {
    std::fs::read(path).map_err(|e| FileError::new(path, format!("cannot read: {e}")))
}

/// Compile `bytes` (named `path` in errors) with the allocator the switch selects now, and the
/// wall time Wasmtime took (validation, translation, compilation of every function, linking).
pub fn compile(
    engine: &Engine,
    path: &Path,
    bytes: &[u8],
) -> Result<(Module, Duration), FileError> {
    if !looks_like_wasm(bytes) {
        return Err(FileError::new(
            path,
            "not a WebAssembly module (no `\\0asm` header, and not WAT text)",
        ));
    }
    let t = Instant::now();
    let module =
        Module::new(engine, bytes).map_err(|e| FileError::new(path, wasmtime_cause(&e)))?;
    Ok((module, t.elapsed()))
}

/// Bytes of machine code in `module`'s own functions: the sum of their lengths in the text
/// section, so neither Wasmtime's trampolines nor the alignment padding between functions
/// count.
pub fn code_bytes(module: &Module) -> u64 {
    module.functions().map(|f| f.len as u64).sum()
}

/// A binary module starts with `\0asm`; anything else must at least be text to be WAT.
fn looks_like_wasm(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\0asm")
        || std::str::from_utf8(bytes).is_ok_and(|s| s.trim_start().starts_with('('))
}

/// `module`'s functions in the format of Linux `perf`'s map for JIT code
/// (`/tmp/perf-PID.map`: start address and length in hex, then the name, one function a
/// line), so that `perf report` puts a sample of the running code in its Wasm function.
/// Names follow Wasmtime's objects (`wasm[M]::function[N]::NAME`), as `objdump -d` shows them
/// in `examples/precompile`'s output, so a hot function found here reads there.
pub fn perf_map(module: &Module) -> String {
    use std::fmt::Write as _;
    let base = module.text().as_ptr() as usize;
    let mut out = String::new();
    for f in module.functions() {
        let _ = writeln!(
            out,
            "{:x} {:x} {}",
            base + f.offset,
            f.len,
            function_name(&f)
        );
    }
    out
}

/// Each of `module`'s functions by the name `perf_map` gives it, with its machine code.
pub fn function_code(module: &Module) -> Vec<(String, &[u8])> {
    let text = module.text();
    module
        .functions()
        .map(|f| (function_name(&f), &text[f.offset..f.offset + f.len]))
        .collect()
}

/// `module`'s functions' machine code as text, one function a line: its name (as
/// `perf_map` gives it), a space, its bytes in hex. What `wasm run --save-code` writes, so
/// that a tool reads the very code a run executed: code compiled in another process can
/// differ (Cranelift uses the CPU features it finds, and valgrind presents fewer).
pub fn code_listing(module: &Module) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (name, code) in function_code(module) {
        out.push_str(&name);
        out.push(' ');
        for b in code {
            let _ = write!(out, "{b:02x}");
        }
        out.push('\n');
    }
    out
}

/// Reads `code_listing`'s text back: (name, code) per function.
pub fn parse_code_listing(text: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    text.lines()
        .map(|l| {
            let (name, hex) = l
                .rsplit_once(' ')
                .ok_or_else(|| format!("code listing: not `NAME HEX`: `{l}`"))?;
            if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "code listing: {name}: not an even number of hex digits"
                ));
            }
            let code = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|e| format!("code listing: {name}: {e}"))?;
            Ok((name.to_owned(), code))
        })
        .collect()
}

/// `wasm[M]::function[N]`, then `::NAME` where the module names the function.
fn function_name(f: &wasmtime::ModuleFunction) -> String {
    let mut name = format!(
        "wasm[{}]::function[{}]",
        f.module.as_u32(),
        f.index.as_u32()
    );
    if let Some(n) = &f.name {
        name.push_str("::");
        name.push_str(n);
    }
    name
}
