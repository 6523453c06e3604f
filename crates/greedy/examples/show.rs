//! Prints one dumped function's allocation by greedy and by ion, with their costs:
//! `cargo run -p regalloc-greedy --example show -- FILE.json`.

use ragreedy_testkit::builder::{TestFunc, listing_with_output};
use ragreedy_testkit::{corpus, cost};

fn main() {
    let path = std::env::args().nth(1).expect("a function dump");
    let f = corpus::load_function(std::path::Path::new(&path)).expect("load");
    let env = f.machine_env().clone();
    let func = TestFunc::from_function(&f);
    let ours = regalloc_greedy::run(&func, &env, &regalloc_greedy::Options::default()).unwrap();
    let ion = regalloc2::run(&func, &env, &regalloc2::RegallocOptions::default()).unwrap();
    println!(
        "== greedy {:?}\n{}",
        cost::cost(&func, &env, &ours),
        listing_with_output(&func, &ours)
    );
    println!(
        "== ion {:?}\n{}",
        cost::cost(&func, &env, &ion),
        listing_with_output(&func, &ion)
    );
}
