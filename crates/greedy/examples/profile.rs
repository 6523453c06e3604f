//! Allocates every function of a folder of dumps (`ragreedy wasm dump` output) with greedy
//! alone, no checker, for a profiler: `valgrind --tool=callgrind --toggle-collect='*run_inner*'
//! target/release/examples/profile DUMPS [FILTER]` counts the allocator's instructions only
//! (loading the JSON is not collected). `REPS=n` allocates everything n times with one reused
//! context, as a JIT would; (count at n) - (count at 1) over n - 1 is the warm per-pass cost.
//! `OFF=option,option` turns options off (see the match below); `STATS=1` prints the summed
//! `Stats` (the bookkeeping is not free: leave it out when counting instructions).
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::corpus;

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
            cases.push((TestFunc::from_function(&f), f.machine_env().clone()));
        }
    }
    let mut options = regalloc_greedy::Options::default();
    // `OFF=a,b`: options turned off, to weigh what a mechanism costs.
    for name in std::env::var("OFF").unwrap_or_default().split(',') {
        match name {
            "" => {}
            "evicting_local_split" => options.evicting_local_split = false,
            "csr_pre_split" => options.csr_pre_split = false,
            "hint_recoloring" => options.hint_recoloring = false,
            "group_hints" => options.group_hints = false,
            "long_value_order" => options.long_value_order = false,
            "group_placement" => options.group_placement = false,
            "copy_spilling" => options.copy_spilling = false,
            "copy_spill_chains" => options.copy_spill_chains = false,
            "unspilling" => options.unspilling = false,
            "unspill_copy_freed" => options.unspill_copy_freed = false,
            "hoist_common_stores" => options.hoist_common_stores = false,
            "last_chance_recoloring" => options.last_chance_recoloring = false,
            "slot_sharing" => options.slot_sharing = false,
            "redundant_moves" => options.redundant_moves = false,
            "splitting" => options.splitting = false,
            other => {
                eprintln!("OFF: unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    let mut ctx = regalloc_greedy::Context::new();
    let mut out = regalloc2::Output::default();
    let mut stats = regalloc_greedy::Stats::default();
    let t = std::time::Instant::now();
    for _ in 0..reps {
        for (f, env) in &cases {
            if let Err(e) =
                regalloc_greedy::run_with_context_into(f, env, &options, &mut ctx, &mut out)
            {
                eprintln!("allocation failed: {e:?}");
                std::process::exit(1);
            }
            stats += *ctx.stats();
        }
    }
    eprintln!("{} functions x {reps} in {:?}", cases.len(), t.elapsed());
    if std::env::var_os("STATS").is_some() {
        eprintln!("{stats:#?}");
    }
}
