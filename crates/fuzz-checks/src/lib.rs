//! The checks behind the cargo-fuzz targets in `fuzz/`, as plain functions over `&[u8]` so
//! the same code runs under libFuzzer and in deterministic smoke and regression tests
//! (`tests/smoke.rs`, `tests/regressions.rs`). Each check panics with a readable report
//! (input listing included) when the allocator misbehaves, and returns normally otherwise,
//! including on byte strings the input generator rejects.
//!
//! The allocator under test is `regalloc_greedy::run`, greedy by default. The environment
//! variable `RAGREEDY_FUZZ_ALLOCATOR` names another of our algorithms (`basic`,
//! `linear-scan`, `irc`; [`OURS`] lists them all), or `ion`, which routes every "ours" call to
//! regalloc2's ion instead: a dry run that exercises the harness itself (generators,
//! mutations, checks) without our allocator. Setting `RAGREEDY_FUZZ_REPORT=1` makes `check_differential` print the inputs
//! where our weighted cost exceeds twice ion's (quality is recorded, never asserted).

#![forbid(unsafe_code)]

use std::sync::OnceLock;

use arbitrary::Unstructured;
use ragreedy_testkit::builder::{InstKind, TestFunc, listing, listing_with_output};
use ragreedy_testkit::check::{Strictness, check_output_with};
use ragreedy_testkit::cost::{Cost, cost};
use ragreedy_testkit::cranelift_like::{self, x64_env, x64_env_k};
use ragreedy_testkit::fuzzgen::{
    fuzz_options, machine_env, options_combination, restrict_env, small_env_options,
};
use ragreedy_testkit::validate::validate_input;
use ragreedy_testkit::{shrink, text};
use regalloc2::fuzzing::func::Func;
use regalloc2::{Function, MachineEnv, Output, RegAllocError, RegClass, RegallocOptions, VReg};

mod malformed;

pub use malformed::{Mutation, mutate};

/// The allocators the fuzz targets may put under test (`RAGREEDY_FUZZ_ALLOCATOR`).
pub const OURS: [regalloc_greedy::Algorithm; regalloc_greedy::Algorithm::ALL.len()] =
    regalloc_greedy::Algorithm::ALL;

/// Which allocator "ours" means in this process (see the crate docs): `None` for ion.
fn under_test() -> Option<regalloc_greedy::Algorithm> {
    static CHOICE: OnceLock<Option<regalloc_greedy::Algorithm>> = OnceLock::new();
    *CHOICE.get_or_init(|| match std::env::var("RAGREEDY_FUZZ_ALLOCATOR") {
        Ok(v) if v == "ion" => None,
        Ok(v) => Some(
            regalloc_greedy::Algorithm::from_name(&v)
                .unwrap_or_else(|| panic!("RAGREEDY_FUZZ_ALLOCATOR={v}: no such allocator")),
        ),
        Err(_) => Some(regalloc_greedy::Algorithm::Greedy),
    })
}

fn use_ion() -> bool {
    under_test().is_none()
}

fn report_quality() -> bool {
    static R: OnceLock<bool> = OnceLock::new();
    *R.get_or_init(|| std::env::var_os("RAGREEDY_FUZZ_REPORT").is_some())
}

/// Run the allocator under test (ours always validates its input; ion is asked to).
pub fn allocate<F: Function>(f: &F, env: &MachineEnv) -> Result<Output, RegAllocError> {
    match under_test() {
        None => ion(f, env, true),
        Some(algorithm) => {
            let mut options = regalloc_greedy::Options::default();
            options.algorithm = algorithm;
            regalloc_greedy::run(f, env, &options)
        }
    }
}

/// regalloc2's ion, the reference.
pub fn ion<F: Function>(
    f: &F,
    env: &MachineEnv,
    validate_ssa: bool,
) -> Result<Output, RegAllocError> {
    regalloc2::run(
        f,
        env,
        &RegallocOptions {
            validate_ssa,
            ..Default::default()
        },
    )
}

/// All output checks; full strictness for ours, baseline strictness in an ion dry run (ion
/// emits overlapping `debug_locations` per label).
pub fn check_output<F: Function>(f: &F, env: &MachineEnv, out: &Output) -> Result<(), String> {
    let s = if use_ion() {
        Strictness::Baseline
    } else {
        Strictness::Ours
    };
    check_output_with(f, env, out, s)
}

/// A folder: when this environment variable names one, a failing check first writes its
/// function there in the text format, shrunk while our allocator still fails on it (a
/// ready regression case for `crates/greedy/tests/cases`), then panics as usual.
pub const SHRINK_DIR_VAR: &str = "RAGREEDY_FUZZ_SHRINK_DIR";

/// Allocations the shrinker may try for one failure.
const SHRINK_BUDGET: usize = 2000;

/// Does the allocator under test fail on `f` the way the checks report it: a panic, an
/// output the checker rejects where it accepts ion's (else the failure may be the
/// checker's, `check::ion_output_passes`), or an error where ion allocates?
pub fn ours_fails(f: &TestFunc, env: &MachineEnv) -> bool {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    match catch_unwind(AssertUnwindSafe(|| allocate(f, env))) {
        Err(_) => true,
        Ok(Ok(out)) => {
            check_output(f, env, &out).is_err()
                && ragreedy_testkit::check::ion_output_passes(f, env)
        }
        Ok(Err(_)) => matches!(
            catch_unwind(AssertUnwindSafe(|| ion(f, env, false))),
            Ok(Ok(_))
        ),
    }
}

/// Shrinks `f` while `still_fails` holds (panics inside it are caught and silenced: the
/// fuzzer's panic hook would abort) and writes the result to `dir` as
/// `<what>-<hash>.txt` in the text format. Returns the file and its instruction count.
pub fn write_shrunk<F: Function>(
    dir: &std::path::Path,
    what: &str,
    f: &F,
    env: &MachineEnv,
    still_fails: impl FnMut(&TestFunc, &MachineEnv) -> bool,
) -> std::io::Result<(std::path::PathBuf, usize)> {
    use std::hash::{Hash, Hasher};
    let full = TestFunc::from_function(f);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = shrink::shrink(&full, env, SHRINK_BUDGET, still_fails);
    std::panic::set_hook(hook);
    let body = text::print(&r.func, &r.env);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    let name: String = what
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}-{:08x}.txt", h.finish() as u32));
    std::fs::write(
        &path,
        format!(
            "; fuzz check `{what}` failed; shrunk from {} to {} instructions ({} allocations)\n\
             ; expect: ok\n{body}",
            full.insts.len(),
            r.func.insts.len(),
            r.calls
        ),
    )?;
    Ok((path, r.func.insts.len()))
}

/// Panic with the input, the output and the violations (after writing the shrunk case when
/// `SHRINK_DIR_VAR` is set).
fn fail<F: Function>(what: &str, f: &F, env: &MachineEnv, out: Option<&Output>, detail: &str) -> ! {
    if let Some(dir) = std::env::var_os(SHRINK_DIR_VAR) {
        match write_shrunk(std::path::Path::new(&dir), what, f, env, ours_fails) {
            Ok((path, n)) => eprintln!("shrunk to {n} instructions: {}", path.display()),
            Err(e) => eprintln!("could not write the shrunk case: {e}"),
        }
    }
    let body = match out {
        Some(o) => listing_with_output(f, o),
        None => listing(f),
    };
    panic!("{what}: {detail}\nenv: {env:?}\n{body}");
}

/// Allocate and require success plus a clean check.
fn must_allocate<F: Function>(what: &str, f: &F, env: &MachineEnv) -> Output {
    match allocate(f, env) {
        Ok(out) => {
            if let Err(e) = check_output(f, env, &out) {
                fail(what, f, env, Some(&out), &e);
            }
            out
        }
        Err(e) => fail(what, f, env, None, &format!("allocator error {e:?}")),
    }
}

/// Register counts per class used by the small-environment checks (index from a byte).
pub const SMALL_K: [usize; 7] = [2, 3, 4, 5, 6, 8, 12];

/// `greedy`: a `Func` generated with one of the 32 option combinations (first byte), in the
/// fuzzer's full environment; our allocator must succeed and pass every check.
pub fn check_greedy(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(bits) = u.arbitrary::<u8>() else {
        return;
    };
    let Ok(f) = Func::arbitrary_with_options(&mut u, &options_combination(bits % 32)) else {
        return;
    };
    must_allocate("greedy", &f, &machine_env());
}

/// What [`check_differential`] saw, for quality bookkeeping.
#[derive(Clone, Debug)]
pub struct DiffOutcome {
    /// Registers per class (`None` = the full fuzzer environment).
    pub k: Option<usize>,
    pub ion: Result<Cost, RegAllocError>,
    pub ours: Result<Cost, RegAllocError>,
}

/// `differential`: the same `Func` and environment (full, or 4..8 registers per class) to
/// ion and to ours. Where ion allocates we must allocate and pass the checks; where ion
/// returns an error we may return an error or a correct allocation. k = 2 and 3 are left to
/// `small_env`, because ion itself occasionally panics there (a panic aborts a fuzz run).
pub fn check_differential(data: &[u8]) -> Option<DiffOutcome> {
    let mut u = Unstructured::new(data);
    let sel: u8 = u.arbitrary().ok()?;
    let k = [None, None, Some(4), Some(5), Some(6), Some(8)][sel as usize % 6];
    let (opts, env) = match k {
        None => (fuzz_options(), machine_env()),
        Some(k) => (small_env_options(k), restrict_env(&machine_env(), k)),
    };
    let f = Func::arbitrary_with_options(&mut u, &opts).ok()?;
    let theirs = ion(&f, &env, false);
    let ours = allocate(&f, &env);
    let ours_cost = match (&theirs, &ours) {
        (_, Ok(out)) => {
            if let Err(e) = check_output(&f, &env, out) {
                fail("differential", &f, &env, Some(out), &e);
            }
            Ok(cost(&f, &env, out))
        }
        (Ok(_), Err(e)) => fail(
            "differential",
            &f,
            &env,
            None,
            &format!("ion allocated, ours failed with {e:?}"),
        ),
        (Err(_), Err(e)) => Err(e.clone()),
    };
    let outcome = DiffOutcome {
        k,
        ion: theirs.map(|o| cost(&f, &env, &o)),
        ours: ours_cost,
    };
    if report_quality()
        && let (Ok(i), Ok(o)) = (&outcome.ion, &outcome.ours)
        && o.weighted > 2 * i.weighted + 10
    {
        eprintln!(
            "differential: ours {} vs ion {} (k {:?})\n{}",
            o.weighted,
            i.weighted,
            k,
            listing(&f)
        );
    }
    Some(outcome)
}

/// `small_env`: few registers per class (2..12), on a fuzzer `Func` or a Cranelift-like
/// function (second byte), so eviction, splitting and spilling run on every input. Ours must
/// allocate correctly or return `TooManyLiveRegs`; the latter only counts as a bug when ion
/// allocates the same input (ion is consulted only for k >= 3: it can panic at k = 2).
pub fn check_small_env(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(sel) = u.arbitrary::<u8>() else { return };
    let k = SMALL_K[sel as usize % SMALL_K.len()];
    if sel & 0x80 != 0 {
        let f = cranelift_like::generate(&mut u, &cranelift_like::Config::default());
        small_env_one(&f, &x64_env_k(k), k);
    } else if let Ok(f) = Func::arbitrary_with_options(&mut u, &small_env_options(k)) {
        small_env_one(&f, &restrict_env(&machine_env(), k), k);
    }
}

fn small_env_one<F: Function>(f: &F, env: &MachineEnv, k: usize) {
    match allocate(f, env) {
        Ok(out) => {
            if let Err(e) = check_output(f, env, &out) {
                fail("small_env", f, env, Some(&out), &e);
            }
        }
        Err(RegAllocError::TooManyLiveRegs) if k < 3 => {}
        Err(RegAllocError::TooManyLiveRegs) => {
            if ion(f, env, false).is_ok() {
                fail(
                    "small_env",
                    f,
                    env,
                    None,
                    "ours: TooManyLiveRegs, but ion allocated this input",
                );
            }
        }
        Err(e) => fail(
            "small_env",
            f,
            env,
            None,
            &format!("error on a valid input: {e:?}"),
        ),
    }
}

/// `cranelift_like`: a Cranelift-x64-shaped function in the full x64 environment; ours must
/// allocate it and pass every check.
pub fn check_cranelift_like(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let f = cranelift_like::generate(&mut u, &cranelift_like::Config::default());
    must_allocate("cranelift_like", &f, &x64_env());
}

/// `malformed`: a valid function (fuzzer `Func` or Cranelift-like) broken by 1..3 mutations
/// (see [`Mutation`]). Ours must never panic or hang. If the result breaks an input rule
/// (per `validate_input`), ours must return an error; if it is still valid, ours must return
/// a correct allocation, or an error when a mutation made it unallocatable (too many fixed
/// or register constraints at one instruction).
pub fn check_malformed(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(sel) = u.arbitrary::<u8>() else { return };
    let (mut f, env) = if sel & 1 == 0 {
        let Ok(f) = Func::arbitrary_with_options(&mut u, &fuzz_options()) else {
            return;
        };
        (TestFunc::from_function(&f), machine_env())
    } else {
        let cfg = cranelift_like::Config {
            max_insts: 60,
            ..Default::default()
        };
        (cranelift_like::generate(&mut u, &cfg), x64_env())
    };
    let n = 1 + (sel as usize >> 1) % 3;
    let mut applied = vec![];
    let mut unallocatable = false;
    for _ in 0..n {
        if let Some(m) = mutate(&mut f, &env, &mut u) {
            unallocatable |= m == Mutation::TooManyConstraints;
            applied.push(m);
        }
    }
    let valid = validate_input(&f);
    if use_ion() && (valid.is_err() || unallocatable) {
        // Dry run: ion is not panic-free on broken input (empty blocks, ids out of range) nor
        // on over-constrained instructions ("Could not allocate minimal bundle"), so only the
        // still-valid, allocatable mutants are meaningful for it.
        return;
    }
    let what = format!("malformed {applied:?}");
    let result = if use_ion() {
        // Dry run: ion also panics on some valid but unusual mutants (e.g. an extra register
        // use at a call); such panics are ion's, not the harness's.
        match std::panic::catch_unwind(|| allocate(&f, &env)) {
            Ok(r) => r,
            Err(_) => return,
        }
    } else {
        allocate(&f, &env)
    };
    match (result, valid) {
        (Err(_), Err(_)) => {}
        (Err(_), Ok(())) if unallocatable => {}
        (Err(e), Ok(())) => fail(
            &what,
            &f,
            &env,
            None,
            &format!("valid input rejected: {e:?}"),
        ),
        (Ok(out), Err(why)) => fail(
            &what,
            &f,
            &env,
            Some(&out),
            &format!("invalid input accepted ({why})"),
        ),
        (Ok(out), Ok(())) => {
            if let Err(e) = check_output(&f, &env, &out) {
                fail(&what, &f, &env, Some(&out), &e);
            }
        }
    }
}

/// Every check on one input: what the regression test replays.
pub fn check_all(data: &[u8]) {
    check_greedy(data);
    let _ = check_differential(data);
    check_small_env(data);
    check_cranelift_like(data);
    check_malformed(data);
}

/// A vreg id beyond every existing one (bumps `num_vregs`).
pub(crate) fn fresh_vreg(f: &mut TestFunc, class: RegClass) -> VReg {
    let v = VReg::new(f.num_vregs, class);
    f.num_vregs += 1;
    v
}

/// Indices of the non-terminator instructions.
pub(crate) fn op_insts(f: &TestFunc) -> Vec<usize> {
    (0..f.insts.len())
        .filter(|&i| f.insts[i].kind == InstKind::Op)
        .collect()
}
