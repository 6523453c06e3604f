//! `ragreedy run`: runs CLIF files in Cranelift's `test run` format through the Cranelift JIT
//! with the chosen allocator patched in, Cranelift's regalloc checker on, and prints one line
//! per failure (and per skip) and the closing summary.

use clap::Args;
use ragreedy_jit::{Allocator, Summary};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// CLIF files (`test run`; a file with only `test interpret` runs on the interpreter).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Allocator to put under Cranelift: greedy, basic, linear-scan, irc, ion or fastalloc.
    #[arg(long, default_value = "greedy")]
    pub allocator: Allocator,
    /// Also print the reason for every skipped target or line.
    #[arg(long)]
    pub verbose: bool,
}

/// Exit code: 0 when no run line failed.
pub fn main(args: RunArgs) -> i32 {
    args.allocator.select_process_wide();
    quiet_panics();
    let mut summary = Summary::default();
    for file in &args.files {
        let report = ragreedy_jit::run_file(file);
        for f in &report.failures {
            println!("FAIL {f}");
        }
        if args.verbose || report.passed == 0 {
            for s in &report.skips {
                println!("SKIP {s}");
            }
        }
        summary.add(&report);
    }
    println!("{summary}");
    i32::from(summary.failed > 0)
}

/// A checker failure is caught and reported per run line; the default hook would also print
/// the (possibly megabyte-long) payload, so print only its start.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = ragreedy_jit::panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("panic{at}: {msg}");
    }));
}
