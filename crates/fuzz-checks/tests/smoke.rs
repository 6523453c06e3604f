//! Deterministic smoke fuzzing: every check over a fixed number of seeded inputs (seeds 0,
//! 1, 2, ...), so `cargo test --workspace` fuzzes a little on every CI run and every run sees
//! the same inputs, however fast the machine. Each count is what the check gets through in
//! about 3 s on a loaded 2-core machine. A failure prints the seed; replay it with
//! `SMOKE_SEED=<seed> cargo test --test smoke <name>`; `SMOKE_INPUTS=<n>` runs n inputs per
//! check instead (a longer sweep).

use ragreedy_fuzz_checks::{
    check_cranelift_like, check_differential, check_greedy, check_malformed, check_small_env,
};
use ragreedy_testkit::fuzzgen::SplitMix64;

/// `inputs`, or the count in SMOKE_INPUTS.
fn count(inputs: u64) -> u64 {
    std::env::var("SMOKE_INPUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(inputs)
}

/// The input of a seed: 64 B .. 8 KiB of SplitMix64 bytes (sizes vary so that small and
/// large functions both appear).
fn input(seed: u64) -> Vec<u8> {
    let mut r = SplitMix64(seed ^ 0x5eed);
    let len = 64 + r.below(8192 - 64) as usize;
    r.bytes(len)
}

/// Run `check` on seeds `0..inputs` (see [`count`]), or on the single seed in SMOKE_SEED.
fn smoke(name: &str, inputs: u64, check: impl Fn(&[u8])) {
    if let Some(seed) = std::env::var("SMOKE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        check(&input(seed));
        return;
    }
    for seed in 0..count(inputs) {
        let data = input(seed);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data)));
        if let Err(e) = r {
            eprintln!("{name}: failure on seed {seed} (replay: SMOKE_SEED={seed})");
            std::panic::resume_unwind(e);
        }
    }
}

#[test]
fn greedy() {
    smoke("greedy", 5000, check_greedy);
}

#[test]
fn differential() {
    let (mut both, mut ours_total, mut ion_total) = (0u64, 0u64, 0u64);
    let (mut ion_err, mut ours_err) = (0, 0);
    let outcomes = std::sync::Mutex::new(vec![]);
    smoke("differential", 4000, |d| {
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
    // Printed only: the greedy crate's quality test (tests/quality.rs) asserts the cost.
    eprintln!(
        "differential: {both} allocated by both, weighted cost ours {ours_total} vs ion \
         {ion_total}; ion-only errors {ion_err}, errors from ours (ion failed too) {ours_err}"
    );
}

#[test]
fn small_env() {
    smoke("small_env", 1500, check_small_env);
}

#[test]
fn cranelift_like() {
    smoke("cranelift_like", 1000, check_cranelift_like);
}

#[test]
fn malformed() {
    smoke("malformed", 15000, check_malformed);
}
