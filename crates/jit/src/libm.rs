//! The float libcalls Cranelift emits on x86_64 without SSE4.1 or FMA (`ceil`, `floor`,
//! `trunc`, `nearbyint`, `fma` and their `f32` forms), as Rust functions. Every JIT module
//! links them through [`symbol`], and the interpreter oracle computes its libcalls with the same
//! functions, so the two agree bit for bit.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::LibCall;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_interpreter::interpreter::LibCallValues;
use cranelift_interpreter::step::CraneliftTrap;

/// The interpreter's libcall handler: the float libcalls a CLIF function may name explicitly,
/// computed by the functions the JIT links ([`symbol`]); any other libcall traps.
pub(crate) fn interpreter_libcall(
    libcall: LibCall,
    args: LibCallValues,
) -> Result<LibCallValues, CraneliftTrap> {
    use DataValue::{F32, F64};
    let f32v = |x: f32| F32(Ieee32::with_float(x));
    let f64v = |x: f64| F64(Ieee64::with_float(x));
    let v = match (libcall, &args[..]) {
        (LibCall::CeilF32, [F32(a)]) => f32v(ceil_f32(a.as_f32())),
        (LibCall::CeilF64, [F64(a)]) => f64v(ceil_f64(a.as_f64())),
        (LibCall::FloorF32, [F32(a)]) => f32v(floor_f32(a.as_f32())),
        (LibCall::FloorF64, [F64(a)]) => f64v(floor_f64(a.as_f64())),
        (LibCall::TruncF32, [F32(a)]) => f32v(trunc_f32(a.as_f32())),
        (LibCall::TruncF64, [F64(a)]) => f64v(trunc_f64(a.as_f64())),
        (LibCall::NearestF32, [F32(a)]) => f32v(nearest_f32(a.as_f32())),
        (LibCall::NearestF64, [F64(a)]) => f64v(nearest_f64(a.as_f64())),
        (LibCall::FmaF32, [F32(a), F32(b), F32(c)]) => {
            f32v(fma_f32(a.as_f32(), b.as_f32(), c.as_f32()))
        }
        (LibCall::FmaF64, [F64(a), F64(b), F64(c)]) => {
            f64v(fma_f64(a.as_f64(), b.as_f64(), c.as_f64()))
        }
        _ => return Err(CraneliftTrap::UnreachableCodeReached),
    };
    Ok(std::iter::once(v).collect())
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

/// The address of the libcall `name`, for cranelift-jit's symbol lookup: the dynamic loader
/// does not find libm's in the process.
pub(crate) fn symbol(name: &str) -> Option<*const u8> {
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
