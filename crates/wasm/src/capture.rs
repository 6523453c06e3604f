//! A module's allocation problems: every regalloc2 call Wasmtime makes while compiling it,
//! captured before allocation (so the result does not depend on the allocator).
//!
//! Invariant: functions are numbered in the order of the calls, and the order is stable because
//! compilation runs on the calling thread (the switch's capture hook is per thread, and Wasmtime
//! then compiles one function after another). ion does the allocation during the capture, so a
//! broken allocator cannot stop one.

use crate::FileError;
use crate::engine::{self, Compilation};
use ragreedy_jit::Allocator;
use ragreedy_testkit::builder::TestFunc;
use regalloc2::{Function, MachineEnv};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

/// One regalloc2 call of a module's compilation.
pub struct CapturedFunction {
    /// Position in the module's sequence of regalloc2 calls.
    pub index: usize,
    pub func: TestFunc,
    pub env: MachineEnv,
}

/// Capture every allocation problem of the module in `path` (`.wasm` or `.wat`).
pub fn capture_file(path: &Path) -> Result<Vec<CapturedFunction>, FileError> {
    let bytes = engine::read(path)?;
    capture_bytes(path, &bytes)
}

/// Capture every allocation problem of `bytes` (named `path` in errors).
pub fn capture_bytes(path: &Path, bytes: &[u8]) -> Result<Vec<CapturedFunction>, FileError> {
    let engine = engine::engine(Compilation::OneThread).map_err(|e| FileError::new(path, e))?;
    let sink: Rc<RefCell<Vec<CapturedFunction>>> = Rc::default();
    let sink2 = sink.clone();
    let capture = Box::new(move |f: &dyn Function, env: &MachineEnv| {
        let mut v = sink2.borrow_mut();
        let index = v.len();
        v.push(CapturedFunction {
            index,
            func: TestFunc::from_function(&regalloc2::DynFunction::vector_spills_as_float(f)),
            env: env.clone(),
        });
    });
    Allocator::Ion.with(|| {
        regalloc2::with_thread_capture(capture, || engine::compile(&engine, path, bytes))
    })?;
    let captured = sink.take();
    if captured.is_empty() {
        return Err(FileError::new(
            path,
            "compiled without a single regalloc2 call: is the switch patched in?",
        ));
    }
    Ok(captured)
}

/// The corpus name of a captured function: `module.wasm#N` (see [`crate::module_name`]).
pub fn function_name(path: &Path, index: usize) -> String {
    format!("{}#{index}", crate::module_name(path))
}
