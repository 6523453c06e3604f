//! `Program`, the one way this crate builds JIT modules, on a program that calls libm: this
//! test process does not link libm, so the calls resolve only through the JIT's own lookup.
//! The runner (`ragreedy run`) and direct use (`ragreedy compare --run`) must both pass it.

use cranelift_codegen::data_value::DataValue;
use cranelift_reader::{ParseOptions, parse_test};
use ragreedy_jit::program::find_function;
use ragreedy_jit::{Allocator, Program, host, run_source};

const LIBM: &str = include_str!("filetests/libm_calls.clif");

#[test]
fn libm_calls_pass_the_runner() {
    for alloc in [Allocator::Greedy, Allocator::Ion] {
        let r = alloc.with(|| run_source("libm_calls.clif", LIBM));
        assert_eq!(
            (r.passed, r.failed, r.skipped),
            (3, 0, 0),
            "{alloc}: {:#?}",
            r.failures
        );
    }
}

#[test]
fn libm_calls_pass_a_program_compiled_directly() {
    let (rewritten, header) = host::rewrite_header(LIBM);
    let test = parse_test(&rewritten, ParseOptions::default()).unwrap();
    let isa = host::first_runnable(&test.isa_spec, &header, false).unwrap();
    let functions: Vec<_> = test.functions.into_iter().map(|(f, _)| f).collect();
    let entry = find_function(&functions, "libm_rounding").unwrap();
    for alloc in [Allocator::Greedy, Allocator::Ion] {
        let program = alloc
            .with(|| Program::compile(isa.clone(), &functions, &[entry]))
            .unwrap_or_else(|e| panic!("{alloc}: {e}"));
        let got = program.call(entry, &[DataValue::I64(1000)]).unwrap();
        assert_eq!(got, [DataValue::I64(750)], "{alloc}");
        assert!(
            program.call(entry, &[]).is_err(),
            "{alloc}: arity unchecked"
        );
    }
}

/// A shifted compilation is the plain one with `b` bytes more per function it compiled
/// (the file's functions and the trampoline; exactly so for shifts that keep the constant
/// pool's alignment), and runs the same; the shift ends with its
/// compilation, also when that panics.
#[test]
fn a_layout_shift_pads_every_function_and_keeps_the_result() {
    use ragreedy_jit::layout::{SUPPORTED, with_layout_shift};
    if !SUPPORTED {
        return;
    }
    let (rewritten, header) = host::rewrite_header(LIBM);
    let test = parse_test(&rewritten, ParseOptions::default()).unwrap();
    let isa = host::first_runnable(&test.isa_spec, &header, false).unwrap();
    let functions: Vec<_> = test.functions.into_iter().map(|(f, _)| f).collect();
    let entry = find_function(&functions, "libm_rounding").unwrap();
    // The file's functions and one trampoline.
    let compiled = functions.len() as u64 + 1;
    for alloc in [Allocator::Greedy, Allocator::Ion] {
        let compile = || {
            alloc
                .with(|| Program::compile(isa.clone(), &functions, &[entry]))
                .unwrap_or_else(|e| panic!("{alloc}: {e}"))
        };
        let plain = compile();
        for shift in [3, 16, 41, 48] {
            let shifted = with_layout_shift(shift, compile);
            // A constant pool after the code is aligned to 16 bytes: with shifts of
            // other sizes some padding is absorbed by that alignment.
            if shift % 16 == 0 {
                assert_eq!(
                    shifted.code_bytes(),
                    plain.code_bytes() + u64::from(shift) * compiled,
                    "{alloc}, {shift} bytes"
                );
            } else {
                assert!(
                    shifted.code_bytes() > plain.code_bytes(),
                    "{alloc}, {shift} bytes"
                );
            }
            let got = shifted.call(entry, &[DataValue::I64(1000)]).unwrap();
            assert_eq!(got, [DataValue::I64(750)], "{alloc}, {shift} bytes");
        }
        let panicked = std::panic::catch_unwind(|| with_layout_shift(16, || panic!("in body")));
        assert!(panicked.is_err());
        assert_eq!(compile().code_bytes(), plain.code_bytes(), "{alloc}");
    }
}
