//! Real Wasm through Wasmtime with greedy under its Cranelift: modules of our own compiled, run
//! and checked; the capture feeding every function through regalloc2's checker; the Sightglass
//! protocol; and bad input reported as one line naming the file.

mod common;

use common::{live_values_expected, live_values_module, scratch, write_module};
use ragreedy_jit::Allocator;
use ragreedy_wasm::bench::{self, BenchOptions, OutputCheck};
use ragreedy_wasm::engine::{self, Compilation};
use ragreedy_wasm::wasi::{self, RunSetup, Stdio};
use ragreedy_wasm::{capture, discover};
use std::path::Path;
use std::sync::Mutex;

/// `bench` selects the allocator process-wide (Wasmtime compiles on its own threads), so the
/// tests that use it must not overlap.
static PROCESS_WIDE: Mutex<()> = Mutex::new(());

fn captured_run(
    engine: &wasmtime::Engine,
    module: &wasmtime::Module,
    dir: &Path,
) -> wasi::RunResult {
    let setup = RunSetup {
        dir: dir.to_owned(),
        args: vec!["test".into()],
        stdio: Stdio::Capture,
    };
    wasi::run(engine, module, &setup).expect("runs")
}

#[test]
fn greedy_compiles_and_runs_a_loop_with_many_live_values() {
    let dir = scratch("many-live");
    let wat = live_values_module(24, 1000, false);
    let engine = engine::engine(Compilation::OneThread).unwrap();
    let before = regalloc2::outside_calls();
    let (module, _) = Allocator::Greedy
        .with(|| engine::compile(&engine, Path::new("many-live.wat"), wat.as_bytes()))
        .expect("compiles");
    // The compile went through the switch to greedy: one outside call per function at least
    // ($mix, $print, $compute, _start, plus trampolines).
    assert!(regalloc2::outside_calls() >= before + 4);
    assert_eq!(regalloc2::thread_last_allocator(), Some("greedy"));
    let r = captured_run(&engine, &module, &dir);
    assert_eq!(r.exit_code, 0);
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        live_values_expected(24, 1000)
    );
}

#[test]
fn ion_and_greedy_compiled_code_agree() {
    let dir = scratch("agree");
    let wat = live_values_module(40, 333, false);
    let engine = engine::engine(Compilation::OneThread).unwrap();
    let mut outputs = Vec::new();
    for a in [Allocator::Ion, Allocator::Greedy] {
        let (module, _) = a
            .with(|| engine::compile(&engine, Path::new("agree.wat"), wat.as_bytes()))
            .expect("compiles");
        outputs.push(captured_run(&engine, &module, &dir).stdout);
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(
        String::from_utf8_lossy(&outputs[1]),
        live_values_expected(40, 333)
    );
}

#[test]
fn every_captured_function_allocates_with_greedy_and_passes_the_checker() {
    let wat = live_values_module(32, 10, true);
    let captured = capture::capture_bytes(Path::new("m.wat"), wat.as_bytes()).expect("captures");
    assert!(captured.len() >= 4, "only {} functions", captured.len());
    let mut spilled = false;
    for c in &captured {
        assert_eq!(
            c.index,
            captured.iter().position(|d| std::ptr::eq(d, c)).unwrap()
        );
        let out = regalloc_greedy::run(&c.func, &c.env, &regalloc_greedy::Options::default())
            .unwrap_or_else(|e| panic!("#{}: {e:?}", c.index));
        ragreedy_testkit::check::check_output(&c.func, &c.env, &out)
            .unwrap_or_else(|e| panic!("#{}: {e}", c.index));
        spilled |= ragreedy_testkit::cost::cost(&c.func, &c.env, &out).spills > 0;
    }
    // 32 values live across a call cannot all stay in registers.
    assert!(
        spilled,
        "no function spilled: the corpus would not exercise the allocator"
    );
    // Capture order is stable: a second capture names the same functions the same way.
    let again = capture::capture_bytes(Path::new("m.wat"), wat.as_bytes()).unwrap();
    assert_eq!(again.len(), captured.len());
    for (a, b) in captured.iter().zip(&again) {
        assert_eq!(
            regalloc2::Function::num_insts(&a.func),
            regalloc2::Function::num_insts(&b.func)
        );
    }
    assert_eq!(capture::function_name(Path::new("x/m.wasm"), 3), "m.wasm#3");
    assert_eq!(
        capture::function_name(Path::new("bz2/benchmark.wasm"), 3),
        "bz2/benchmark.wasm#3"
    );
}

#[test]
fn a_module_exit_code_is_returned() {
    let dir = scratch("exit");
    let wat = r#"(module
        (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
        (memory (export "memory") 1)
        (func (export "_start") (call $exit (i32.const 3))))"#;
    let engine = engine::engine(Compilation::OneThread).unwrap();
    let (module, _) = Allocator::Greedy
        .with(|| engine::compile(&engine, Path::new("exit.wat"), wat.as_bytes()))
        .unwrap();
    assert_eq!(captured_run(&engine, &module, &dir).exit_code, 3);
}

/// A Sightglass-layout folder: `bench.wasm`, its expected stdout, and an input it reads.
fn sightglass_folder(name: &str, expected_stdout: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    write_module(&dir.join("bench.wasm"), &live_values_module(20, 2000, true));
    std::fs::write(dir.join("bench.stdout.expected"), expected_stdout).unwrap();
    std::fs::write(dir.join("bench.stderr.expected"), "").unwrap();
    dir
}

#[test]
fn bench_follows_the_sightglass_protocol() {
    let _guard = PROCESS_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = sightglass_folder("bench-ok", &live_values_expected(20, 2000));
    let modules = discover::modules(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(modules, vec![dir.join("bench.wasm")]);
    let options = BenchOptions {
        allocators: vec![Allocator::Greedy, Allocator::Ion],
        iterations: 3,
        layout_shifts: false,
    };
    let before = regalloc2::outside_calls();
    let results = bench::bench_modules(&modules, &options, |_| {}).unwrap();
    assert!(regalloc2::outside_calls() > before, "greedy never reached");
    let m = &results[0];
    assert_eq!(m.error, None);
    for a in [Allocator::Greedy, Allocator::Ion] {
        let r = m.get(a).unwrap();
        assert_eq!(r.error, None, "{a}");
        assert_eq!(r.output, OutputCheck::Ok, "{a}");
        assert_eq!((r.compile.len(), r.run.len()), (3, 3), "{a}");
    }
    assert!(m.compile_ratio(Allocator::Greedy).is_some());
    assert!(m.run_ratio(Allocator::Greedy).is_some());
    // The module's functions hold a few hundred bytes of code at least (20 values live
    // across a loop), and each allocator's figure is its own compilation's.
    let code = |a| m.get(a).unwrap().code_bytes.expect("measured");
    let (greedy, ion) = (code(Allocator::Greedy), code(Allocator::Ion));
    assert!(greedy > 200 && ion > 200, "{greedy} {ion}");
    let ratio = m.code_ratio(Allocator::Greedy).unwrap();
    assert_eq!(ratio, greedy as f64 / ion as f64);
    let line = bench::summary_line(&results, Allocator::Greedy);
    assert!(line.starts_with("wasm-bench greedy modules=1 "), "{line}");
    assert!(line.contains(&format!(" code_ratio={ratio:.4} ")), "{line}");
    assert!(line.contains(" mismatches=0 "), "{line}");
    // Three iterations still give an interval, however wide.
    let interval = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("run_ratio_95="))
        .and_then(|v| v.split_once(".."))
        .map(|(lo, hi)| (lo.parse::<f64>().unwrap(), hi.parse::<f64>().unwrap()))
        .unwrap_or_else(|| panic!("an interval in {line}"));
    assert!(interval.0 <= interval.1, "{line}");
}

#[test]
fn bench_reports_a_mismatch_and_a_missing_bench_end() {
    let _guard = PROCESS_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    let wrong = sightglass_folder("bench-mismatch", "12345\n");
    let no_end = scratch("bench-no-end");
    write_module(
        &no_end.join("bench.wasm"),
        r#"(module
            (import "bench" "start" (func $s))
            (import "bench" "end" (func $e))
            (memory (export "memory") 1)
            (func (export "_start") (call $s)))"#,
    );
    let options = BenchOptions {
        allocators: vec![Allocator::Greedy, Allocator::Ion],
        iterations: 1,
        layout_shifts: false,
    };
    let modules = discover::modules(&[wrong.clone(), no_end.clone()]).unwrap();
    let results = bench::bench_modules(&modules, &options, |_| {}).unwrap();
    let g = results[0].get(Allocator::Greedy).unwrap();
    assert!(
        matches!(&g.output, OutputCheck::Mismatch(d) if d.contains("stdout")),
        "{:?}",
        g.output
    );
    assert!(g.failed());
    let line = bench::summary_line(&results, Allocator::Greedy);
    assert!(line.contains(" mismatches=1 "), "{line}");
    // No module with both allocators measured: no interval either.
    assert!(line.ends_with(" run_ratio_95=nan"), "{line}");
    let e = results[1].get(Allocator::Greedy).unwrap().error.clone();
    assert_eq!(e.as_deref(), Some("never called bench.end"));
}

#[test]
fn bad_modules_are_one_line_errors_naming_the_file() {
    let engine = engine::engine(Compilation::OneThread).unwrap();
    let not_wasm = engine::compile(&engine, Path::new("notes.txt"), b"hello, world")
        .map(|_| ())
        .expect_err("rejected");
    assert_eq!(not_wasm.path, Path::new("notes.txt"));
    assert!(
        not_wasm.cause.contains("not a WebAssembly module"),
        "{not_wasm}"
    );

    let invalid = engine::compile(&engine, Path::new("bad.wasm"), b"\0asm\x01\0\0\0\x01\xff")
        .map(|_| ())
        .expect_err("rejected");
    assert!(invalid.to_string().starts_with("bad.wasm: "), "{invalid}");
    assert!(!invalid.to_string().contains('\n'));

    // Fails validation: an i32 result returned as i64.
    let ill_typed = r#"(module (func (result i64) (i32.const 1)))"#;
    let e = engine::compile(&engine, Path::new("typed.wat"), ill_typed.as_bytes())
        .map(|_| ())
        .expect_err("rejected");
    assert!(e.to_string().starts_with("typed.wat: "), "{e}");

    let dir = scratch("bad-run");
    let missing_import = r#"(module (import "env" "nope" (func)) (func (export "_start")))"#;
    let (module, _) = engine::compile(&engine, Path::new("imp.wat"), missing_import.as_bytes())
        .expect("valid module");
    let setup = RunSetup {
        dir: dir.clone(),
        args: vec!["imp".into()],
        stdio: Stdio::Capture,
    };
    let e = wasi::run(&engine, &module, &setup).unwrap_err();
    assert!(e.starts_with("instantiation failed"), "{e}");

    let trap = r#"(module (memory (export "memory") 1) (func (export "_start") unreachable))"#;
    let (module, _) = engine::compile(&engine, Path::new("trap.wat"), trap.as_bytes()).unwrap();
    let e = wasi::run(&engine, &module, &setup).unwrap_err();
    assert!(e.starts_with("trapped"), "{e}");

    let missing = capture::capture_file(Path::new("/nonexistent/x.wasm"))
        .err()
        .unwrap();
    assert!(
        missing
            .to_string()
            .starts_with("/nonexistent/x.wasm: cannot read"),
        "{missing}"
    );
    let empty = scratch("no-modules");
    let e = discover::modules(&[empty]).unwrap_err();
    assert!(e.cause.contains("no .wasm file"), "{e}");
}

#[test]
fn entry_padding_shifts_every_function_and_keeps_its_result() {
    let _one = PROCESS_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("padded");
    let wat = live_values_module(8, 100, false);
    let engine = engine::engine(Compilation::OneThread).unwrap();
    let compile = |a: Allocator| {
        a.with(|| engine::compile(&engine, Path::new("padded.wat"), wat.as_bytes()))
            .expect("compiles")
            .0
    };
    // Eight `movdqa %xmm0,%xmm0` in a row: 32 bytes no allocation of these functions makes.
    let run_of_pads: Vec<u8> = [0x66, 0x0f, 0x6f, 0xc0].repeat(8);
    let count = |text: &[u8]| {
        text.windows(run_of_pads.len())
            .filter(|w| *w == &run_of_pads[..])
            .count()
    };
    for a in [Allocator::Ion, Allocator::Greedy] {
        let plain = compile(a);
        regalloc2::set_entry_padding(&bench::entry_padding(32));
        let padded = compile(a);
        regalloc2::set_entry_padding(&[]);
        assert_eq!(count(plain.text()), 0, "{a}");
        // $mix, $print, $compute and _start at least, each padded once.
        assert!(count(padded.text()) >= 4, "{a}: {}", count(padded.text()));
        // `code_bytes` counts the functions' own code: the padding adds its 32 bytes to
        // each, and nothing else moves (which is why `wasm bench` measures code size on
        // an iteration without a shift).
        let functions = plain.functions().len() as u64;
        assert!(functions >= 4, "{a}: {functions}");
        assert_eq!(
            engine::code_bytes(&padded),
            engine::code_bytes(&plain) + 32 * functions,
            "{a}"
        );
        let r = captured_run(&engine, &padded, &dir);
        assert_eq!(r.exit_code, 0);
        assert_eq!(
            String::from_utf8_lossy(&r.stdout),
            live_values_expected(8, 100)
        );
    }
}

#[test]
fn perf_map_gives_each_function_its_code_in_memory() {
    let wat = live_values_module(8, 100, false);
    let engine = engine::engine(Compilation::OneThread).unwrap();
    let (module, _) = Allocator::Greedy
        .with(|| engine::compile(&engine, Path::new("map.wat"), wat.as_bytes()))
        .expect("compiles");
    let map = engine::perf_map(&module);
    let text = module.text();
    let base = text.as_ptr() as usize;
    let lines: Vec<&str> = map.lines().collect();
    assert_eq!(lines.len(), module.functions().len(), "{map}");
    let mut total = 0;
    for (line, f) in lines.iter().zip(module.functions()) {
        let mut fields = line.split(' ');
        let start = usize::from_str_radix(fields.next().unwrap(), 16).unwrap();
        let len = usize::from_str_radix(fields.next().unwrap(), 16).unwrap();
        let name = fields.next().unwrap();
        assert_eq!(fields.next(), None, "{line}");
        // The address is where the function's bytes sit in the loaded text, which is
        // what the running code's samples carry.
        assert!(start >= base && start + len <= base + text.len(), "{line}");
        assert_eq!((start - base, len), (f.offset, f.len), "{line}");
        assert!(
            name.starts_with(&format!("wasm[0]::function[{}]", f.index.as_u32())),
            "{line}"
        );
        total += len as u64;
    }
    assert_eq!(total, engine::code_bytes(&module));
    // The saved code reads back as each function's bytes, by the map's names.
    let listed = engine::parse_code_listing(&engine::code_listing(&module)).unwrap();
    let direct: Vec<(String, Vec<u8>)> = engine::function_code(&module)
        .into_iter()
        .map(|(n, c)| (n, c.to_vec()))
        .collect();
    assert_eq!(listed, direct);
    for (line, (name, _)) in lines.iter().zip(&listed) {
        assert!(line.ends_with(&format!(" {name}")), "{line} / {name}");
    }
    assert!(engine::parse_code_listing("f 0a0").is_err());
    assert!(engine::parse_code_listing("f zz").is_err());
    // Not hex, and not ASCII either: an error, not a panic on a split character.
    assert!(engine::parse_code_listing("f €a").is_err());
    // Named functions carry their names: the module's own `$mix` and `$compute`.
    assert!(
        map.contains("::mix\n") && map.contains("::compute\n"),
        "{map}"
    );
}

/// A padded allocation, ion's or greedy's, is still one regalloc2's checker accepts: the
/// self-moves come first at the entry, the edits stay sorted, and no value changes.
#[test]
fn padded_allocations_pass_the_checker() {
    use ragreedy_testkit::{check, fuzzgen};
    let _one = PROCESS_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    let env = fuzzgen::machine_env();
    let mut checked = 0;
    for seed in 0..40u64 {
        let Some(f) = fuzzgen::func_from_seed(seed, &fuzzgen::small_env_options(8)) else {
            continue;
        };
        for a in [Allocator::Ion, Allocator::Greedy] {
            let plain = a.with(|| regalloc2::run(&f, &env, &Default::default()));
            regalloc2::set_entry_padding(&bench::entry_padding(41));
            let padded = a.with(|| regalloc2::run(&f, &env, &Default::default()));
            regalloc2::set_entry_padding(&[]);
            let (Ok(plain), Ok(padded)) = (plain, padded) else {
                continue;
            };
            assert_eq!(
                padded.edits.len(),
                plain.edits.len() + 11,
                "{a} seed {seed}"
            );
            // ion is held to the structural rules it is known to meet (its debug
            // locations may overlap), greedy to all of them, as `compare` does.
            let strictness = match a {
                Allocator::Ion => check::Strictness::Baseline,
                _ => check::Strictness::Ours,
            };
            check::check_output_with(&f, &env, &padded, strictness)
                .unwrap_or_else(|e| panic!("{a} seed {seed}: {e}"));
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} allocations");
}
