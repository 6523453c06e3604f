//! `ragreedy-jit`: everything that touches Cranelift, kept out of the allocator crate. It
//! registers regalloc-greedy with the regalloc2 switch that the root workspace patches under
//! Cranelift ([`alloc`]), builds host ISAs from the settings of a CLIF test file ([`host`]),
//! compiles a file's functions into one JIT module and calls them ([`program`], [`trampoline`]),
//! runs `test run` / `test interpret` files with the regalloc checker on ([`runner`]), and
//! captures the regalloc2 inputs Cranelift produces ([`dump`]), and shifts code for timed
//! comparisons ([`layout`]).
//!
//! The switch is reached as `regalloc2` (package version 0.15.3); every type it exposes is the
//! registry regalloc2 0.15.2 type that regalloc-greedy is written against.

pub mod alloc;
pub mod dump;
pub mod host;
pub mod layout;
mod libm;
pub mod program;
pub mod runner;
pub mod trampoline;

pub use alloc::{Allocator, install};
pub use program::Program;
pub use runner::{FileReport, Summary, run_file, run_source};

/// A panic payload as text, cut to a readable length (checker errors can be huge).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let s = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    };
    const MAX: usize = 400;
    if s.len() > MAX {
        let mut end = MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    } else {
        s
    }
}
