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
//! interleaved with a rotating start, and the median time per call is reported. Calls go
//! through the jit crate's trampoline (argument marshalling included), identical for every
//! allocator and negligible against calls this long.
//!
//! The jit crate keeps its compiled-module type private, so the module building (declare,
//! link `%name` calls, trampolines, define, finalize) is redone here on its public pieces:
//! `host` (ISA of the file, with the file's own settings), `trampoline`, `Allocator::with`.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{ExternalName, Function, Signature, UserExternalName, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};
use cranelift_reader::{
    Details, Invocation, ParseOptions, RunCommand, parse_run_command, parse_test,
};
use ragreedy_jit::Allocator;
use ragreedy_jit::host::{self, Target};
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
    mut progress: impl FnMut(&str),
) -> Vec<ProgramSpeed> {
    programs
        .iter()
        .map(|&(name, text)| {
            let r = measure(name, text, allocators, reps);
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

fn measure(name: &str, text: &str, allocators: &[Allocator], reps: usize) -> ProgramSpeed {
    let mut out = ProgramSpeed {
        program: name.into(),
        invocation: String::new(),
        calls_per_sample: 0,
        results: vec![],
        skipped: None,
    };
    let (isa, functions, check_cmd) = match prepare(text) {
        Ok(p) => p,
        Err(e) => {
            out.skipped = Some(e);
            return out;
        }
    };
    let check_inv = match &check_cmd {
        RunCommand::Run(inv, ..) | RunCommand::Print(inv) => inv,
    };
    // The timing invocation: the README's argument, parsed against the entry's signature.
    let timing_cmd = timing_arguments().get(name).and_then(|(entry, arg)| {
        let f = functions
            .iter()
            .find(|f| ragreedy_jit::runner::func_key(&f.name) == *entry)?;
        parse_run_command(&format!("print: %{entry}({arg})"), &f.signature)
            .ok()
            .flatten()
    });
    let inv = match &timing_cmd {
        Some(RunCommand::Print(inv)) => inv,
        _ => check_inv,
    };
    out.invocation = format!("{inv}");
    // Compile and check every allocator, ion first: its result on the timing call is the
    // reference for the others.
    let mut order: Vec<usize> = (0..allocators.len()).collect();
    order.sort_by_key(|&i| allocators[i] != Allocator::Ion);
    let mut slots: Vec<(Option<Compiled>, Option<String>)> =
        (0..allocators.len()).map(|_| (None, None)).collect();
    let mut reference: Option<Vec<DataValue>> = None;
    for &i in &order {
        let a = allocators[i];
        let r = catch_unwind(AssertUnwindSafe(|| {
            a.with(|| Compiled::new(isa.clone(), &functions, &[check_inv, inv]))
        }));
        slots[i] = match r {
            Err(p) => (
                None,
                Some(format!(
                    "compile panicked: {}",
                    super::measure::panic_text(&*p)
                )),
            ),
            Ok(Err(e)) => (None, Some(e)),
            Ok(Ok(c)) => match c.check(check_inv, &check_cmd).and_then(|()| c.call(inv)) {
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
    let mut compiled: Vec<Option<Compiled>> = Vec::new();
    for (i, (c, err)) in slots.into_iter().enumerate() {
        out.results.push(AllocSpeed {
            allocator: allocators[i].name().into(),
            ns_per_call: None,
            error: err.map(|e| first_line(&e)),
        });
        compiled.push(c);
    }
    let live: Vec<usize> = (0..compiled.len())
        .filter(|&i| compiled[i].is_some())
        .collect();
    if live.is_empty() {
        return out;
    }
    // Calibrate on the first allocator that compiled.
    let mut calls = 1u64;
    loop {
        let t = compiled[live[0]].as_ref().unwrap().sample(inv, calls);
        if t >= MIN_SAMPLE || calls >= 1 << 30 {
            break;
        }
        let factor = (MIN_SAMPLE.as_secs_f64() / t.as_secs_f64().max(1e-9)).clamp(2.0, 100.0);
        calls = ((calls as f64) * factor).ceil() as u64;
    }
    out.calls_per_sample = calls;
    let mut samples: Vec<Vec<f64>> = vec![vec![]; compiled.len()];
    for round in 0..reps {
        for k in 0..live.len() {
            let i = live[(k + round) % live.len()];
            let t = compiled[i].as_ref().unwrap().sample(inv, calls);
            samples[i].push(t.as_nanos() as f64 / calls as f64);
        }
    }
    for &i in &live {
        let s = &mut samples[i];
        s.sort_by(f64::total_cmp);
        let n = s.len();
        out.results[i].ns_per_call = Some(if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        });
    }
    for c in compiled.into_iter().flatten() {
        // SAFETY: no pointer into the module's code outlives `c`.
        unsafe { c.module.free_memory() };
    }
    out
}

fn bitwise_eq(a: &[DataValue], b: &[DataValue]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
}

type Prepared = (OwnedTargetIsa, Vec<Function>, RunCommand);

/// The file's host ISA, functions and last `; run:` command.
fn prepare(text: &str) -> Result<Prepared, String> {
    let (rewritten, header) = host::rewrite_header(text);
    let test =
        parse_test(&rewritten, ParseOptions::default()).map_err(|e| format!("parse: {e}"))?;
    let isa = host::host_targets(&test.isa_spec, &header, false)
        .into_iter()
        .find_map(|t| match t {
            Target::Run { isa, .. } => Some(Ok(isa)),
            Target::Skip { .. } => None,
        })
        .unwrap_or_else(|| Err("no x86_64 target runnable on this host".to_owned()))?;
    let mut last = None;
    for (func, details) in &test.functions {
        let details: &Details = details;
        for comment in &details.comments {
            if let Ok(Some(cmd @ RunCommand::Run(..))) =
                parse_run_command(comment.text, &func.signature)
            {
                last = Some(cmd);
            }
        }
    }
    let cmd = last.ok_or("no `; run:` line")?;
    let functions = test.functions.iter().map(|(f, _)| f.clone()).collect();
    Ok((isa, functions, cmd))
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    l.chars().take(200).collect()
}

/// A file's functions in one JIT module, with a trampoline per entry that is called.
struct Compiled {
    module: JITModule,
    entries: Vec<Entry>,
}

struct Entry {
    name: String,
    callee: *const u8,
    trampoline: *const u8,
    signature: Signature,
}

impl Compiled {
    /// Compile `functions` with trampolines for the functions `invs` call.
    fn new(
        isa: OwnedTargetIsa,
        functions: &[Function],
        invs: &[&Invocation],
    ) -> Result<Compiled, String> {
        let builder = JITBuilder::with_isa(isa.clone(), cranelift_module::default_libcall_names());
        let mut module = JITModule::new(builder);
        let mut by_name: HashMap<String, (FuncId, Signature)> = HashMap::new();
        for func in functions {
            let key = ragreedy_jit::runner::func_key(&func.name);
            let id = module
                .declare_function(&key, Linkage::Local, &func.signature)
                .map_err(|e| format!("declaring %{key}: {e}"))?;
            by_name.insert(key, (id, func.signature.clone()));
        }
        let mut entries = Vec::new();
        for (k, inv) in invs.iter().enumerate() {
            let (callee, signature) = by_name
                .get(&inv.func)
                .cloned()
                .ok_or_else(|| format!("no function %{}", inv.func))?;
            let tname = format!("__ragreedy_bench_trampoline_{k}");
            let tfunc = ragreedy_jit::trampoline::make_trampoline(
                UserFuncName::testcase(&tname),
                &signature,
                &*isa,
            );
            let tid = module
                .declare_function(&tname, Linkage::Local, &tfunc.signature)
                .map_err(|e| e.to_string())?;
            let mut ctx = cranelift_codegen::Context::for_function(tfunc);
            ctx.func.name = UserFuncName::User(UserExternalName::new(0, tid.as_u32()));
            module
                .define_function(tid, &mut ctx)
                .map_err(|e| format!("compiling a trampoline: {e:?}"))?;
            entries.push((inv.func.clone(), callee, tid, signature));
        }
        for func in functions {
            let key = ragreedy_jit::runner::func_key(&func.name);
            let id = by_name[&key].0;
            let func = link_names(func, id, &by_name)?;
            let mut ctx = cranelift_codegen::Context::for_function(func);
            module
                .define_function(id, &mut ctx)
                .map_err(|e| format!("compiling %{key}: {e:?}"))?;
        }
        module
            .finalize_definitions()
            .map_err(|e| format!("finalizing: {e}"))?;
        let entries = entries
            .into_iter()
            .map(|(name, callee, tramp, signature)| Entry {
                name,
                callee: module.get_finalized_function(callee),
                trampoline: module.get_finalized_function(tramp),
                signature,
            })
            .collect();
        Ok(Compiled { module, entries })
    }

    fn call(&self, inv: &Invocation) -> Result<Vec<DataValue>, String> {
        let e = self
            .entries
            .iter()
            .find(|e| e.name == inv.func)
            .ok_or_else(|| format!("no trampoline for %{}", inv.func))?;
        // SAFETY: both pointers are finalized functions of `self.module`, the trampoline was
        // built for `signature`, and `call` checks the arguments against it.
        unsafe { ragreedy_jit::trampoline::call(e.trampoline, e.callee, &e.signature, &inv.args) }
    }

    /// Run the `; run:` line `cmd` (invocation `inv`) and compare with its expectation.
    fn check(&self, inv: &Invocation, cmd: &RunCommand) -> Result<(), String> {
        let actual = self.call(inv)?;
        cmd.run(|_, _| Ok(actual.clone()))
            .map_err(|e| format!("wrong result: {e}"))
    }

    /// Wall time of `calls` calls (results were checked before timing).
    fn sample(&self, inv: &Invocation, calls: u64) -> Duration {
        let t = Instant::now();
        for _ in 0..calls {
            std::hint::black_box(self.call(inv).ok());
        }
        t.elapsed()
    }
}

/// cranelift-module resolves calls by `UserExternalName { namespace: 0, index: FuncId }`:
/// rename the function and its `%name` callees to that scheme (as the jit runner does).
fn link_names(
    func: &Function,
    id: FuncId,
    by_name: &HashMap<String, (FuncId, Signature)>,
) -> Result<Function, String> {
    let mut func = func.clone();
    func.name = UserFuncName::User(UserExternalName::new(0, id.as_u32()));
    let refs: Vec<_> = func.dfg.ext_funcs.keys().collect();
    for r in refs {
        if let ExternalName::TestCase(tc) = &func.dfg.ext_funcs[r].name {
            let callee = String::from_utf8_lossy(tc.raw()).into_owned();
            let (cid, _) = by_name
                .get(&callee)
                .ok_or_else(|| format!("calls %{callee}, which the file does not define"))?;
            let user = func
                .params
                .ensure_user_func_name(UserExternalName::new(0, cid.as_u32()));
            let ext = &mut func.dfg.ext_funcs[r];
            ext.name = ExternalName::User(user);
            ext.colocated = false;
        }
    }
    Ok(func)
}
