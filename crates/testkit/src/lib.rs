//! `ragreedy-testkit`: shared test infrastructure for the greedy allocator's unit tests, the
//! CLI and the fuzz targets. It must never depend on `regalloc-greedy` (which dev-depends on
//! it); everything here works on any regalloc2 `Function` / `Output`, so it is tested against
//! regalloc2's own allocators.
//!
//! - [`builder`]: a hand-writable test `Function` and `MachineEnv` helpers;
//! - [`check`]: regalloc2's checker plus the output rules it cannot see;
//! - [`cost`]: the docs/metrics.md weighted cost;
//! - [`fuzzgen`]: deterministic fuzzer `Func`s and restricted environments;
//! - [`cranelift_like`]: a generator of Cranelift-shaped functions `Func` never produces;
//! - [`scale`]: the `scale` corpus, generated functions from 1k to 1M instructions in the
//!   shapes of real code's outliers;
//! - [`validate`]: regalloc2's input rules, checked without ever panicking;
//! - [`text`]: a human-readable text format for a function and its environment;
//! - [`shrink`]: automatic shrinking of a failing function, keeping it valid.

#![forbid(unsafe_code)]

pub mod builder;
pub mod check;
pub mod corpus;
pub mod cost;
pub mod cranelift_like;
pub mod flat;
pub mod fuzzgen;
pub mod scale;
pub mod shrink;
pub mod text;
pub mod validate;
