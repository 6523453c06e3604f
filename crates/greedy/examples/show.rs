//! Prints one function's allocation by greedy and by ion, with their costs: a dumped
//! function (`FILE.json`), a text-format file (`FILE.txt`, docs/text-format.md) or a fuzz
//! case of the quality example (`k4-s17`: 4 registers, seed 17), or a function of the
//! Cranelift-shaped generator as `ragreedy stress --gen cranelift-like [--regs K]` makes it (`cl-s52016017`,
//! or `cl2-s61036062` with 2 registers per class), or a function of `ragreedy stress --gen fuzz
//! [--regs K]` (`st4-s67075123`, `st-s82000000`). `--log` prints greedy's
//! debug log (every decision) to stderr; `--text` prints the function in the text
//! format instead (for `tests/cases/`); `OFF=option,...` in the environment turns options
//! off (`common/off.rs` lists them), `CALLEE_SAVED=x64-sysv` gives greedy x64's
//! callee-saved registers (`Options::callee_saved_x64_sysv`). `--depth D` prints,
//! instead of the listings, each allocator's weighted cost per loop depth and its
//! dearest blocks at depth `D` with their moves (where a large function wins or loses
//! against ion).
//!
//! ```sh
//! cargo run --release -p regalloc-greedy --example show -- FILE.json [--log]
//! ```

#[path = "common/off.rs"]
mod off;

use ragreedy_testkit::builder::{TestFunc, listing_with_output};
use ragreedy_testkit::{corpus, cost, fuzzgen};
use regalloc2::{Edit, Function, Output};
use std::io::Write;

/// Blocks listed per allocator by `--depth`.
const DEAREST_BLOCKS: usize = 15;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().expect("a function dump or a fuzz case");
    if args.iter().any(|a| a == "--log") {
        env_logger::Builder::new()
            .filter_level(log::LevelFilter::Debug)
            .format(|out, r| writeln!(out, "{}", r.args()))
            .init();
    }
    let (func, env) = match name
        .strip_prefix('k')
        .and_then(|rest| rest.split_once("-s"))
    {
        Some((k, seed)) => {
            let k: usize = k.parse().unwrap();
            let f = fuzzgen::func_from_seed(seed.parse().unwrap(), &fuzzgen::small_env_options(k))
                .expect("no function from this seed");
            let env = fuzzgen::restrict_env(&fuzzgen::machine_env(), k);
            (TestFunc::from_function(&f), env)
        }
        None if name.starts_with("st") && name.contains("-s") => {
            let (regs, seed) = name["st".len()..].split_once("-s").expect("st[K]-sSEED");
            let seed: u64 = seed.parse().expect("st[K]-sSEED");
            let regs = (!regs.is_empty()).then(|| regs.parse().expect("st[K]-sSEED"));
            let f = fuzzgen::func_from_seed(seed, &fuzzgen::stress_options(seed, regs))
                .expect("no function from this seed");
            (TestFunc::from_function(&f), fuzzgen::stress_env(regs))
        }
        None if name.starts_with("cl") && name.contains("-s") => {
            let (regs, seed) = name["cl".len()..].split_once("-s").expect("cl[K]-sSEED");
            let seed: u64 = seed.parse().expect("cl[K]-sSEED");
            let f = ragreedy_testkit::cranelift_like::from_seed(seed);
            let env = match regs {
                "" => ragreedy_testkit::cranelift_like::x64_env(),
                k => ragreedy_testkit::cranelift_like::x64_env_k(k.parse().expect("cl[K]-sSEED")),
            };
            (f, env)
        }
        None if name.ends_with(".txt") => {
            let text = std::fs::read_to_string(name).expect("read");
            ragreedy_testkit::text::parse(&text).expect("parse")
        }
        None => {
            let f = corpus::load_function(std::path::Path::new(name)).expect("load");
            let env = f.machine_env().clone();
            (TestFunc::from_function(&f), env)
        }
    };
    if args.iter().any(|a| a == "--text") {
        print!("{}", ragreedy_testkit::text::print(&func, &env));
        return;
    }
    let mut options = off::options_from_env();
    if off::x64_sysv_from_env() {
        options.callee_saved = Some(regalloc_greedy::Options::callee_saved_x64_sysv(&env));
    }
    let ours = regalloc_greedy::run(&func, &env, &options).unwrap();
    let ion = regalloc2::run(&func, &env, &regalloc2::RegallocOptions::default()).unwrap();
    if let Some(d) = args.iter().position(|a| a == "--depth") {
        let depth: u32 = args[d + 1].parse().expect("--depth D");
        for (name, out) in [("greedy", &ours), ("ion", &ion)] {
            print_by_depth(&func, name, out, depth);
        }
        return;
    }
    let ours_cost = cost::cost(&func, &env, &ours);
    let ion_cost = cost::cost(&func, &env, &ion);
    println!(
        "== greedy {ours_cost:?}\n{}",
        listing_with_output(&func, &ours)
    );
    println!("== ion {ion_cost:?}\n{}", listing_with_output(&func, &ion));
}

/// `out`'s weighted cost (docs/metrics.md's units and frequencies) per loop depth, then
/// its dearest blocks at `depth`, each with its moves.
fn print_by_depth(func: &TestFunc, name: &str, out: &Output, depth: u32) {
    let depths = cost::loop_depths(func);
    let mut block_of = vec![0; func.num_insts()];
    for b in 0..func.num_blocks() {
        for i in func.block_insns(regalloc2::Block::new(b)).iter() {
            block_of[i.index()] = b;
        }
    }
    let mut per_depth = [0u64; 8];
    let mut blocks = std::collections::BTreeMap::<usize, (u64, String)>::new();
    for &(at, Edit::Move { from, to }) in &out.edits {
        let b = block_of[at.inst().index()];
        let unit = match (from.is_stack(), to.is_stack()) {
            (false, false) => 1,
            (true, true) => 4,
            _ => 2,
        };
        let weighted = unit * 10u64.pow(depths[b].min(6));
        per_depth[depths[b].min(7) as usize] += weighted;
        if depths[b] == depth {
            let e = blocks.entry(b).or_default();
            e.0 += weighted;
            e.1 += &format!(" {at:?}: {to} <- {from};");
        }
    }
    println!("{name}: weighted cost per loop depth 0..7: {per_depth:?}");
    let mut dearest: Vec<_> = blocks.into_iter().collect();
    dearest.sort_by_key(|(b, (w, _))| (std::cmp::Reverse(*w), *b));
    for (b, (w, moves)) in dearest.iter().take(DEAREST_BLOCKS) {
        println!("  block{b} (depth {depth}) {w}:{moves}");
    }
}
