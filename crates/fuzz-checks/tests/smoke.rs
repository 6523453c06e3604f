//! Deterministic smoke fuzzing: every check over a fixed sequence of seeded inputs, each for
//! a time budget of a few seconds (like regalloc2's arbtest smoke tests), so
//! `cargo test --workspace` fuzzes a little on every CI run. The inputs are fixed; the budget
//! only caps how many of them run on a slow machine. A failure prints the seed; replay it
//! with `SMOKE_SEED=<seed> cargo test -p ragreedy-fuzz-checks --test smoke <name>`.

use std::time::{Duration, Instant};

use ragreedy_fuzz_checks::{
    check_cranelift_like, check_differential, check_greedy, check_malformed, check_small_env,
};
use ragreedy_testkit::fuzzgen::SplitMix64;

/// Per-check budget; override with SMOKE_BUDGET_MS.
fn budget() -> Duration {
    let ms = std::env::var("SMOKE_BUDGET_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    Duration::from_millis(ms)
}

/// The input of a seed: 64 B .. 8 KiB of SplitMix64 bytes (sizes vary so that small and
/// large functions both appear).
fn input(seed: u64) -> Vec<u8> {
    let mut r = SplitMix64(seed ^ 0x5eed);
    let len = 64 + r.below(8192 - 64) as usize;
    r.bytes(len)
}

/// Run `check` on seeds 0, 1, 2, ... until the budget is spent (at most 100k seeds), or on
/// the single seed in SMOKE_SEED. Returns the number of inputs run.
fn smoke(name: &str, check: impl Fn(&[u8])) -> u64 {
    if let Some(seed) = std::env::var("SMOKE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        check(&input(seed));
        return 1;
    }
    let start = Instant::now();
    let mut seed = 0;
    while seed < 100_000 && start.elapsed() < budget() {
        let data = input(seed);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data)));
        if let Err(e) = r {
            eprintln!("{name}: failure on seed {seed} (replay: SMOKE_SEED={seed})");
            std::panic::resume_unwind(e);
        }
        seed += 1;
    }
    eprintln!("{name}: {seed} inputs in {:?}", start.elapsed());
    seed
}

#[test]
fn greedy() {
    assert!(smoke("greedy", check_greedy) > 0);
}

#[test]
fn differential() {
    let (mut both, mut ours_total, mut ion_total) = (0u64, 0u64, 0u64);
    let (mut ion_err, mut ours_err) = (0, 0);
    let outcomes = std::sync::Mutex::new(vec![]);
    smoke("differential", |d| {
        if let Some(o) = check_differential(d) {
            outcomes.lock().unwrap().push(o);
        }
    });
    for o in outcomes.into_inner().unwrap() {
        match (&o.ion, &o.ours) {
            (Ok(i), Ok(m)) => {
                both += 1;
                ion_total += i.weighted;
                ours_total += m.weighted;
            }
            (Err(_), Ok(_)) => ion_err += 1,
            (_, Err(_)) => ours_err += 1,
        }
    }
    // Quality is recorded, not asserted.
    eprintln!(
        "differential: {both} allocated by both, weighted cost ours {ours_total} vs ion \
         {ion_total}; ion-only errors {ion_err}, errors from ours (ion failed too) {ours_err}"
    );
}

#[test]
fn small_env() {
    assert!(smoke("small_env", check_small_env) > 0);
}

#[test]
fn cranelift_like() {
    assert!(smoke("cranelift_like", check_cranelift_like) > 0);
}

#[test]
fn malformed() {
    assert!(smoke("malformed", check_malformed) > 0);
}
