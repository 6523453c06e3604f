//! Captures the regalloc2 inputs Cranelift produces: every function of a CLIF file is compiled
//! for the host (its first runnable x86_64 target, or a baseline x86_64 for files without a
//! target line) while the switch's per-thread capture records a `SerializableFunction` of what
//! Cranelift hands to the allocator.
//!
//! The capture happens before allocation, so the result does not depend on the allocator; ion
//! does the allocation here so that a broken allocator cannot stop a dump.

use crate::Allocator;
use crate::host;
use crate::program::func_key;
use cranelift_codegen::control::ControlPlane;
use cranelift_reader::{ParseOptions, parse_test};
use regalloc2::serialize::SerializableFunction;
use regalloc2::{Function, MachineEnv};
use std::cell::RefCell;
use std::rc::Rc;

/// One captured function: the CLIF name (without `%`) and its regalloc2 input.
pub struct Captured {
    pub func_name: String,
    pub function: SerializableFunction,
}

/// Capture every function of `text`. `Err` is the reason the whole file yields nothing (parse
/// error, no target for this host); per-function compile errors come back in the second list.
pub fn dump_source(text: &str) -> Result<(Vec<Captured>, Vec<String>), String> {
    crate::install();
    let (rewritten, header) = host::rewrite_header(text);
    let test =
        parse_test(&rewritten, ParseOptions::default()).map_err(|e| format!("parse: {e}"))?;
    let isa = host::first_runnable(&test.isa_spec, &header, true)?;

    let mut captured = Vec::new();
    let mut errors = Vec::new();
    for (func, _) in &test.functions {
        let name = func_key(&func.name);
        let sink: Rc<RefCell<Vec<SerializableFunction>>> = Rc::default();
        let sink2 = sink.clone();
        let capture = Box::new(move |f: &dyn Function, env: &MachineEnv| {
            sink2.borrow_mut().push(SerializableFunction::new(
                &regalloc2::DynFunction::vector_spills_as_float(f),
                env.clone(),
            ));
        });
        let mut ctx = cranelift_codegen::Context::for_function(func.clone());
        let result = Allocator::Ion.with(|| {
            regalloc2::with_thread_capture(capture, || {
                ctx.compile(&*isa, &mut ControlPlane::default())
                    .map(|_| ())
                    .map_err(|e| format!("{:?}", e.inner))
            })
        });
        if let Err(e) = result {
            errors.push(format!("%{name}: {e}"));
            continue;
        }
        let mut got = sink.take();
        // Cranelift allocates each function exactly once; anything else means the capture saw
        // another compilation and the file name would be ambiguous.
        if got.len() != 1 {
            errors.push(format!("%{name}: captured {} allocator inputs", got.len()));
            continue;
        }
        captured.push(Captured {
            func_name: name,
            function: got.pop().unwrap(),
        });
    }
    Ok((captured, errors))
}
