//! Helpers shared by the integration tests: locating the bench programs and running them under
//! one allocator selected on the calling thread only (tests run in parallel threads).

#![allow(dead_code)]

use ragreedy_jit::{Allocator, FileReport, run_file};
use std::path::PathBuf;

pub fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench-programs")
}

pub fn bench_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bench_dir())
        .expect("bench-programs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "clif"))
        .collect();
    files.sort();
    files
}

pub fn run_all(alloc: Allocator) -> Vec<FileReport> {
    alloc.with(|| bench_files().iter().map(|f| run_file(f)).collect())
}

/// Assert every run line of every bench program passed, with the failures in the message.
pub fn assert_all_pass(alloc: Allocator) {
    let reports = run_all(alloc);
    assert!(reports.len() >= 25, "only {} bench programs", reports.len());
    let failures: Vec<&String> = reports.iter().flat_map(|r| &r.failures).collect();
    let passed: usize = reports.iter().map(|r| r.passed).sum();
    let skipped: usize = reports.iter().map(|r| r.skipped).sum();
    assert!(
        failures.is_empty(),
        "{alloc}: {} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        skipped, 0,
        "{alloc}: bench programs must all run on this host"
    );
    assert!(passed >= 100, "{alloc}: only {passed} run lines passed");
}
