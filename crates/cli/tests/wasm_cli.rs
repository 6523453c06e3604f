//! `ragreedy wasm` and `ragreedy compare --corpus wasm:` as a user runs them: exit codes, the
//! closing lines, and bad modules reported in one line while the others are still measured.

mod common;

use common::{ragreedy, scratch, text};

/// Prints the first argument (argv[1]) back, reads `input.txt` from the pre-opened folder and
/// exits with its first byte minus '0'.
const ECHO: &str = r#"(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 512) "input.txt")
  (func $strlen (param $p i32) (result i32) (local $n i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $n))
  (func (export "_start") (local $arg i32)
    (drop (call $sizes (i32.const 0) (i32.const 4)))
    (drop (call $args (i32.const 16) (i32.const 1024)))
    (local.set $arg (i32.load (i32.const 20)))
    (i32.store (i32.const 100) (local.get $arg))
    (i32.store (i32.const 104) (call $strlen (local.get $arg)))
    (drop (call $write (i32.const 1) (i32.const 100) (i32.const 1) (i32.const 108)))
    ;; fd 3 is the first pre-opened folder.
    (if (call $open (i32.const 3) (i32.const 0) (i32.const 512) (i32.const 9) (i32.const 0)
                    (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 200))
      (then (call $exit (i32.const 99))))
    (i32.store (i32.const 300) (i32.const 400))
    (i32.store (i32.const 304) (i32.const 1))
    (drop (call $read (i32.load (i32.const 200)) (i32.const 300) (i32.const 1) (i32.const 308)))
    (call $exit (i32.sub (i32.load8_u (i32.const 400)) (i32.const 48)))))
"#;

#[test]
fn wasm_run_passes_arguments_preopens_the_folder_and_returns_the_exit_code() {
    let dir = scratch("cli-run");
    std::fs::write(dir.join("echo.wasm"), wat::parse_str(ECHO).unwrap()).unwrap();
    std::fs::write(dir.join("input.txt"), "7").unwrap();
    for allocator in ["greedy", "basic", "linear-scan", "irc", "ion"] {
        let out = ragreedy(
            &[
                "wasm",
                "run",
                "echo.wasm",
                "--allocator",
                allocator,
                "--",
                "hello",
            ],
            &dir,
        );
        assert_eq!(
            out.status.code(),
            Some(7),
            "{allocator}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "hello", "{allocator}");
    }
}

#[test]
fn wasm_run_perf_map_names_each_function_for_perf() {
    let dir = scratch("cli-perf-map");
    std::fs::write(dir.join("echo.wasm"), wat::parse_str(ECHO).unwrap()).unwrap();
    std::fs::write(dir.join("input.txt"), "3").unwrap();
    // The map's name holds the process id, so the child is spawned rather than `output()`.
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ragreedy"))
        .args([
            "wasm",
            "run",
            "--perf-map",
            "--save-code",
            "code.txt",
            "echo.wasm",
            "--",
            "hi",
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("ragreedy runs");
    let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
    let out = child.wait_with_output().unwrap();
    // The module still runs as without the flag.
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&map).expect("the map is written");
    let _ = std::fs::remove_file(&map);
    let lines: Vec<&str> = written.lines().collect();
    // $strlen and the exported _start: the module's two defined functions.
    assert_eq!(lines.len(), 2, "{written}");
    let mut ends = Vec::new();
    for l in &lines {
        let [start, len, name] = l.split(' ').collect::<Vec<_>>()[..] else {
            panic!("not START LEN NAME: {l}");
        };
        let start = u64::from_str_radix(start, 16).expect("hex start");
        let len = u64::from_str_radix(len, 16).expect("hex length");
        assert!(start > 0 && len > 0, "{l}");
        assert!(name.starts_with("wasm[0]::function["), "{l}");
        ends.push((start, start + len));
    }
    assert!(lines[0].ends_with("::strlen"), "{written}");
    // Disjoint, in code order.
    assert!(ends[0].1 <= ends[1].0, "{written}");
    // The saved code: a line per function of the map, as long as the map says, each
    // starting with Cranelift's frame setup (`push %rbp; mov %rsp,%rbp`).
    let code = std::fs::read_to_string(dir.join("code.txt")).expect("the code is saved");
    let code: Vec<(&str, &str)> = code.lines().map(|l| l.rsplit_once(' ').unwrap()).collect();
    assert_eq!(code.len(), lines.len());
    for ((name, hex), (l, (start, end))) in code.iter().zip(lines.iter().zip(&ends)) {
        assert!(l.ends_with(name), "{l} / {name}");
        assert_eq!(hex.len() as u64, 2 * (end - start), "{name}");
        assert!(hex.starts_with("554889e5"), "{name}: {}", &hex[..16]);
    }
}

#[test]
fn wasm_run_reports_a_file_that_is_not_wasm_in_one_line() {
    let dir = scratch("cli-not-wasm");
    std::fs::write(dir.join("notes.wasm"), "hello").unwrap();
    let out = ragreedy(&["wasm", "run", "notes.wasm"], &dir);
    assert_ne!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("notes.wasm: not a WebAssembly module"),
        "{err}"
    );
}

/// A loop with a dozen values live and a call, printing nothing: enough for the corpus to have
/// something to allocate.
const LOOP: &str = r#"(module
  (import "bench" "start" (func $s))
  (import "bench" "end" (func $e))
  (memory (export "memory") 1)
  (func $f (param i64) (result i64) (i64.mul (local.get 0) (i64.const 3)))
  (func (export "_start") (local $i i32) (local $a i64) (local $b i64) (local $c i64) (local $d i64)
    (call $s)
    (local.set $i (i32.const 1000))
    (loop $l
      (local.set $a (i64.add (local.get $a) (local.get $b)))
      (local.set $b (call $f (i64.xor (local.get $b) (local.get $c))))
      (local.set $c (i64.add (local.get $c) (local.get $d)))
      (local.set $d (i64.add (local.get $d) (i64.const 1)))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $l (local.get $i)))
    (i64.store (i32.const 0) (i64.add (local.get $a) (local.get $c)))
    (call $e)))
"#;

#[test]
fn bench_and_compare_measure_the_good_modules_and_fail_on_the_bad_one() {
    let dir = scratch("cli-bench");
    let good = dir.join("good");
    let bad = dir.join("bad");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(good.join("loop.wasm"), wat::parse_str(LOOP).unwrap()).unwrap();
    std::fs::write(good.join("loop.stdout.expected"), "").unwrap();
    // Valid header, then garbage: fails validation.
    std::fs::write(bad.join("broken.wasm"), b"\0asm\x01\0\0\0\x01\xff").unwrap();

    let out = ragreedy(
        &[
            "wasm",
            "bench",
            ".",
            "--allocators",
            "greedy,ion",
            "--iterations",
            "2",
        ],
        &dir,
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("wasm-bench greedy modules=1 "), "{stdout}");
    assert!(stdout.contains(" mismatches=0"), "{stdout}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: ./bad/broken.wasm: ")),
        "{stderr}"
    );

    let out = ragreedy(
        &[
            "compare",
            "--corpus",
            "wasm:good,bad",
            "--allocators",
            "greedy,ion",
            "--reps",
            "1",
        ],
        &dir,
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("summary greedy "))
        .unwrap_or_else(|| panic!("no summary: {stdout}"));
    assert!(summary.contains("checker_failures=0"), "{summary}");
    assert!(summary.contains(" total_time_ratio="), "{summary}");
    assert!(!summary.contains("total_time_ratio=nan"), "{summary}");
    assert!(stdout.contains("loop.wasm#0"), "{stdout}");
    assert!(text(&out.stderr).contains("broken.wasm: "));
}

#[test]
fn ablate_tabulates_a_wasm_module_beside_the_fuzz_corpus() {
    let dir = scratch("cli-ablate");
    std::fs::write(dir.join("loop.wasm"), wat::parse_str(LOOP).unwrap()).unwrap();
    let out = ragreedy(
        &[
            "ablate", "--wasm", ".", "--regs", "4", "--count", "10", "--reps", "1",
        ],
        &dir,
    );
    let stdout = common::success_stdout(&out);
    let tables: Vec<&str> = stdout.split("\n### ").skip(1).collect();
    assert_eq!(tables.len(), 2, "{stdout}");
    assert!(tables[0].starts_with("Wasm modules"), "{stdout}");
    assert!(
        tables[1].starts_with("fuzz corpus, 4 registers"),
        "{stdout}"
    );
    for table in tables {
        // ion, the default, one row per mechanism turned off, then the default again as
        // the time column's control; every row checked.
        let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
        assert!(rows.len() > 4, "{table}");
        let time = |name: &str| -> f64 {
            let row = rows
                .iter()
                .find(|r| r.starts_with(&format!("| {name} |")))
                .unwrap_or_else(|| panic!("no {name} row: {table}"));
            row.split('|').nth(6).unwrap().trim().parse().unwrap()
        };
        // Times are against the mean of the two default runs.
        let (default, control) = (time("default"), time("default (control)"));
        assert!(
            (default + control - 2.0).abs() <= 0.002,
            "{default} {control}"
        );
        // Per function too: against the mean of two times, the two runs' ratios
        // multiply to at most 1 on every function, so their geomeans do.
        let per_function = |name: &str| -> f64 {
            let row = rows
                .iter()
                .find(|r| r.starts_with(&format!("| {name} |")))
                .unwrap();
            row.split('|').nth(7).unwrap().trim().parse().unwrap()
        };
        let (default, control) = (per_function("default"), per_function("default (control)"));
        assert!(
            default > 0.0 && control > 0.0 && default * control <= 1.0 + 2e-3,
            "{default} {control}"
        );
        for row in rows.iter().skip(2) {
            assert!(row.ends_with("| 0 |"), "a configuration failed: {row}");
        }
    }
}

/// Stands in for valgrind: runs the program it is given, then writes the two dumps callgrind
/// would (`OUT.1` up to `bench.start`, `OUT.2` the window), counting 90 instructions in the
/// window under greedy and 100 under ion; a module called `nowindow.wasm` gets no window.
const FAKE_VALGRIND: &str = r#"#!/bin/sh
out=
for a in "$@"; do case "$a" in --callgrind-out-file=*) out="${a#--callgrind-out-file=}";; esac; done
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
case "$*" in *"--allocator ion"*) n=100;; *) n=90;; esac
"$@" || exit $?
printf 'desc: Trigger: --dump-before=ragreedy_wasm::wasi::bench_window_opens\nevents: Ir\ntotals: 7\n' > "$out.1"
case "$*" in *nowindow*) exit 0;; esac
printf 'desc: Trigger: --dump-before=ragreedy_wasm::wasi::bench_window_closes\nevents: Ir\ntotals: %s\n' $n > "$out.2"
"#;

#[test]
fn count_reads_the_window_dump_and_reports_a_module_without_one() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("cli-count-fake");
    let fake = dir.join("fake-valgrind");
    std::fs::write(&fake, FAKE_VALGRIND).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("loop.wasm"), wat::parse_str(LOOP).unwrap()).unwrap();
    std::fs::write(dir.join("loop.stdout.expected"), "").unwrap();
    std::fs::write(dir.join("nowindow.wasm"), wat::parse_str(LOOP).unwrap()).unwrap();
    let out = ragreedy(
        &["wasm", "count", ".", "--valgrind", fake.to_str().unwrap()],
        &dir,
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("| loop.wasm | greedy | 90 | 0.900 | ok |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("wasm-count greedy modules=1 instructions_ratio=0.9000 mismatches=0"),
        "{stdout}"
    );
    assert!(
        stderr.lines().any(|l| l.starts_with("error: ")
            && l.contains("nowindow.wasm: [greedy] never called bench.start and bench.end")),
        "{stderr}"
    );
}

#[test]
fn count_under_callgrind_counts_the_loops_window() {
    let dir = scratch("cli-count");
    std::fs::write(dir.join("loop.wasm"), wat::parse_str(LOOP).unwrap()).unwrap();
    std::fs::write(dir.join("loop.stdout.expected"), "").unwrap();
    let out = ragreedy(&["wasm", "count", "loop.wasm", "--json"], &dir);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "valgrind is needed here (the test command's machines have it)\n{stdout}\n{stderr}"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for r in v[0]["results"].as_array().unwrap() {
        // 1,000 iterations of a dozen instructions and a call, plus the host's return
        // from `bench.start` and its entry to `bench.end`.
        let ir = r["events"]["Ir"].as_u64().unwrap_or(0);
        assert!((10_000..200_000).contains(&ir), "{r}");
        assert_eq!(r["output"], "ok", "{r}");
    }
    assert!(
        stderr.contains("wasm-count greedy modules=1 instructions_ratio="),
        "{stderr}"
    );
}

#[test]
fn count_by_function_splits_the_window_between_the_modules_functions() {
    let dir = scratch("cli-count-by-function");
    std::fs::write(dir.join("loop.wasm"), wat::parse_str(LOOP).unwrap()).unwrap();
    let out = ragreedy(
        &["wasm", "count", "loop.wasm", "--by-function", "--json"],
        &dir,
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "valgrind is needed here\n{stdout}\n{}",
        text(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for r in v[0]["results"].as_array().unwrap() {
        let ir = r["events"]["Ir"].as_u64().unwrap();
        let functions = r["functions"].as_array().unwrap();
        let count = |name: &str| {
            functions
                .iter()
                .find(|f| f["function"].as_str().unwrap().ends_with(name))
                .and_then(|f| f["Ir"].as_u64())
        };
        // `$f` runs 1,000 times, a multiply and its frame each time; `_start`'s loop holds
        // the rest of the window but the host's entry to `bench.end`.
        let f = count("::f").unwrap_or_else(|| panic!("no $f: {r}"));
        assert!((3_000..30_000).contains(&f), "{r}");
        let sum: u64 = functions.iter().map(|f| f["Ir"].as_u64().unwrap()).sum();
        assert!(sum <= ir && sum * 10 >= ir * 9, "{sum} of {ir}: {r}");
        // The loop passes values to `$f` in registers and keeps values across the call:
        // some of its instructions are moves and stack accesses, never more than all.
        for f in functions {
            let classed: u64 = ["moves", "stack_stores", "stack_loads"]
                .iter()
                .map(|k| f[k].as_u64().unwrap())
                .sum();
            assert!(classed <= f["Ir"].as_u64().unwrap(), "{f}");
        }
        let moves: u64 = functions.iter().map(|f| f["moves"].as_u64().unwrap()).sum();
        assert!(moves >= 1_000, "a move per call at least: {r}");
        // Most first.
        let counts: Vec<u64> = functions
            .iter()
            .map(|f| f["Ir"].as_u64().unwrap())
            .collect();
        assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{r}");
    }
    let table = text(&ragreedy(&["wasm", "count", "loop.wasm", "--by-function"], &dir).stdout);
    assert!(
        table.contains(
            "| module | function | greedy | ion | greedy / ion | greedy: moves / stores / loads | ion: moves / stores / loads |"
        ),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("| loop.wasm | wasm[0]::function[") && l.contains("::f |")),
        "{table}"
    );
}
