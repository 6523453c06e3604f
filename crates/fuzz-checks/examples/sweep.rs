//! Run one check over many seeded inputs, catching panics, and summarise the distinct
//! failure sites: `cargo run --release --example sweep -- malformed 20000
//! [save-dir]`. With a save dir, the first input of each distinct failure is written
//! there (ready to move into tests/regressions/).
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ragreedy_testkit::fuzzgen::SplitMix64;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let check: fn(&[u8]) = match args[1].as_str() {
        "greedy" => ragreedy_fuzz_checks::check_greedy,
        "differential" => |d| {
            let _ = ragreedy_fuzz_checks::check_differential(d);
        },
        "small_env" => ragreedy_fuzz_checks::check_small_env,
        "cranelift_like" => ragreedy_fuzz_checks::check_cranelift_like,
        "malformed" => ragreedy_fuzz_checks::check_malformed,
        other => panic!("unknown check {other}"),
    };
    let n: u64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(10_000);
    let save = args.get(3).cloned();
    let last = Arc::new(Mutex::new(String::new()));
    let l2 = last.clone();
    std::panic::set_hook(Box::new(move |info| {
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info.payload_as_str().unwrap_or_default();
        *l2.lock().unwrap() = format!("{loc}: {}", msg.lines().next().unwrap_or(""));
    }));
    let mut sites: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for seed in 0..n {
        let mut r = SplitMix64(seed ^ 0x5eed);
        let len = 64 + r.below(8192 - 64) as usize;
        let data = r.bytes(len);
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            let site = last.lock().unwrap().clone();
            let e = sites.entry(site.clone()).or_insert((seed, 0));
            e.1 += 1;
            if e.1 == 1
                && let Some(dir) = &save
            {
                std::fs::write(format!("{dir}/{}-seed{seed}", args[1]), &data).unwrap();
            }
        }
    }
    for (site, (seed, count)) in &sites {
        println!("{count:6}x first seed {seed}: {site}");
    }
}
