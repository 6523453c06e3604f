//! Small WAT programs of our own for the Wasm tests, with the results they must produce computed
//! independently in Rust.

#![allow(dead_code)]

use std::path::PathBuf;

/// Multiplier of the mixing helper (the golden-ratio constant, as a signed i64).
const K: i64 = 0x9E37_79B9_7F4A_7C15_u64 as i64;

/// A loop keeping `n` i64 values live across every iteration, with a call in the loop body (so
/// values must live across a clobbering call) and a final xor of all of them.
pub fn live_values_module(n: usize, iterations: u32, bench: bool) -> String {
    let mut s = String::from("(module\n");
    s.push_str(
        "  (import \"wasi_snapshot_preview1\" \"fd_write\" (func $fd_write (param i32 i32 i32 i32) (result i32)))\n",
    );
    if bench {
        s.push_str("  (import \"bench\" \"start\" (func $bench_start))\n");
        s.push_str("  (import \"bench\" \"end\" (func $bench_end))\n");
    }
    s.push_str("  (memory (export \"memory\") 1)\n");
    s.push_str(&format!(
        "  (func $mix (param $x i64) (param $y i64) (result i64)\n    (i64.mul (i64.xor (local.get $x) (local.get $y)) (i64.const {K})))\n"
    ));
    s.push_str(PRINT_FUNC);
    s.push_str("  (func $compute (result i64)\n    (local $i i32) (local $acc i64)\n");
    for k in 0..n {
        s.push_str(&format!("    (local $a{k} i64)\n"));
    }
    for k in 0..n {
        s.push_str(&format!(
            "    (local.set $a{k} (i64.const {}))\n",
            k as i64 * 7 + 1
        ));
    }
    s.push_str(&format!(
        "    (local.set $i (i32.const {iterations}))\n    (loop $l\n"
    ));
    for k in 0..n {
        let next = (k + 1) % n;
        s.push_str(&format!(
            "      (local.set $a{k} (i64.add (i64.add (i64.mul (local.get $a{k}) (i64.const 31)) (local.get $a{next})) (i64.const {k})))\n"
        ));
    }
    s.push_str("      (local.set $a0 (call $mix (local.get $a0) (local.get $a1)))\n");
    s.push_str(
        "      (local.set $i (i32.sub (local.get $i) (i32.const 1)))\n      (br_if $l (local.get $i)))\n",
    );
    s.push_str("    (local.set $acc (i64.const 0))\n");
    for k in 0..n {
        s.push_str(&format!(
            "    (local.set $acc (i64.xor (local.get $acc) (local.get $a{k})))\n"
        ));
    }
    s.push_str("    (local.get $acc))\n");
    s.push_str("  (func (export \"_start\")\n");
    if bench {
        s.push_str(
            "    (call $bench_start)\n    (call $print (call $compute))\n    (call $bench_end))\n",
        );
    } else {
        s.push_str("    (call $print (call $compute)))\n");
    }
    s.push_str(")\n");
    s
}

/// What [`live_values_module`] prints: the same computation in Rust, then a newline.
pub fn live_values_expected(n: usize, iterations: u32) -> String {
    let mut a: Vec<i64> = (0..n).map(|k| k as i64 * 7 + 1).collect();
    for _ in 0..iterations {
        for k in 0..n {
            let next = a[(k + 1) % n];
            a[k] = a[k]
                .wrapping_mul(31)
                .wrapping_add(next)
                .wrapping_add(k as i64);
        }
        a[0] = (a[0] ^ a[1]).wrapping_mul(K);
    }
    let acc = a.iter().fold(0i64, |x, &y| x ^ y);
    format!("{}\n", acc as u64)
}

/// `$print`: an unsigned decimal and a newline on stdout (digits built backwards from byte 100,
/// the iovec at 0, the written count at 8).
const PRINT_FUNC: &str = r#"  (func $print (param $v i64) (local $p i32)
    (local.set $p (i32.const 100))
    (i32.store8 (i32.const 100) (i32.const 10))
    (loop $d
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p)
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10)))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $d (i64.ne (local.get $v) (i64.const 0))))
    (i32.store (i32.const 0) (local.get $p))
    (i32.store (i32.const 4) (i32.sub (i32.const 101) (local.get $p)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
"#;

/// A fresh, empty folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch folder");
    dir
}

/// Write `wat` as a binary module at `path`.
pub fn write_module(path: &std::path::Path, wat: &str) {
    let bytes = wat::parse_str(wat).expect("valid WAT");
    std::fs::write(path, bytes).expect("write module");
}
