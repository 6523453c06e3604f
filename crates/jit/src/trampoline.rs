//! Per-signature trampolines, as Cranelift's own filetest runner builds them: a CLIF function
//! `(callee: ptr, values: ptr)` that loads each argument from a 16-byte slot of `values`, calls
//! `callee` with the target signature, and stores the results back into the same slots. One
//! native signature (`extern "C" fn(*const u8, *mut u128)`) then reaches any CLIF signature:
//! i8..i128, floats, vectors, several returns, any calling convention.

use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::InstBuilder;
use cranelift_codegen::ir::{
    self, AbiParam, Endianness, Function, MemFlagsData, Signature, UserFuncName,
};
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

/// Bytes per value slot: room for the widest scalar or vector a run line can pass.
pub const SLOT_SIZE: usize = 16;

/// The trampoline for `signature`, named `name`.
pub fn make_trampoline(name: UserFuncName, signature: &Signature, isa: &dyn TargetIsa) -> Function {
    let ptr = isa.pointer_type();
    let mut wrapper_sig = Signature::new(isa.default_call_conv());
    wrapper_sig.params.push(AbiParam::new(ptr));
    wrapper_sig.params.push(AbiParam::new(ptr));
    let mut func = Function::with_name_signature(name, wrapper_sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let block0 = b.create_block();
    b.append_block_params_for_function_params(block0);
    b.switch_to_block(block0);
    b.seal_block(block0);
    let (callee, values) = {
        let params = b.func.dfg.block_params(block0);
        (params[0], params[1])
    };
    // DataValue stores vectors little-endian whatever the target, so say so explicitly.
    let flags_for = |ty: ir::Type| {
        let mut flags = MemFlagsData::trusted();
        if ty.is_vector() {
            flags.set_endianness(Endianness::Little);
        }
        flags
    };
    let args: Vec<ir::Value> = signature
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            b.ins().load(
                p.value_type,
                flags_for(p.value_type),
                values,
                (i * SLOT_SIZE) as i32,
            )
        })
        .collect();
    let sig_ref = b.import_signature(signature.clone());
    let call = b.ins().call_indirect(sig_ref, callee, &args);
    let results = b.func.dfg.inst_results(call).to_vec();
    for (i, (v, r)) in results.iter().zip(&signature.returns).enumerate() {
        b.ins()
            .store(flags_for(r.value_type), *v, values, (i * SLOT_SIZE) as i32);
    }
    b.ins().return_(&[]);
    b.finalize(isa.frontend_config());
    func
}

/// Call `callee` (a finalized function with `signature`) through its finalized `trampoline`.
///
/// # Safety
/// `trampoline` must be the finalized code of `make_trampoline(.., signature, ..)` and `callee`
/// the finalized code of a function with exactly `signature`; `args` must match its parameters
/// (checked here, since a mismatch would read garbage).
pub unsafe fn call(
    trampoline: *const u8,
    callee: *const u8,
    signature: &Signature,
    args: &[DataValue],
) -> Result<Vec<DataValue>, String> {
    if args.len() != signature.params.len() {
        return Err(format!(
            "{} arguments given, the signature takes {}",
            args.len(),
            signature.params.len()
        ));
    }
    for (i, (a, p)) in args.iter().zip(&signature.params).enumerate() {
        // Run lines type vector literals as i8x16; any 128-bit vector fits a vector slot.
        let same_vector =
            a.ty().is_vector() && p.value_type.is_vector() && a.ty().bits() == p.value_type.bits();
        if a.ty() != p.value_type && !same_vector {
            return Err(format!(
                "argument {i} is {} but the parameter is {}",
                a.ty(),
                p.value_type
            ));
        }
    }
    let mut slots = vec![0u128; signature.params.len().max(signature.returns.len())];
    for (slot, a) in slots.iter_mut().zip(args) {
        // SAFETY: each slot is a valid, aligned u128.
        unsafe { a.write_value_to(slot) };
    }
    // SAFETY: per this function's contract the trampoline has this native signature (the host's
    // default calling convention is the C one).
    let f: extern "C" fn(*const u8, *mut u128) = unsafe { std::mem::transmute(trampoline) };
    f(callee, slots.as_mut_ptr());
    Ok(signature
        .returns
        .iter()
        .zip(&slots)
        // SAFETY: the trampoline stored a value of this type in the slot.
        .map(|(r, slot)| unsafe { DataValue::read_value_from(slot, r.value_type) })
        .collect())
}
