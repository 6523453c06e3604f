//! Prints one dumped function's allocation by greedy and by ion, with their costs:
//! `cargo run -p regalloc-greedy --example show -- FILE.json` (`--text` prints it in
//! docs/text-format.md's format instead; `RUST_LOG=debug` in a debug build traces
//! greedy's decisions).

use ragreedy_testkit::builder::{TestFunc, listing_with_output};
use ragreedy_testkit::{corpus, cost};

/// Prints every record to stderr when `RUST_LOG` is set (debug builds trace decisions).
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        eprintln!("{}", record.args());
    }
    fn flush(&self) {}
}

fn main() {
    if std::env::var_os("RUST_LOG").is_some() {
        log::set_logger(&StderrLog).expect("logger");
        log::set_max_level(log::LevelFilter::Debug);
    }
    let path = std::env::args().nth(1).expect("a function dump");
    let f = corpus::load_function(std::path::Path::new(&path)).expect("load");
    let env = f.machine_env().clone();
    let func = TestFunc::from_function(&f);
    if std::env::args().any(|a| a == "--text") {
        // The function in docs/text-format.md's format, for `tests/cases/`.
        print!("{}", ragreedy_testkit::text::print(&func, &env));
        return;
    }
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
