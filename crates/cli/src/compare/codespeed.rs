//! Code speed (docs/metrics.md): each bench program is JIT-compiled once per allocator (the
//! allocator selected for this thread through the jit crate's switch) and its entry function
//! is called with the program's timing argument from `bench-programs/README.md` (each call
//! takes tens to hundreds of milliseconds); a program missing from that table is timed on its
//! last `; run:` line instead.
//!
//! Protocol: every compiled program must first pass its last `; run:` line, and its result on
//! the timing argument must equal ion's (a failure is reported and not timed). The number of
//! calls per sample is calibrated once per program on the first allocator so that a sample
//! lasts at least [`MIN_SAMPLE`]; then `reps` rounds time one sample per allocator,
//! interleaved with a rotating start, and the median time per call is reported. Programs are
//! compiled and called exactly as `ragreedy run` does it (`ragreedy_jit::Program`: the file's
//! ISA settings, its linking rules, its libcalls), through the jit crate's trampoline
//! (argument marshalling included), identical for every allocator and negligible against
//! calls this long.

use super::measure::short;
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_reader::{ParseOptions, RunCommand, parse_run_command, parse_test};
use ragreedy_jit::layout::{layout_shift, with_layout_shift};
use ragreedy_jit::program::find_function;
use ragreedy_jit::{Allocator, Program, host, panic_message};
use serde::Serialize;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// Shortest sample: long enough that timer resolution and call overhead jitter vanish.
const MIN_SAMPLE: Duration = Duration::from_millis(20);

#[derive(Clone, Debug, Serialize)]
pub struct AllocSpeed {
    pub allocator: String,
    /// Median nanoseconds per call; `None` when the program failed with this allocator.
    pub ns_per_call: Option<f64>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProgramSpeed {
    pub program: String,
    pub invocation: String,
    pub calls_per_sample: u64,
    /// Code placements the samples were taken at: with layout shifts, round `r` of every
    /// allocator runs code compiled shifted by `layout_shift(r)` bytes, so this is the
    /// number of rounds up to 64; without, 1.
    pub placements: usize,
    pub results: Vec<AllocSpeed>,
    /// Why the program was not measured at all (parse error, no runnable target…).
    pub skipped: Option<String>,
}

impl ProgramSpeed {
    pub fn get(&self, a: Allocator) -> Option<&AllocSpeed> {
        self.results.iter().find(|r| r.allocator == a.name())
    }
}

/// Measure every program; `progress` is called after each one.
pub fn measure_all(
    programs: &[(&str, &str)],
    allocators: &[Allocator],
    reps: usize,
    layout_shifts: bool,
    mut progress: impl FnMut(&str),
) -> Vec<ProgramSpeed> {
    programs
        .iter()
        .map(|&(name, text)| {
            let r = measure(name, text, allocators, reps, layout_shifts);
            progress(name);
            r
        })
        .collect()
}

/// `(entry, argument)` of every program in the README's timing table, keyed by file stem:
/// rows look like ``| `name.clif` | `%entry` | 12345 | … |``.
fn timing_arguments() -> HashMap<String, (String, String)> {
    let mut m = HashMap::new();
    for line in super::corpora::BENCH_README.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let (file, entry, arg) = (
            cells[1].trim_matches('`'),
            cells[2].trim_matches('`'),
            cells[3],
        );
        if let (Some(stem), Some(entry)) = (file.strip_suffix(".clif"), entry.strip_prefix('%'))
            && arg.parse::<i64>().is_ok()
        {
            m.insert(stem.to_owned(), (entry.to_owned(), arg.to_owned()));
        }
    }
    m
}

fn measure(
    name: &str,
    text: &str,
    allocators: &[Allocator],
    reps: usize,
    layout_shifts: bool,
) -> ProgramSpeed {
    let mut out = ProgramSpeed {
        program: name.into(),
        invocation: String::new(),
        calls_per_sample: 0,
        placements: 1,
        results: vec![],
        skipped: None,
    };
    let Prepared {
        isa,
        functions,
        check,
        check_cmd,
    } = match prepare(text) {
        Ok(p) => p,
        Err(e) => {
            out.skipped = Some(e);
            return out;
        }
    };
    let check_args = match &check_cmd {
        RunCommand::Run(inv, ..) | RunCommand::Print(inv) => &inv.args,
    };
    // The timing call: the README's argument, parsed against the entry's signature; else the
    // last `; run:` line's.
    let timing = timing_arguments().get(name).and_then(|(entry, arg)| {
        let index = find_function(&functions, entry)?;
        match parse_run_command(
            &format!("print: %{entry}({arg})"),
            &functions[index].signature,
        ) {
            Ok(Some(RunCommand::Print(inv))) => Some((index, inv)),
            _ => None,
        }
    });
    let (entry, args) = match &timing {
        Some((index, inv)) => {
            out.invocation = format!("{inv}");
            (*index, &inv.args)
        }
        None => {
            out.invocation = match &check_cmd {
                RunCommand::Run(inv, ..) | RunCommand::Print(inv) => format!("{inv}"),
            };
            (check, check_args)
        }
    };
    // Compile and check every allocator, ion first: its result on the timing call is the
    // reference for the others.
    let mut order: Vec<usize> = (0..allocators.len()).collect();
    order.sort_by_key(|&i| allocators[i] != Allocator::Ion);
    let mut slots: Vec<(Option<Program>, Option<String>)> =
        (0..allocators.len()).map(|_| (None, None)).collect();
    let mut reference: Option<Vec<DataValue>> = None;
    // Compiles for allocator `a` with the code shifted by `shift` bytes.
    let compile = |a: Allocator, shift: u32| {
        let r = catch_unwind(AssertUnwindSafe(|| {
            with_layout_shift(shift, || {
                a.with(|| Program::compile(isa.clone(), &functions, &[check, entry]))
            })
        }));
        match r {
            Err(p) => Err(format!("compile panicked: {}", panic_message(&*p))),
            Ok(r) => r,
        }
    };
    for &i in &order {
        let a = allocators[i];
        slots[i] = match compile(a, 0) {
            Err(e) => (None, Some(e)),
            Ok(c) => match run_check(&c, check, &check_cmd).and_then(|()| c.call(entry, args)) {
                Err(e) => (None, Some(e)),
                Ok(got) => match &reference {
                    Some(want) if !bitwise_eq(want, &got) => (
                        None,
                        Some(format!("result {got:?} differs from ion's {want:?}")),
                    ),
                    _ => {
                        if a == Allocator::Ion {
                            reference = Some(got);
                        }
                        (Some(c), None)
                    }
                },
            },
        };
    }
    let mut compiled: Vec<Option<Program>> = Vec::new();
    for (i, (c, err)) in slots.into_iter().enumerate() {
        out.results.push(AllocSpeed {
            allocator: allocators[i].name().into(),
            ns_per_call: None,
            error: err.map(|e| short(&e)),
        });
        compiled.push(c);
    }
    let live: Vec<usize> = (0..compiled.len())
        .filter(|&i| compiled[i].is_some())
        .collect();
    if live.is_empty() {
        return out;
    }
    let sample = |compiled: &[Option<Program>], i: usize, calls: u64| {
        let program = compiled[i].as_ref().expect("live");
        let t = Instant::now();
        for _ in 0..calls {
            std::hint::black_box(program.call(entry, args).ok());
        }
        t.elapsed()
    };
    // Calibrate on the first allocator that compiled.
    let mut calls = 1u64;
    loop {
        let t = sample(&compiled, live[0], calls);
        if t >= MIN_SAMPLE || calls >= 1 << 30 {
            break;
        }
        let factor = (MIN_SAMPLE.as_secs_f64() / t.as_secs_f64().max(1e-9)).clamp(2.0, 100.0);
        calls = ((calls as f64) * factor).ceil() as u64;
    }
    out.calls_per_sample = calls;
    let mut samples: Vec<Vec<f64>> = vec![vec![]; compiled.len()];
    let shifting = layout_shifts && ragreedy_jit::layout::SUPPORTED;
    if shifting {
        out.placements = reps.min(64);
    }
    for round in 0..reps {
        let shift = if shifting { layout_shift(round) } else { 0 };
        for k in 0..live.len() {
            let i = live[(k + round) % live.len()];
            if out.results[i].error.is_some() {
                continue;
            }
            if shifting && round > 0 {
                // Every allocator's code at this round's placement; the unshifted
                // compilation, checked against ion's result above, is round 0's.
                let recompiled = compile(allocators[i], shift)
                    .and_then(|c| run_check(&c, check, &check_cmd).map(|()| c));
                match recompiled {
                    Ok(c) => compiled[i] = Some(c),
                    Err(e) => {
                        out.results[i].error = Some(short(&format!("shifted {shift} bytes: {e}")));
                        continue;
                    }
                }
            }
            samples[i].push(sample(&compiled, i, calls).as_nanos() as f64 / calls as f64);
        }
    }
    for &i in &live {
        if out.results[i].error.is_some() {
            continue;
        }
        let s = &mut samples[i];
        s.sort_by(f64::total_cmp);
        let n = s.len();
        out.results[i].ns_per_call = Some(if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        });
    }
    out
}

fn bitwise_eq(a: &[DataValue], b: &[DataValue]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
}

/// Run the `; run:` line `cmd` on function `index` and compare with its expectation.
fn run_check(program: &Program, index: usize, cmd: &RunCommand) -> Result<(), String> {
    let RunCommand::Run(inv, ..) = cmd else {
        return Ok(());
    };
    let actual = program.call(index, &inv.args)?;
    cmd.run(|_, _| Ok(actual.clone()))
        .map_err(|e| format!("wrong result: {e}"))
}

/// A bench program ready to compile: the host ISA of its first runnable target, its
/// functions, and its last `; run:` line with the function that line belongs to.
struct Prepared {
    isa: OwnedTargetIsa,
    functions: Vec<Function>,
    check: usize,
    check_cmd: RunCommand,
}

fn prepare(text: &str) -> Result<Prepared, String> {
    let (rewritten, header) = host::rewrite_header(text);
    let test =
        parse_test(&rewritten, ParseOptions::default()).map_err(|e| format!("parse: {e}"))?;
    let isa = host::first_runnable(&test.isa_spec, &header, false)?;
    let mut last = None;
    for (index, (func, details)) in test.functions.iter().enumerate() {
        for comment in &details.comments {
            if let Ok(Some(cmd @ RunCommand::Run(..))) =
                parse_run_command(comment.text, &func.signature)
            {
                last = Some((index, cmd));
            }
        }
    }
    let (check, check_cmd) = last.ok_or("no `; run:` line")?;
    Ok(Prepared {
        isa,
        functions: test.functions.into_iter().map(|(f, _)| f).collect(),
        check,
        check_cmd,
    })
}
