//! Writes a module's machine code as compiled under each allocator, for a disassembler:
//! Wasmtime's precompiled form is an ELF object, so `objdump -d OUT` shows every function.
//! Where two allocators' code runs at different speeds, this is what to compare.
//!
//! ```sh
//! cargo run --release --example precompile -- MODULE.wasm OUT_PREFIX [ALLOCATOR...]
//! objdump -d OUT_PREFIX.greedy.elf
//! ```

use ragreedy_jit::Allocator;
use ragreedy_wasm::engine::{Compilation, engine, read};
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [module, prefix, allocators @ ..] = args.as_slice() else {
        eprintln!("usage: precompile MODULE.wasm OUT_PREFIX [ALLOCATOR...]");
        std::process::exit(2);
    };
    let path = PathBuf::from(module);
    let bytes = read(&path).unwrap_or_else(|e| panic!("{e}"));
    let engine = engine(Compilation::OneThread).expect("engine");
    let names: Vec<&str> = if allocators.is_empty() {
        vec!["greedy", "ion"]
    } else {
        allocators.iter().map(String::as_str).collect()
    };
    for name in names {
        let allocator: Allocator = name.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
        let elf = allocator
            .with(|| engine.precompile_module(&bytes))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let out = format!("{prefix}.{name}.elf");
        std::fs::write(&out, elf).unwrap_or_else(|e| panic!("{out}: {e}"));
        println!("{out}");
    }
}
