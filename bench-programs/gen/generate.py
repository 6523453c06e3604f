#!/usr/bin/env python3
"""Writes the CLIF benchmark programs of bench-programs/ and their `; run:` expectations.

Each program is emitted by a small builder and paired with a plain-Python reference that
computes the expected results independently of Cranelift (wrapping 64-bit integer semantics,
IEEE-754 binary64 floats, binary32 through exact rounding of binary64 results). Run from the
repository root: `python3 bench-programs/gen/generate.py`. The output is deterministic.
"""

import math
import os
import struct
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def f64bits(x):
    return struct.unpack("<q", struct.pack("<d", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32bits(x):
    return struct.unpack("<i", struct.pack("<f", x))[0]


def clif_float(x):
    """CLIF's hexadecimal float syntax: `0x1.8p1`, `-0x1.0p-2`, `0.0`."""
    x = float(x)
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    mant, exp = float.hex(abs(x))[2:].split("p")
    mant = mant.rstrip("0")
    if mant.endswith("."):
        mant += "0"
    return f"{sign}0x{mant}p{int(exp)}"


class Fn:
    """A CLIF function under construction with automatic value numbering."""

    def __init__(self, name, params, rets, preamble=()):
        self.name, self.params, self.rets = name, params, rets
        self.preamble = list(preamble)
        self.n = -1
        self.lines = []

    def val(self):
        self.n += 1
        return f"v{self.n}"

    def op(self, text):
        v = self.val()
        self.lines.append(f"    {v} = {text}")
        return v

    def ops(self, k, text):
        vs = [self.val() for _ in range(k)]
        self.lines.append(f"    {', '.join(vs)} = {text}")
        return vs

    def ins(self, text):
        self.lines.append(f"    {text}")

    def block(self, name, types=()):
        vs = [self.val() for _ in types]
        ps = ", ".join(f"{v}: {t}" for v, t in zip(vs, types))
        self.lines.append("")
        self.lines.append(f"{name}({ps}):" if types else f"{name}:")
        return vs

    def entry(self):
        return self.block("block0", self.params)

    def iconst(self, ty, x):
        return self.op(f"iconst.{ty} {x}")

    def f64(self, x):
        return self.op(f"f64const {clif_float(x)}")

    def f32(self, x):
        return self.op(f"f32const {clif_float(x)}")

    def text(self):
        sig = f"({', '.join(self.params)})"
        if self.rets:
            sig += " -> " + ", ".join(self.rets)
        out = [f"function %{self.name}{sig} {{"]
        out += [f"    {p}" for p in self.preamble]
        body = self.lines[1:] if self.lines and self.lines[0] == "" else self.lines
        out += body
        out.append("}")
        return "\n".join(out)


def fmt_val(v):
    if isinstance(v, list):
        return "[" + ", ".join(fmt_val(x) for x in v) + "]"
    if isinstance(v, tuple):  # vector lanes
        return "[" + " ".join(str(x) for x in v) + "]"
    return str(v)


def write(stem, comment, header, funcs, runs):
    """funcs: list of Fn; runs: {func name: [(args tuple, expected)]}."""
    parts = [header.rstrip(), ""]
    parts += [f"; {line}" if line else ";" for line in comment.strip().split("\n")]
    parts.append("")
    for f in funcs:
        parts.append(f.text())
        for args, want in runs.get(f.name, []):
            a = ", ".join(str(x) for x in args)
            parts.append(f"; run: %{f.name}({a}) == {fmt_val(want)}")
        parts.append("")
    with open(os.path.join(OUT, stem + ".clif"), "w") as fh:
        fh.write("\n".join(parts))


HDR = "test run\ntarget x86_64\n"
HDR_SSE41 = "test run\ntarget x86_64 has_sse41\n"
HDR_I128 = "test run\nset enable_llvm_abi_extensions=true\ntarget x86_64\n"
PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def counted_loop(f, n, state_types, init, body):
    """Emit `for i in 0..n { state = body(i, state) }`; returns the final state values.
    Blocks are named from f's next free block number (tracked on f)."""
    b = getattr(f, "nb", 1)
    f.nb = b + 3
    head, bod, exit_ = f"block{b}", f"block{b + 1}", f"block{b + 2}"
    zero = f.iconst("i64", 0)
    f.ins(f"jump {head}({', '.join([zero] + list(init))})")
    ps = f.block(head, ["i64"] + list(state_types))
    i, st = ps[0], ps[1:]
    c = f.op(f"icmp slt {i}, {n}")
    f.ins(f"brif {c}, {bod}, {exit_}({', '.join(st)})" if st else f"brif {c}, {bod}, {exit_}")
    f.block(bod)
    new = body(i, st)
    one = f.iconst("i64", 1)
    i2 = f.op(f"iadd {i}, {one}")
    f.ins(f"jump {head}({', '.join([i2] + list(new))})")
    return f.block(exit_, list(state_types))


# --- programs ------------------------------------------------------------------------------


@program
def sum_loop():
    f = Fn("sum_loop", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)
    (r,) = counted_loop(f, n, ["i64"], [z], lambda i, s: [f.op(f"iadd {s[0]}, {i}")])
    f.ins(f"return {r}")

    def ref(n):
        return s64(sum(range(n)))

    write("sum_loop", "Sum of 0..n in a counted loop: the smallest program, a harness smoke test.",
          HDR, [f], {"sum_loop": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def many_live():
    K = 16
    f = Fn("many_live", ["i64"], ["i64"])
    (n,) = f.entry()
    init = [f.iconst("i64", k + 1) for k in range(K)]

    def body(i, a):
        out = []
        for k in range(K):
            c = f.iconst("i64", k + 1)
            t = f.op(f"imul {a[(k + 1) % K]}, {c}")
            u = f.op(f"iadd {a[k]}, {t}")
            out.append(f.op(f"bxor {u}, {i}"))
        return out

    a = counted_loop(f, n, ["i64"] * K, init, body)
    r = a[0]
    for x in a[1:]:
        r = f.op(f"bxor {r}, {x}")
    f.ins(f"return {r}")

    def ref(n):
        a = [k + 1 for k in range(K)]
        for i in range(n):
            a = [((a[k] + a[(k + 1) % K] * (k + 1)) ^ i) & M64 for k in range(K)]
        r = 0
        for x in a:
            r ^= x
        return s64(r)

    write("many_live", "16 accumulators updated from each other every iteration: 18 integers live\n"
          "across the loop, more than x86_64's allocatable GPRs.",
          HDR, [f], {"many_live": [((n,), ref(n)) for n in (0, 1, 7, 100)]})


@program
def nested_loops():
    f = Fn("nested_loops", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)

    def body_i(i, s):
        def body_j(j, s2):
            def body_k(k, s3):
                p = f.op(f"imul {i}, {j}")
                x = f.op(f"bxor {p}, {k}")
                y = f.op(f"iadd {i}, {j}")
                y2 = f.op(f"iadd {y}, {k}")
                t = f.op(f"iadd {x}, {y2}")
                return [f.op(f"iadd {s3[0]}, {t}")]
            return counted_loop(f, n, ["i64"], [s2[0]], body_k)
        return counted_loop(f, n, ["i64"], [s[0]], body_j)

    (r,) = counted_loop(f, n, ["i64"], [z], body_i)
    f.ins(f"return {r}")

    def ref(n):
        s = 0
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    s += ((i * j) ^ k) + i + j + k
        return s64(s)

    write("nested_loops", "Triple loop nest: the induction variables of all three loops and the\n"
          "accumulator stay live through the innermost body.",
          HDR, [f], {"nested_loops": [((n,), ref(n)) for n in (0, 1, 5, 20)]})


@program
def calls_many_args():
    K = 12
    g = Fn("mix12", ["i64"] * K, ["i64"])
    a = g.entry()
    r = g.iconst("i64", 0)
    for k in range(K):
        c = g.iconst("i64", 2 * k + 1)
        t = g.op(f"imul {a[k]}, {c}")
        r = g.op(f"iadd {r}, {t}")
        r = g.op(f"rotl {r}, {c}")
    g.ins(f"return {r}")

    f = Fn("calls_many_args", ["i64"], ["i64"], ["fn0 = %mix12(" + ", ".join(["i64"] * K) + ") -> i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)

    def body(i, s):
        args = []
        for k in range(K):
            c = f.iconst("i64", k * 7 + 3)
            t = f.op(f"imul {i}, {c}")
            args.append(f.op(f"bxor {t}, {s[0]}"))
        v = f.op(f"call fn0({', '.join(args)})")
        # Every argument is still used after the call: values live across it.
        acc = f.op(f"iadd {s[0]}, {v}")
        for x in args[::3]:
            acc = f.op(f"bxor {acc}, {x}")
        return [acc]

    (r2,) = counted_loop(f, n, ["i64"], [z], body)
    f.ins(f"return {r2}")

    def rotl(x, c):
        c &= 63
        return ((x << c) | (x >> (64 - c))) & M64 if c else x

    def mix12(args):
        r = 0
        for k in range(K):
            r = (r + args[k] * (2 * k + 1)) & M64
            r = rotl(r, 2 * k + 1)
        return r

    def ref(n):
        s = 0
        for i in range(n):
            args = [((i * (k * 7 + 3)) ^ s) & M64 for k in range(K)]
            acc = (s + mix12(args)) & M64
            for x in args[::3]:
                acc ^= x
            s = acc
        return s64(s)

    write("calls_many_args", "A 12-argument callee (6 in registers, 6 on the stack) called in a loop,\n"
          "its arguments reused after the call.",
          HDR, [g, f], {"mix12": [(tuple(range(1, 13)), s64(mix12(list(range(1, 13)))))],
                        "calls_many_args": [((n,), ref(n)) for n in (0, 1, 10, 100)]})


@program
def live_across_calls():
    K = 10
    g = Fn("leaf", ["i64"], ["i64"])
    (x,) = g.entry()
    c = g.iconst("i64", 2)
    one = g.iconst("i64", 1)
    y = g.op(f"imul {x}, {c}")
    y2 = g.op(f"iadd {y}, {one}")
    g.ins(f"return {y2}")

    f = Fn("live_across_calls", ["i64"], ["i64"], ["fn0 = %leaf(i64) -> i64"])
    (n,) = f.entry()
    init = [f.iconst("i64", 3 * k + 1) for k in range(K)]

    def body(i, a):
        out = []
        for k in range(K):
            t = f.op(f"bxor {a[k]}, {i}")
            r = f.op(f"call fn0({t})")
            # All K values are live across every call: callee-saved registers or spills.
            out.append(f.op(f"iadd {r}, {a[(k + 3) % K]}"))
        return out

    a = counted_loop(f, n, ["i64"] * K, init, body)
    r = a[0]
    for x in a[1:]:
        r = f.op(f"iadd {r}, {x}")
    f.ins(f"return {r}")

    def ref(n):
        a = [3 * k + 1 for k in range(K)]
        for i in range(n):
            a = [(((a[k] ^ i) * 2 + 1) + a[(k + 3) % K]) & M64 for k in range(K)]
        return s64(sum(a))

    write("live_across_calls", "Ten values live across each of ten calls per iteration: callee-saved\n"
          "register pressure.",
          HDR, [g, f], {"live_across_calls": [((n,), ref(n)) for n in (0, 1, 5, 50)]})


@program
def two_address():
    f = Fn("two_address", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)
    seed = f.iconst("i64", 12345)

    def body(i, s):
        acc, x = s
        c3 = f.iconst("i64", 3)
        c5 = f.iconst("i64", 5)
        c7 = f.iconst("i64", 7)
        c63 = f.iconst("i64", 63)
        p = f.op(f"imul {x}, {c3}")
        p = f.op(f"iadd {p}, {c5}")
        p = f.op(f"imul {p}, {x}")
        p = f.op(f"isub {p}, {c7}")
        sh = f.op(f"band {i}, {c63}")
        q = f.op(f"ishl {x}, {sh}")
        r = f.op(f"ushr {p}, {sh}")
        t = f.op(f"sshr {acc}, {sh}")
        u = f.op(f"rotr {q}, {sh}")
        m = f.op(f"bor {i}, {c7}")
        d = f.op(f"udiv {p}, {m}")
        e = f.op(f"urem {x}, {m}")
        acc2 = f.op(f"iadd {acc}, {r}")
        acc2 = f.op(f"bxor {acc2}, {t}")
        acc2 = f.op(f"iadd {acc2}, {u}")
        acc2 = f.op(f"isub {acc2}, {d}")
        acc2 = f.op(f"iadd {acc2}, {e}")
        x2 = f.op(f"iadd {x}, {p}")
        x2 = f.op(f"bxor {x2}, {q}")
        return [acc2, x2]

    acc, x = counted_loop(f, n, ["i64", "i64"], [z, seed], body)
    r = f.op(f"bxor {acc}, {x}")
    f.ins(f"return {r}")

    def ref(n):
        acc, x = 0, 12345
        for i in range(n):
            p = (((x * 3 + 5) * x) - 7) & M64
            sh = i & 63
            q = (x << sh) & M64
            r = p >> sh
            t = (s64(acc) >> sh) & M64
            u = ((q >> sh) | (q << (64 - sh))) & M64 if sh else q
            m = i | 7
            d = p // m
            e = x % m
            acc2 = (acc + r) & M64
            acc2 ^= t
            acc2 = (acc2 + u - d + e) & M64
            x2 = ((x + p) & M64) ^ q
            acc, x = acc2, x2
        return s64(acc ^ x)

    write("two_address", "Reuse-heavy integer code: two-address x86 forms, shifts by a variable amount\n"
          "(count in rcx) and unsigned division (rax/rdx).",
          HDR, [f], {"two_address": [((n,), ref(n)) for n in (0, 1, 10, 200)]})


@program
def float_harmonic():
    f = Fn("float_harmonic", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.f64(0.0)

    def body(i, s):
        one = f.iconst("i64", 1)
        k = f.op(f"iadd {i}, {one}")
        kf = f.op(f"fcvt_from_sint.f64 {k}")
        c1 = f.f64(1.0)
        q = f.op(f"fdiv {c1}, {kf}")
        sq = f.op(f"sqrt {kf}")
        q2 = f.op(f"fdiv {q}, {sq}")
        s1 = f.op(f"fadd {s[0]}, {q}")
        s2 = f.op(f"fadd {s[1]}, {q2}")
        return [s1, s2]

    a, b = counted_loop(f, n, ["f64", "f64"], [z, z], body)
    r = f.op(f"fmul {a}, {b}")
    bits = f.op(f"bitcast.i64 {r}")
    f.ins(f"return {bits}")

    def ref(n):
        a = b = 0.0
        for i in range(n):
            kf = float(i + 1)
            q = 1.0 / kf
            a += q
            b += q / math.sqrt(kf)
        return f64bits(a * b)

    write("float_harmonic", "Harmonic sums in f64 with division and square root; the result's bits are\n"
          "returned so the comparison is exact.",
          HDR, [f], {"float_harmonic": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def float_pressure():
    K = 18
    f = Fn("float_pressure", ["i64"], ["i64"])
    (n,) = f.entry()
    init = []
    for k in range(K):
        c = f.iconst("i64", k + 1)
        init.append(f.op(f"fcvt_from_sint.f64 {c}"))

    def body(i, x):
        c = f.f64(0.5)
        d = f.f64(0.25)
        fi = f.op(f"fcvt_from_sint.f64 {i}")
        out = []
        for k in range(K):
            t = f.op(f"fmul {x[k]}, {c}")
            u = f.op(f"fmul {x[(k + 1) % K]}, {d}")
            w = f.op(f"fadd {t}, {u}")
            out.append(f.op(f"fadd {w}, {fi}"))
        return out

    x = counted_loop(f, n, ["f64"] * K, init, body)
    r = x[0]
    for v in x[1:]:
        r = f.op(f"fadd {r}, {v}")
    bits = f.op(f"bitcast.i64 {r}")
    f.ins(f"return {bits}")

    def ref(n):
        x = [float(k + 1) for k in range(K)]
        for i in range(n):
            x = [(x[k] * 0.5 + x[(k + 1) % K] * 0.25) + float(i) for k in range(K)]
        r = x[0]
        for v in x[1:]:
            r += v
        return f64bits(r)

    write("float_pressure", "18 f64 values updated from each other every iteration: more live floats\n"
          "than XMM registers.",
          HDR, [f], {"float_pressure": [((n,), ref(n)) for n in (0, 1, 3, 100)]})


@program
def f32_mixed():
    f = Fn("f32_mixed", ["i64"], ["i64"])
    (n,) = f.entry()
    z32 = f.f32(0.0)
    z64 = f.f64(0.0)

    def body(i, s):
        a, b = s
        x = f.op(f"fcvt_from_sint.f32 {i}")
        c = f.f32(1.5)
        y = f.op(f"fmul {x}, {c}")
        y = f.op(f"fadd {y}, {c}")
        a2 = f.op(f"fadd {a}, {y}")
        p = f.op(f"fpromote.f64 {y}")
        q = f.op(f"fmul {p}, {p}")
        b2 = f.op(f"fadd {b}, {q}")
        d = f.op(f"fdemote.f32 {b2}")
        a3 = f.op(f"fsub {a2}, {d}")
        a4 = f.op(f"fadd {a3}, {d}")
        return [a4, b2]

    a, b = counted_loop(f, n, ["f32", "f64"], [z32, z64], body)
    ab = f.op(f"bitcast.i32 {a}")
    ax = f.op(f"uextend.i64 {ab}")
    bb = f.op(f"bitcast.i64 {b}")
    r = f.op(f"bxor {ax}, {bb}")
    f.ins(f"return {r}")

    def ref(n):
        a, b = 0.0, 0.0
        for i in range(n):
            y = f32(f32(f32(float(i)) * 1.5) + 1.5)
            a2 = f32(a + y)
            q = y * y
            b = b + q
            d = f32(b)
            a = f32(f32(a2 - d) + d)
        return s64((f32bits(a) & M32) ^ (f64bits(b) & M64))

    write("f32_mixed", "f32 and f64 arithmetic with promotions and demotions in one loop.",
          HDR, [f], {"f32_mixed": [((n,), ref(n)) for n in (0, 1, 10, 500)]})


@program
def simd_i32x4():
    f = Fn("simd_i32x4", ["i64"], ["i32"])
    (n,) = f.entry()
    v0 = f.op("vconst.i32x4 [1 2 3 4]")
    v1 = f.op("vconst.i32x4 [5 6 7 8]")

    def body(i, s):
        a, b = s
        i32 = f.op(f"ireduce.i32 {i}")
        sp = f.op(f"splat.i32x4 {i32}")
        three = f.op("vconst.i32x4 [3 3 3 3]")
        a2 = f.op(f"imul {a}, {three}")
        a2 = f.op(f"iadd {a2}, {sp}")
        b2 = f.op(f"bxor {b}, {a2}")
        b2 = f.op(f"isub {b2}, {a}")
        return [a2, b2]

    a, b = counted_loop(f, n, ["i32x4", "i32x4"], [v0, v1], body)
    c = f.op(f"iadd {a}, {b}")
    lanes = [f.op(f"extractlane {c}, {k}") for k in range(4)]
    r = lanes[0]
    for l in lanes[1:]:
        r = f.op(f"bxor {r}, {l}")
    f.ins(f"return {r}")

    g = Fn("simd_step", ["i32x4", "i32x4"], ["i32x4"])
    x, y = g.entry()
    three = g.op("vconst.i32x4 [3 3 3 3]")
    z = g.op(f"imul {x}, {three}")
    z = g.op(f"bxor {z}, {y}")
    g.ins(f"return {z}")

    def ref_lanes(n):
        a, b = [1, 2, 3, 4], [5, 6, 7, 8]
        for i in range(n):
            a2 = [(x * 3 + (i & M32)) & M32 for x in a]
            b = [((bb ^ a2k) - ak) & M32 for bb, a2k, ak in zip(b, a2, a)]
            a = a2
        return a, b

    def ref(n):
        a, b = ref_lanes(n)
        r = 0
        for x, y in zip(a, b):
            r ^= (x + y) & M32
        return s32(r)

    write("simd_i32x4", "i32x4 vector loop (needs SSE4.1 for the lane multiply), plus a function\n"
          "taking and returning vectors.",
          HDR_SSE41, [f, g], {
              "simd_i32x4": [((n,), ref(n)) for n in (0, 1, 10, 1000)],
              "simd_step": [(("[1 2 3 4]", "[0 1 0 1]"), (3, 7, 9, 13))]})


@program
def vec_pressure():
    K = 20
    f = Fn("vec_pressure", ["i64"], ["i64"])
    (n,) = f.entry()
    init = [f.op(f"vconst.i32x4 [{k} {k + 1} {k * 3} {k ^ 5}]") for k in range(K)]

    def body(i, v):
        i32 = f.op(f"ireduce.i32 {i}")
        sp = f.op(f"splat.i32x4 {i32}")
        out = []
        for k in range(K):
            t = f.op(f"iadd {v[k]}, {v[(k + 7) % K]}")
            out.append(f.op(f"bxor {t}, {sp}"))
        return out

    v = counted_loop(f, n, ["i32x4"] * K, init, body)
    acc = v[0]
    for x in v[1:]:
        acc = f.op(f"iadd {acc}, {x}")
    lo = f.op(f"extractlane {acc}, 0")
    hi = f.op(f"extractlane {acc}, 3")
    lo64 = f.op(f"uextend.i64 {lo}")
    hi64 = f.op(f"uextend.i64 {hi}")
    c32 = f.iconst("i64", 32)
    hs = f.op(f"ishl {hi64}, {c32}")
    r = f.op(f"bor {hs}, {lo64}")
    f.ins(f"return {r}")

    def ref(n):
        v = [[k, k + 1, k * 3, k ^ 5] for k in range(K)]
        for i in range(n):
            v = [[((v[k][l] + v[(k + 7) % K][l]) & M32) ^ (i & M32) for l in range(4)] for k in range(K)]
        acc = [0, 0, 0, 0]
        for x in v:
            acc = [(a + b) & M32 for a, b in zip(acc, x)]
        return s64((acc[3] << 32) | acc[0])

    write("vec_pressure", "20 live i32x4 vectors in a loop: vector spills and reloads.",
          HDR, [f], {"vec_pressure": [((n,), ref(n)) for n in (0, 1, 4, 100)]})


@program
def switch_machine():
    S = 8
    f = Fn("switch_machine", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)
    init_acc = f.iconst("i64", 1)
    f.ins(f"jump block1({z}, {z}, {init_acc})")
    i, st, acc = f.block("block1", ["i64", "i64", "i64"])
    c = f.op(f"icmp slt {i}, {n}")
    f.ins(f"brif {c}, block2, block20({acc})")
    f.block("block2")
    idx = f.op(f"ireduce.i32 {st}")
    cases = ", ".join(f"block{3 + k}" for k in range(S))
    f.ins(f"br_table {idx}, block19, [{cases}]")
    formulas = []
    for k in range(S):
        f.block(f"block{3 + k}")
        ck = f.iconst("i64", 2 * k + 3)
        if k % 4 == 0:
            a2 = f.op(f"imul {acc}, {ck}")
            formulas.append(lambda a, i, c=2 * k + 3: a * c)
        elif k % 4 == 1:
            a2 = f.op(f"iadd {acc}, {i}")
            a2 = f.op(f"bxor {a2}, {ck}")
            formulas.append(lambda a, i, c=2 * k + 3: (a + i) ^ c)
        elif k % 4 == 2:
            a2 = f.op(f"rotl {acc}, {ck}")
            formulas.append(lambda a, i, c=2 * k + 3: ((a << c) | (a >> (64 - c))) & M64)
        else:
            a2 = f.op(f"isub {acc}, {ck}")
            a2 = f.op(f"imul {a2}, {i}")
            formulas.append(lambda a, i, c=2 * k + 3: (a - c) * i)
        f.ins(f"jump block18({a2})")
    (a,) = f.block("block18", ["i64"])
    seven = f.iconst("i64", 7)
    one = f.iconst("i64", 1)
    t = f.op(f"ushr {a}, {seven}")
    t = f.op(f"iadd {t}, {st}")
    mask = f.iconst("i64", S - 1)
    nst = f.op(f"band {t}, {mask}")
    i2 = f.op(f"iadd {i}, {one}")
    f.ins(f"jump block1({i2}, {nst}, {a})")
    f.block("block19")
    f.ins("trap user1")
    (r,) = f.block("block20", ["i64"])
    f.ins(f"return {r}")

    def ref(n):
        st, acc = 0, 1
        for i in range(n):
            acc = formulas[st](acc, i) & M64
            st = ((acc >> 7) + st) & (S - 1)
        return s64(acc)

    write("switch_machine", "A state machine dispatching through br_table on every step.",
          HDR, [f], {"switch_machine": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def fib_rec():
    f = Fn("fib_rec", ["i64"], ["i64"], ["fn0 = %fib_rec(i64) -> i64"])
    (n,) = f.entry()
    two = f.iconst("i64", 2)
    c = f.op(f"icmp slt {n}, {two}")
    f.ins(f"brif {c}, block1, block2")
    f.block("block1")
    f.ins(f"return {n}")
    f.block("block2")
    one = f.iconst("i64", 1)
    a = f.op(f"isub {n}, {one}")
    b = f.op(f"isub {n}, {two}")
    x = f.op(f"call fn0({a})")
    y = f.op(f"call fn0({b})")
    r = f.op(f"iadd {x}, {y}")
    f.ins(f"return {r}")

    def fib(n):
        a, b = 0, 1
        for _ in range(n):
            a, b = b, a + b
        return a

    write("fib_rec", "Doubly recursive Fibonacci: a call-dominated program with values live across\n"
          "the first recursive call.",
          HDR, [f], {"fib_rec": [((n,), fib(n)) for n in (0, 1, 2, 10, 20)]})


@program
def even_odd():
    e = Fn("is_even", ["i64"], ["i64"], ["fn0 = %is_odd(i64) -> i64"])
    (n,) = e.entry()
    f0 = e.iconst("i64", 0)
    c = e.op(f"icmp eq {n}, {f0}")
    e.ins(f"brif {c}, block1, block2")
    e.block("block1")
    one = e.iconst("i64", 1)
    e.ins(f"return {one}")
    e.block("block2")
    one2 = e.iconst("i64", 1)
    m = e.op(f"isub {n}, {one2}")
    r = e.op(f"call fn0({m})")
    e.ins(f"return {r}")

    o = Fn("is_odd", ["i64"], ["i64"], ["fn0 = %is_even(i64) -> i64"])
    (n,) = o.entry()
    f0 = o.iconst("i64", 0)
    c = o.op(f"icmp eq {n}, {f0}")
    o.ins(f"brif {c}, block1, block2")
    o.block("block1")
    o.ins(f"return {f0}")
    o.block("block2")
    one2 = o.iconst("i64", 1)
    m = o.op(f"isub {n}, {one2}")
    r = o.op(f"call fn0({m})")
    o.ins(f"return {r}")

    f = Fn("even_odd", ["i64"], ["i64"], ["fn0 = %is_even(i64) -> i64", "fn1 = %is_odd(i64) -> i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)

    def body(i, s):
        c = f.iconst("i64", 300)
        k = f.op(f"urem {i}, {c}")
        a = f.op(f"call fn0({k})")
        c2 = f.iconst("i64", 1000)
        k2 = f.op(f"urem {i}, {c2}")
        b = f.op(f"call fn1({k2})")
        two = f.iconst("i64", 2)
        b2 = f.op(f"imul {b}, {two}")
        t = f.op(f"iadd {a}, {b2}")
        return [f.op(f"iadd {s[0]}, {t}")]

    (r,) = counted_loop(f, n, ["i64"], [z], body)
    f.ins(f"return {r}")

    def ref(n):
        return sum((1 if (i % 300) % 2 == 0 else 0) + 2 * (i % 2) for i in range(n))

    write("even_odd", "Mutual recursion between two functions of the same file (recursion depth up\n"
          "to the argument).",
          HDR, [e, o, f], {"is_even": [((10,), 1), ((7,), 0)],
                           "even_odd": [((n,), ref(n)) for n in (0, 1, 10, 300)]})


@program
def crc32():
    f = Fn("crc32", ["i64"], ["i32"])
    (n,) = f.entry()
    init = f.iconst("i32", -1)

    def body(i, s):
        c31 = f.iconst("i64", 31)
        c7 = f.iconst("i64", 7)
        b = f.op(f"imul {i}, {c31}")
        b = f.op(f"iadd {b}, {c7}")
        b8 = f.op(f"ireduce.i8 {b}")
        b32 = f.op(f"uextend.i32 {b8}")
        crc = f.op(f"bxor {s[0]}, {b32}")
        for _ in range(8):
            one = f.iconst("i32", 1)
            poly = f.iconst("i32", s32(0xEDB88320))
            zero = f.iconst("i32", 0)
            low = f.op(f"band {crc}, {one}")
            m = f.op(f"isub {zero}, {low}")
            p = f.op(f"band {m}, {poly}")
            sh = f.op(f"ushr {crc}, {one}")
            crc = f.op(f"bxor {sh}, {p}")
        return [crc]

    (r,) = counted_loop(f, n, ["i32"], [init], body)
    r = f.op(f"bnot {r}")
    f.ins(f"return {r}")

    def ref(n):
        data = bytes(((i * 31 + 7) & 0xFF) for i in range(n))
        return s32(zlib.crc32(data))

    write("crc32", "Bitwise CRC-32 (the zlib polynomial) over n generated bytes, eight unrolled\n"
          "shift/mask steps per byte.",
          HDR, [f], {"crc32": [((n,), ref(n)) for n in (0, 1, 16, 1000)]})


SHA_K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]
SHA_IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]


def sha_compress(state, w16):
    def rotr(x, c):
        return ((x >> c) | (x << (32 - c))) & M32
    w = list(w16)
    for t in range(16, 64):
        s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
        s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
        w.append((w[t - 16] + s0 + w[t - 7] + s1) & M32)
    a, b, c, d, e, f, g, h = state
    for t in range(64):
        S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
        ch = (e & f) ^ (~e & M32 & g)
        t1 = (h + S1 + ch + SHA_K[t] + w[t]) & M32
        S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
        maj = (a & b) ^ (a & c) ^ (b & c)
        t2 = (S0 + maj) & M32
        a, b, c, d, e, f, g, h = (t1 + t2) & M32, a, b, c, (d + t1) & M32, e, f, g
    return [(x + y) & M32 for x, y in zip(state, [a, b, c, d, e, f, g, h])]


# Self-check of the reference: one compression of the padded empty message is SHA-256("").
assert b"".join(x.to_bytes(4, "big") for x in sha_compress(SHA_IV, [0x80000000] + [0] * 15)).hex() \
    == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@program
def sha256():
    f = Fn("sha256", ["i64"], ["i64"], ["ss0 = explicit_slot 256", "ss1 = explicit_slot 256"])
    (n,) = f.entry()
    kb = f.op("stack_addr.i64 ss0")
    wb = f.op("stack_addr.i64 ss1")
    for t, k in enumerate(SHA_K):
        c = f.iconst("i32", s32(k))
        f.ins(f"store {c}, {kb}+{4 * t}")
    iv = [f.iconst("i32", s32(x)) for x in SHA_IV]
    f.nb = 1

    def rotr(x, c):
        cc = f.iconst("i32", c)
        return f.op(f"rotr {x}, {cc}")

    def rep_body(rep, st):
        # Message block: w[t] = (t + 1) * 0x9e3779b9 + rep, then the schedule, in ss1.
        r32 = f.op(f"ireduce.i32 {rep}")
        for t in range(16):
            c = f.iconst("i32", s32((t + 1) * 0x9E3779B9))
            w = f.op(f"iadd {c}, {r32}")
            f.ins(f"store {w}, {wb}+{4 * t}")

        def sched(t, s):
            four = f.iconst("i64", 4)
            off = f.op(f"imul {t}, {four}")
            p = f.op(f"iadd {wb}, {off}")
            w15 = f.op(f"load.i32 {p}+{4}")
            w2 = f.op(f"load.i32 {p}+{56}")
            w16 = f.op(f"load.i32 {p}")
            w7 = f.op(f"load.i32 {p}+{36}")
            c3 = f.iconst("i32", 3)
            c10 = f.iconst("i32", 10)
            s0 = f.op(f"bxor {rotr(w15, 7)}, {rotr(w15, 18)}")
            s0 = f.op(f"bxor {s0}, {f.op(f'ushr {w15}, {c3}')}")
            s1 = f.op(f"bxor {rotr(w2, 17)}, {rotr(w2, 19)}")
            s1 = f.op(f"bxor {s1}, {f.op(f'ushr {w2}, {c10}')}")
            x = f.op(f"iadd {w16}, {s0}")
            x = f.op(f"iadd {x}, {w7}")
            x = f.op(f"iadd {x}, {s1}")
            f.ins(f"store {x}, {p}+64")
            return []

        c48 = f.iconst("i64", 48)
        counted_loop(f, c48, [], [], sched)

        def round_(t, v):
            a, b, c, d, e, ff, g, h = v
            four = f.iconst("i64", 4)
            off = f.op(f"imul {t}, {four}")
            kp = f.op(f"iadd {kb}, {off}")
            wp = f.op(f"iadd {wb}, {off}")
            kt = f.op(f"load.i32 {kp}")
            wt = f.op(f"load.i32 {wp}")
            S1 = f.op(f"bxor {rotr(e, 6)}, {rotr(e, 11)}")
            S1 = f.op(f"bxor {S1}, {rotr(e, 25)}")
            ch = f.op(f"band {e}, {ff}")
            ne = f.op(f"bnot {e}")
            ch2 = f.op(f"band {ne}, {g}")
            ch = f.op(f"bxor {ch}, {ch2}")
            t1 = f.op(f"iadd {h}, {S1}")
            t1 = f.op(f"iadd {t1}, {ch}")
            t1 = f.op(f"iadd {t1}, {kt}")
            t1 = f.op(f"iadd {t1}, {wt}")
            S0 = f.op(f"bxor {rotr(a, 2)}, {rotr(a, 13)}")
            S0 = f.op(f"bxor {S0}, {rotr(a, 22)}")
            m1 = f.op(f"band {a}, {b}")
            m2 = f.op(f"band {a}, {c}")
            m3 = f.op(f"band {b}, {c}")
            maj = f.op(f"bxor {m1}, {m2}")
            maj = f.op(f"bxor {maj}, {m3}")
            t2 = f.op(f"iadd {S0}, {maj}")
            na = f.op(f"iadd {t1}, {t2}")
            nd = f.op(f"iadd {d}, {t1}")
            return [na, a, b, c, nd, e, ff, g]

        c64 = f.iconst("i64", 64)
        out = counted_loop(f, c64, ["i32"] * 8, st, round_)
        return [f.op(f"iadd {x}, {y}") for x, y in zip(st, out)]

    st = counted_loop(f, n, ["i32"] * 8, iv, rep_body)
    r = f.iconst("i64", 0)
    for k, x in enumerate(st):
        x64 = f.op(f"uextend.i64 {x}")
        sh = f.iconst("i64", 8 * k)
        x64 = f.op(f"rotl {x64}, {sh}")
        r = f.op(f"bxor {r}, {x64}")
    f.ins(f"return {r}")

    def ref(n):
        st = list(SHA_IV)
        for rep in range(n):
            w = [((t + 1) * 0x9E3779B9 + rep) & M32 for t in range(16)]
            st = sha_compress(st, w)
        r = 0
        for k, x in enumerate(st):
            sh = 8 * k
            r ^= ((x << sh) | (x >> (64 - sh))) & M64 if sh else x
        return s64(r)

    write("sha256", "SHA-256 compression (message schedule in a stack slot, 64 rounds with the eight\n"
          "working variables in block parameters), applied n times.",
          HDR, [f], {"sha256": [((n,), ref(n)) for n in (0, 1, 2, 20)]})


@program
def xorshift():
    f = Fn("xorshift", ["i64"], ["i64"])
    (n,) = f.entry()
    seed = f.iconst("i64", 88172645463325252)

    def body(i, s):
        x = s[0]
        for sh, kind in ((12, "ushr"), (25, "ishl"), (27, "ushr")):
            c = f.iconst("i64", sh)
            t = f.op(f"{kind} {x}, {c}")
            x = f.op(f"bxor {x}, {t}")
        return [x]

    (x,) = counted_loop(f, n, ["i64"], [seed], body)
    m = f.iconst("i64", s64(0x2545F4914F6CDD1D))
    r = f.op(f"imul {x}, {m}")
    f.ins(f"return {r}")

    def ref(n):
        x = 88172645463325252
        for _ in range(n):
            x ^= x >> 12
            x ^= (x << 25) & M64
            x ^= x >> 27
        return s64(x * 0x2545F4914F6CDD1D)

    write("xorshift", "xorshift64* generator: a long dependency chain of shifts and xors.",
          HDR, [f], {"xorshift": [((n,), ref(n)) for n in (0, 1, 10, 10000)]})


@program
def matmul():
    N = 8
    f = Fn("matmul", ["i64"], ["i64"], [f"ss0 = explicit_slot {8 * N * N}", f"ss1 = explicit_slot {8 * N * N}",
                                       f"ss2 = explicit_slot {8 * N * N}"])
    (reps,) = f.entry()
    A = f.op("stack_addr.i64 ss0")
    B = f.op("stack_addr.i64 ss1")
    C = f.op("stack_addr.i64 ss2")
    for r in range(N):
        for c in range(N):
            a = f.iconst("i64", (r * N + c) % 7 + 1)
            b = f.iconst("i64", (r + 2 * c) % 5 - 2)
            f.ins(f"store {a}, {A}+{8 * (r * N + c)}")
            f.ins(f"store {b}, {B}+{8 * (r * N + c)}")
    nn = f.iconst("i64", N)
    z = f.iconst("i64", 0)

    def rep_body(rep, s):
        def row(i, _):
            def col(j, _):
                def inner(k, acc):
                    eight = f.iconst("i64", 8)
                    ik = f.op(f"imul {i}, {nn}")
                    ik = f.op(f"iadd {ik}, {k}")
                    ik = f.op(f"imul {ik}, {eight}")
                    kj = f.op(f"imul {k}, {nn}")
                    kj = f.op(f"iadd {kj}, {j}")
                    kj = f.op(f"imul {kj}, {eight}")
                    pa = f.op(f"iadd {A}, {ik}")
                    pb = f.op(f"iadd {B}, {kj}")
                    x = f.op(f"load.i64 {pa}")
                    y = f.op(f"load.i64 {pb}")
                    p = f.op(f"imul {x}, {y}")
                    return [f.op(f"iadd {acc[0]}, {p}")]
                (acc,) = counted_loop(f, nn, ["i64"], [z], inner)
                eight = f.iconst("i64", 8)
                ij = f.op(f"imul {i}, {nn}")
                ij = f.op(f"iadd {ij}, {j}")
                ij = f.op(f"imul {ij}, {eight}")
                pc = f.op(f"iadd {C}, {ij}")
                f.ins(f"store {acc}, {pc}")
                return []
            counted_loop(f, nn, [], [], col)
            return []
        counted_loop(f, nn, [], [], row)

        # A <- (C & 0xff) + rep; checksum += C[rep % 64]
        def copy(k, s2):
            eight = f.iconst("i64", 8)
            off = f.op(f"imul {k}, {eight}")
            pc = f.op(f"iadd {C}, {off}")
            pa = f.op(f"iadd {A}, {off}")
            x = f.op(f"load.i64 {pc}")
            m = f.iconst("i64", 0xFF)
            y = f.op(f"band {x}, {m}")
            y = f.op(f"iadd {y}, {rep}")
            f.ins(f"store {y}, {pa}")
            return [f.op(f"iadd {s2[0]}, {x}")]
        n64 = f.iconst("i64", N * N)
        (t,) = counted_loop(f, n64, ["i64"], [z], copy)
        return [f.op(f"bxor {s[0]}, {t}")]

    (r,) = counted_loop(f, reps, ["i64"], [z], rep_body)
    f.ins(f"return {r}")

    def ref(reps):
        A = [[(r * N + c) % 7 + 1 for c in range(N)] for r in range(N)]
        B = [[(r + 2 * c) % 5 - 2 for c in range(N)] for r in range(N)]
        s = 0
        for rep in range(reps):
            C = [[sum(A[i][k] * B[k][j] for k in range(N)) & M64 for j in range(N)] for i in range(N)]
            t = 0
            for i in range(N):
                for j in range(N):
                    t = (t + C[i][j]) & M64
            A = [[((C[i][j] & 0xFF) + rep) & M64 for j in range(N)] for i in range(N)]
            s ^= t
        return s64(s)

    write("matmul", "8x8 integer matrix multiply in stack slots, fed back into itself n times.",
          HDR, [f], {"matmul": [((n,), ref(n)) for n in (0, 1, 3, 50)]})


@program
def insertion_sort():
    N = 64
    f = Fn("insertion_sort", ["i64"], ["i64"], [f"ss0 = explicit_slot {4 * N}"])
    (reps,) = f.entry()
    base = f.op("stack_addr.i64 ss0")
    z = f.iconst("i64", 0)
    nn = f.iconst("i64", N)

    def rep_body(rep, s):
        # Fill with an LCG seeded by the repetition number.
        def fill(k, st):
            a = f.iconst("i64", 1103515245)
            c = f.iconst("i64", 12345)
            x = f.op(f"imul {st[0]}, {a}")
            x = f.op(f"iadd {x}, {c}")
            four = f.iconst("i64", 4)
            off = f.op(f"imul {k}, {four}")
            p = f.op(f"iadd {base}, {off}")
            sh = f.iconst("i64", 16)
            v = f.op(f"ushr {x}, {sh}")
            v32 = f.op(f"ireduce.i32 {v}")
            f.ins(f"store {v32}, {p}")
            return [x]
        counted_loop(f, nn, ["i64"], [rep], fill)

        # for i in 1..N: key = a[i]; j = i; while j > 0 && a[j-1] > key: a[j] = a[j-1]; j -= 1
        def outer(i0, _):
            one = f.iconst("i64", 1)
            i = f.op(f"iadd {i0}, {one}")
            four = f.iconst("i64", 4)
            off = f.op(f"imul {i}, {four}")
            p = f.op(f"iadd {base}, {off}")
            key = f.op(f"load.i32 {p}")
            b = f.nb
            f.nb += 3
            f.ins(f"jump block{b}({i})")
            (j,) = f.block(f"block{b}", ["i64"])
            zero = f.iconst("i64", 0)
            jz = f.op(f"icmp sgt {j}, {zero}")
            f.ins(f"brif {jz}, block{b + 1}, block{b + 2}({j})")
            f.block(f"block{b + 1}")
            one2 = f.iconst("i64", 1)
            jm = f.op(f"isub {j}, {one2}")
            four2 = f.iconst("i64", 4)
            offm = f.op(f"imul {jm}, {four2}")
            pm = f.op(f"iadd {base}, {offm}")
            prev = f.op(f"load.i32 {pm}")
            gt = f.op(f"icmp sgt {prev}, {key}")
            nb2 = f.nb
            f.nb += 1
            f.ins(f"brif {gt}, block{nb2}, block{b + 2}({j})")
            f.block(f"block{nb2}")
            f.ins(f"store {prev}, {pm}+4")
            f.ins(f"jump block{b}({jm})")
            (jf,) = f.block(f"block{b + 2}", ["i64"])
            four3 = f.iconst("i64", 4)
            offj = f.op(f"imul {jf}, {four3}")
            pj = f.op(f"iadd {base}, {offj}")
            f.ins(f"store {key}, {pj}")
            return []
        n1 = f.iconst("i64", N - 1)
        counted_loop(f, n1, [], [], outer)

        def check(k, st):
            four = f.iconst("i64", 4)
            off = f.op(f"imul {k}, {four}")
            p = f.op(f"iadd {base}, {off}")
            v = f.op(f"sload32 {p}")
            one = f.iconst("i64", 1)
            w = f.op(f"iadd {k}, {one}")
            t = f.op(f"imul {v}, {w}")
            return [f.op(f"iadd {st[0]}, {t}")]
        (t,) = counted_loop(f, nn, ["i64"], [z], check)
        return [f.op(f"iadd {s[0]}, {t}")]

    (r,) = counted_loop(f, reps, ["i64"], [z], rep_body)
    f.ins(f"return {r}")

    def ref(reps):
        s = 0
        for rep in range(reps):
            x = rep
            a = []
            for _ in range(N):
                x = (x * 1103515245 + 12345) & M64
                a.append(s32(x >> 16))
            a.sort()
            s += sum(v * (k + 1) for k, v in enumerate(a))
        return s64(s)

    write("insertion_sort", "Insertion sort of 64 signed 32-bit values in a stack slot, refilled from an\n"
          "LCG for every repetition; returns a position-weighted checksum.",
          HDR, [f], {"insertion_sort": [((n,), ref(n)) for n in (0, 1, 2, 20)]})


@program
def bignum_fib():
    L = 8
    add = Fn("add_with_carry", ["i64", "i64", "i64"], ["i64", "i64"])
    x, y, cin = add.entry()
    s = add.op(f"iadd {x}, {y}")
    c1 = add.op(f"icmp ult {s}, {x}")
    s2 = add.op(f"iadd {s}, {cin}")
    c2 = add.op(f"icmp ult {s2}, {s}")
    c = add.op(f"bor {c1}, {c2}")
    c64 = add.op(f"uextend.i64 {c}")
    add.ins(f"return {s2}, {c64}")

    f = Fn("bignum_fib", ["i64"], ["i64"])
    (n,) = f.entry()
    zero = f.iconst("i64", 0)
    one = f.iconst("i64", 1)
    init = [zero] * L + [one] + [zero] * (L - 1)

    def body(i, v):
        a, b = v[:L], v[L:]
        out = []
        carry = f.iconst("i64", 0)
        for k in range(L):
            s = f.op(f"iadd {a[k]}, {b[k]}")
            c1 = f.op(f"icmp ult {s}, {a[k]}")
            s2 = f.op(f"iadd {s}, {carry}")
            c2 = f.op(f"icmp ult {s2}, {s}")
            c = f.op(f"bor {c1}, {c2}")
            carry = f.op(f"uextend.i64 {c}")
            out.append(s2)
        return list(b) + out

    v = counted_loop(f, n, ["i64"] * (2 * L), init, body)
    r = v[0]
    for k in range(1, L):
        r = f.op(f"bxor {r}, {v[k]}")
    f.ins(f"return {r}")

    def ref(n):
        a, b = 0, 1
        for _ in range(n):
            a, b = b, (a + b) & ((1 << (64 * L)) - 1)
        r = 0
        for k in range(L):
            r ^= (a >> (64 * k)) & M64
        return s64(r)

    write("bignum_fib", "Fibonacci numbers modulo 2^512 with 8-limb carry propagation: 16 limbs live in\n"
          "block parameters; plus a two-result add-with-carry helper.",
          HDR, [add, f], {
              "add_with_carry": [((-1, 1, 0), [0, 1]), ((5, 6, 1), [12, 0])],
              "bignum_fib": [((n,), ref(n)) for n in (0, 1, 10, 100, 1000)]})


@program
def i128_lcg():
    f = Fn("i128_lcg", ["i64"], ["i128"])
    (n,) = f.entry()
    MUL = 0x2360ED051FC65DA44385DF649FCCF645
    INC = 0x5851F42D4C957F2D14057B7EF767814F

    def c128(x):
        lo = f.iconst("i64", s64(x & M64))
        hi = f.iconst("i64", s64(x >> 64))
        return f.op(f"iconcat {lo}, {hi}")

    seed = c128(0x0123456789ABCDEF_FEDCBA9876543210)

    def body(i, s):
        m = c128(MUL)
        c = c128(INC)
        x = f.op(f"imul {s[0]}, {m}")
        x = f.op(f"iadd {x}, {c}")
        ie = f.op(f"uextend.i128 {i}")
        x = f.op(f"bxor {x}, {ie}")
        return [x]

    (x,) = counted_loop(f, n, ["i128"], [seed], body)
    f.ins(f"return {x}")

    g = Fn("i128_mulhi", ["i128", "i128"], ["i64"])
    a, b = g.entry()
    p = g.op(f"imul {a}, {b}")
    lo, hi = g.ops(2, f"isplit {p}")
    r = g.op(f"bxor {lo}, {hi}")
    g.ins(f"return {r}")

    M128 = (1 << 128) - 1

    def ref(n):
        x = 0x0123456789ABCDEF_FEDCBA9876543210
        for i in range(n):
            x = ((x * MUL + INC) & M128) ^ i
        return "0x%032x" % x

    def mulhi(a, b):
        p = (a * b) & M128
        return s64((p & M64) ^ (p >> 64))

    write("i128_lcg", "A 128-bit LCG (PCG's multiplier): i128 multiply, add and return in register\n"
          "pairs.",
          HDR_I128, [f, g], {
              "i128_lcg": [((n,), ref(n)) for n in (0, 1, 10, 1000)],
              "i128_mulhi": [((3, 5), mulhi(3, 5)),
                             (("0x00000000000000010000000000000000", "0x00000000000000010000000000000001"),
                              mulhi(1 << 64, (1 << 64) + 1))]})


@program
def gcd_sum():
    g = Fn("gcd", ["i64", "i64"], ["i64"])
    a, b = g.entry()
    g.ins(f"jump block1({a}, {b})")
    x, y = g.block("block1", ["i64", "i64"])
    z = g.iconst("i64", 0)
    c = g.op(f"icmp eq {y}, {z}")
    g.ins(f"brif {c}, block3, block2")
    g.block("block2")
    r = g.op(f"urem {x}, {y}")
    g.ins(f"jump block1({y}, {r})")
    g.block("block3")
    g.ins(f"return {x}")

    f = Fn("gcd_sum", ["i64"], ["i64"], ["fn0 = %gcd(i64, i64) -> i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)

    def body(i, s):
        one = f.iconst("i64", 1)
        k = f.op(f"iadd {i}, {one}")
        m = f.iconst("i64", 720720)
        g1 = f.op(f"call fn0({k}, {m})")
        k2 = f.op(f"imul {k}, {k}")
        k2 = f.op(f"iadd {k2}, {one}")
        g2 = f.op(f"call fn0({k2}, {n})")
        t = f.op(f"iadd {g1}, {g2}")
        return [f.op(f"iadd {s[0]}, {t}")]

    (r,) = counted_loop(f, n, ["i64"], [z], body)
    f.ins(f"return {r}")

    def ref(n):
        return sum(math.gcd(k, 720720) + math.gcd(k * k + 1, n) for k in range(1, n + 1))

    write("gcd_sum", "Euclid's gcd (unsigned remainder: rax/rdx constraints) called twice per step.",
          HDR, [g, f], {"gcd": [((48, 18), 6), ((17, 5), 1)],
                        "gcd_sum": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def collatz():
    f = Fn("collatz", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)
    f.nb = 1

    def body(i, s):
        best, arg = s
        one = f.iconst("i64", 1)
        start = f.op(f"iadd {i}, {one}")
        b = f.nb
        f.nb += 5
        f.ins(f"jump block{b}({start}, {z})")
        x, steps = f.block(f"block{b}", ["i64", "i64"])
        one2 = f.iconst("i64", 1)
        done = f.op(f"icmp ule {x}, {one2}")
        f.ins(f"brif {done}, block{b + 4}({steps}), block{b + 1}")
        f.block(f"block{b + 1}")
        low = f.op(f"band {x}, {one2}")
        f.ins(f"brif {low}, block{b + 2}, block{b + 3}")
        f.block(f"block{b + 2}")
        three = f.iconst("i64", 3)
        y = f.op(f"imul {x}, {three}")
        y = f.op(f"iadd {y}, {one2}")
        st1 = f.op(f"iadd {steps}, {one2}")
        f.ins(f"jump block{b}({y}, {st1})")
        f.block(f"block{b + 3}")
        h = f.op(f"ushr {x}, {one2}")
        st2 = f.op(f"iadd {steps}, {one2}")
        f.ins(f"jump block{b}({h}, {st2})")
        (steps_f,) = f.block(f"block{b + 4}", ["i64"])
        better = f.op(f"icmp ugt {steps_f}, {best}")
        nb = f.op(f"select {better}, {steps_f}, {best}")
        na = f.op(f"select {better}, {start}, {arg}")
        return [nb, na]

    best, arg = counted_loop(f, n, ["i64", "i64"], [z, z], body)
    c = f.iconst("i64", 1000000)
    r = f.op(f"imul {arg}, {c}")
    r = f.op(f"iadd {r}, {best}")
    f.ins(f"return {r}")

    def ref(n):
        best, arg = 0, 0
        for start in range(1, n + 1):
            x, steps = start, 0
            while x > 1:
                x = 3 * x + 1 if x & 1 else x >> 1
                steps += 1
            if steps > best:
                best, arg = steps, start
        return arg * 1000000 + best

    write("collatz", "Longest Collatz chain below n: a data-dependent inner loop with selects.",
          HDR, [f], {"collatz": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def sieve():
    N = 65536
    f = Fn("sieve", ["i64"], ["i64"], [f"ss0 = explicit_slot {N}"])
    (n,) = f.entry()
    base = f.op("stack_addr.i64 ss0")
    f.nb = 1
    one8 = f.iconst("i32", 1)

    def clear(k, _):
        p = f.op(f"iadd {base}, {k}")
        f.ins(f"istore8 {one8}, {p}")
        return []
    counted_loop(f, n, [], [], clear)

    def outer(i, s):
        two = f.iconst("i64", 2)
        p = f.op(f"iadd {i}, {two}")
        addr = f.op(f"iadd {base}, {p}")
        flag = f.op(f"uload8.i32 {addr}")
        b = f.nb
        f.nb += 4
        f.ins(f"brif {flag}, block{b}, block{b + 3}({s[0]})")
        f.block(f"block{b}")
        one = f.iconst("i64", 1)
        cnt = f.op(f"iadd {s[0]}, {one}")
        sq = f.op(f"imul {p}, {p}")
        f.ins(f"jump block{b + 1}({sq})")
        (m,) = f.block(f"block{b + 1}", ["i64"])
        lt = f.op(f"icmp slt {m}, {n}")
        f.ins(f"brif {lt}, block{b + 2}, block{b + 3}({cnt})")
        f.block(f"block{b + 2}")
        am = f.op(f"iadd {base}, {m}")
        zero8 = f.iconst("i32", 0)
        f.ins(f"istore8 {zero8}, {am}")
        m2 = f.op(f"iadd {m}, {p}")
        f.ins(f"jump block{b + 1}({m2})")
        (c2,) = f.block(f"block{b + 3}", ["i64"])
        return [c2]

    z = f.iconst("i64", 0)
    two = f.iconst("i64", 2)
    lim = f.op(f"isub {n}, {two}")
    (r,) = counted_loop(f, lim, ["i64"], [z], outer)
    f.ins(f"return {r}")

    def ref(n):
        if n < 3:
            return 0
        flags = [1] * n
        cnt = 0
        for p in range(2, n):
            if flags[p]:
                cnt += 1
                for m in range(p * p, n, p):
                    flags[m] = 0
        return cnt

    write("sieve", f"Sieve of Eratosthenes over a {N}-byte stack slot: the number of primes below n\n"
          f"(n <= {N}).",
          HDR, [f], {"sieve": [((n,), ref(n)) for n in (0, 3, 10, 100, 65536)]})


@program
def mandelbrot():
    f = Fn("mandelbrot", ["i64"], ["i64"])
    (n,) = f.entry()
    nf = f.op(f"fcvt_from_sint.f64 {n}")
    z = f.iconst("i64", 0)
    f.nb = 1

    def row(y, s):
        def col(x, s2):
            xf = f.op(f"fcvt_from_sint.f64 {x}")
            yf = f.op(f"fcvt_from_sint.f64 {y}")
            w = f.f64(2.5)
            m2 = f.f64(-2.0)
            m125 = f.f64(-1.25)
            cx = f.op(f"fmul {w}, {xf}")
            cx = f.op(f"fdiv {cx}, {nf}")
            cx = f.op(f"fadd {m2}, {cx}")
            cy = f.op(f"fmul {w}, {yf}")
            cy = f.op(f"fdiv {cy}, {nf}")
            cy = f.op(f"fadd {m125}, {cy}")
            zero = f.f64(0.0)
            limit = f.iconst("i64", 50)

            def it(k, zz):
                zr, zi, cnt = zz
                rr = f.op(f"fmul {zr}, {zr}")
                ii = f.op(f"fmul {zi}, {zi}")
                ri = f.op(f"fmul {zr}, {zi}")
                nr = f.op(f"fsub {rr}, {ii}")
                nr = f.op(f"fadd {nr}, {cx}")
                ni = f.op(f"fadd {ri}, {ri}")
                ni = f.op(f"fadd {ni}, {cy}")
                mag = f.op(f"fadd {rr}, {ii}")
                four = f.f64(4.0)
                inside = f.op(f"fcmp le {mag}, {four}")
                inc = f.op(f"uextend.i64 {inside}")
                cnt2 = f.op(f"iadd {cnt}, {inc}")
                # Once outside, freeze the point (keeps the loop count fixed and the test exact).
                nr2 = f.op(f"select {inside}, {nr}, {zr}")
                ni2 = f.op(f"select {inside}, {ni}, {zi}")
                return [nr2, ni2, cnt2]
            _, _, cnt = counted_loop(f, limit, ["f64", "f64", "i64"], [zero, zero, z], it)
            return [f.op(f"iadd {s2[0]}, {cnt}")]
        (t,) = counted_loop(f, n, ["i64"], [s[0]], col)
        return [t]

    (r,) = counted_loop(f, n, ["i64"], [z], row)
    f.ins(f"return {r}")

    def ref(n):
        total = 0
        for y in range(n):
            for x in range(n):
                cx = -2.0 + (2.5 * float(x)) / float(n)
                cy = -1.25 + (2.5 * float(y)) / float(n)
                zr = zi = 0.0
                cnt = 0
                for _ in range(50):
                    rr, ii, ri = zr * zr, zi * zi, zr * zi
                    nr = (rr - ii) + cx
                    ni = (ri + ri) + cy
                    if rr + ii <= 4.0:
                        cnt += 1
                        zr, zi = nr, ni
                total += cnt
        return total

    write("mandelbrot", "Mandelbrot iteration counts on an n x n grid (f64, fixed 50 iterations per\n"
          "point with a select-based escape).",
          HDR, [f], {"mandelbrot": [((n,), ref(n)) for n in (0, 1, 4, 16)]})


@program
def hash_mix():
    f = Fn("hash_mix", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)
    f.nb = 1

    def body(i, s):
        h = f.iconst("i64", s64(0xCBF29CE484222325))
        prime = f.iconst("i64", 0x100000001B3)
        for byte in range(8):
            sh = f.iconst("i64", 8 * byte)
            b = f.op(f"ushr {i}, {sh}")
            ff = f.iconst("i64", 0xFF)
            b = f.op(f"band {b}, {ff}")
            h = f.op(f"bxor {h}, {b}")
            h = f.op(f"imul {h}, {prime}")
        # murmur3 fmix64
        for sh, mul in ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53), (33, None)):
            c = f.iconst("i64", sh)
            t = f.op(f"ushr {h}, {c}")
            h = f.op(f"bxor {h}, {t}")
            if mul is not None:
                m = f.iconst("i64", s64(mul))
                h = f.op(f"imul {h}, {m}")
        return [f.op(f"iadd {s[0]}, {h}")]

    (r,) = counted_loop(f, n, ["i64"], [z], body)
    f.ins(f"return {r}")

    def ref(n):
        s = 0
        for i in range(n):
            h = 0xCBF29CE484222325
            for byte in range(8):
                h = ((h ^ ((i >> (8 * byte)) & 0xFF)) * 0x100000001B3) & M64
            h ^= h >> 33
            h = (h * 0xFF51AFD7ED558CCD) & M64
            h ^= h >> 33
            h = (h * 0xC4CEB9FE1A85EC53) & M64
            h ^= h >> 33
            s = (s + h) & M64
        return s64(s)

    write("hash_mix", "FNV-1a over the 8 bytes of each index followed by murmur3's fmix64.",
          HDR, [f], {"hash_mix": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def mixed_call():
    g = Fn("blend", ["i64", "f64", "i32", "f64", "i64", "f32", "f64", "i64", "f64", "f64", "f64", "f64",
                     "f64", "f64", "i64"], ["f64"])
    p = g.entry()
    acc = g.op(f"fcvt_from_sint.f64 {p[0]}")
    for k, v in enumerate(p[1:], start=1):
        ty = g.params[k]
        if ty == "i64":
            x = g.op(f"fcvt_from_sint.f64 {v}")
        elif ty == "i32":
            x = g.op(f"fcvt_from_sint.f64 {v}")
        elif ty == "f32":
            x = g.op(f"fpromote.f64 {v}")
        else:
            x = v
        c = g.f64(float(k) + 0.5)
        t = g.op(f"fmul {x}, {c}")
        acc = g.op(f"fadd {acc}, {t}")
    g.ins(f"return {acc}")

    f = Fn("mixed_call", ["i64"], ["i64"], ["fn0 = %blend(" + ", ".join(g.params) + ") -> f64"])
    (n,) = f.entry()
    z = f.f64(0.0)

    def body(i, s):
        args = []
        for k, ty in enumerate(g.params):
            c = f.iconst("i64", k + 1)
            t = f.op(f"iadd {i}, {c}")
            if ty == "i64":
                args.append(t)
            elif ty == "i32":
                args.append(f.op(f"ireduce.i32 {t}"))
            elif ty == "f32":
                args.append(f.op(f"fcvt_from_sint.f32 {t}"))
            else:
                args.append(f.op(f"fcvt_from_sint.f64 {t}"))
        r = f.op(f"call fn0({', '.join(args)})")
        r2 = f.op(f"fadd {s[0]}, {r}")
        # Some float arguments stay live across the call.
        r3 = f.op(f"fsub {r2}, {args[1]}")
        r4 = f.op(f"fadd {r3}, {args[3]}")
        return [r4]

    (r,) = counted_loop(f, n, ["f64"], [z], body)
    bits = f.op(f"bitcast.i64 {r}")
    f.ins(f"return {bits}")

    def blend(args):
        acc = float(args[0])
        for k, v in enumerate(args[1:], start=1):
            acc = acc + float(v) * (float(k) + 0.5)
        return acc

    def ref(n):
        s = 0.0
        for i in range(n):
            args = [i + k + 1 for k in range(len(g.params))]
            s = ((s + blend(args)) - float(args[1])) + float(args[3])
        return f64bits(s)

    write("mixed_call", "A 15-argument callee mixing i64, i32, f32 and f64 parameters (register and\n"
          "stack arguments of both classes), floats live across the call.",
          HDR, [g, f], {"mixed_call": [((n,), ref(n)) for n in (0, 1, 10, 100)]})


@program
def clamp_select():
    f = Fn("clamp_select", ["i64"], ["i64"])
    (n,) = f.entry()
    z = f.iconst("i64", 0)
    seed = f.iconst("i64", 42)

    def body(i, s):
        acc, x = s
        a = f.iconst("i64", 6364136223846793005)
        c = f.iconst("i64", 1442695040888963407)
        x2 = f.op(f"imul {x}, {a}")
        x2 = f.op(f"iadd {x2}, {c}")
        sh = f.iconst("i64", 40)
        v = f.op(f"sshr {x2}, {sh}")
        lo = f.iconst("i64", -1000)
        hi = f.iconst("i64", 5000)
        cl = f.op(f"smax {v}, {lo}")
        cl = f.op(f"smin {cl}, {hi}")
        neg = f.op(f"icmp slt {v}, {z}")
        nv = f.op(f"ineg {v}")
        ab = f.op(f"select {neg}, {nv}, {v}")
        um = f.op(f"umin {ab}, {i}")
        t = f.op(f"iadd {cl}, {um}")
        return [f.op(f"iadd {acc}, {t}"), x2]

    acc, x = counted_loop(f, n, ["i64", "i64"], [z, seed], body)
    f.ins(f"return {acc}")

    def ref(n):
        acc, x = 0, 42
        for i in range(n):
            x = (x * 6364136223846793005 + 1442695040888963407) & M64
            v = s64(x) >> 40
            cl = min(max(v, -1000), 5000)
            ab = -v if v < 0 else v
            um = min(ab & M64, i)
            acc = (acc + cl + um) & M64
        return s64(acc)

    write("clamp_select", "Branch-free clamping: smin/smax/umin and select on an LCG stream.",
          HDR, [f], {"clamp_select": [((n,), ref(n)) for n in (0, 1, 10, 1000)]})


@program
def bytecode_vm():
    # Register machine: 4 registers in a stack slot, code words op | a << 8 | b << 16 | imm << 32.
    HALT, LI, ADD, MUL, XOR, DEC, JNZ, SHR, ADDI = range(9)

    def enc(op, a=0, b=0, imm=0):
        return op | (a << 8) | (b << 16) | ((imm & M32) << 32)
    code = [
        enc(LI, 0, 0, 1),        # r0 = 1
        enc(LI, 1, 0, 7),        # r1 = 7
        enc(LI, 3, 0, 0),        # r3 = 0
        # loop (pc 3): r2 holds the count, set from the argument
        enc(MUL, 1, 0),          # r1 *= r0
        enc(ADDI, 1, 0, 12345),  # r1 += 12345
        enc(XOR, 0, 1),          # r0 ^= r1
        enc(SHR, 0, 0, 3),       # r0 >>= 3
        enc(ADD, 3, 1),          # r3 += r1
        enc(ADDI, 0, 0, 3),      # r0 += 3
        enc(DEC, 2),             # r2 -= 1
        enc(JNZ, 2, 0, 3),       # if r2 != 0 goto 3
        enc(XOR, 3, 0),          # r3 ^= r0
        enc(HALT, 3),            # return r3
    ]
    f = Fn("bytecode_vm", ["i64"], ["i64"], [f"ss0 = explicit_slot {8 * len(code)}", "ss1 = explicit_slot 32"])
    (n,) = f.entry()
    cb = f.op("stack_addr.i64 ss0")
    rb = f.op("stack_addr.i64 ss1")
    for k, w in enumerate(code):
        c = f.iconst("i64", s64(w))
        f.ins(f"store {c}, {cb}+{8 * k}")
    f.ins(f"store {n}, {rb}+16")
    pc0 = f.iconst("i64", 0)
    f.ins(f"jump block1({pc0})")
    (pc,) = f.block("block1", ["i64"])
    eight = f.iconst("i64", 8)
    off = f.op(f"imul {pc}, {eight}")
    pa = f.op(f"iadd {cb}, {off}")
    w = f.op(f"load.i64 {pa}")
    opm = f.iconst("i64", 0xFF)
    op = f.op(f"band {w}, {opm}")
    s8 = f.iconst("i64", 8)
    s16 = f.iconst("i64", 16)
    s32c = f.iconst("i64", 32)
    a = f.op(f"ushr {w}, {s8}")
    a = f.op(f"band {a}, {opm}")
    b = f.op(f"ushr {w}, {s16}")
    b = f.op(f"band {b}, {opm}")
    imm = f.op(f"sshr {w}, {s32c}")
    ra = f.op(f"imul {a}, {eight}")
    ra = f.op(f"iadd {rb}, {ra}")
    rbb = f.op(f"imul {b}, {eight}")
    rbb = f.op(f"iadd {rb}, {rbb}")
    va = f.op(f"load.i64 {ra}")
    vb = f.op(f"load.i64 {rbb}")
    one = f.iconst("i64", 1)
    npc = f.op(f"iadd {pc}, {one}")
    op32 = f.op(f"ireduce.i32 {op}")
    f.ins(f"br_table {op32}, block12, [block2, block3, block4, block5, block6, block7, block8, block9, block10]")
    f.block("block2")  # HALT
    f.ins(f"return {va}")
    f.block("block3")  # LI
    f.ins(f"jump block11({imm})")
    f.block("block4")  # ADD
    x = f.op(f"iadd {va}, {vb}")
    f.ins(f"jump block11({x})")
    f.block("block5")  # MUL
    x = f.op(f"imul {va}, {vb}")
    f.ins(f"jump block11({x})")
    f.block("block6")  # XOR
    x = f.op(f"bxor {va}, {vb}")
    f.ins(f"jump block11({x})")
    f.block("block7")  # DEC
    x = f.op(f"isub {va}, {one}")
    f.ins(f"jump block11({x})")
    f.block("block8")  # JNZ
    f.ins(f"brif {va}, block1({imm}), block1({npc})")
    f.block("block9")  # SHR
    x = f.op(f"ushr {va}, {imm}")
    f.ins(f"jump block11({x})")
    f.block("block10")  # ADDI
    x = f.op(f"iadd {va}, {imm}")
    f.ins(f"jump block11({x})")
    (res,) = f.block("block11", ["i64"])
    f.ins(f"store {res}, {ra}")
    f.ins(f"jump block1({npc})")
    f.block("block12")
    f.ins("trap user1")

    def ref(n):
        r = [0, 0, n & M64, 0]
        pc = 0
        while True:
            w = code[pc]
            op, a, b, imm = w & 0xFF, (w >> 8) & 0xFF, (w >> 16) & 0xFF, s32(w >> 32)
            pc += 1
            if op == HALT:
                return s64(r[a])
            elif op == LI:
                r[a] = imm & M64
            elif op == ADD:
                r[a] = (r[a] + r[b]) & M64
            elif op == MUL:
                r[a] = (r[a] * r[b]) & M64
            elif op == XOR:
                r[a] ^= r[b]
            elif op == DEC:
                r[a] = (r[a] - 1) & M64
            elif op == JNZ:
                if r[a]:
                    pc = imm
            elif op == SHR:
                r[a] >>= imm
            elif op == ADDI:
                r[a] = (r[a] + imm) & M64

    write("bytecode_vm", "A register-machine bytecode interpreter: code and registers in stack slots,\n"
          "br_table dispatch; the argument is the loop count of the interpreted program (>= 1).",
          HDR, [f], {"bytecode_vm": [((n,), ref(n)) for n in (1, 2, 10, 1000)]})


@program
def quicksort_rec():
    N = 256
    q = Fn("qsort", ["i64", "i64", "i64"], [], ["fn0 = %qsort(i64, i64, i64)"])
    base, lo, hi = q.entry()
    c = q.op(f"icmp sge {lo}, {hi}")
    q.ins(f"brif {c}, block9, block1")
    q.block("block1")
    one = q.iconst("i64", 1)
    eight = q.iconst("i64", 8)
    ho = q.op(f"imul {hi}, {eight}")
    hp = q.op(f"iadd {base}, {ho}")
    pivot = q.op(f"load.i64 {hp}")
    q.ins(f"jump block2({lo}, {lo})")
    i, j = q.block("block2", ["i64", "i64"])
    cj = q.op(f"icmp slt {j}, {hi}")
    q.ins(f"brif {cj}, block3, block6")
    q.block("block3")
    jo = q.op(f"imul {j}, {eight}")
    jp = q.op(f"iadd {base}, {jo}")
    vj = q.op(f"load.i64 {jp}")
    lt = q.op(f"icmp slt {vj}, {pivot}")
    j1 = q.op(f"iadd {j}, {one}")
    q.ins(f"brif {lt}, block4, block2({i}, {j1})")
    q.block("block4")
    io = q.op(f"imul {i}, {eight}")
    ip = q.op(f"iadd {base}, {io}")
    vi = q.op(f"load.i64 {ip}")
    q.ins(f"store {vj}, {ip}")
    q.ins(f"store {vi}, {jp}")
    i1 = q.op(f"iadd {i}, {one}")
    q.ins(f"jump block2({i1}, {j1})")
    q.block("block6")
    io2 = q.op(f"imul {i}, {eight}")
    ip2 = q.op(f"iadd {base}, {io2}")
    vi2 = q.op(f"load.i64 {ip2}")
    q.ins(f"store {pivot}, {ip2}")
    q.ins(f"store {vi2}, {hp}")
    im = q.op(f"isub {i}, {one}")
    ip1 = q.op(f"iadd {i}, {one}")
    q.ins(f"call fn0({base}, {lo}, {im})")
    q.ins(f"call fn0({base}, {ip1}, {hi})")
    q.ins("return")
    q.block("block9")
    q.ins("return")

    f = Fn("quicksort_rec", ["i64"], ["i64"], [f"ss0 = explicit_slot {8 * N}", "fn0 = %qsort(i64, i64, i64)"])
    (reps,) = f.entry()
    base = f.op("stack_addr.i64 ss0")
    z = f.iconst("i64", 0)
    nn = f.iconst("i64", N)
    f.nb = 1

    def rep_body(rep, s):
        def fill(k, st):
            a = f.iconst("i64", 2862933555777941757)
            c = f.iconst("i64", 3037000493)
            x = f.op(f"imul {st[0]}, {a}")
            x = f.op(f"iadd {x}, {c}")
            e = f.iconst("i64", 8)
            off = f.op(f"imul {k}, {e}")
            p = f.op(f"iadd {base}, {off}")
            sh = f.iconst("i64", 20)
            v = f.op(f"sshr {x}, {sh}")
            f.ins(f"store {v}, {p}")
            return [x]
        counted_loop(f, nn, ["i64"], [rep], fill)
        last = f.iconst("i64", N - 1)
        f.ins(f"call fn0({base}, {z}, {last})")

        def check(k, st):
            e = f.iconst("i64", 8)
            off = f.op(f"imul {k}, {e}")
            p = f.op(f"iadd {base}, {off}")
            v = f.op(f"load.i64 {p}")
            t = f.op(f"imul {v}, {k}")
            return [f.op(f"bxor {st[0]}, {t}")]
        (t,) = counted_loop(f, nn, ["i64"], [z], check)
        return [f.op(f"iadd {s[0]}, {t}")]

    (r,) = counted_loop(f, reps, ["i64"], [z], rep_body)
    f.ins(f"return {r}")

    def ref(reps):
        s = 0
        for rep in range(reps):
            x = rep
            a = []
            for _ in range(N):
                x = (x * 2862933555777941757 + 3037000493) & M64
                a.append(s64(x) >> 20)
            a.sort()
            t = 0
            for k, v in enumerate(a):
                t ^= (v * k) & M64
            s = (s + t) & M64
        return s64(s)

    write("quicksort_rec", "Recursive quicksort (Lomuto partition) of 256 i64 values in a stack slot:\n"
          "recursion with a pointer and bounds live across the first recursive call.",
          HDR, [q, f], {"quicksort_rec": [((n,), ref(n)) for n in (0, 1, 3, 10)]})


if __name__ == "__main__":
    for p in PROGRAMS:
        p()
    print(f"wrote {len(PROGRAMS)} programs")
