//! A CLIF file's functions compiled into one cranelift-jit module, under whatever allocator the
//! regalloc2 switch selects on this thread, and called through [`trampoline`]s. This is the one
//! place that builds JIT modules: the `test run` runner ([`crate::runner`]) and the CLI's code
//! speed measurement both compile and call through [`Program`].
//!
//! Linking follows Cranelift's filetest rules: a `%name` call reaches the caller itself when
//! the name is its own, else the first function of the file with that name (names may repeat).
//! The float libcalls Cranelift emits without SSE4.1/FMA resolve to this crate's own
//! (`libm.rs`), whether or not the process links libm.

use crate::{libm, trampoline};
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{ExternalName, Function, Signature, UserExternalName, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};

/// The name a run line uses for a function (`%name` without the `%`).
pub fn func_key(name: &UserFuncName) -> String {
    let s = name.to_string();
    s.strip_prefix('%').map(str::to_owned).unwrap_or(s)
}

/// The first function of the file named `name` (without `%`).
pub fn find_function(functions: &[Function], name: &str) -> Option<usize> {
    functions.iter().position(|f| func_key(&f.name) == name)
}

/// The function a call by `name` from function `caller` reaches: the caller itself when the
/// name is its own (so a recursive function whose name is shared recurses into itself), else
/// the first function of the file with that name. The JIT and the interpreter resolve alike.
pub fn resolve_callee(functions: &[Function], caller: usize, name: &str) -> Option<usize> {
    if func_key(&functions[caller].name) == name {
        return Some(caller);
    }
    find_function(functions, name)
}

/// A compiled file. The module's memory is freed when the `Program` is dropped.
pub struct Program {
    /// `Some` until dropped (freeing the memory consumes the module).
    module: Option<JITModule>,
    signatures: Vec<Signature>,
    /// Per function of the file, in file order: its code and the trampoline for its
    /// signature, for the functions compiled to be called.
    entries: Vec<Option<Entry>>,
    /// Bytes of machine code compiled: every function of the file and every trampoline.
    code_bytes: u64,
}

#[derive(Clone, Copy)]
struct Entry {
    callee: *const u8,
    trampoline: *const u8,
}

impl Program {
    /// Compile `functions` (a file's, in file order) for `isa`, with a trampoline for each
    /// signature among the functions at the indices `entries` (the ones [`Program::call`] may
    /// call).
    pub fn compile(
        isa: OwnedTargetIsa,
        functions: &[Function],
        entries: &[usize],
    ) -> Result<Program, String> {
        let mut builder =
            JITBuilder::with_isa(isa.clone(), cranelift_module::default_libcall_names());
        builder.symbol_lookup_fn(Box::new(libm::symbol));
        let mut module = JITModule::new(builder);

        // Symbols are numbered, not named after the functions: names may repeat in a file.
        let mut ids = Vec::with_capacity(functions.len());
        for (index, func) in functions.iter().enumerate() {
            let key = func_key(&func.name);
            let id = module
                .declare_function(
                    &format!("__ragreedy_{index}_{key}"),
                    Linkage::Local,
                    &func.signature,
                )
                .map_err(|e| format!("declaring %{key}: {e}"))?;
            ids.push(id);
        }
        let signatures: Vec<Signature> = functions.iter().map(|f| f.signature.clone()).collect();

        let mut code_bytes = 0;
        let mut trampolines: Vec<(Signature, FuncId)> = Vec::new();
        for &index in entries {
            let sig = &signatures[index];
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
            code_bytes += compiled_size(&ctx);
            trampolines.push((sig.clone(), id));
        }

        for (index, func) in functions.iter().enumerate() {
            let key = func_key(&func.name);
            let func = link_names(functions, index, &ids)?;
            let mut ctx = cranelift_codegen::Context::for_function(func);
            module
                .define_function(ids[index], &mut ctx)
                .map_err(|e| format!("compiling %{key}: {}", module_error(&e)))?;
            code_bytes += compiled_size(&ctx);
        }
        module
            .finalize_definitions()
            .map_err(|e| format!("finalizing: {e}"))?;

        let mut table: Vec<Option<Entry>> = vec![None; functions.len()];
        for &index in entries {
            let (_, tramp) = trampolines
                .iter()
                .find(|(s, _)| *s == signatures[index])
                .expect("a trampoline per entry signature");
            table[index] = Some(Entry {
                callee: module.get_finalized_function(ids[index]),
                trampoline: module.get_finalized_function(*tramp),
            });
        }
        Ok(Program {
            module: Some(module),
            signatures,
            entries: table,
            code_bytes,
        })
    }

    /// Bytes of machine code compiled for the program: its functions and trampolines.
    pub fn code_bytes(&self) -> u64 {
        self.code_bytes
    }

    /// Call function `index` of the file with `args` (checked against its signature).
    pub fn call(&self, index: usize, args: &[DataValue]) -> Result<Vec<DataValue>, String> {
        let entry = self
            .entries
            .get(index)
            .copied()
            .flatten()
            .ok_or_else(|| format!("function {index} was not compiled as an entry"))?;
        // SAFETY: both pointers are finalized functions of this program's module, which lives
        // as long as `self`; the trampoline was built for `signatures[index]`, the callee's
        // signature, and `call` checks the argument types against it.
        unsafe {
            trampoline::call(
                entry.trampoline,
                entry.callee,
                &self.signatures[index],
                args,
            )
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the only pointers into the module's code are in `self.entries`, which
            // goes away with `self`; `call` hands none of them out.
            unsafe { module.free_memory() };
        }
    }
}

/// cranelift-module resolves calls by `UserExternalName { namespace: 0, index: FuncId }`: rename
/// the function and its `%name` references to that scheme. Calls are made non-colocated because
/// JIT code and its callees need not be within ±2 GiB of each other.
fn link_names(functions: &[Function], index: usize, ids: &[FuncId]) -> Result<Function, String> {
    let mut func = functions[index].clone();
    func.name = UserFuncName::User(UserExternalName::new(0, ids[index].as_u32()));
    let refs: Vec<_> = func.dfg.ext_funcs.keys().collect();
    for r in refs {
        let target = match &func.dfg.ext_funcs[r].name {
            ExternalName::TestCase(tc) => {
                let callee = String::from_utf8_lossy(tc.raw()).into_owned();
                let c = resolve_callee(functions, index, &callee)
                    .ok_or_else(|| format!("calls %{callee}, which the file does not define"))?;
                Some(ids[c])
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

/// The size of the code `ctx` was just compiled to.
fn compiled_size(ctx: &cranelift_codegen::Context) -> u64 {
    ctx.compiled_code()
        .map_or(0, |c| u64::from(c.code_info().total_size))
}
