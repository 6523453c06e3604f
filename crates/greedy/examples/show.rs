//! Prints one function's allocation by greedy and by ion, with their costs: a dumped
//! function (`FILE.json`), a text-format file (`FILE.txt`, docs/text-format.md) or a fuzz
//! case of the quality example (`k4-s17`: 4 registers, seed 17). `--log` prints greedy's
//! debug log (every decision) to stderr; `--text` prints the function in the text
//! format instead (for `tests/cases/`); `--without-join-stores` turns
//! `Options::join_stores` off.
//!
//! ```sh
//! cargo run --release -p regalloc-greedy --example show -- FILE.json [--log]
//! ```

use ragreedy_testkit::builder::{TestFunc, listing_with_output};
use ragreedy_testkit::{corpus, cost, fuzzgen};
use std::io::Write;

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
    let mut options = regalloc_greedy::Options::default();
    options.join_stores = !args.iter().any(|a| a == "--without-join-stores");
    let ours = regalloc_greedy::run(&func, &env, &options).unwrap();
    let ion = regalloc2::run(&func, &env, &regalloc2::RegallocOptions::default()).unwrap();
    let ours_cost = cost::cost(&func, &env, &ours);
    let ion_cost = cost::cost(&func, &env, &ion);
    println!(
        "== greedy {ours_cost:?}\n{}",
        listing_with_output(&func, &ours)
    );
    println!("== ion {ion_cost:?}\n{}", listing_with_output(&func, &ion));
}
