//! Allocating one function with each allocator and measuring it the docs/metrics.md way: a first,
//! untimed run per allocator gives the output that is checked (regalloc2's checker plus
//! testkit's structural rules, the baseline strictness for ion and fastalloc) and costed (testkit `cost`); then the timed runs, interleaved
//! A B C A B C … for `reps` rounds (the starting allocator rotates per round, so no allocator
//! always runs right after another one's cache damage), median taken.
//!
//! Allocators read the function as testkit's `FlatFunc`, in flat arrays as Cranelift's
//! `VCode` keeps it (a `TestFunc` would add a pointer chase to every list read); the check
//! reads the `TestFunc` it was copied from, which answers alike.
//!
//! Each allocator runs the way its client runs it: ion and fastalloc through
//! `regalloc2::run_with_ctx` with one `Ctx` reused across every function (as Cranelift keeps
//! one per compiling thread), greedy through `run_with_context` with one reused `Context`.
//! Invariant: only allocations that returned `Ok` and passed the checker are timed and enter
//! ratios; a panic is caught, counted as a checker failure, and the allocator's context is
//! replaced (a panic may leave it half-updated).

use ragreedy_jit::{Allocator, panic_message};
use ragreedy_testkit::builder::TestFunc;
use ragreedy_testkit::flat::FlatFunc;
use ragreedy_testkit::{check, cost};
use regalloc2::{Algorithm, Function, MachineEnv, Output, RegallocOptions};
use serde::Serialize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// One allocation problem of a corpus.
pub struct Case {
    pub name: String,
    /// Sub-group of the corpus (e.g. the register pressure of a fuzz function).
    pub group: String,
    pub func: TestFunc,
    pub env: MachineEnv,
}

/// The docs/metrics.md cost of one output, serializable.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CostRec {
    pub weighted: u64,
    pub moves: usize,
    pub spills: usize,
    pub reloads: usize,
    pub stack_moves: usize,
    pub spill_slots: usize,
    pub callee_saved: usize,
}

impl From<cost::Cost> for CostRec {
    fn from(c: cost::Cost) -> Self {
        CostRec {
            weighted: c.weighted,
            moves: c.moves,
            spills: c.spills,
            reloads: c.reloads,
            stack_moves: c.stack_moves,
            spill_slots: c.num_spillslots,
            callee_saved: c.non_preferred_regs,
        }
    }
}

/// How one allocator fared on one function.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Allocated and passed the checker.
    Ok,
    /// Returned `Err` (e.g. `TooManyLiveRegs` on an over-constrained fuzz input).
    Error(String),
    /// Returned an output the checker rejects, or panicked (ion's panics count as errors).
    CheckerFailure(String),
    /// Not run: an earlier function of this corpus exceeded the time budget.
    Skipped,
}

#[derive(Clone, Debug, Serialize)]
pub struct AllocResult {
    pub allocator: String,
    pub status: Status,
    /// Median wall time of the timed runs (only for `Ok`).
    pub time_ns: Option<u64>,
    /// Whether regalloc2's checker ran (it is skipped above the size limit; the structural
    /// rules always run).
    pub checked: bool,
    pub cost: Option<CostRec>,
}

impl AllocResult {
    pub fn ok(&self) -> bool {
        matches!(self.status, Status::Ok)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct FuncResult {
    pub name: String,
    pub group: String,
    pub insts: usize,
    pub blocks: usize,
    pub vregs: usize,
    pub results: Vec<AllocResult>,
    /// Greedy's time per phase (median per phase over the timed runs), if it was timed;
    /// in JSON a map from phase name to nanoseconds.
    #[serde(serialize_with = "phases_as_map")]
    pub greedy_phases: Option<regalloc_greedy::PhaseTimes>,
}

impl FuncResult {
    pub fn get(&self, a: Allocator) -> Option<&AllocResult> {
        self.results.iter().find(|r| r.allocator == a.name())
    }
}

/// The allocators' reusable state.
pub struct Runner {
    greedy: regalloc_greedy::Context,
    /// Our allocators' output, reused from one function to the next as ion's `Ctx` reuses
    /// its own (so neither allocator's time includes allocating or freeing its output).
    greedy_output: Output,
    greedy_options: regalloc_greedy::Options,
    /// `--x64-sysv`: each function's callee-saved registers are its environment's integer
    /// non-preferred ones.
    x64_sysv: bool,
    ion: regalloc2::Ctx,
    fastalloc: regalloc2::Ctx,
    /// Greedy's phase times of each timed run of the current function.
    greedy_phases: Vec<regalloc_greedy::PhaseTimes>,
}

impl Runner {
    pub fn new() -> Self {
        Runner {
            greedy: regalloc_greedy::Context::new(),
            greedy_output: Output::default(),
            greedy_options: regalloc_greedy::Options::default(),
            x64_sysv: false,
            ion: regalloc2::Ctx::default(),
            fastalloc: regalloc2::Ctx::default(),
            greedy_phases: Vec::new(),
        }
    }

    /// Time greedy's phases too (`--phases`); it costs a few percent on small functions.
    pub fn set_phase_times(&mut self, on: bool) {
        self.greedy_options.phase_times = on;
    }

    /// `--x64-sysv` (see `CompareArgs::x64_sysv`).
    pub fn set_x64_sysv(&mut self, on: bool) {
        self.x64_sysv = on;
    }

    /// One allocation; `Ok(None)` keeps the output out of the timed path (no clone).
    fn run<F: Function>(
        &mut self,
        a: Allocator,
        f: &F,
        env: &MachineEnv,
        keep: bool,
    ) -> Result<Option<Output>, regalloc2::RegAllocError> {
        match a {
            Allocator::Greedy | Allocator::Basic | Allocator::LinearScan | Allocator::Irc => {
                self.greedy_options.algorithm = a.ours().unwrap_or_default();
                if self.x64_sysv {
                    self.greedy_options.callee_saved =
                        Some(regalloc_greedy::Options::callee_saved_x64_sysv(env));
                }
                regalloc_greedy::run_with_context_into(
                    f,
                    env,
                    &self.greedy_options,
                    &mut self.greedy,
                    &mut self.greedy_output,
                )?;
                Ok(keep.then(|| self.greedy_output.clone()))
            }
            Allocator::Ion | Allocator::Fastalloc => {
                let (algorithm, ctx) = match a {
                    Allocator::Ion => (Algorithm::Ion, &mut self.ion),
                    _ => (Algorithm::Fastalloc, &mut self.fastalloc),
                };
                // Cranelift's release settings: no SSA validation, no verbose log.
                let options = RegallocOptions {
                    algorithm,
                    ..RegallocOptions::default()
                };
                let out = regalloc2::run_with_ctx(f, env, &options, ctx)?;
                Ok(keep.then(|| out.clone()))
            }
        }
    }

    fn reset(&mut self, a: Allocator) {
        match a {
            Allocator::Greedy | Allocator::Basic | Allocator::LinearScan | Allocator::Irc => {
                self.greedy = regalloc_greedy::Context::new()
            }
            Allocator::Ion => self.ion = regalloc2::Ctx::default(),
            Allocator::Fastalloc => self.fastalloc = regalloc2::Ctx::default(),
        }
    }

    /// Timed run of an allocator already known to succeed on `f`.
    fn time<F: Function>(&mut self, a: Allocator, f: &F, env: &MachineEnv) -> Duration {
        let t = Instant::now();
        let r = self.run(a, f, env, false);
        let d = t.elapsed();
        // Deterministic allocators: the untimed run succeeded, so this one does too.
        debug_assert!(r.is_ok());
        if a == Allocator::Greedy {
            self.greedy_phases.push(self.greedy.stats().phases);
        }
        std::hint::black_box(r.ok());
        d
    }

    /// Measure `case` with `allocators`. Allocators in `skip` are reported as skipped; an
    /// allocator whose untimed run takes longer than `budget` is added to `skip` (for the
    /// cases after this one) but still measured here. regalloc2's checker runs only on
    /// functions of at most `check_limit` instructions: its state updates are superlinear
    /// (minutes at 1M instructions); larger functions get the structural rules only.
    pub fn measure(
        &mut self,
        case: &Case,
        allocators: &[Allocator],
        reps: usize,
        budget: Duration,
        check_limit: usize,
        skip: &mut Vec<Allocator>,
    ) -> FuncResult {
        let f = &case.func;
        let flat = FlatFunc::from(f);
        let mut results: Vec<AllocResult> = Vec::new();
        for &a in allocators {
            if skip.contains(&a) {
                results.push(AllocResult {
                    allocator: a.name().into(),
                    status: Status::Skipped,
                    time_ns: None,
                    checked: false,
                    cost: None,
                });
                continue;
            }
            let t = Instant::now();
            let r = catch_unwind(AssertUnwindSafe(|| self.run(a, &flat, &case.env, true)));
            if t.elapsed() > budget {
                skip.push(a);
            }
            let (status, cost) = match r {
                Err(p) => {
                    self.reset(a);
                    let msg = format!("panic: {}", short(&panic_message(&*p)));
                    // ion panics on some over-constrained inputs (regalloc2#222) where it
                    // would owe an `Err`; `ragreedy stress` counts those as ion errors too.
                    if a == Allocator::Ion {
                        (Status::Error(msg), None)
                    } else {
                        (Status::CheckerFailure(msg), None)
                    }
                }
                Ok(Err(e)) => (Status::Error(format!("{e:?}")), None),
                Ok(Ok(out)) => {
                    let out = out.expect("kept output");
                    // Greedy meets every structural rule; ion and fastalloc are held to the
                    // ones they are known to meet (testkit `Strictness::Baseline`: their
                    // `debug_locations` may overlap / leave the requested ranges).
                    let strictness = match a {
                        Allocator::Greedy
                        | Allocator::Basic
                        | Allocator::LinearScan
                        | Allocator::Irc => check::Strictness::Ours,
                        _ => check::Strictness::Baseline,
                    };
                    let verdict = if f.num_insts() <= check_limit {
                        check::check_output_with(f, &case.env, &out, strictness)
                    } else {
                        check::check_structure(f, &case.env, &out, strictness)
                    };
                    match verdict {
                        Ok(()) => (Status::Ok, Some(cost::cost(f, &case.env, &out).into())),
                        Err(e) => (Status::CheckerFailure(short(&e)), None),
                    }
                }
            };
            results.push(AllocResult {
                allocator: a.name().into(),
                status,
                time_ns: None,
                checked: f.num_insts() <= check_limit,
                cost,
            });
        }
        // Timed rounds over the allocators that succeeded, interleaved, rotating the start.
        let timed: Vec<usize> = (0..results.len()).filter(|&i| results[i].ok()).collect();
        let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(reps); results.len()];
        self.greedy_phases.clear();
        for round in 0..reps {
            for k in 0..timed.len() {
                let i = timed[(k + round) % timed.len()];
                samples[i].push(self.time(allocators[i], &flat, &case.env));
            }
        }
        for &i in &timed {
            results[i].time_ns = Some(median(&mut samples[i]).as_nanos() as u64);
        }
        FuncResult {
            name: case.name.clone(),
            group: case.group.clone(),
            insts: f.num_insts(),
            blocks: f.num_blocks(),
            vregs: f.num_vregs(),
            results,
            greedy_phases: self.median_phases(),
        }
    }

    /// Per phase, the median over greedy's timed runs of this function.
    fn median_phases(&self) -> Option<regalloc_greedy::PhaseTimes> {
        let runs = &self.greedy_phases;
        (!runs.is_empty()).then(|| {
            regalloc_greedy::PhaseTimes::from_fn(|p| {
                let mut v: Vec<Duration> = runs.iter().map(|t| t.get(p)).collect();
                median(&mut v).as_nanos() as u64
            })
        })
    }
}

fn phases_as_map<S: serde::Serializer>(
    p: &Option<regalloc_greedy::PhaseTimes>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let Some(p) = p else {
        return s.serialize_none();
    };
    let mut m = s.serialize_map(Some(regalloc_greedy::Phase::COUNT))?;
    for ph in regalloc_greedy::Phase::ALL {
        m.serialize_entry(ph.name(), &p.nanos(ph))?;
    }
    m.end()
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

/// First line of a message, at most 200 bytes (checker errors list whole functions).
pub fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut end = line.len().min(200);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}
