//! The corpora of docs/metrics.md as lists of [`Case`]s: `cranelift` (Cranelift's regalloc2 inputs
//! for the bench programs: the committed dump embedded in the binary, or a fresh capture),
//! `fuzz` (regalloc2 fuzzer `Func`s from fixed seeds at several register pressures), `scale`
//! (the generated functions of `ragreedy_testkit::scale`), and any directory of dumped functions.
//!
//! Every function is converted to testkit's `TestFunc` (a plain `Vec`-backed `Function`, like
//! regalloc2's own `SerializableFunction`), so all allocators read the same concrete type.

use super::measure::Case;
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::scale;
use ragreedy_testkit::{corpus, fuzzgen};
use regalloc2::serialize::SerializableFunction;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/bench_programs.rs"));

/// Register pressures of the `fuzz` corpus when `--regs` is not given: the fuzzer's full
/// environment (`None`), then 8 and 4 allocatable registers per class.
pub const FUZZ_PRESSURES: [Option<usize>; 3] = [None, Some(8), Some(4)];

fn restrict(env: regalloc2::MachineEnv, regs: Option<usize>) -> regalloc2::MachineEnv {
    match regs {
        Some(k) => fuzzgen::restrict_env(&env, k),
        None => env,
    }
}

fn group_name(regs: Option<usize>) -> String {
    match regs {
        Some(k) => format!("{k} regs"),
        None => "full env".into(),
    }
}

/// `cranelift`: every function of every bench program. The committed dump
/// (`bench-programs/dump/`, embedded at build time) is used when there is one, so the corpus is
/// exactly the reviewed files; otherwise the embedded CLIF programs are compiled now through
/// the jit crate's capture hook (the same inputs: capture precedes allocation). Problems (bad
/// JSON, capture errors) are returned as messages: the corpus is then smaller, never silently.
pub fn cranelift(regs: Option<usize>) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    if !BENCH_DUMPS.is_empty() {
        for &(name, json) in BENCH_DUMPS {
            match serde_json::from_str::<SerializableFunction>(json) {
                Ok(f) => cases.push(Case {
                    name: name.to_owned(),
                    group: group_name(regs),
                    env: restrict(f.machine_env().clone(), regs),
                    func: TestFunc::from_function(&f),
                }),
                Err(e) => problems.push(format!("bench-programs/dump/{name}.json: {e}")),
            }
        }
        return (cases, problems);
    }
    problems.push("no committed dump: functions captured from the embedded CLIF files".into());
    for &(stem, text) in BENCH_PROGRAMS {
        match ragreedy_jit::dump::dump_source(text) {
            Err(e) => problems.push(format!("{stem}: {e}")),
            Ok((captured, errors)) => {
                problems.extend(errors.into_iter().map(|e| format!("{stem}: {e}")));
                for c in captured {
                    cases.push(Case {
                        name: format!("{stem}.{}", c.func_name),
                        group: group_name(regs),
                        env: restrict(c.function.machine_env().clone(), regs),
                        func: TestFunc::from_function(&c.function),
                    });
                }
            }
        }
    }
    (cases, problems)
}

/// A directory of dumped functions (`ragreedy dump` output).
pub fn dir(path: &Path, regs: Option<usize>) -> Result<Vec<Case>, String> {
    let funcs = corpus::load_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(funcs
        .into_iter()
        .map(|(name, f)| Case {
            name,
            group: group_name(regs),
            env: restrict(f.machine_env().clone(), regs),
            func: TestFunc::from_function(&f),
        })
        .collect())
}

/// One real module: every regalloc2 call Wasmtime makes compiling it (captured on one thread,
/// so names `module.wasm#N` are stable), grouped under the module's name. `Err` is one line
/// naming the file and the cause.
pub fn wasm_module(path: &Path, regs: Option<usize>) -> Result<Vec<Case>, String> {
    let captured = ragreedy_wasm::capture::capture_file(path).map_err(|e| e.to_string())?;
    let group = match regs {
        Some(_) => format!(
            "{} ({})",
            ragreedy_wasm::module_name(path),
            group_name(regs)
        ),
        None => ragreedy_wasm::module_name(path),
    };
    Ok(captured
        .into_iter()
        .map(|c| Case {
            name: ragreedy_wasm::capture::function_name(path, c.index),
            group: group.clone(),
            env: restrict(c.env, regs),
            func: c.func,
        })
        .collect())
}

/// `fuzz`: `count` functions per pressure, seeds 0, 1, … (rejected seeds skipped), so the
/// same command always measures the same functions. Names are `k{regs}-s{seed}`.
pub fn fuzz(regs: Option<usize>, count: usize) -> Vec<Case> {
    let pressures: Vec<Option<usize>> = match regs {
        Some(k) => vec![Some(k)],
        None => FUZZ_PRESSURES.to_vec(),
    };
    let mut cases = Vec::new();
    for p in pressures {
        let opts = match p {
            Some(k) => fuzzgen::small_env_options(k),
            None => fuzzgen::fuzz_options(),
        };
        let env = restrict(fuzzgen::machine_env(), p);
        let mut seed = 0u64;
        let mut n = 0;
        while n < count {
            if let Some(f) = fuzzgen::func_from_seed(seed, &opts) {
                cases.push(Case {
                    name: format!("{}-s{seed}", p.map_or("full".into(), |k| format!("k{k}"))),
                    group: group_name(p),
                    func: TestFunc::from_function(&f),
                    env: env.clone(),
                });
                n += 1;
            }
            seed += 1;
        }
    }
    cases
}

/// `scale`: for each shape of [`scale::Shape`], one function per size up to `max_insts`
/// (the original shape from 1k to 1M, the others from 1k to 256k), generated lazily (a
/// 1M-instruction function is a few hundred MB; only one is alive at a time).
pub fn scale_sizes(max_insts: usize) -> Vec<scale::ScaleSpec> {
    scale::Shape::ALL
        .iter()
        .flat_map(|&shape| {
            shape
                .sizes(max_insts)
                .into_iter()
                .map(move |insts| scale::ScaleSpec { shape, insts })
        })
        .collect()
}

/// The function of `spec`; its group is the shape (with the register count if `regs`
/// restricts the environment), so `compare` reports each shape on its own.
pub fn scale_case(spec: scale::ScaleSpec, regs: Option<usize>) -> Case {
    let group = match regs {
        Some(k) => format!("{} {k} regs", spec.shape.name()),
        None => spec.shape.name().to_owned(),
    };
    Case {
        name: spec.to_string(),
        group,
        func: spec.shape.generate(spec.insts),
        env: restrict(scale::env(), regs),
    }
}
