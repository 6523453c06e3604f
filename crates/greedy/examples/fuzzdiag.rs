//! Fuzz-corpus diagnosis: per-part cost totals for greedy vs ion, the distribution of
//! per-function outcomes, the worst functions, and optionally one function's listings.
//!
//! ```sh
//! cargo run --release -p regalloc-greedy --example fuzzdiag -- --k 4 --count 200 [--show SEED]
//! ```
use ragreedy_testkit::builder::{TestFunc, listing_with_output};
use ragreedy_testkit::{cost, fuzzgen};
use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut k, mut count, mut show, mut worst) = (4usize, 200usize, None, 15usize);
    while let Some(a) = args.next() {
        let mut value = || args.next().expect("missing value");
        match a.as_str() {
            "--k" => k = value().parse().unwrap(),
            "--count" => count = value().parse().unwrap(),
            "--show" => show = Some(value().parse::<u64>().unwrap()),
            "--worst" => worst = value().parse().unwrap(),
            // Checker run over `ragreedy stress`'s generator: --stress K,COUNT.
            "--stress" => {
                let v: Vec<usize> = value().split(',').map(|x| x.parse().unwrap()).collect();
                return stress(v[0], v[1] as u64);
            }
            // Every allocation decision of `--show`'s greedy run, on stderr.
            "--log" => {
                env_logger::Builder::new()
                    .filter_level(log::LevelFilter::Debug)
                    .format(|out, r| writeln!(out, "{}", r.args()))
                    .init();
            }
            _ => panic!("unknown argument {a}"),
        }
    }
    let opts = fuzzgen::small_env_options(k);
    let env = fuzzgen::restrict_env(&fuzzgen::machine_env(), k);
    let options = regalloc_greedy::Options::default();
    let ion_options = regalloc2::RegallocOptions::default();
    if let Some(seed) = show {
        let f = fuzzgen::func_from_seed(seed, &opts).expect("no function for seed");
        let func = TestFunc::from_function(&f);
        let ours = regalloc_greedy::run(&func, &env, &options).unwrap();
        log::set_max_level(log::LevelFilter::Off);
        let ion = regalloc2::run(&func, &env, &ion_options).unwrap();
        let (g, i) = (
            cost::cost(&func, &env, &ours),
            cost::cost(&func, &env, &ion),
        );
        println!("=== GREEDY {:?}\n{}", g, listing_with_output(&func, &ours));
        println!("=== ION {:?}\n{}", i, listing_with_output(&func, &ion));
        return;
    }
    let (mut seed, mut n) = (0u64, 0);
    let (mut gs, mut is) = (cost::Cost::default(), cost::Cost::default());
    let (mut worse, mut equal, mut better) = (0, 0, 0);
    let (mut lost, mut won) = (0u64, 0u64);
    let mut rows = Vec::new();
    let mut fs = (0u64, 0u64);
    let (mut outside, mut inside) = ((0usize, 0f64), (0usize, 0f64));
    while n < count {
        let Some(f) = fuzzgen::func_from_seed(seed, &opts) else {
            seed += 1;
            continue;
        };
        n += 1;
        let func = TestFunc::from_function(&f);
        let ours = regalloc_greedy::run(&func, &env, &options);
        let ion = regalloc2::run(&func, &env, &ion_options);
        if let (Ok(o), Ok(i)) = (ours, ion) {
            let (g, i) = (cost::cost(&func, &env, &o), cost::cost(&func, &env, &i));
            gs += g;
            is += i;
            match g.weighted.cmp(&i.weighted) {
                std::cmp::Ordering::Greater => {
                    worse += 1;
                    lost += g.weighted - i.weighted
                }
                std::cmp::Ordering::Equal => equal += 1,
                std::cmp::Ordering::Less => {
                    better += 1;
                    won += i.weighted - g.weighted
                }
            }
            let ion_out = regalloc2::run(&func, &env, &ion_options).unwrap();
            let o = regalloc_greedy::run(&func, &env, &options).unwrap();
            if uses_outside(&func, &env, &ion_out) {
                outside.0 += 1;
                outside.1 += ((g.weighted + 1) as f64 / (i.weighted + 1) as f64).ln();
            } else {
                inside.0 += 1;
                inside.1 += ((g.weighted + 1) as f64 / (i.weighted + 1) as f64).ln();
            }
            fs.0 += fixed_stack_traffic(&func, &env, &o);
            fs.1 += fixed_stack_traffic(&func, &env, &ion_out);
            rows.push((seed, g, i));
        }
        seed += 1;
    }
    println!(
        "ion homes values in non-allocatable regs: n={} geomean={:.4}; others n={} geomean={:.4}",
        outside.0,
        (outside.1 / outside.0.max(1) as f64).exp(),
        inside.0,
        (inside.1 / inside.0.max(1) as f64).exp()
    );
    println!(
        "weighted moves to/from fixed stack slots: greedy {} ion {}",
        fs.0, fs.1
    );
    println!("worse={worse} (lost {lost}) equal={equal} better={better} (won {won})");
    let p = |c: &cost::Cost| {
        format!(
            "w={} moves={} ({}) stores={} ({}) reloads={} ({}) csr={} ({})",
            c.weighted,
            c.parts.moves,
            c.moves,
            c.parts.spills,
            c.spills,
            c.parts.reloads,
            c.reloads,
            c.parts.callee_saved,
            c.non_preferred_regs
        )
    };
    println!("greedy {}\nion    {}", p(&gs), p(&is));
    rows.sort_by(|a, b| {
        let r = |x: &(u64, cost::Cost, cost::Cost)| {
            (x.1.weighted + 1) as f64 / (x.2.weighted + 1) as f64
        };
        r(b).partial_cmp(&r(a)).unwrap()
    });
    for (s, g, i) in rows.iter().take(worst) {
        println!(
            "s{s}: ratio {:.3}\n  g {}\n  i {}",
            (g.weighted + 1) as f64 / (i.weighted + 1) as f64,
            p(g),
            p(i)
        );
    }
}

/// Whether `out` allocates a non-fixed operand to a register outside the allocatable sets.
fn uses_outside(func: &TestFunc, env: &regalloc2::MachineEnv, out: &regalloc2::Output) -> bool {
    use regalloc2::{Function, OperandConstraint};
    let mut allocatable = regalloc2::PRegSet::empty();
    for c in 0..3 {
        allocatable.union_from(env.preferred_regs_by_class[c]);
        allocatable.union_from(env.non_preferred_regs_by_class[c]);
    }
    for i in 0..func.num_insts() {
        let inst = regalloc2::Inst::new(i);
        for (op, a) in func.inst_operands(inst).iter().zip(out.inst_allocs(inst)) {
            if matches!(op.constraint(), OperandConstraint::FixedReg(_)) {
                continue;
            }
            if let Some(r) = a.as_reg()
                && !allocatable.contains(r)
                && (std::env::var("FIXED_STACK").is_ok() == env.fixed_stack_slots.contains(&r))
            {
                return true;
            }
        }
    }
    false
}

/// Frequency-weighted cost of the moves that touch a fixed stack slot.
fn fixed_stack_traffic(
    func: &TestFunc,
    env: &regalloc2::MachineEnv,
    out: &regalloc2::Output,
) -> u64 {
    let only = regalloc2::Output {
        edits: out
            .edits
            .iter()
            .filter(|(_, regalloc2::Edit::Move { from, to })| {
                [from, to].iter().any(|a| {
                    a.as_reg()
                        .is_some_and(|r| env.fixed_stack_slots.contains(&r))
                })
            })
            .cloned()
            .collect(),
        ..out.clone()
    };
    let c = cost::cost(func, env, &only);
    c.weighted - c.parts.callee_saved
}

/// Allocates `count` stress functions at `k` registers; reports errors where ion
/// allocates and checker failures.
fn stress(k: usize, count: u64) {
    std::panic::set_hook(Box::new(|_| {}));
    let env = fuzzgen::stress_env(Some(k));
    let (mut bad, mut n) = (0, 0);
    for seed in 0..count {
        let opts = fuzzgen::stress_options(seed, Some(k));
        let Some(f) = fuzzgen::func_from_seed(seed, &opts) else {
            continue;
        };
        let func = TestFunc::from_function(&f);
        let ion = std::panic::catch_unwind(|| {
            regalloc2::run(&func, &env, &regalloc2::RegallocOptions::default()).is_ok()
        });
        if !matches!(ion, Ok(true)) {
            continue;
        }
        n += 1;
        match regalloc_greedy::run(&func, &env, &regalloc_greedy::Options::default()) {
            Err(e) => {
                bad += 1;
                println!("seed {seed}: {e:?} where ion allocates");
            }
            Ok(out) => {
                if let Err(e) = ragreedy_testkit::check::check_output(&func, &env, &out) {
                    bad += 1;
                    println!("seed {seed}: checker: {e}");
                }
            }
        }
    }
    println!("stress k={k}: {n} functions, {bad} failures");
}
