//! Runs CLIF files in Cranelift's filetest format through cranelift-jit with `regalloc_checker`
//! on, under whatever allocator the regalloc2 switch currently selects, by Cranelift's filetest
//! rules:
//!
//! - `test run` compiles the whole file once per `target` line the host can run, with the
//!   file's `set` lines and that target's ISA flags; a target whose flags the host lacks is
//!   skipped with the reason.
//! - `test interpret` without `test run` (or without a target this host can compile) compiles
//!   nothing: cranelift-interpreter executes every line and the written expectation decides.
//!   With `test run`, the interpreter is the oracle of `print` lines only.
//! - A run line belongs to the function it follows, whatever name its invocation spells, and
//!   two functions of a file may share a name.
//! - A bare `; run` calls that function with no arguments and expects a non-zero integer.
//!
//! Accounting invariant: every `; run` / `; print` line of a file is counted once per host
//! target (once in all when interpreted) as exactly one of passed, failed or skipped. A skipped
//! line is never counted as passed, and a panic while compiling (the checker rejecting an
//! allocation, or any allocator bug) is caught and turns the lines it prevented from running
//! into failures.

use crate::host::{self, Header, Target};
use crate::program::{Program, func_key};
use crate::{libm, panic_message};
use cranelift_codegen::data_value::{DataValue, DisplayDataValues};
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_interpreter::environment::FunctionStore;
use cranelift_interpreter::interpreter::{Interpreter, InterpreterState};
use cranelift_interpreter::step::ControlFlow;
use cranelift_reader::{
    Details, Invocation, ParseOptions, RunCommand, parse_run_command, parse_test,
};
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
    let jit_targets = header.has_test("run") && header.has_x86_target();
    // Exception hostcalls need runtime support neither executor has; the pinned register only
    // matters to compiled code (the interpreter models it).
    for (needle, why, applies) in [
        (
            "__cranelift_throw",
            "needs the exception-throw hostcall",
            true,
        ),
        (
            "enable_pinned_reg",
            "needs a pinned-register runtime",
            jit_targets,
        ),
    ] {
        if applies && text.contains(needle) {
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
    let (functions, details): (Vec<Function>, Vec<Details>) = test.functions.into_iter().unzip();

    let mut lines: Vec<RunLine> = Vec::new();
    for (index, (func, details)) in functions.iter().zip(&details).enumerate() {
        for comment in &details.comments {
            match parse_run_command(comment.text, &func.signature) {
                Ok(Some(cmd)) => lines.push(RunLine {
                    func: index,
                    bare: is_bare(comment.text),
                    cmd,
                }),
                Ok(None) => {}
                Err(e) => report.fail(format!("bad run line `{}`: {e}", comment.text.trim())),
            }
        }
    }
    if lines.is_empty() {
        return;
    }

    // As in Cranelift's filetests, `test run` executes on each target the host can run, and
    // `test interpret` once, without a target. Where a file asks for both, the compiled targets
    // are what this runner is for and the interpreter serves only as the oracle of print lines;
    // where no target can be compiled for this host, the interpreter executes the lines.
    if !jit_targets && header.has_test("interpret") {
        run_interpreted(report, &functions, &lines);
        return;
    }
    let oracle = header.has_test("interpret");
    for target in host::host_targets(&test.isa_spec, &header, false) {
        match target {
            Target::Skip { label, reason } => {
                report.skip(lines.len(), format!("[{label}] {reason}"))
            }
            Target::Run { label, isa } => {
                run_target(report, &label, isa, &functions, &lines, oracle)
            }
        }
    }
}

/// One `; run` / `; print` line and the function it belongs to: the function it follows in the
/// file, whatever name its invocation spells (Cranelift calls that function and uses the name
/// only in messages; two functions of a file may share a name).
struct RunLine {
    /// Index into the file's functions.
    func: usize,
    cmd: RunCommand,
    /// A bare `run` (no invocation): call with no arguments, expect a non-zero integer.
    bare: bool,
}

impl RunLine {
    fn invocation(&self) -> &Invocation {
        match &self.cmd {
            RunCommand::Run(inv, ..) | RunCommand::Print(inv) => inv,
        }
    }

    /// `Err` with the message when `actual` does not meet the line's expectation; print lines
    /// have none and always pass here.
    fn check(&self, name: &str, actual: &[DataValue]) -> Result<(), String> {
        if self.bare {
            // cranelift-reader encodes a bare run as `!= 0i8`, which by type alone would pass
            // any result wider than i8; the rule it stands for is "the result is true".
            return match actual {
                [v] if v.ty().is_int()
                    && DataValue::from_integer(0, v.ty()).ok().as_ref() != Some(v) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "bare run of %{name}: expected a non-zero integer, got {}",
                    DisplayDataValues(actual)
                )),
            };
        }
        if matches!(self.cmd, RunCommand::Print(_)) {
            return Ok(());
        }
        self.cmd.run(|_, _| Ok(actual.to_vec()))
    }
}

/// `; run` with nothing after it: the reader supplies a no-argument invocation and `!= 0`.
/// (A bare `; print` also gets a no-argument invocation, but has no expectation.)
fn is_bare(comment: &str) -> bool {
    comment.trim_start_matches([' ', ';']).trim_end() == "run"
}

/// `test interpret` alone: the interpreter executes every line, and the written expectation
/// decides (print lines pass once the interpreter returns).
fn run_interpreted(report: &mut FileReport, functions: &[Function], lines: &[RunLine]) {
    for line in lines {
        let name = func_key(&functions[line.func].name);
        match interpret(functions, line.func, &line.invocation().args) {
            Ok(actual) => match line.check(&name, &actual) {
                Ok(()) => report.passed += 1,
                Err(e) => report.fail(format!("[interpret] {e}")),
            },
            Err(e) => report.fail(format!("[interpret] {}: {e}", line.cmd)),
        }
    }
}

fn run_target(
    report: &mut FileReport,
    label: &str,
    isa: OwnedTargetIsa,
    functions: &[Function],
    lines: &[RunLine],
    oracle: bool,
) {
    let entries: Vec<usize> = lines.iter().map(|l| l.func).collect();
    let compiled = catch_unwind(AssertUnwindSafe(|| {
        Program::compile(isa, functions, &entries)
    }));
    let error = match compiled {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(format!("compile error: {e}")),
        Err(payload) => Err(format!("compile panicked: {}", panic_message(&*payload))),
    };
    let compiled = match error {
        Ok(c) => c,
        Err(e) => {
            // One message for the file, but every line it stopped counts as failed.
            report.failed += lines.len();
            report.failures.push(format!(
                "{}: [{label}] {} run line(s) not run: {e}",
                report.path,
                lines.len()
            ));
            return;
        }
    };
    for line in lines {
        let name = func_key(&functions[line.func].name);
        let args = &line.invocation().args;
        let actual = match compiled.call(line.func, args) {
            Ok(v) => v,
            Err(e) => {
                report.fail(format!("[{label}] {}: {e}", line.cmd));
                continue;
            }
        };
        if let Err(e) = line.check(&name, &actual) {
            report.fail(format!("[{label}] {e}"));
            continue;
        }
        if let RunCommand::Print(inv) = &line.cmd {
            // A print line has no written expectation: the interpreter is its only oracle.
            if !oracle {
                report.skip(1, format!("[{label}] {inv}: print line without an oracle"));
                continue;
            }
            match interpret(functions, line.func, args) {
                Ok(want) if bitwise_eq(&want, &actual) => {}
                Ok(want) => {
                    report.fail(format!(
                        "[{label}] {inv}: jit {} but interpreter {}",
                        DisplayDataValues(&actual),
                        DisplayDataValues(&want)
                    ));
                    continue;
                }
                Err(e) => {
                    report.skip(1, format!("[{label}] {inv}: no oracle ({e})"));
                    continue;
                }
            }
        }
        report.passed += 1;
    }
}

fn bitwise_eq(a: &[DataValue], b: &[DataValue]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bitwise_eq(y))
}

/// The interpreter's result for function `index` of the file called with `args`, `Err` where
/// it cannot tell (trap, unsupported instruction, fuel exhausted).
pub fn interpret(
    functions: &[Function],
    index: usize,
    args: &[DataValue],
) -> Result<Vec<DataValue>, String> {
    // The store maps each name to one function: the one under test takes its own name first,
    // then every other name goes to its first function, as `resolve_callee` links the JIT.
    let mut store = FunctionStore::default();
    let under_test = &functions[index];
    store.add(under_test.name.to_string(), under_test);
    for f in functions {
        let name = f.name.to_string();
        if store.index_of(&name).is_none() {
            store.add(name, f);
        }
    }
    let state = InterpreterState::default()
        .with_function_store(store)
        .with_libcall_handler(libm::interpreter_libcall);
    let mut interp = Interpreter::new(state).with_fuel(Some(INTERPRETER_FUEL));
    let name = under_test.name.to_string();
    // The interpreter has `unimplemented!` paths; they must not take the run down.
    match catch_unwind(AssertUnwindSafe(|| interp.call_by_name(&name, args))) {
        Ok(Ok(ControlFlow::Return(vals))) => Ok(vals.to_vec()),
        Ok(Ok(ControlFlow::Trap(t))) => Err(format!("interpreter trapped: {t}")),
        Ok(Ok(_)) => Err("interpreter stopped without returning".into()),
        Ok(Err(e)) => Err(format!("interpreter: {e}")),
        Err(p) => Err(format!("interpreter panicked: {}", panic_message(&*p))),
    }
}

/// Header facts, re-exported for the CLI's messages.
pub fn header_of(text: &str) -> Header {
    host::rewrite_header(text).1
}
