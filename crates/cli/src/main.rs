//! `ragreedy`: the command-line driver of the greedy register allocator.

mod stress;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "ragreedy", about = "LLVM-greedy-style register allocator for regalloc2 clients")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Allocate generated functions and check every result with regalloc2's checker.
    Stress(stress::StressArgs),
}

fn main() {
    env_logger::init();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Stress(args) => stress::main(args),
    };
    std::process::exit(code);
}
