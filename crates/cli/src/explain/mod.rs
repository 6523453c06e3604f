//! `ragreedy explain`: why one function was allocated the way it was. It loads one
//! function (from a CLIF file compiled by Cranelift, a JSON dump, a text-format file, or
//! `module.wasm#N`), allocates it, and prints the greedy allocator's decision trace (the
//! observer's events, one per line), the allocation, the checker's verdict and the
//! weighted cost split into its parts. `--html` also draws the allocation (see [`html`]);
//! `--compare` allocates the same function with a second allocator and shows both.

mod html;
mod pieces;

use clap::Args;
use ragreedy_jit::Allocator;
use ragreedy_testkit::builder::{TestFunc, listing_with_output};
use ragreedy_testkit::{check, corpus, cost, text};
use regalloc_greedy::Event;
use regalloc2::{Algorithm, Function, MachineEnv, Output, RegallocOptions};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The function: a CLIF file (`.clif`), a JSON dump (`.json`), a text-format file
    /// (any other extension), or `MODULE.wasm#N` (the N-th regalloc2 call compiling it).
    pub source: String,
    /// The function of a CLIF file to explain (its name without `%`; default: the first).
    #[arg(long)]
    pub func: Option<String>,
    /// Allocator whose allocation is explained (only greedy has a decision trace).
    #[arg(long, default_value = "greedy")]
    pub allocator: Allocator,
    /// Write a self-contained HTML page drawing the allocation here (and the drawn pieces
    /// as JSON beside it, `<stem>.pieces.json`).
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Also allocate with this allocator: its cost on stdout, its drawing under ours.
    #[arg(long)]
    pub compare: Option<Allocator>,
}

/// The function to explain.
pub struct Loaded {
    pub name: String,
    pub func: TestFunc,
    pub env: MachineEnv,
}

/// One allocator's result.
pub struct Allocated {
    pub allocator: Allocator,
    pub out: Output,
    /// The decision trace (greedy only).
    pub events: Option<Vec<Event>>,
    pub cost: cost::Cost,
    /// The checker's complaint, if any.
    pub check: Result<(), String>,
}

pub fn main(args: ExplainArgs) -> i32 {
    match run(&args) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("explain: {e}");
            1
        }
    }
}

fn run(args: &ExplainArgs) -> Result<String, String> {
    let loaded = load(&args.source, args.func.as_deref())?;
    let ours = allocate(args.allocator, &loaded)?;
    let other = match args.compare {
        Some(a) => Some(allocate(a, &loaded)?),
        None => None,
    };
    let mut s = String::new();
    let f = &loaded.func;
    let _ = writeln!(
        s,
        "function {}: {} blocks, {} instructions, {} vregs; allocator {}",
        loaded.name,
        f.num_blocks(),
        f.num_insts(),
        f.num_vregs(),
        ours.allocator
    );
    let _ = writeln!(
        s,
        "(ivN: live interval N, a piece of one vreg; [a, b): program points, 2*inst early, \
         2*inst+1 late; weight: spill weight, inf = unspillable)"
    );
    if let Some(events) = &ours.events {
        let _ = writeln!(s, "\ndecisions ({} events):", events.len());
        for e in events {
            let _ = writeln!(s, "{e}");
        }
    } else {
        let _ = writeln!(
            s,
            "\n{} records no decisions: allocation only.",
            ours.allocator
        );
    }
    let _ = writeln!(s, "\nallocation:");
    s.push_str(&listing_with_output(f, &ours.out));
    s.push('\n');
    for a in std::iter::once(&ours).chain(&other) {
        summary(&mut s, a);
    }
    if let Some(path) = &args.html {
        let mut panels = vec![&ours];
        panels.extend(&other);
        html::write(path, &loaded, &panels)?;
        let _ = writeln!(s, "\nwrote {}", path.display());
    }
    Ok(s)
}

/// The checker's verdict and the cost, split into its parts.
fn summary(s: &mut String, a: &Allocated) {
    let c = &a.cost;
    let p = &c.parts;
    let _ = writeln!(
        s,
        "{}: checker {}",
        a.allocator,
        match &a.check {
            Ok(()) => "accepts".to_string(),
            Err(e) => format!("REJECTS: {e}"),
        }
    );
    let _ = writeln!(
        s,
        "{}: weighted cost {} = moves {} ({}) + spills {} ({}) + reloads {} ({}) + callee-saved {} ({} registers){}",
        a.allocator,
        c.weighted,
        p.moves,
        c.moves,
        p.spills,
        c.spills,
        p.reloads,
        c.reloads,
        p.callee_saved,
        c.non_preferred_regs,
        if c.stack_moves > 0 {
            format!(" + stack-to-stack {} ({})", p.stack_moves, c.stack_moves)
        } else {
            String::new()
        }
    );
}

/// Reads the function `source` names.
pub fn load(source: &str, func: Option<&str>) -> Result<Loaded, String> {
    if let Some((module, n)) = source.rsplit_once('#')
        && (module.ends_with(".wasm") || module.ends_with(".wat"))
    {
        let index: usize = n
            .parse()
            .map_err(|_| format!("{source}: `#{n}` is not a function number"))?;
        let path = Path::new(module);
        let mut captured = ragreedy_wasm::capture::capture_file(path).map_err(|e| e.to_string())?;
        let count = captured.len();
        if index >= count {
            return Err(format!(
                "{module} has {count} functions (#0 to #{})",
                count - 1
            ));
        }
        let c = captured.swap_remove(index);
        return Ok(Loaded {
            name: ragreedy_wasm::capture::function_name(path, index),
            func: c.func,
            env: c.env,
        });
    }
    let path = Path::new(source);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match path.extension().and_then(|e| e.to_str()) {
        Some("clif") => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let (captured, errors) = ragreedy_jit::dump::dump_source(&text)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            for e in &errors {
                log::warn!("{}: {e}", path.display());
            }
            let names: Vec<&str> = captured.iter().map(|c| c.func_name.as_str()).collect();
            let chosen = match func {
                Some(name) => captured
                    .iter()
                    .find(|c| c.func_name == name)
                    .ok_or_else(|| {
                        format!(
                            "{}: no function %{name} (compiled: {})",
                            path.display(),
                            names.join(", ")
                        )
                    })?,
                None => captured.first().ok_or_else(|| {
                    format!(
                        "{}: no function compiled: {}",
                        path.display(),
                        errors.join("; ")
                    )
                })?,
            };
            if func.is_none() && captured.len() > 1 {
                log::info!(
                    "{}: explaining %{}, the first of {}",
                    path.display(),
                    chosen.func_name,
                    names.join(", ")
                );
            }
            Ok(Loaded {
                name: format!("{stem}.{}", chosen.func_name),
                func: TestFunc::from_function(&chosen.function),
                env: chosen.function.machine_env().clone(),
            })
        }
        Some("json") => {
            let f = corpus::load_function(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Loaded {
                name: stem,
                func: TestFunc::from_function(&f),
                env: f.machine_env().clone(),
            })
        }
        _ => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let (func, env) = text::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Loaded {
                name: stem,
                func,
                env,
            })
        }
    }
}

/// Allocates `loaded` with `a` (greedy observed), checks and prices the result.
pub fn allocate(a: Allocator, loaded: &Loaded) -> Result<Allocated, String> {
    let (f, env) = (&loaded.func, &loaded.env);
    let (out, events) = match a {
        Allocator::Greedy => {
            let mut events = Vec::new();
            let mut ctx = regalloc_greedy::Context::new();
            let out = regalloc_greedy::run_observed(
                f,
                env,
                &regalloc_greedy::Options::default(),
                &mut ctx,
                &mut events,
            );
            // A failure is explained by the decisions that led to it.
            let out = out.map_err(|e| {
                let mut s = format!("decisions up to the failure ({} events):\n", events.len());
                for ev in &events {
                    let _ = writeln!(s, "{ev}");
                }
                let _ = write!(s, "greedy: {e:?}");
                s
            })?;
            (out, Some(events))
        }
        Allocator::Basic | Allocator::LinearScan | Allocator::Irc => {
            // Only greedy reports its decisions; the classic allocators show their result.
            let mut options = regalloc_greedy::Options::default();
            options.algorithm = a.ours().expect("one of ours");
            let out = regalloc_greedy::run(f, env, &options).map_err(|e| format!("{a}: {e:?}"))?;
            (out, None)
        }
        Allocator::Ion | Allocator::Fastalloc => {
            let options = RegallocOptions {
                algorithm: if a == Allocator::Ion {
                    Algorithm::Ion
                } else {
                    Algorithm::Fastalloc
                },
                validate_ssa: true,
                ..RegallocOptions::default()
            };
            let out = regalloc2::run(f, env, &options).map_err(|e| format!("{a}: {e:?}"))?;
            (out, None)
        }
    };
    let cost = cost::cost(f, env, &out);
    let check = check::check_output(f, env, &out);
    Ok(Allocated {
        allocator: a,
        out,
        events,
        cost,
        check,
    })
}
