//! `ragreedy-jit`: everything that touches Cranelift, kept out of the allocator crate. It
//! registers regalloc-greedy with the regalloc2 switch that the root workspace patches under
//! Cranelift ([`alloc`]), builds host ISAs from the settings of a CLIF test file ([`host`]),
//! runs `test run` / `test interpret` files through cranelift-jit with the regalloc checker on
//! ([`runner`], [`trampoline`]), and captures the regalloc2 inputs Cranelift produces
//! ([`dump`]).
//!
//! The switch is reached as `regalloc2` (package version 0.15.3); every type it exposes is the
//! registry regalloc2 0.15.2 type that regalloc-greedy is written against.

pub mod alloc;
pub mod dump;
pub mod host;
pub mod runner;
pub mod trampoline;

pub use alloc::{Allocator, install};
pub use runner::{FileReport, Summary, run_file, run_source};
