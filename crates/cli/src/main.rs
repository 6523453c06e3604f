//! `ragreedy`: the command-line driver of the greedy register allocator.

mod ablate;
mod compare;
mod dump_cmd;
mod explain;
mod mechanisms;
mod report;
mod run_cmd;
mod stress;
mod wasm_cmd;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ragreedy",
    about = "LLVM-greedy-style register allocator for regalloc2 clients"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Allocate generated functions and check every result with regalloc2's checker.
    Stress(stress::StressArgs),
    /// Run CLIF `test run` files through the Cranelift JIT with the chosen allocator patched in.
    Run(run_cmd::RunArgs),
    /// Write the regalloc2 inputs Cranelift produces for CLIF files as JSON.
    Dump(dump_cmd::DumpArgs),
    /// Compare allocators on a corpus: checker, weighted cost, time (or code speed with --run).
    Compare(compare::CompareArgs),
    /// Regenerate docs/benchmarks.md and its SVG plots from one run of every corpus.
    Report(report::ReportArgs),
    /// Turn our mechanisms off one at a time on the fuzz corpus and tabulate what each buys.
    Ablate(ablate::AblateArgs),
    /// Explain one function's allocation: the greedy allocator's decisions, the cost split
    /// into its parts, and with --html a picture of where every value lives.
    Explain(explain::ExplainArgs),
    /// Real WebAssembly through Wasmtime: run a WASI module, benchmark Sightglass modules, or
    /// dump a module's allocation problems.
    Wasm(wasm_cmd::WasmArgs),
}

fn main() {
    env_logger::init();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Stress(args) => stress::main(args),
        Command::Run(args) => run_cmd::main(args),
        Command::Dump(args) => dump_cmd::main(args),
        Command::Compare(args) => compare::main(args),
        Command::Report(args) => report::main(args),
        Command::Ablate(args) => ablate::main(args),
        Command::Wasm(args) => wasm_cmd::main(args),
        Command::Explain(args) => explain::main(args),
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap's own checks of the whole command line (conflicting or duplicate names,
    /// references to arguments that do not exist), then `compare --baseline`'s rules: it
    /// takes a path, and not beside `--run` (code speed has no per-function times).
    #[test]
    fn the_command_line_holds_together() {
        Cli::command().debug_assert();
        let parsed = Cli::try_parse_from(["ragreedy", "compare", "--baseline", "old.json"])
            .expect("--baseline with a path parses");
        let Command::Compare(args) = parsed.command else {
            panic!("not the compare command");
        };
        assert_eq!(
            args.baseline.as_deref(),
            Some(std::path::Path::new("old.json"))
        );
        assert!(
            Cli::try_parse_from(["ragreedy", "compare", "--run", "--baseline", "old.json"])
                .is_err()
        );
    }
}
