//! Fuzz-input helpers around `regalloc2::fuzzing::func::Func`: the options ion's own fuzzer
//! uses ([`fuzz_options`]), deterministic functions from a seed ([`func_from_seed`], bytes
//! from a SplitMix64 stream), and smaller register files ([`restrict_env`]) so that
//! eviction, splitting and spilling run on every input, not only on the rare big one.
//!
//! Everything here is deterministic: the same seed gives the same function on every machine,
//! which is what lets smoke tests and the `fuzz` corpus of docs/metrics.md name inputs by seed.

use arbitrary::Unstructured;
use regalloc2::fuzzing::func::{Func, Options};
use regalloc2::{MachineEnv, PReg, PRegSet};

pub use regalloc2::fuzzing::func::machine_env;

/// The options of regalloc2's ion fuzzer: reused inputs, fixed registers, fixed
/// non-allocatable operands, clobbers and callsite-ish constraints (`reftypes` is inert in
/// regalloc2 0.15 and left off).
pub fn fuzz_options() -> Options {
    Options {
        reused_inputs: true,
        fixed_regs: true,
        fixed_nonallocatable: true,
        clobbers: true,
        callsite_ish_constraints: true,
        ..Options::DEFAULT
    }
}

/// Every combination of the five boolean options, for targets that must cover them all:
/// index bits 0..5 = reused_inputs, fixed_regs, fixed_nonallocatable, clobbers,
/// callsite_ish_constraints.
pub fn options_combination(bits: u8) -> Options {
    Options {
        reused_inputs: bits & 1 != 0,
        fixed_regs: bits & 2 != 0,
        fixed_nonallocatable: bits & 4 != 0,
        clobbers: bits & 8 != 0,
        callsite_ish_constraints: bits & 16 != 0,
        ..Options::DEFAULT
    }
}

/// SplitMix64: tiny, fast, and good enough to feed `arbitrary` (no statistical claims).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `n` pseudo-random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        v.truncate(n);
        v
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Bytes fed to `Func::arbitrary_with_options` by [`func_from_seed`].
pub const SEED_BYTES: usize = 8192;

/// The deterministic byte string of a seed (what [`func_from_seed`] parses).
pub fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    SplitMix64(seed).bytes(len)
}

/// A `Func` from `seed`, or `None` when the generator rejects those bytes (it does for
/// roughly two thirds of random byte strings, e.g. when no vreg of a block param's class is
/// available for a branch argument).
pub fn func_from_seed(seed: u64, opts: &Options) -> Option<Func> {
    let bytes = seed_bytes(seed, SEED_BYTES);
    Func::arbitrary_with_options(&mut Unstructured::new(&bytes), opts).ok()
}

/// The first valid `Func` at or after `seed` (tries at most 64 seeds), with the seed used.
pub fn next_func(seed: u64, opts: &Options) -> Option<(u64, Func)> {
    (seed..seed.saturating_add(64)).find_map(|s| func_from_seed(s, opts).map(|f| (s, f)))
}

/// `env` with at most `k` allocatable registers per class: about a quarter of them
/// non-preferred (taken from the lowest-numbered non-preferred registers), the rest
/// preferred (lowest-numbered preferred registers); falls back to the other set when one
/// runs short. Scratch registers and fixed stack slots are kept.
///
/// Registers dropped from the allocatable sets stay legal as *fixed* operands (regalloc2
/// allows fixed constraints on non-allocatable registers), so every `Func` of `machine_env`
/// stays a valid input in the restricted environment.
pub fn restrict_env(env: &MachineEnv, k: usize) -> MachineEnv {
    let mut out = env.clone();
    for c in 0..3 {
        let pref: Vec<PReg> = env.preferred_regs_by_class[c].into_iter().collect();
        let nonpref: Vec<PReg> = env.non_preferred_regs_by_class[c].into_iter().collect();
        let mut n_np = (k / 4).min(nonpref.len());
        let n_p = (k - n_np).min(pref.len());
        n_np = (k - n_p).min(nonpref.len());
        out.preferred_regs_by_class[c] = pref[..n_p].iter().copied().collect::<PRegSet>();
        out.non_preferred_regs_by_class[c] = nonpref[..n_np].iter().copied().collect::<PRegSet>();
    }
    out
}

/// Function-generator options for small environments: like [`fuzz_options`] but with at
/// most `k - 1` uses per instruction, so that an instruction's register-constrained uses
/// fit in `k` registers (otherwise most inputs would be trivially unallocatable).
pub fn small_env_options(k: usize) -> Options {
    Options {
        num_uses_per_inst: 0..=k.saturating_sub(1).min(10),
        ..fuzz_options()
    }
}

/// The generator options `ragreedy stress` (and `ablate`) use for `seed` with `regs`
/// allocatable registers per class (`None`: the full environment): ion's fuzzer options
/// (fewer uses per instruction in small environments), and on every fourth seed (4k + 3)
/// one of the 32 combinations of the boolean options in turn.
pub fn stress_options(seed: u64, regs: Option<usize>) -> Options {
    let base = match regs {
        Some(k) => small_env_options(k),
        None => fuzz_options(),
    };
    if seed % 4 == 3 {
        Options {
            num_uses_per_inst: base.num_uses_per_inst.clone(),
            ..options_combination((seed / 4 % 32) as u8)
        }
    } else {
        base
    }
}

/// The environment `ragreedy stress` uses with `regs` allocatable registers per class.
pub fn stress_env(regs: Option<usize>) -> MachineEnv {
    match regs {
        Some(k) => restrict_env(&machine_env(), k),
        None => machine_env(),
    }
}
