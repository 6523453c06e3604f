//! Allocates every function of a folder of dumps (`ragreedy wasm dump` output) with greedy
//! alone, no checker, for a profiler: `valgrind --tool=callgrind --toggle-collect='*run_inner*'
//! target/release/examples/profile DUMPS [FILTER]` counts the allocator's instructions only
//! (loading the JSON is not collected). `REPS=n` allocates everything n times with one reused
//! context, as a JIT would; (count at n) - (count at 1) over n - 1 is the warm per-pass cost.
//! `OFF=option,option` turns options off (`common/off.rs` lists them); `STATS=1` prints the summed
//! `Stats` (the bookkeeping is not free: leave it out when counting instructions).
//! `ALLOC=ion` allocates with regalloc2's ion instead (one reused `Ctx`, Cranelift's options),
//! counted with `--toggle-collect='*run_with_ctx*'`, for the ratio on the same functions.
//! `INTERLEAVE=1` runs the other allocator on each function just before the one counted
//! (not collected, not timed: the time printed is the counted allocator's calls alone),
//! so that one starts from caches holding another allocator's data, as in `ragreedy
//! compare`'s interleaved rounds (with `ALLOC=ion`, count with
//! `--toggle-collect='regalloc2::ion::run*'`: the greedy calls keep `run_with_ctx` from being
//! a symbol of its own).
//! `PHASES=1` turns `Options::phase_times` on and prints the time per phase a pass (its
//! clock reads are not free: leave it out for the total).
//! `DIGEST=1` prints one hash of every output (allocations, edits, spill slots), in order:
//! two builds (or option sets) print the same digest exactly when they allocated every
//! function identically, a check on speed-ups that must not change the allocation (the
//! hashing runs between allocations: not for timing).
//! `COMPACT=1` renumbers each function's vregs densely from 0 (in order of first mention)
//! before allocating: a probe of what Cranelift's sparse numbering (its values start at
//! 192) costs the per-vreg tables.
//! Functions are read from testkit's `TestFunc` (a `Vec` per list; the counts in
//! docs/design.md are on it); `FLAT=1` reads them from `FlatFunc` (flat arrays, as
//! Cranelift's `VCode` and `ragreedy compare` do) instead. The two cost the allocator
//! different instructions (`FlatFunc` about 4% more on the Wasm corpus), so the time line
//! names the one used: counts and times compare only on the same one.
#[path = "common/off.rs"]
mod off;

use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::corpus;
use ragreedy_testkit::flat::FlatFunc;
use regalloc2::{Function, MachineEnv};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next().map(std::path::PathBuf::from) else {
        eprintln!("usage: profile DUMPS [FILTER]  (REPS=n in the environment)");
        std::process::exit(2);
    };
    let filter = args.next();
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("DUMPS is a folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut cases = Vec::new();
    for d in dirs {
        if filter
            .as_deref()
            .is_some_and(|f| !d.to_string_lossy().contains(f))
        {
            continue;
        }
        for (_, f) in corpus::load_dir(&d).expect("a folder of dumped functions") {
            let mut t = TestFunc::from_function(&f);
            if std::env::var_os("COMPACT").is_some() {
                compact(&mut t);
            }
            cases.push((t, f.machine_env().clone()));
        }
    }
    if std::env::var_os("FLAT").is_some() {
        let flat: Vec<_> = cases
            .iter()
            .map(|(f, env)| (FlatFunc::from(f), env.clone()))
            .collect();
        allocate(&flat, reps, "FlatFunc");
    } else {
        allocate(&cases, reps, "TestFunc");
    }
}

/// Allocates `cases` `reps` times; `repr`, how the functions are held, goes on the time line.
fn allocate<F: Function>(cases: &[(F, MachineEnv)], reps: usize, repr: &str) {
    if std::env::var("ALLOC").is_ok_and(|a| a == "ion") {
        let options = regalloc2::RegallocOptions::default();
        let mut ctx = regalloc2::Ctx::default();
        let interleave = std::env::var_os("INTERLEAVE").is_some();
        let greedy_options = off::options_from_env();
        let mut greedy_ctx = regalloc_greedy::Context::new();
        let mut greedy_out = regalloc2::Output::default();
        let mut spent = std::time::Duration::ZERO;
        for _ in 0..reps {
            for (f, env) in cases {
                if interleave {
                    let _ = regalloc_greedy::run_with_context_into(
                        f,
                        env,
                        &greedy_options,
                        &mut greedy_ctx,
                        &mut greedy_out,
                    );
                }
                let t = std::time::Instant::now();
                if let Err(e) = regalloc2::run_with_ctx(f, env, &options, &mut ctx) {
                    eprintln!("ion failed: {e:?}");
                    std::process::exit(1);
                }
                spent += t.elapsed();
            }
        }
        eprintln!(
            "{} functions x {reps} in {spent:?} (ion, {repr})",
            cases.len()
        );
        return;
    }
    let mut options = off::options_from_env();
    options.phase_times = std::env::var_os("PHASES").is_some();
    let mut ctx = regalloc_greedy::Context::new();
    let mut out = regalloc2::Output::default();
    let mut stats = regalloc_greedy::Stats::default();
    let interleave = std::env::var_os("INTERLEAVE").is_some();
    let mut ion_ctx = regalloc2::Ctx::default();
    let ion_options = regalloc2::RegallocOptions::default();
    let mut spent = std::time::Duration::ZERO;
    let mut digest: Option<u64> = std::env::var_os("DIGEST").map(|_| 0);
    for _ in 0..reps {
        for (f, env) in cases {
            if interleave {
                let _ = regalloc2::run_with_ctx(f, env, &ion_options, &mut ion_ctx);
            }
            let t = std::time::Instant::now();
            if let Err(e) =
                regalloc_greedy::run_with_context_into(f, env, &options, &mut ctx, &mut out)
            {
                eprintln!("allocation failed: {e:?}");
                std::process::exit(1);
            }
            spent += t.elapsed();
            stats += *ctx.stats();
            if let Some(d) = &mut digest {
                *d = d.rotate_left(5) ^ output_hash(&out);
            }
        }
    }
    eprintln!("{} functions x {reps} in {spent:?} ({repr})", cases.len());
    if let Some(d) = digest {
        eprintln!("outputs digest {d:016x}");
    }
    if std::env::var_os("STATS").is_some() {
        eprintln!("{stats:#?}");
    }
    if options.phase_times {
        let phases = &stats.phases;
        for p in regalloc_greedy::Phase::ALL {
            let per_pass = phases.get(p) / reps as u32;
            eprintln!("{:>18}: {per_pass:>12.3?} a pass", p.name());
        }
        eprintln!(
            "{:>18}: {:>12.3?} a pass",
            "all",
            phases.total() / reps as u32
        );
    }
}

/// A hash of everything `out` says (allocations, edits, spill slots): SipHash with fixed
/// keys over the outputs' debug text, so the same outputs hash alike in every build made
/// with one toolchain (the standard hasher may change between Rust releases).
fn output_hash(out: &regalloc2::Output) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!(
        "{:?}{:?}{:?}{}",
        out.allocs, out.edits, out.inst_alloc_offsets, out.num_spillslots
    )
    .hash(&mut h);
    h.finish()
}

/// `COMPACT`: `t`'s vregs renumbered densely from 0, in order of first mention.
fn compact(t: &mut TestFunc) {
    use regalloc2::VReg;
    let mut map = vec![usize::MAX; t.num_vregs];
    let mut next = 0;
    t.rename_vregs(|v| {
        if map[v.vreg()] == usize::MAX {
            map[v.vreg()] = next;
            next += 1;
        }
        VReg::new(map[v.vreg()], v.class())
    });
    t.num_vregs = next.max(1);
}
