//! The text format: print → parse gives back every field the `Function` trait exposes and
//! the same environment, and printing again gives the same text, over the committed
//! Cranelift dump, thousands of regalloc2 fuzzer functions and Cranelift-shaped ones; a
//! hand-written case reads as written; malformed text gives a `ParseError` on the right
//! line, never a panic.

use ragreedy_testkit::builder::{TestFunc, env_difference, function_difference};
use ragreedy_testkit::check::check_output;
use ragreedy_testkit::fuzzgen::{SplitMix64, func_from_seed, stress_env, stress_options};
use ragreedy_testkit::text::{expectations, parse, print};
use ragreedy_testkit::{corpus, cranelift_like};
use regalloc2::{
    Block, Function, Inst, MachineEnv, Operand, OperandConstraint, OperandKind, OperandPos, PReg,
    RegClass, RegallocOptions, VReg,
};
use std::path::Path;

fn round_trip<F: Function>(name: &str, f: &F, env: &MachineEnv) {
    let text = print(f, env);
    let (parsed, penv) = parse(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    if let Some(d) = function_difference(f, &parsed) {
        panic!("{name}: parsed function differs in {d}\n{text}");
    }
    if let Some(d) = env_difference(env, &penv) {
        panic!("{name}: parsed environment differs in {d}\n{text}");
    }
    assert_eq!(print(&parsed, &penv), text, "{name}: second print differs");
}

#[test]
fn round_trip_cranelift_dump() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-programs/dump");
    let funcs = corpus::load_dir(&dir).expect("committed dump");
    assert!(funcs.len() >= 30, "only {} dumped functions", funcs.len());
    for (name, f) in &funcs {
        round_trip(name, f, f.machine_env());
    }
}

#[test]
fn round_trip_fuzz_functions() {
    let mut done = 0;
    let mut seed = 0;
    // Both environments `ragreedy stress` uses, and every option combination it cycles.
    while done < 3000 {
        let regs = [None, Some(2), Some(4)][(seed % 3) as usize];
        let opts = stress_options(seed, regs);
        if let Some(f) = func_from_seed(seed, &opts) {
            round_trip(&format!("seed {seed}"), &f, &stress_env(regs));
            done += 1;
        }
        seed += 1;
    }
}

#[test]
fn round_trip_cranelift_like() {
    let mut labels = 0;
    for seed in 0..300 {
        let f = cranelift_like::from_seed(seed);
        labels += f.debug_value_labels.len();
        let env = if seed % 2 == 0 {
            cranelift_like::x64_env()
        } else {
            cranelift_like::x64_env_k(3)
        };
        round_trip(&format!("cranelift-like {seed}"), &f, &env);
    }
    // These functions carry debug labels (the dump and the fuzzer's do not), so the
    // `debug` lines are exercised too.
    assert!(labels > 0);
}

const HAND_WRITTEN: &str = "\
; expect: ok
; expect: cost <= 40
env int preferred [p0i..p1i] non_preferred [p2i] scratch p3i
env float preferred [p0f] non_preferred []
env fixed_stack_slots [p60i]
func spillslot_size [1, 2, 1]

block0:
  def v0i reg, def v1f any
  i1: def v2i fixed p0i, use v0i reg late; clobbers [p1i, p0f]
  branch use v2i reg -> block1(), block2(v0i)
block1:
  ret use v1f any
block2(v3i):
  def v4i reuse(1), use v3i reg
  nonalloc p60i
  ret use v4i fixed p0i, use v1f stack
debug v3i from i3 to i5 label 9
";

/// What a person writes reads as meant: defaults for what is left out, operands in
/// order with their kinds, positions and constraints, and it allocates through the checker.
#[test]
fn hand_written_case_reads_as_written() {
    let (f, env) = parse(HAND_WRITTEN).expect("parses");
    let v = |n, c| VReg::new(n, c);
    let (i, fl) = (RegClass::Int, RegClass::Float);
    assert_eq!(f.num_blocks(), 3);
    assert_eq!(f.num_insts(), 7);
    assert_eq!(f.num_vregs(), 5, "one past the highest vreg named");
    assert_eq!(f.entry_block(), Block::new(0));
    assert_eq!(f.spillslot_size(RegClass::Float), 2);
    assert_eq!(
        f.block_succs(Block::new(0)),
        &[Block::new(1), Block::new(2)]
    );
    assert_eq!(f.block_preds(Block::new(2)), &[Block::new(0)], "derived");
    assert_eq!(f.block_params(Block::new(2)), &[v(3, i)]);
    assert_eq!(
        f.branch_blockparams(Block::new(0), Inst::new(2), 1),
        &[v(0, i)]
    );
    assert_eq!(
        f.inst_operands(Inst::new(1)),
        &[
            Operand::reg_fixed_def(v(2, i), PReg::new(0, i)),
            Operand::reg_use_at_end(v(0, i)),
        ]
    );
    assert_eq!(
        f.inst_clobbers(Inst::new(1))
            .into_iter()
            .collect::<Vec<_>>(),
        vec![PReg::new(1, i), PReg::new(0, fl)]
    );
    assert!(f.is_branch(Inst::new(2)) && f.is_ret(Inst::new(3)));
    assert_eq!(
        f.inst_operands(Inst::new(4)),
        &[
            Operand::reg_reuse_def(v(4, i), 1),
            Operand::reg_use(v(3, i))
        ]
    );
    assert_eq!(
        f.inst_operands(Inst::new(5)),
        &[Operand::fixed_nonallocatable(PReg::new(60, i))]
    );
    assert_eq!(
        f.inst_operands(Inst::new(6))[1],
        Operand::new(
            v(1, fl),
            OperandConstraint::Stack,
            OperandKind::Use,
            OperandPos::Early
        )
    );
    assert_eq!(
        f.debug_value_labels(),
        &[(v(3, i), Inst::new(3), Inst::new(5), 9)]
    );
    assert_eq!(env.scratch_by_class[0], Some(PReg::new(3, i)));
    assert_eq!(env.fixed_stack_slots, vec![PReg::new(60, i)]);
    assert!(env.non_preferred_regs_by_class[0].contains(PReg::new(2, i)));
    assert_eq!(
        env.preferred_regs_by_class[0]
            .into_iter()
            .collect::<Vec<_>>(),
        vec![PReg::new(0, i), PReg::new(1, i)]
    );
    assert_eq!(expectations(HAND_WRITTEN), vec!["ok", "cost <= 40"]);
    let out = regalloc2::run(&f, &env, &RegallocOptions::default()).expect("ion allocates");
    check_output(&f, &env, &out).expect("checker accepts ion's allocation");
    // What the printer makes of it reads back the same.
    round_trip("hand-written", &f, &env);
}

/// The example of docs/text-format.md parses, prints back exactly as written (it is in
/// the printer's form), and allocates through the checker.
#[test]
fn documented_example_is_canonical() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/text-format.md"),
    )
    .expect("docs/text-format.md");
    let start = doc.find("```\n").expect("a code block") + 4;
    let example = &doc[start..start + doc[start..].find("```").expect("its end")];
    let (f, env) = parse(example).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        print(&f, &env),
        example.trim_start_matches("; expect: ok\n")
    );
    assert_eq!(f.num_insts(), 6);
    let out = regalloc2::run(&f, &env, &RegallocOptions::default()).expect("ion allocates");
    check_output(&f, &env, &out).expect("checker accepts ion's allocation");
}

#[test]
fn malformed_text_names_its_line() {
    let base = "block0:\n  def v0i reg\n  ret use v0i reg\n";
    // (text, line, part of the message)
    let cases: &[(&str, usize, &str)] = &[
        ("block0:\n  def v0i reg $\n", 2, "unexpected character"),
        ("block0:\n  def v0i bogus\n", 2, "expected a constraint"),
        ("block0:\n  use v0i fixed p1f\n", 2, "not of v0i's class"),
        ("block0:\n\n; c\nblock2:\n", 4, "out of order"),
        (
            "block0:\n  ret\nblock1: preds [7]\n  ret\n",
            3,
            "block7 does not exist",
        ),
        (
            "block0:\n  branch -> block3()\n",
            2,
            "block3 does not exist",
        ),
        ("block0:\n  i1: ret\n", 2, "instruction label i1"),
        ("  ret\nblock0:\n", 1, "before the first block"),
        (
            "block0:\n  branch -> block0()\n  ret\n",
            3,
            "last instruction",
        ),
        (
            "block0:\n  def v1i reuse(32), use v0i reg\n",
            2,
            "reuse index 32",
        ),
        ("block0:\n  def v1i limit(3)\n", 2, "power of two"),
        ("block0:\n  def v1073741824i reg\n", 2, "above the maximum"),
        (
            "block0:\n  def v1i reg\n  use p3i reg\n",
            3,
            "expected a vreg",
        ),
        (
            "block0:\n  ret use v1i fixed p64i\n",
            2,
            "above the maximum 63",
        ),
        ("env int preferred [p0f]\n", 1, "listed under class"),
        ("env int preferred [p3i..p1i]\n", 1, "bad register range"),
        (
            "block0:\n  ret; clobbers [p0i..p2f]\n",
            2,
            "bad register range",
        ),
        ("func spillslot_size [1, 2]\n", 1, "needs 3 sizes"),
        (
            "block0:\nenv int preferred []\n",
            2,
            "before the first block",
        ),
        ("func entry block2\nblock0:\n  ret\n", 3, "entry block2"),
        (
            "block0: succs [1]\n  branch -> block2()\nblock1:\nblock2:\n",
            2,
            "disagree",
        ),
        ("block0:\n  def v0i reg; clobbers p0i\n", 2, "expected `[`"),
        ("block0:\n  def v0i reg; p0i\n", 2, "expected `clobbers`"),
        ("block0(v0i:\n", 1, "expected `,`"),
        ("block0:\n  ret use v0i reg,\n", 2, "expected an operand"),
        ("debug v0i from i0 label 1\nblock0:\n", 1, "expected `to`"),
        (
            "func num_vregs 99999999999999999999999\n",
            1,
            "out of range",
        ),
        ("; only a comment\n", 1, "no blocks"),
    ];
    for &(text, line, msg) in cases {
        match parse(text) {
            Ok(_) => panic!("parsed: {text:?}"),
            Err(e) => {
                assert_eq!(e.line, line, "{text:?}: {e}");
                assert!(e.message.contains(msg), "{text:?}: {e}");
                assert_eq!(e.to_string(), format!("line {line}: {}", e.message));
            }
        }
    }
    assert!(parse(base).is_ok());
}

/// Damaged versions of real printed functions (characters deleted, replaced, duplicated,
/// lines swapped) either parse or give an error on an existing line; none panics.
#[test]
fn damaged_text_never_panics() {
    let mut texts: Vec<String> = (0..20)
        .filter_map(|s| {
            func_from_seed(s, &stress_options(s, Some(3))).map(|f| print(&f, &stress_env(Some(3))))
        })
        .collect();
    texts.push(print(
        &cranelift_like::from_seed(1),
        &cranelift_like::x64_env(),
    ));
    texts.push(HAND_WRITTEN.to_string());
    let alphabet: Vec<char> = "vpi0123456789fblock(),[]:;->_. defusreg\n"
        .chars()
        .collect();
    let mut rng = SplitMix64(7);
    let (mut errors, mut oks) = (0, 0);
    for round in 0..4000 {
        let text = &texts[round % texts.len()];
        let mut chars: Vec<char> = text.chars().collect();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(chars.len() as u64) as usize;
            match rng.below(3) {
                0 => {
                    chars.remove(at);
                }
                1 => chars[at] = alphabet[rng.below(alphabet.len() as u64) as usize],
                _ => chars.insert(at, chars[at]),
            }
        }
        let damaged: String = chars.into_iter().collect();
        let lines = damaged.lines().count().max(1);
        match std::panic::catch_unwind(|| parse(&damaged)) {
            Ok(Ok((f, _))) => {
                oks += 1;
                // Whatever parsed must read as a `TestFunc` without panicking.
                let _ = TestFunc::from_function(&f);
            }
            Ok(Err(e)) => {
                errors += 1;
                assert!(e.line >= 1 && e.line <= lines, "{e} beyond {lines} lines");
            }
            Err(_) => panic!("parse panicked on:\n{damaged}"),
        }
    }
    // Both outcomes occur, so the damage reaches the parser's error paths and beyond.
    assert!(errors > 1000 && oks > 100, "errors {errors}, oks {oks}");
}
