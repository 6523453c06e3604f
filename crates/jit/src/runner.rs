//! Runs CLIF files in Cranelift's filetest format (`test run`, and `test interpret` with the
//! interpreter as oracle) through cranelift-jit with `regalloc_checker` on, under whatever
//! allocator the regalloc2 switch currently selects.
//!
//! Accounting invariant: every `; run:` line of a file is counted once per host target as
//! exactly one of passed, failed or skipped. A skipped line is never counted as passed, and a
//! panic while compiling (the checker rejecting an allocation, or any allocator bug) is caught
//! and turns the lines it prevented from running into failures.

use crate::host::{self, Header, Target};
use crate::trampoline;
use cranelift_codegen::data_value::{DataValue, DisplayDataValues};
use cranelift_codegen::ir::{ExternalName, Function, Signature, UserExternalName, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};
use cranelift_reader::{
    Details, Invocation, ParseOptions, RunCommand, parse_run_command, parse_test,
};
use std::collections::HashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// Instruction budget for the interpreter oracle, so a diverging program reports instead of
/// hanging.
const INTERPRETER_FUEL: u64 = 200_000_000;

/// The outcome of one file.
#[derive(Debug, Default, Clone)]
pub struct FileReport {
    pub path: String,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// One line per failure, ready to print.
    pub failures: Vec<String>,
    /// One line per skipped target or line, with the reason.
    pub skips: Vec<String>,
}

impl FileReport {
    fn new(path: &str) -> Self {
        FileReport {
            path: path.to_owned(),
            ..Default::default()
        }
    }

    fn fail(&mut self, msg: impl fmt::Display) {
        self.failed += 1;
        self.failures.push(format!("{}: {msg}", self.path));
    }

    fn skip(&mut self, n: usize, msg: impl fmt::Display) {
        self.skipped += n;
        self.skips
            .push(format!("{}: skipped {n} run line(s): {msg}", self.path));
    }
}

/// Totals over files; `Display` is the closing line of `ragreedy run`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Summary {
    pub fn add(&mut self, r: &FileReport) {
        self.files += 1;
        self.passed += r.passed;
        self.failed += r.failed;
        self.skipped += r.skipped;
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} files, {} run lines passed, {} failed, {} skipped",
            self.files, self.passed, self.failed, self.skipped
        )
    }
}

/// Run one file; never panics (see the module invariant).
pub fn run_file(path: &Path) -> FileReport {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => run_source(&name, &text),
        Err(e) => {
            let mut r = FileReport::new(&name);
            r.fail(format!("cannot read: {e}"));
            r
        }
    }
}

/// Run CLIF text; `name` labels the messages.
pub fn run_source(name: &str, text: &str) -> FileReport {
    crate::install();
    let mut report = FileReport::new(name);
    let textual_lines = count_run_lines(text);
    match catch_unwind(AssertUnwindSafe(|| run_inner(&mut report, text))) {
        Ok(()) => {}
        Err(payload) => {
            // Only reached by a panic outside compilation (which has its own guard): count
            // whatever had not been accounted for as failed.
            let accounted = report.passed + report.failed + report.skipped;
            let rest = textual_lines.saturating_sub(accounted).max(1);
            for _ in 0..rest {
                report.fail(format!("panic: {}", panic_message(&*payload)));
            }
        }
    }
    report
}

/// `; run:` / `; print:` comment lines, counted textually: used only where the file cannot be
/// parsed into run commands.
fn count_run_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            let t = l.trim_start().trim_start_matches(';').trim_start();
            t.starts_with("run") || t.starts_with("print")
        })
        .filter(|l| l.trim_start().starts_with(';'))
        .count()
}

fn run_inner(report: &mut FileReport, text: &str) {
    let (rewritten, header) = host::rewrite_header(text);
    let textual_lines = count_run_lines(text);
    if !header.has_test("run") && !header.has_test("interpret") {
        report.skip(textual_lines, "no `test run` or `test interpret` command");
        return;
    }
    // Exception hostcalls and the pinned register need runtime support this runner lacks.
    for (needle, why) in [
        ("__cranelift_throw", "needs the exception-throw hostcall"),
        ("enable_pinned_reg", "needs a pinned-register runtime"),
    ] {
        if text.contains(needle) {
            report.skip(textual_lines, why);
            return;
        }
    }
    let test = match parse_test(&rewritten, ParseOptions::default()) {
        Ok(t) => t,
        Err(e) => {
            report.fail(format!("parse error: {e}"));
            report.failed += textual_lines.saturating_sub(1);
            return;
        }
    };
    let functions: &[(Function, Details)] = &test.functions;

    let mut commands: Vec<RunCommand> = Vec::new();
    for (func, details) in functions {
        for comment in &details.comments {
            match parse_run_command(comment.text, &func.signature) {
                Ok(Some(cmd)) => commands.push(cmd),
                Ok(None) => {}
                Err(e) => report.fail(format!("bad run line `{}`: {e}", comment.text.trim())),
            }
        }
    }
    if commands.is_empty() {
        return;
    }

    let interpret_only = header.has_test("interpret") && !header.has_test("run");
    let oracle = header.has_test("interpret");
    for target in host::host_targets(&test.isa_spec, &header, interpret_only) {
        match target {
            Target::Skip { label, reason } => {
                report.skip(commands.len(), format!("[{label}] {reason}"))
            }
            Target::Run { label, isa } => run_target(
                report,
                &label,
                isa,
                functions,
                &commands,
                oracle,
                interpret_only,
            ),
        }
    }
}

fn run_target(
    report: &mut FileReport,
    label: &str,
    isa: OwnedTargetIsa,
    functions: &[(Function, Details)],
    commands: &[RunCommand],
    oracle: bool,
    interpret_only: bool,
) {
    let compiled = catch_unwind(AssertUnwindSafe(|| Compiled::new(isa, functions, commands)));
    let error = match compiled {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(format!("compile error: {e}")),
        Err(payload) => Err(format!("compile panicked: {}", panic_message(&*payload))),
    };
    let compiled = match error {
        Ok(c) => c,
        Err(e) => {
            // One message for the file, but every line it stopped counts as failed.
            report.failed += commands.len();
            report.failures.push(format!(
                "{}: [{label}] {} run line(s) not run: {e}",
                report.path,
                commands.len()
            ));
            return;
        }
    };
    for cmd in commands {
        let (inv, expected) = match cmd {
            RunCommand::Run(inv, cmp, want) => (inv, Some((cmp, want))),
            RunCommand::Print(inv) => (inv, None),
        };
        let actual = match compiled.call(inv) {
            Ok(v) => v,
            Err(e) => {
                report.fail(format!("[{label}] {cmd}: {e}"));
                continue;
            }
        };
        if expected.is_some()
            && let Err(e) = cmd.run(|_, _| Ok(actual.clone()))
        {
            report.fail(format!("[{label}] {e}"));
            continue;
        }
        // The interpreter is the oracle where the file asks for interpretation only, and the
        // only one for print lines; elsewhere the written expectation decides.
        if oracle && (interpret_only || expected.is_none()) {
            match interpret(functions, inv) {
                Ok(want) if bitwise_eq(&want, &actual) => {}
                Ok(want) => {
                    report.fail(format!(
                        "[{label}] {inv}: jit {} but interpreter {}",
                        DisplayDataValues(&actual),
                        DisplayDataValues(&want)
                    ));
                    continue;
                }
                Err(e) if expected.is_none() => {
                    report.skip(1, format!("[{label}] {inv}: no oracle ({e})"));
                    continue;
                }
                // A written expectation already passed; the interpreter's gaps are not ours.
                Err(_) => {}
            }
        } else if expected.is_none() {
            report.skip(1, format!("[{label}] {inv}: print line without an oracle"));
            continue;
        }
        report.passed += 1;
    }
    // SAFETY: no pointer into the module's code outlives `compiled`.
    unsafe { compiled.module.free_memory() };
}

fn bitwise_eq(a: &[DataValue], b: &[DataValue]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
}

/// The file's functions compiled into one JIT module, plus one trampoline per signature used by
/// a run line.
struct Compiled {
    module: JITModule,
    by_name: HashMap<String, (FuncId, Signature)>,
    trampolines: Vec<(Signature, FuncId)>,
}

/// The name a run line uses for a function (`%name` without the `%`).
pub fn func_key(name: &UserFuncName) -> String {
    let s = name.to_string();
    s.strip_prefix('%').map(str::to_owned).unwrap_or(s)
}

impl Compiled {
    fn new(
        isa: OwnedTargetIsa,
        functions: &[(Function, Details)],
        commands: &[RunCommand],
    ) -> Result<Compiled, String> {
        let mut builder =
            JITBuilder::with_isa(isa.clone(), cranelift_module::default_libcall_names());
        builder.symbol_lookup_fn(Box::new(libm_symbol));
        let mut module = JITModule::new(builder);

        let mut by_name = HashMap::new();
        for (func, _) in functions {
            let key = func_key(&func.name);
            let id = module
                .declare_function(&key, Linkage::Local, &func.signature)
                .map_err(|e| format!("declaring %{key}: {e}"))?;
            by_name.insert(key, (id, func.signature.clone()));
        }

        let mut trampolines: Vec<(Signature, FuncId)> = Vec::new();
        for cmd in commands {
            let inv = match cmd {
                RunCommand::Run(inv, ..) | RunCommand::Print(inv) => inv,
            };
            let Some((_, sig)) = by_name.get(&inv.func) else {
                continue;
            };
            if trampolines.iter().any(|(s, _)| s == sig) {
                continue;
            }
            let tname = format!("__ragreedy_trampoline_{}", trampolines.len());
            let tfunc = trampoline::make_trampoline(UserFuncName::testcase(&tname), sig, &*isa);
            let id = module
                .declare_function(&tname, Linkage::Local, &tfunc.signature)
                .map_err(|e| format!("declaring a trampoline: {e}"))?;
            let mut ctx = cranelift_codegen::Context::for_function(tfunc);
            ctx.func.name = UserFuncName::User(UserExternalName::new(0, id.as_u32()));
            module
                .define_function(id, &mut ctx)
                .map_err(|e| format!("compiling the trampoline for {sig}: {}", module_error(&e)))?;
            trampolines.push((sig.clone(), id));
        }

        for (func, _) in functions {
            let key = func_key(&func.name);
            let id = by_name[&key].0;
            let func = link_names(func, id, &by_name)?;
            let mut ctx = cranelift_codegen::Context::for_function(func);
            module
                .define_function(id, &mut ctx)
                .map_err(|e| format!("compiling %{key}: {}", module_error(&e)))?;
        }
        module
            .finalize_definitions()
            .map_err(|e| format!("finalizing: {e}"))?;
        Ok(Compiled {
            module,
            by_name,
            trampolines,
        })
    }

    fn call(&self, inv: &Invocation) -> Result<Vec<DataValue>, String> {
        let (id, sig) = self
            .by_name
            .get(&inv.func)
            .ok_or_else(|| format!("no function %{} in the file", inv.func))?;
        let tramp = self
            .trampolines
            .iter()
            .find(|(s, _)| s == sig)
            .map(|(_, t)| *t)
            .ok_or("no trampoline")?;
        let callee = self.module.get_finalized_function(*id);
        let tramp = self.module.get_finalized_function(tramp);
        // SAFETY: both are finalized functions of this module; the trampoline was built for
        // `sig`, the callee's signature; `call` checks the argument types against it.
        unsafe { trampoline::call(tramp, callee, sig, &inv.args) }
    }
}

/// cranelift-module resolves calls by `UserExternalName { namespace: 0, index: FuncId }`: rename
/// the function and its `%name` references to that scheme. Calls are made non-colocated because
/// JIT code and its callees need not be within ±2 GiB of each other.
fn link_names(
    func: &Function,
    id: FuncId,
    by_name: &HashMap<String, (FuncId, Signature)>,
) -> Result<Function, String> {
    let mut func = func.clone();
    func.name = UserFuncName::User(UserExternalName::new(0, id.as_u32()));
    let refs: Vec<_> = func.dfg.ext_funcs.keys().collect();
    for r in refs {
        let target = match &func.dfg.ext_funcs[r].name {
            ExternalName::TestCase(tc) => {
                let callee = String::from_utf8_lossy(tc.raw()).into_owned();
                let (cid, _) = by_name
                    .get(&callee)
                    .ok_or_else(|| format!("calls %{callee}, which the file does not define"))?;
                Some(*cid)
            }
            _ => None,
        };
        if let Some(cid) = target {
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

fn module_error(e: &cranelift_module::ModuleError) -> String {
    match e {
        cranelift_module::ModuleError::Compilation(ce) => format!("{ce:?}"),
        other => other.to_string(),
    }
}

/// The interpreter's result for `inv`, `Err` where it cannot tell (trap, unsupported
/// instruction, fuel exhausted).
pub fn interpret(
    functions: &[(Function, Details)],
    inv: &Invocation,
) -> Result<Vec<DataValue>, String> {
    let mut store = FunctionStore::default();
    for (f, _) in functions {
        store.add(f.name.to_string(), f);
    }
    let state = InterpreterState::default().with_function_store(store);
    let mut interp = Interpreter::new(state).with_fuel(Some(INTERPRETER_FUEL));
    let name = format!("%{}", inv.func);
    // The interpreter has `unimplemented!` paths; they must not take the run down.
    match catch_unwind(AssertUnwindSafe(|| interp.call_by_name(&name, &inv.args))) {
        Ok(Ok(ControlFlow::Return(vals))) => Ok(vals.to_vec()),
        Ok(Ok(ControlFlow::Trap(t))) => Err(format!("interpreter trapped: {t}")),
        Ok(Ok(_)) => Err("interpreter stopped without returning".into()),
        Ok(Err(e)) => Err(format!("interpreter: {e}")),
        Err(p) => Err(format!("interpreter panicked: {}", panic_message(&*p))),
    }
}

/// A panic payload as text, cut to a readable length (checker errors can be huge).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let s = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    };
    const MAX: usize = 400;
    if s.len() > MAX {
        let mut end = MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    } else {
        s
    }
}

extern "C" fn ceil_f64(x: f64) -> f64 {
    x.ceil()
}
extern "C" fn ceil_f32(x: f32) -> f32 {
    x.ceil()
}
extern "C" fn floor_f64(x: f64) -> f64 {
    x.floor()
}
extern "C" fn floor_f32(x: f32) -> f32 {
    x.floor()
}
extern "C" fn trunc_f64(x: f64) -> f64 {
    x.trunc()
}
extern "C" fn trunc_f32(x: f32) -> f32 {
    x.trunc()
}
extern "C" fn nearest_f64(x: f64) -> f64 {
    x.round_ties_even()
}
extern "C" fn nearest_f32(x: f32) -> f32 {
    x.round_ties_even()
}
extern "C" fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}
extern "C" fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// The float libcalls Cranelift emits on x86_64 without SSE4.1/FMA; the dynamic loader does not
/// find them in the process.
fn libm_symbol(name: &str) -> Option<*const u8> {
    let p: *const u8 = match name {
        "ceil" => ceil_f64 as *const u8,
        "ceilf" => ceil_f32 as *const u8,
        "floor" => floor_f64 as *const u8,
        "floorf" => floor_f32 as *const u8,
        "trunc" => trunc_f64 as *const u8,
        "truncf" => trunc_f32 as *const u8,
        "nearbyint" => nearest_f64 as *const u8,
        "nearbyintf" => nearest_f32 as *const u8,
        "fma" => fma_f64 as *const u8,
        "fmaf" => fma_f32 as *const u8,
        _ => return None,
    };
    Some(p)
}

/// Header facts, re-exported for the CLI's messages.
pub fn header_of(text: &str) -> Header {
    host::rewrite_header(text).1
}
