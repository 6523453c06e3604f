//! A quick quality loop for allocator work that needs no Cranelift or Wasmtime build: the
//! weighted cost (docs/metrics.md) of greedy against ion on dumped functions (`ragreedy wasm
//! dump` output: one folder per module) and on the fuzz corpus at given register counts, every
//! output through regalloc2's checker. No timing: `ragreedy compare` measures speed.
//!
//! ```sh
//! cargo run --release -p regalloc-greedy --example quality -- \
//!     --dumps DUMPDIR --fuzz 4,8 --count 200 [--out per-function.tsv]
//! ```
//!
//! Prints the cost ratio (geometric mean of `(cost + 1) / (ion cost + 1)`, as `compare`
//! reports it) and summed costs per module and per register count; `--out` writes one line per
//! function for diffing two builds: name, greedy cost, ion cost, then greedy's weighted cost
//! parts (moves, spills, reloads, stack moves, callee-saved) and ion's, tab-separated.
//! `--base OLD.tsv` (an earlier `--out`) compares greedy's costs with that build's, function
//! by function: how many got cheaper and dearer, and the largest changes either way.
//! Each summary line also gives both allocators' broken fallthroughs (`cost::broken_fallthroughs`,
//! a diagnostic outside the weighted cost).
//! `OFF=option,option` turns greedy's options off (as in the `profile` example), to see
//! which functions a mechanism changes. `CALLEE_SAVED=x64-sysv` gives greedy the callee-saved
//! registers of Cranelift's x64 System V and `tail` conventions on the dumped functions
//! (`Options::callee_saved_x64_sysv`; the fuzz corpus keeps the default).

#[path = "common/off.rs"]
mod off;

use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::{check, corpus, cost, fuzzgen};
use regalloc2::MachineEnv;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

struct Case {
    name: String,
    group: String,
    func: TestFunc,
    env: MachineEnv,
}

fn dump_cases(root: &Path, out: &mut Vec<Case>) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let group = dir.file_name().unwrap().to_string_lossy().into_owned();
        for (name, f) in corpus::load_dir(&dir).unwrap_or_else(|e| panic!("{e}")) {
            out.push(Case {
                name: format!("{group}#{name}"),
                group: group.clone(),
                env: f.machine_env().clone(),
                func: TestFunc::from_function(&f),
            });
        }
    }
}

fn fuzz_cases(k: usize, count: usize, out: &mut Vec<Case>) {
    let opts = fuzzgen::small_env_options(k);
    let env = fuzzgen::restrict_env(&fuzzgen::machine_env(), k);
    let (mut seed, mut n) = (0u64, 0);
    while n < count {
        if let Some(f) = fuzzgen::func_from_seed(seed, &opts) {
            out.push(Case {
                name: format!("k{k}-s{seed}"),
                group: format!("fuzz {k} regs"),
                func: TestFunc::from_function(&f),
                env: env.clone(),
            });
            n += 1;
        }
        seed += 1;
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut dumps, mut fuzz, mut count, mut out_path) = (None, Vec::new(), 200, None);
    let mut base_path = None;
    while let Some(a) = args.next() {
        let mut value = || args.next().expect("missing value");
        match a.as_str() {
            "--dumps" => dumps = Some(PathBuf::from(value())),
            "--fuzz" => fuzz = value().split(',').map(|k| k.parse().unwrap()).collect(),
            "--count" => count = value().parse().unwrap(),
            "--out" => out_path = Some(PathBuf::from(value())),
            "--base" => base_path = Some(PathBuf::from(value())),
            _ => panic!("unknown argument {a}"),
        }
    }
    let mut cases = Vec::new();
    if let Some(d) = &dumps {
        dump_cases(d, &mut cases);
    }
    for &k in &fuzz {
        fuzz_cases(k, count, &mut cases);
    }
    let mut options = off::options_from_env();
    let x64_sysv = off::x64_sysv_from_env();
    let ion_options = regalloc2::RegallocOptions::default();
    // Per group: (functions, sum of log ratios, greedy sum, ion sum, greedy's and ion's
    // broken fallthroughs); "wasm" sums every dump.
    let mut groups: BTreeMap<String, (usize, f64, u64, u64, u64, u64)> = BTreeMap::new();
    let mut lines = String::new();
    let mut failures = 0;
    for c in &cases {
        options.callee_saved = (x64_sysv && !c.group.starts_with("fuzz"))
            .then(|| regalloc_greedy::Options::callee_saved_x64_sysv(&c.env));
        let ours = regalloc_greedy::run(&c.func, &c.env, &options);
        let ion = regalloc2::run(&c.func, &c.env, &ion_options);
        // A function ion cannot allocate either is not compared (as in `compare`).
        let Ok(ion) = ion else { continue };
        let Ok(ours) = ours else {
            eprintln!("{}: greedy returned an error where ion allocates", c.name);
            failures += 1;
            continue;
        };
        if let Err(e) = check::check_output(&c.func, &c.env, &ours) {
            eprintln!("{}: CHECKER: {e}", c.name);
            failures += 1;
            continue;
        }
        let (gc, ic) = (
            cost::cost(&c.func, &c.env, &ours),
            cost::cost(&c.func, &c.env, &ion),
        );
        let (g, i) = (gc.weighted, ic.weighted);
        let broken = (
            cost::broken_fallthroughs(&c.func, &ours),
            cost::broken_fallthroughs(&c.func, &ion),
        );
        let log = ((g + 1) as f64 / (i + 1) as f64).ln();
        let whole = (!c.group.starts_with("fuzz")).then(|| "wasm (all modules)".to_string());
        for key in std::iter::once(c.group.clone()).chain(whole) {
            let e = groups.entry(key).or_default();
            e.0 += 1;
            e.1 += log;
            e.2 += g;
            e.3 += i;
            e.4 += broken.0;
            e.5 += broken.1;
        }
        let parts = |p: &cost::CostParts| {
            format!(
                "{}\t{}\t{}\t{}\t{}",
                p.moves, p.spills, p.reloads, p.stack_moves, p.callee_saved
            )
        };
        lines.push_str(&format!(
            "{}\t{g}\t{i}\t{}\t{}\n",
            c.name,
            parts(&gc.parts),
            parts(&ic.parts)
        ));
    }
    for (name, (n, log, g, i, bg, bi)) in &groups {
        println!(
            "{name:44} n={n:5} cost_ratio={:.4} summed={g} ion={i} summed_ratio={:.4} broken_fallthroughs={bg} ion={bi}",
            (log / *n as f64).exp(),
            *g as f64 / (*i).max(1) as f64
        );
    }
    println!("failures={failures}");
    if let Some(p) = base_path {
        compare_with_base(&p, &lines);
    }
    if let Some(p) = out_path {
        std::fs::File::create(p)
            .and_then(|mut f| f.write_all(lines.as_bytes()))
            .expect("write --out");
    }
    if failures > 0 {
        std::process::exit(1);
    }
}

/// Greedy's cost per function in a `--out` file's text: name -> cost.
fn greedy_costs(text: &str) -> BTreeMap<&str, u64> {
    text.lines()
        .filter_map(|l| {
            let mut fields = l.split('\t');
            let name = fields.next()?;
            Some((name, fields.next()?.parse().ok()?))
        })
        .collect()
}

/// Prints how this build's costs (`lines`, as `--out` writes them) differ from `base`'s.
fn compare_with_base(base: &Path, lines: &str) {
    let old_text =
        std::fs::read_to_string(base).unwrap_or_else(|e| panic!("--base {}: {e}", base.display()));
    let (old, new) = (greedy_costs(&old_text), greedy_costs(lines));
    // (change in cost, name, old, new) for the functions both builds allocated.
    let mut changed: Vec<(i64, &str, u64, u64)> = new
        .iter()
        .filter_map(|(&name, &n)| {
            let &o = old.get(name)?;
            (o != n).then_some((n as i64 - o as i64, name, o, n))
        })
        .collect();
    changed.sort();
    let cheaper = changed.iter().filter(|c| c.0 < 0).count();
    let log: f64 = changed
        .iter()
        .map(|&(_, _, o, n)| ((n + 1) as f64 / (o + 1) as f64).ln())
        .sum();
    println!(
        "vs {}: {cheaper} cheaper, {} dearer, sum of log ratios {log:.3}",
        base.display(),
        changed.len() - cheaper
    );
    let shown = changed.len().min(5);
    for &(d, name, o, n) in changed[..shown]
        .iter()
        .chain(&changed[changed.len() - shown..])
    {
        println!("  {name:44} {o} -> {n} ({d:+})");
    }
}
