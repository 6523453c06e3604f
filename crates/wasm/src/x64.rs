//! Just enough x86-64 decoding to tell an allocator's instructions in executed code: a move
//! from one register to another (64-bit general-purpose, or a whole vector or float
//! register), and a store to or a load from a slot addressed off `rsp` (spills, reloads,
//! the prologue's saves and the epilogue's restores of callee-saved registers, and the
//! outgoing arguments of calls). Anything else is [`Kind::Other`].
//!
//! Only the instruction at a given address is decoded, never a sweep: `wasm count` asks at
//! the addresses callgrind saw executed, which are instruction starts by construction, so
//! data inside a function (a jump table) cannot throw the decoding off as it throws off a
//! linear disassembly. A 32-bit `mov` between registers is a zero extension the lowering
//! asked for, not a copy, and counts as other.

/// What one instruction is, for the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A register-to-register move.
    Move,
    /// A store of a register to `N(%rsp)`.
    Store,
    /// A load of a register from `N(%rsp)`.
    Load,
    Other,
}

/// The operand a ModRM byte names in its r/m field.
enum Rm {
    Register,
    Stack,
    Memory,
}

/// The r/m operand of the ModRM byte at `code[0]` (a SIB byte may follow), with `rex_b`
/// extending the base register: `rsp` as a base can only be written with a SIB byte.
fn rm_operand(code: &[u8], rex_b: bool) -> Option<Rm> {
    let modrm = *code.first()?;
    if modrm >> 6 == 3 {
        return Some(Rm::Register);
    }
    if modrm & 7 != 4 {
        return Some(Rm::Memory);
    }
    let sib = *code.get(1)?;
    let no_index = (sib >> 3) & 7 == 4;
    // With mod 00, base 101 means no base at all (an absolute displacement).
    let base_rsp = sib & 7 == 4 && !rex_b;
    Some(if base_rsp && no_index {
        Rm::Stack
    } else {
        Rm::Memory
    })
}

/// The kind of the instruction starting at `code[0]`.
pub fn classify(code: &[u8]) -> Kind {
    decode(code).unwrap_or(Kind::Other)
}

fn decode(code: &[u8]) -> Option<Kind> {
    let mut i = 0;
    // The last of 66/F2/F3 selects among the SSE moves.
    let mut mandatory = 0u8;
    while let Some(&b) = code.get(i) {
        match b {
            0x66 | 0xF2 | 0xF3 => mandatory = b,
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x67 | 0xF0 => {}
            _ => break,
        }
        i += 1;
    }
    let (wide, rex_r, rex_b, opcode_map, opcode, rest) = match *code.get(i)? {
        rex @ 0x40..=0x4F => {
            let (map, op, rest) = opcode_at(code, i + 1)?;
            (rex & 8 != 0, rex & 4 != 0, rex & 1 != 0, map, op, rest)
        }
        // Two-byte VEX: map 0F, no B, W 0; `pp` gives the mandatory prefix.
        0xC5 => {
            let p = *code.get(i + 1)?;
            mandatory = vex_prefix(p);
            (false, p & 0x80 == 0, false, 1, *code.get(i + 2)?, i + 3)
        }
        // Three-byte VEX: B (inverted) and the map in the first byte, W and `pp` after.
        0xC4 => {
            let (p1, p2) = (*code.get(i + 1)?, *code.get(i + 2)?);
            mandatory = vex_prefix(p2);
            (
                p2 & 0x80 != 0,
                p1 & 0x80 == 0,
                p1 & 0x20 == 0,
                p1 & 0x1F,
                *code.get(i + 3)?,
                i + 4,
            )
        }
        _ => {
            let (map, op, rest) = opcode_at(code, i)?;
            (false, false, false, map, op, rest)
        }
    };
    let rm = rm_operand(code.get(rest..)?, rex_b)?;
    // (register to register counts, loads from r/m)
    let (gpr, load_form) = match (opcode_map, opcode, mandatory) {
        (0, 0x89, 0) => (true, false),
        (0, 0x8B, 0) => (true, true),
        // movups/movupd/movss/movsd, movaps/movapd, movdqa/movdqu, movq.
        (1, 0x10, _) | (1, 0x28, 0 | 0x66) | (1, 0x6F, 0x66 | 0xF3) | (1, 0x7E, 0xF3) => {
            (false, true)
        }
        (1, 0x11, _) | (1, 0x29, 0 | 0x66) | (1, 0x7F, 0x66 | 0xF3) | (1, 0xD6, 0x66) => {
            (false, false)
        }
        _ => return Some(Kind::Other),
    };
    // The frame's own moves (`mov %rsp,%rbp` and back) are the prologue's, not copies.
    let frame = || {
        let modrm = code[rest];
        let reg = ((modrm >> 3) & 7) | (u8::from(rex_r) << 3);
        let rm = (modrm & 7) | (u8::from(rex_b) << 3);
        [reg, rm].iter().any(|&r| r == 4 || r == 5)
    };
    Some(match rm {
        Rm::Register if gpr && frame() => Kind::Other,
        Rm::Register if !gpr || wide => Kind::Move,
        Rm::Register | Rm::Memory => Kind::Other,
        Rm::Stack if load_form => Kind::Load,
        Rm::Stack => Kind::Store,
    })
}

/// The opcode at `code[i]`: (map, opcode, index of the ModRM byte); map 1 is `0F xx`.
fn opcode_at(code: &[u8], i: usize) -> Option<(u8, u8, usize)> {
    match *code.get(i)? {
        0x0F => Some((1, *code.get(i + 1)?, i + 2)),
        op => Some((0, op, i + 1)),
    }
}

/// The legacy prefix a VEX `pp` field stands for.
fn vex_prefix(byte: u8) -> u8 {
    [0, 0x66, 0xF3, 0xF2][(byte & 3) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings as Cranelift emits them (from `objdump -d` of compiled Sightglass modules).
    #[test]
    fn the_moves_spills_and_reloads_cranelift_emits() {
        let cases: &[(&[u8], Kind, &str)] = &[
            (&[0x4d, 0x89, 0xd3], Kind::Move, "mov %r10,%r11"),
            (&[0x4c, 0x89, 0xd0], Kind::Move, "mov %r10,%rax"),
            (&[0x48, 0x8b, 0xc1], Kind::Move, "mov %rcx,%rax (load form)"),
            (
                &[0x89, 0xd2],
                Kind::Other,
                "mov %edx,%edx: a zero extension",
            ),
            (&[0x41, 0x89, 0xc4], Kind::Other, "mov %eax,%r12d"),
            (
                &[0x4c, 0x89, 0x54, 0x24, 0x10],
                Kind::Store,
                "mov %r10,0x10(%rsp)",
            ),
            (
                &[0x4c, 0x89, 0x94, 0x24, 0x40, 0x17, 0x00, 0x00],
                Kind::Store,
                "mov %r10,0x1740(%rsp)",
            ),
            (&[0x89, 0x14, 0x24], Kind::Store, "mov %edx,(%rsp)"),
            (&[0x48, 0x8b, 0x04, 0x24], Kind::Load, "mov (%rsp),%rax"),
            (
                &[0x4c, 0x8b, 0x64, 0x24, 0x08],
                Kind::Load,
                "mov 0x8(%rsp),%r12",
            ),
            (
                &[0x4d, 0x89, 0x14, 0x0b],
                Kind::Other,
                "mov %r10,(%r11,%rcx,1)",
            ),
            (
                &[0x4d, 0x89, 0x54, 0x0b, 0x10],
                Kind::Other,
                "mov %r10,0x10(%r11,%rcx,1)",
            ),
            // r12 as a base also needs a SIB byte: REX.B tells it from rsp.
            (&[0x49, 0x8b, 0x04, 0x24], Kind::Other, "mov (%r12),%rax"),
            (&[0x0f, 0x28, 0xca], Kind::Move, "movaps %xmm2,%xmm1"),
            (&[0x66, 0x0f, 0x6f, 0xf1], Kind::Move, "movdqa %xmm1,%xmm6"),
            (
                &[0xf3, 0x44, 0x0f, 0x7f, 0x44, 0x24, 0x50],
                Kind::Store,
                "movdqu %xmm8,0x50(%rsp)",
            ),
            (
                &[0xc5, 0xfb, 0x11, 0x04, 0x24],
                Kind::Store,
                "vmovsd %xmm0,(%rsp)",
            ),
            (
                &[0xc4, 0xc1, 0x7b, 0x11, 0x54, 0x3d, 0x00],
                Kind::Other,
                "vmovsd %xmm2,0x0(%r13,%rdi,1)",
            ),
            (
                &[0x66, 0x48, 0x0f, 0x6e, 0xc9],
                Kind::Other,
                "movq %rcx,%xmm1",
            ),
            (&[0x48, 0x8d, 0x04, 0x24], Kind::Other, "lea (%rsp),%rax"),
            (&[0x55], Kind::Other, "push %rbp"),
            (&[0x48, 0x89, 0xe5], Kind::Other, "mov %rsp,%rbp: the frame"),
            (&[0x48, 0x89, 0xec], Kind::Other, "mov %rbp,%rsp: the frame"),
            (&[0x49, 0x89, 0xe4], Kind::Other, "mov %rsp,%r12"),
            // r12 and r13 share rsp's and rbp's low bits: REX tells them apart.
            (&[0x4d, 0x89, 0xec], Kind::Move, "mov %r13,%r12"),
            (&[], Kind::Other, "nothing"),
            (&[0x4c, 0x89], Kind::Other, "cut short"),
        ];
        for &(code, want, what) in cases {
            assert_eq!(classify(code), want, "{what}");
        }
    }
}
