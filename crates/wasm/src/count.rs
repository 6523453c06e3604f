//! Instructions executed in a module's `bench.start`..`bench.end` window, counted by
//! callgrind: a measure of an allocator's code that neither code placement nor a busy
//! machine moves. Run time on the shared 2-core machine swings by 10% between runs of
//! the same code and by 2x with where a hot loop lands (docs/wasm.md), so a run-time
//! ratio cannot say whether one allocator's code does less work than another's; the
//! count can, exactly, and with `simulate` callgrind's cache and branch-predictor
//! models add the misses and mispredictions behind an estimate of cycles.
//!
//! Each module is run once per allocator, as its own process (`ragreedy wasm run`,
//! given as `runner`) under `valgrind --tool=callgrind`, with a dump requested on entry
//! to [`bench_window_opens`] and on entry to [`bench_window_closes`]: the second dump
//! holds exactly the window (a dump zeroes the counters). The host's own code inside the
//! window (WASI calls the program makes) is counted too, alike for every allocator.
//!
//! With `by_function`, the run also writes a perf map of the compiled functions
//! (`wasm run --perf-map`), and the window's instructions are split by Wasm function:
//! callgrind names code it has no symbols for by the address it entered it at, and the
//! map says which function holds that address. Which function executes fewer or more
//! instructions under one allocator than another is then a count too. Callgrind also
//! records a cost per instruction then, and each executed instruction is decoded
//! ([`crate::x64`]) from the code the run saved (`wasm run --save-code`: code compiled
//! outside valgrind can differ, as Cranelift uses the CPU features it finds), to count
//! the moves, spills and reloads among them.
//!
//! [`bench_window_opens`]: crate::wasi::bench_window_opens
//! [`bench_window_closes`]: crate::wasi::bench_window_closes

use crate::bench::{Expected, OutputCheck};
use crate::module_name;
use ragreedy_jit::Allocator;
use ragreedy_testkit::cost::geomean;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The host functions the window's dumps are taken at (callgrind matches these names).
pub const OPENS_SYMBOL: &str = "ragreedy_wasm::wasi::bench_window_opens";
pub const CLOSES_SYMBOL: &str = "ragreedy_wasm::wasi::bench_window_closes";

/// What a count run needs.
#[derive(Clone, Debug)]
pub struct CountOptions {
    /// Allocators to count, ion among them for the ratios.
    pub allocators: Vec<Allocator>,
    /// Also simulate caches and branch prediction (`--cache-sim=yes --branch-sim=yes`,
    /// several times slower).
    pub simulate: bool,
    /// The `valgrind` program.
    pub valgrind: PathBuf,
    /// A program that runs `wasm run --allocator NAME MODULE` (this crate's CLI).
    pub runner: PathBuf,
    /// Where callgrind's files go (one per run, removed once read).
    pub scratch: PathBuf,
    /// Also split the window's instructions by Wasm function (`WindowCounts::functions`).
    pub by_function: bool,
}

/// Callgrind's events for one window, in the order its dump lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowCounts {
    pub events: Vec<(String, u64)>,
    /// With `CountOptions::by_function`: the window per Wasm function, most instructions
    /// first; functions that executed nothing in the window are left out, and so is code
    /// outside every function (the host's, Wasmtime's trampolines).
    pub functions: Vec<FunctionCount>,
}

/// One Wasm function's part of a window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionCount {
    /// As in the perf map: `wasm[M]::function[N]::NAME`.
    pub name: String,
    pub instructions: u64,
    /// Of those, register-to-register moves, stores to the stack and loads from it
    /// (`x64::classify`): what an allocator's choices put in the code. Zero where the
    /// dump has no per-instruction costs or the function's code was not given.
    pub moves: u64,
    pub stores: u64,
    pub loads: u64,
}

impl WindowCounts {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.events.iter().find(|(n, _)| n == name).map(|&(_, c)| c)
    }

    /// Instructions executed.
    pub fn instructions(&self) -> Option<u64> {
        self.get("Ir")
    }

    /// With the simulation: instructions, plus 10 per first-level cache miss and
    /// mispredicted branch, plus 100 per last-level miss (the weights callgrind's own
    /// documentation suggests for a rough cycle count).
    pub fn cycle_estimate(&self) -> Option<u64> {
        let sum = |names: &[&str]| -> Option<u64> {
            names.iter().map(|n| self.get(n)).sum::<Option<u64>>()
        };
        Some(
            self.instructions()?
                + 10 * sum(&["I1mr", "D1mr", "D1mw"])?
                + 100 * sum(&["ILmr", "DLmr", "DLmw"])?
                + 10 * sum(&["Bcm", "Bim"])?,
        )
    }
}

/// The events of one callgrind dump: its `events:` line names them, its `totals:` line
/// (the cost of this part alone) counts them.
pub fn parse_dump(text: &str) -> Result<WindowCounts, String> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::split_whitespace)
            .ok_or_else(|| format!("no `{key}` line in the callgrind dump"))
    };
    let names: Vec<&str> = field("events:")?.collect();
    let counts = field("totals:")?
        .map(|c| c.parse::<u64>().map_err(|e| format!("totals: `{c}`: {e}")))
        .collect::<Result<Vec<u64>, String>>()?;
    if names.is_empty() || names.len() < counts.len() {
        return Err(format!(
            "{} events named but {} counted",
            names.len(),
            counts.len()
        ));
    }
    // Callgrind leaves trailing zero counts out.
    Ok(WindowCounts {
        functions: Vec::new(),
        events: names
            .iter()
            .enumerate()
            .map(|(i, n)| ((*n).to_owned(), counts.get(i).copied().unwrap_or(0)))
            .collect(),
    })
}

/// Instructions per function of `perf_map` (lines `START LEN NAME`, hex, as
/// `engine::perf_map` writes them) in a callgrind dump: each function's own cost (the
/// first event, `Ir`, of the cost lines under its `fn=`, not the inclusive cost of the
/// calls it makes), callgrind's functions without symbols (named `0xADDRESS`, the address
/// it entered them at) put in the map's function that holds the address. Where the dump
/// has a cost per instruction (`--dump-instr=yes`) and `code` gives a function's machine
/// code (which must be as long as the map says), each executed instruction is also
/// classed as a move, a stack store or a stack load.
pub fn function_counts<'c>(
    dump: &str,
    perf_map: &str,
    code: impl Fn(&str) -> Option<&'c [u8]>,
) -> Result<Vec<FunctionCount>, String> {
    let mut ranges: Vec<(u64, u64, &str)> = Vec::new();
    for l in perf_map.lines() {
        let mut f = l.splitn(3, ' ');
        let (Some(start), Some(len), Some(name)) = (f.next(), f.next(), f.next()) else {
            return Err(format!("perf map: not `START LEN NAME`: `{l}`"));
        };
        let hex = |x: &str| u64::from_str_radix(x, 16).map_err(|e| format!("perf map: `{x}`: {e}"));
        let start = hex(start)?;
        ranges.push((start, start + hex(len)?, name));
    }
    ranges.sort_unstable_by_key(|r| r.0);
    let holder = |addr: u64| {
        let i = ranges.partition_point(|r| r.0 <= addr);
        (i > 0 && addr < ranges[i - 1].1).then(|| i - 1)
    };
    let mut codes: Vec<Option<&[u8]>> = Vec::with_capacity(ranges.len());
    for &(start, end, name) in &ranges {
        let c = code(name);
        if let Some(c) = c
            && c.len() as u64 != end - start
        {
            return Err(format!(
                "{name}: {} bytes of code saved, {} in the perf map",
                c.len(),
                end - start
            ));
        }
        codes.push(c);
    }
    let mut out: Vec<FunctionCount> = ranges
        .iter()
        .map(|r| FunctionCount {
            name: r.2.to_owned(),
            ..FunctionCount::default()
        })
        .collect();
    // Callgrind writes a name in full once, `fn=(ID) NAME`, and `fn=(ID)` after.
    let mut names: std::collections::HashMap<&str, Option<usize>> = Default::default();
    let mut current: Option<usize> = None;
    let mut call_cost_next = false;
    // A cost line holds a field per position (`line` by default; `instr line` with
    // `--dump-instr=yes`), then the events.
    let mut positions = 1;
    let mut by_instr = false;
    // The instruction address of the last cost line: later ones may give theirs relative
    // to it (`+N`, `-N`) or as the same (`*`).
    let mut addr: u64 = 0;
    for l in dump.lines() {
        if let Some(p) = l.strip_prefix("positions:") {
            positions = p.split_whitespace().count().max(1);
            by_instr = p.split_whitespace().next() == Some("instr");
            continue;
        }
        // A name given in full at a call (`cfn=`) is referred to by its id in `fn=` too.
        let (called, rest) = match (l.strip_prefix("fn="), l.strip_prefix("cfn=")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => (false, ""),
        };
        if !rest.is_empty() {
            let f = match rest.split_once(' ') {
                Some((id, name)) => {
                    let f = name
                        .strip_prefix("0x")
                        .map(|h| {
                            h.split(|c: char| !c.is_ascii_hexdigit())
                                .next()
                                .unwrap_or("")
                        })
                        .and_then(|h| u64::from_str_radix(h, 16).ok())
                        .and_then(holder);
                    names.insert(id, f);
                    f
                }
                None => names.get(rest).copied().flatten(),
            };
            if !called {
                current = f;
            }
        } else if l.starts_with("calls=") {
            call_cost_next = true;
        } else if l.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*')) {
            if by_instr {
                let p = l.split_whitespace().next().unwrap_or("*");
                addr = instr_position(p, addr).ok_or_else(|| format!("callgrind dump: `{l}`"))?;
            }
            if std::mem::take(&mut call_cost_next) {
                continue;
            }
            // By address where the dump gives one: a jump can take callgrind from the
            // function it entered into another's code.
            let Some(f) = (if by_instr { holder(addr) } else { current }) else {
                continue;
            };
            let ir = l.split_whitespace().nth(positions).unwrap_or("0");
            let ir = ir
                .parse::<u64>()
                .map_err(|e| format!("callgrind dump: `{l}`: {e}"))?;
            let c = &mut out[f];
            c.instructions += ir;
            if by_instr && let Some(code) = codes[f] {
                match crate::x64::classify(&code[(addr - ranges[f].0) as usize..]) {
                    crate::x64::Kind::Move => c.moves += ir,
                    crate::x64::Kind::Store => c.stores += ir,
                    crate::x64::Kind::Load => c.loads += ir,
                    crate::x64::Kind::Other => {}
                }
            }
        }
    }
    out.retain(|c| c.instructions > 0);
    out.sort_by(|a, b| {
        b.instructions
            .cmp(&a.instructions)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

/// An instruction position in a cost line: absolute (`0x...` or decimal), relative to the
/// last one (`+N`, `-N`), or the same (`*`).
fn instr_position(p: &str, last: u64) -> Option<u64> {
    let number = |x: &str| match x.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => x.parse::<u64>().ok(),
    };
    match p.as_bytes().first()? {
        b'*' => Some(last),
        b'+' => last.checked_add(number(&p[1..])?),
        b'-' => last.checked_sub(number(&p[1..])?),
        _ => number(p),
    }
}

/// The trigger callgrind records for a dump (`desc: Trigger: ...`).
fn dump_trigger(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("desc: Trigger:"))
        .map(str::trim)
}

/// One allocator's count of one module.
#[derive(Clone, Debug)]
pub struct AllocatorCount {
    pub allocator: Allocator,
    pub counts: Result<WindowCounts, String>,
    pub output: OutputCheck,
}

/// Every allocator's count of one module.
#[derive(Clone, Debug)]
pub struct ModuleCount {
    pub path: PathBuf,
    pub name: String,
    pub results: Vec<AllocatorCount>,
}

impl ModuleCount {
    pub fn get(&self, a: Allocator) -> Option<&WindowCounts> {
        self.results
            .iter()
            .find(|r| r.allocator == a)
            .and_then(|r| r.counts.as_ref().ok())
    }

    /// `a`'s measure over ion's, where both were counted.
    pub fn ratio(&self, a: Allocator, measure: fn(&WindowCounts) -> Option<u64>) -> Option<f64> {
        let ours = measure(self.get(a)?)?;
        let ion = measure(self.get(Allocator::Ion)?)?;
        (ion > 0).then(|| ours as f64 / ion as f64)
    }
}

/// The command line that counts `module` compiled with `allocator`, writing callgrind's
/// dumps to `out` (`out.1`: program start to the window, `out.2`: the window).
pub fn valgrind_command(
    options: &CountOptions,
    module: &Path,
    allocator: Allocator,
    out: &Path,
) -> Command {
    let mut c = Command::new(&options.valgrind);
    c.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(format!("--dump-before={OPENS_SYMBOL}"))
        .arg(format!("--dump-before={CLOSES_SYMBOL}"))
        .arg(format!("--log-file={}.log", out.display()));
    if options.simulate {
        c.arg("--cache-sim=yes").arg("--branch-sim=yes");
    }
    if options.by_function {
        // A cost per instruction, to tell the moves, spills and reloads.
        c.arg("--dump-instr=yes");
    }
    c.arg(&options.runner)
        .args(["wasm", "run", "--allocator", allocator.name()]);
    if options.by_function {
        c.arg("--perf-map")
            .arg("--save-code")
            .arg(format!("{}.code", out.display()));
    }
    c.arg(module.file_name().unwrap_or(module.as_os_str()));
    // Sightglass modules read their inputs by relative path.
    if let Some(dir) = module.parent().filter(|p| !p.as_os_str().is_empty()) {
        c.current_dir(dir);
    }
    c
}

/// Counts `module` under every allocator of `options`, one process each.
pub fn count_module(module: &Path, options: &CountOptions) -> ModuleCount {
    let module = std::path::absolute(module).unwrap_or_else(|_| module.to_owned());
    let expected = Expected::for_module(&module);
    let results = options
        .allocators
        .iter()
        .map(|&allocator| {
            let (counts, output) = match count_one(&module, allocator, options, &expected) {
                Ok((c, o)) => (Ok(c), o),
                Err(e) => (Err(e), OutputCheck::NoExpectation),
            };
            AllocatorCount {
                allocator,
                counts,
                output,
            }
        })
        .collect();
    ModuleCount {
        name: module_name(&module),
        path: module,
        results,
    }
}

fn count_one(
    module: &Path,
    allocator: Allocator,
    options: &CountOptions,
    expected: &Expected,
) -> Result<(WindowCounts, OutputCheck), String> {
    let out = options.scratch.join(format!(
        "{}.{}.{}",
        module_name(module).replace('/', "-"),
        allocator.name(),
        std::process::id()
    ));
    let files = [
        out.clone(),
        PathBuf::from(format!("{}.1", out.display())),
        PathBuf::from(format!("{}.2", out.display())),
        PathBuf::from(format!("{}.3", out.display())),
        PathBuf::from(format!("{}.log", out.display())),
        PathBuf::from(format!("{}.code", out.display())),
    ];
    let result = (|| {
        let child = valgrind_command(options, module, allocator, &out)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", options.valgrind.display()))?;
        // Valgrind runs the program in its own process, so the map bears its id.
        let map = PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
        let run = child.wait_with_output();
        let map_text = options
            .by_function
            .then(|| std::fs::read_to_string(&map))
            .transpose();
        let _ = std::fs::remove_file(&map);
        let run = run.map_err(|e| format!("{}: {e}", options.valgrind.display()))?;
        if !run.status.success() {
            let log = std::fs::read_to_string(&files[4]).unwrap_or_default();
            return Err(format!(
                "exited with {}: {}",
                run.status,
                crate::one_line(&format!(
                    "{} {}",
                    String::from_utf8_lossy(&run.stderr),
                    log.lines().rev().take(3).collect::<Vec<_>>().join(" ")
                ))
            ));
        }
        let read = |p: &Path| std::fs::read_to_string(p).ok();
        let (Some(before), Some(window)) = (read(&files[1]), read(&files[2])) else {
            return Err("never called bench.start and bench.end (no window dumped)".into());
        };
        if files[3].exists() {
            return Err("called bench.start or bench.end more than once".into());
        }
        if dump_trigger(&before).is_none_or(|t| !t.ends_with(OPENS_SYMBOL))
            || dump_trigger(&window).is_none_or(|t| !t.ends_with(CLOSES_SYMBOL))
        {
            return Err("called bench.end before bench.start".into());
        }
        let mut counts = parse_dump(&window)?;
        if let Some(map) = map_text.map_err(|e| format!("{}: no perf map: {e}", map.display()))? {
            let listing = std::fs::read_to_string(&files[5])
                .map_err(|e| format!("{}: no saved code: {e}", files[5].display()))?;
            let code: std::collections::HashMap<String, Vec<u8>> =
                crate::engine::parse_code_listing(&listing)?
                    .into_iter()
                    .collect();
            counts.functions =
                function_counts(&window, &map, |name| code.get(name).map(|c| &c[..]))?;
        }
        Ok((counts, expected.compare(&run.stdout, &run.stderr)))
    })();
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    result
}

/// The closing line per allocator: `wasm-count ALLOC modules=N instructions_ratio=X
/// [cycle_estimate_ratio=Y] mismatches=M` (geomeans over the modules this allocator and
/// ion were both counted on).
pub fn summary_line(results: &[ModuleCount], a: Allocator, simulate: bool) -> String {
    let fmt = |x: Option<f64>| x.map_or("nan".to_owned(), |x| format!("{x:.4}"));
    let counted = results.iter().filter(|m| m.get(a).is_some()).count();
    let mismatches = results
        .iter()
        .flat_map(|m| &m.results)
        .filter(|r| r.allocator == a && matches!(r.output, OutputCheck::Mismatch(_)))
        .count();
    let mut line = format!(
        "wasm-count {a} modules={counted} instructions_ratio={}",
        fmt(geomean(
            results
                .iter()
                .filter_map(|m| m.ratio(a, WindowCounts::instructions))
        ))
    );
    if simulate {
        line += &format!(
            " cycle_estimate_ratio={}",
            fmt(geomean(
                results
                    .iter()
                    .filter_map(|m| m.ratio(a, WindowCounts::cycle_estimate))
            ))
        );
    }
    line + &format!(" mismatches={mismatches}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n\
        desc: Trigger: --dump-before=ragreedy_wasm::wasi::bench_window_closes\n\
        positions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n\
        summary: 999999\n\nfn=(1) f\n3 5\ntotals: 1000 300 200 4 5 6 1 2 3 150 7 20\n";

    #[test]
    fn a_dump_gives_its_own_totals_by_event() {
        let c = parse_dump(DUMP).unwrap();
        assert_eq!(c.instructions(), Some(1000));
        assert_eq!(c.get("D1mw"), Some(6));
        // The last count was left out: it is zero, not missing.
        assert_eq!(c.get("Bim"), Some(0));
        assert_eq!(c.get("Nope"), None);
        // 1000 + 10 * (4 + 5 + 6) + 100 * (1 + 2 + 3) + 10 * (7 + 0)
        assert_eq!(c.cycle_estimate(), Some(1000 + 150 + 600 + 70));
        assert_eq!(
            dump_trigger(DUMP).map(|t| t.ends_with(CLOSES_SYMBOL)),
            Some(true)
        );
    }

    #[test]
    fn without_the_simulation_there_is_no_cycle_estimate() {
        let c = parse_dump("events: Ir\ntotals: 42\n").unwrap();
        assert_eq!(c.instructions(), Some(42));
        assert_eq!(c.cycle_estimate(), None);
    }

    #[test]
    fn malformed_dumps_are_errors() {
        assert!(parse_dump("events: Ir\n").is_err());
        assert!(parse_dump("totals: 1\n").is_err());
        assert!(parse_dump("events: Ir\ntotals: 1 2\n").is_err());
        assert!(parse_dump("events: Ir\ntotals: x\n").is_err());
    }

    fn counted(a: Allocator, ir: Option<u64>) -> AllocatorCount {
        AllocatorCount {
            allocator: a,
            counts: ir
                .map(|n| WindowCounts {
                    events: vec![("Ir".into(), n)],
                    functions: Vec::new(),
                })
                .ok_or_else(|| "failed".to_owned()),
            output: OutputCheck::Ok,
        }
    }

    #[test]
    fn ratios_are_against_ion_and_skip_failed_runs() {
        let m = |name: &str, g, i| ModuleCount {
            path: PathBuf::from(name),
            name: name.into(),
            results: vec![counted(Allocator::Greedy, g), counted(Allocator::Ion, i)],
        };
        let results = [
            m("a", Some(50), Some(100)),
            m("b", Some(200), Some(100)),
            m("c", None, Some(100)),
            m("d", Some(100), None),
        ];
        assert_eq!(
            results[0].ratio(Allocator::Greedy, WindowCounts::instructions),
            Some(0.5)
        );
        assert_eq!(
            results[2].ratio(Allocator::Greedy, WindowCounts::instructions),
            None
        );
        let line = summary_line(&results, Allocator::Greedy, false);
        // geomean(0.5, 2.0) = 1 over the two modules both counted.
        assert_eq!(
            line,
            "wasm-count greedy modules=3 instructions_ratio=1.0000 mismatches=0"
        );
        let line = summary_line(&results, Allocator::Greedy, true);
        assert!(line.contains(" cycle_estimate_ratio=nan "), "{line}");
    }

    /// A window dump as callgrind writes it for code without symbols: two JIT functions
    /// (entered at 0x1000 and at 0x1040, the second also entered at 0x1050 by a jump),
    /// a call from the first to the second whose inclusive cost must not count as the
    /// first's, a recursion cycle's name (`'2`), and host code outside the map.
    const JIT_DUMP: &str = "version: 1
positions: line
events: Ir
fl=(1) ???
fn=(1) 0x0000000000001000
0 10
+2 5
cfn=(2) 0x0000000000001040
calls=3 0
0 999
fn=(2)
0 7
fn=(3) 0x0000000000001050'2
0 4
fn=(4) 0x0000000000009000
0 1000
fn=(5) host::write
0 50
fn=(1)
* 1
totals: 2076
";

    #[test]
    fn function_counts_put_each_entry_address_in_its_function() {
        let map = "1000 40 wasm[0]::function[3]::f\n1040 20 wasm[0]::function[4]\n2000 8 wasm[0]::function[5]::idle\n";
        let counts = function_counts(JIT_DUMP, map, |_| None).unwrap();
        let count = |name: &str, instructions| FunctionCount {
            name: name.to_owned(),
            instructions,
            ..FunctionCount::default()
        };
        assert_eq!(
            counts,
            [
                count("wasm[0]::function[3]::f", 16),
                count("wasm[0]::function[4]", 11)
            ]
        );
        assert!(function_counts(JIT_DUMP, "1000 40\n", |_| None).is_err());
        assert!(function_counts(JIT_DUMP, "xyz 40 f\n", |_| None).is_err());
    }

    /// The same shape with a cost per instruction (`--dump-instr=yes`): absolute, relative
    /// and repeated addresses, a call site's inclusive cost, a jump into the second function
    /// at 0x1050 under another name, host code outside the map.
    const JIT_DUMP_BY_INSTR: &str = "version: 1
positions: instr line
events: Ir
fl=(1) ???
fn=(1) 0x0000000000001000
0x1000 0 10
+3 0 5
cfn=(2) 0x0000000000001040
calls=3 0x1040 0
+5 0 999
fn=(2)
0x1040 0 7
fn=(3) 0x0000000000001050'2
+16 0 4
fn=(4) 0x0000000000009000
0x9000 0 1000
fn=(5) host::write
0x9100 0 50
fn=(1)
0x1008 0 2
* 0 1
-8 0 3
totals: 1082
";

    #[test]
    fn function_counts_class_each_executed_instruction_by_its_code() {
        let map = "1000 40 wasm[0]::function[3]::f\n1040 20 wasm[0]::function[4]\n";
        // f: a move (mov %r10,%rax), a spill (mov %r10,0x10(%rsp)), a reload
        // (mov (%rsp),%rax); function 4: movaps %xmm2,%xmm1, then padding.
        let mut f = vec![
            0x4c, 0x89, 0xd0, 0x4c, 0x89, 0x54, 0x24, 0x10, 0x48, 0x8b, 0x04, 0x24,
        ];
        f.resize(0x40, 0x90);
        let mut g = vec![0x0f, 0x28, 0xca];
        g.resize(0x20, 0x90);
        let code = |name: &str| match name {
            "wasm[0]::function[3]::f" => Some(&f[..]),
            "wasm[0]::function[4]" => Some(&g[..]),
            _ => None,
        };
        let counts = function_counts(JIT_DUMP_BY_INSTR, map, code).unwrap();
        assert_eq!(
            counts,
            [
                FunctionCount {
                    name: "wasm[0]::function[3]::f".into(),
                    instructions: 21,
                    moves: 13,
                    stores: 5,
                    loads: 3,
                },
                FunctionCount {
                    name: "wasm[0]::function[4]".into(),
                    instructions: 11,
                    moves: 7,
                    stores: 0,
                    loads: 0,
                },
            ]
        );
        // Without the code, the same instructions and no classes.
        let bare = function_counts(JIT_DUMP_BY_INSTR, map, |_| None).unwrap();
        assert_eq!(
            bare.iter()
                .map(|c| (c.instructions, c.moves + c.stores + c.loads))
                .collect::<Vec<_>>(),
            [(21, 0), (11, 0)]
        );
        // Code of another length than the run's is another compilation: an error.
        let short = &f[..0x20];
        assert!(
            function_counts(JIT_DUMP_BY_INSTR, map, |n| (n == "wasm[0]::function[3]::f")
                .then_some(short))
            .is_err()
        );
    }

    #[test]
    fn the_window_markers_are_distinct_functions() {
        // Folded into one by the linker, the two dumps would be taken at the same
        // calls and the window would be lost.
        let opens = crate::wasi::bench_window_opens as fn() as usize;
        let closes = crate::wasi::bench_window_closes as fn() as usize;
        assert_ne!(opens, closes);
    }

    #[test]
    fn the_command_runs_the_module_in_its_folder_with_both_dumps() {
        let options = CountOptions {
            allocators: vec![Allocator::Greedy, Allocator::Ion],
            simulate: true,
            valgrind: "valgrind".into(),
            runner: "/bin/ragreedy".into(),
            scratch: "/tmp".into(),
            by_function: false,
        };
        let c = valgrind_command(
            &options,
            Path::new("/m/shootout/x.wasm"),
            Allocator::Greedy,
            Path::new("/tmp/out"),
        );
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(c.get_current_dir(), Some(Path::new("/m/shootout")));
        for want in [
            "--tool=callgrind".to_owned(),
            format!("--dump-before={OPENS_SYMBOL}"),
            format!("--dump-before={CLOSES_SYMBOL}"),
            "--cache-sim=yes".to_owned(),
            "--branch-sim=yes".to_owned(),
        ] {
            assert!(args.contains(&want), "{want} missing from {args:?}");
        }
        assert!(
            args.ends_with(&[
                "/bin/ragreedy".into(),
                "wasm".into(),
                "run".into(),
                "--allocator".into(),
                "greedy".into(),
                "x.wasm".into()
            ]),
            "{args:?}"
        );
    }
}
