//! A text format for a regalloc2 function together with its `MachineEnv`, for people to
//! read and write: regression cases, shrunk failures from `ragreedy stress`, and
//! `ragreedy dump --format text`. [`print`] writes any `Function`; [`parse`] reads the text
//! back into a [`TestFunc`] whose every `Function`-trait answer equals the original's, so
//! print → parse → print is the identity. The syntax, with an example, is in
//! docs/text-format.md.
//!
//! The parser never panics: malformed text gives a [`ParseError`] with its 1-based line
//! number. It checks what the text itself can get wrong (syntax, classes of fixed registers,
//! encodable operands, block references in range, the layout of numbered lines) and leaves
//! regalloc2's input rules (SSA, CFG shape) to [`validate`](crate::validate) and the
//! allocators, so that invalid functions can still be written down.

use std::fmt::{self, Write as _};

use regalloc2::{
    Block, Function, Inst, InstRange, MachineEnv, Operand, OperandConstraint, OperandKind,
    OperandPos, PReg, PRegSet, RegClass, VReg,
};

use crate::builder::{CLASSES, InstData, InstKind, TestFunc};

/// A parse failure: the 1-based line it was found on and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

const CLASS_NAMES: [&str; 3] = ["int", "float", "vector"];

fn class_letter(c: RegClass) -> char {
    match c {
        RegClass::Int => 'i',
        RegClass::Float => 'f',
        RegClass::Vector => 'v',
    }
}

fn vreg_text(v: VReg) -> String {
    format!("v{}{}", v.vreg(), class_letter(v.class()))
}

fn list<T>(items: impl IntoIterator<Item = T>, f: impl Fn(T) -> String) -> String {
    let v: Vec<String> = items.into_iter().map(f).collect();
    v.join(", ")
}

/// A register set, runs of three or more consecutive registers of one class written as
/// `pA..pB` (inclusive).
fn set_text(set: PRegSet) -> String {
    let regs: Vec<PReg> = set.into_iter().collect();
    let mut parts = vec![];
    let mut i = 0;
    while i < regs.len() {
        let mut j = i;
        while j + 1 < regs.len()
            && regs[j + 1].class() == regs[i].class()
            && regs[j + 1].hw_enc() == regs[j].hw_enc() + 1
        {
            j += 1;
        }
        if j >= i + 2 {
            parts.push(format!("{}..{}", regs[i], regs[j]));
            i = j + 1;
        } else {
            parts.push(regs[i].to_string());
            i += 1;
        }
    }
    parts.join(", ")
}

fn operand_text(op: Operand) -> String {
    if let Some(p) = op.as_fixed_nonallocatable()
        && op == Operand::fixed_nonallocatable(p)
    {
        return format!("nonalloc {p}");
    }
    let kind = match op.kind() {
        OperandKind::Def => "def",
        OperandKind::Use => "use",
    };
    let constraint = match op.constraint() {
        OperandConstraint::Any => "any".to_string(),
        OperandConstraint::Reg => "reg".to_string(),
        OperandConstraint::Stack => "stack".to_string(),
        OperandConstraint::FixedReg(p) => format!("fixed {p}"),
        OperandConstraint::Reuse(k) => format!("reuse({k})"),
        OperandConstraint::Limit(n) => format!("limit({n})"),
    };
    // Only the unusual position is written: uses read early, defs write late.
    let pos = match (op.kind(), op.pos()) {
        (OperandKind::Use, OperandPos::Late) => " late",
        (OperandKind::Def, OperandPos::Early) => " early",
        _ => "",
    };
    format!("{kind} {} {constraint}{pos}", vreg_text(op.vreg()))
}

/// `f` and `env` in the text format (see the module documentation). Every field of the
/// `Function` trait is written, so [`parse`] gives back an equal function whenever `f`'s
/// blocks each hold at least one instruction and tile the instruction space in order, which
/// every valid regalloc2 input does.
pub fn print<F: Function + ?Sized>(f: &F, env: &MachineEnv) -> String {
    let mut s = String::new();
    for (c, name) in CLASS_NAMES.iter().enumerate() {
        let (pref, nonpref) = (
            env.preferred_regs_by_class[c],
            env.non_preferred_regs_by_class[c],
        );
        let scratch = env.scratch_by_class[c];
        if pref == PRegSet::empty() && nonpref == PRegSet::empty() && scratch.is_none() {
            continue;
        }
        let _ = write!(
            s,
            "env {name} preferred [{}] non_preferred [{}]",
            set_text(pref),
            set_text(nonpref)
        );
        if let Some(p) = scratch {
            let _ = write!(s, " scratch {p}");
        }
        s.push('\n');
    }
    if !env.fixed_stack_slots.is_empty() {
        let _ = writeln!(
            s,
            "env fixed_stack_slots [{}]",
            list(&env.fixed_stack_slots, |p| p.to_string())
        );
    }
    let _ = write!(
        s,
        "func entry block{} num_vregs {} spillslot_size [{}]",
        f.entry_block().0,
        f.num_vregs(),
        list(CLASSES, |c| f.spillslot_size(c).to_string())
    );
    if f.allow_multiple_vreg_defs() {
        s.push_str(" allow_multiple_vreg_defs");
    }
    if f.multi_spillslot_named_by_last_slot() {
        s.push_str(" multi_spillslot_named_by_last_slot");
    }
    s.push('\n');

    let nb = f.num_blocks();
    // Predecessors are written whenever leaving them out would not give them back: the
    // parser derives omitted ones from the successor lists.
    let mut derived_preds = vec![0usize; nb];
    for b in 0..nb {
        for succ in f.block_succs(Block::new(b)) {
            if let Some(n) = derived_preds.get_mut(succ.0 as usize) {
                *n += 1;
            }
        }
    }
    for (b, &derived) in derived_preds.iter().enumerate() {
        let block = Block::new(b);
        let _ = write!(s, "block{b}");
        let params = f.block_params(block);
        if !params.is_empty() {
            let _ = write!(s, "({})", list(params, |v| vreg_text(*v)));
        }
        s.push(':');
        let preds = f.block_preds(block);
        if !preds.is_empty() || derived > 0 {
            let _ = write!(s, " preds [{}]", list(preds, |p| p.0.to_string()));
        }
        let succs = f.block_succs(block);
        if !succs.is_empty() {
            let _ = write!(s, " succs [{}]", list(succs, |p| p.0.to_string()));
        }
        s.push('\n');
        let range = f.block_insns(block);
        for inst in range.iter() {
            let _ = write!(s, "  i{}:", inst.0);
            let ops = f.inst_operands(inst);
            if f.is_branch(inst) {
                s.push_str(" branch");
            } else if f.is_ret(inst) {
                s.push_str(" ret");
            } else if ops.is_empty() {
                s.push_str(" op");
            }
            if !ops.is_empty() {
                let _ = write!(s, " {}", list(ops, |op| operand_text(*op)));
            }
            let clobbers = f.inst_clobbers(inst);
            if clobbers != PRegSet::empty() {
                let _ = write!(s, "; clobbers [{}]", set_text(clobbers));
            }
            if inst.index() + 1 == range.first().index() + range.len() && !succs.is_empty() {
                let targets = list(succs.iter().enumerate(), |(k, succ)| {
                    let args = f.branch_blockparams(block, inst, k);
                    format!("block{}({})", succ.0, list(args, |v| vreg_text(*v)))
                });
                let _ = write!(s, " -> {targets}");
            }
            s.push('\n');
        }
    }
    for &(v, from, to, label) in f.debug_value_labels() {
        let _ = writeln!(
            s,
            "debug {} from i{} to i{} label {label}",
            vreg_text(v),
            from.0,
            to.0
        );
    }
    s
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    /// A run of letters, digits and underscores: keywords, numbers, `v3i`, `p0f`, `block2`.
    Word(String),
    Punct(char),
    Arrow,
    DotDot,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "`{w}`"),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::Arrow => f.write_str("`->`"),
            Tok::DotDot => f.write_str("`..`"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Tok>, String> {
    let mut toks = vec![];
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            let mut end = start + c.len_utf8();
            while let Some(&(i, d)) = chars.peek() {
                if !(d.is_ascii_alphanumeric() || d == '_') {
                    break;
                }
                end = i + d.len_utf8();
                chars.next();
            }
            toks.push(Tok::Word(text[start..end].to_string()));
        } else if c == '-' && chars.peek().is_some_and(|&(_, d)| d == '>') {
            chars.next();
            toks.push(Tok::Arrow);
        } else if c == '.' && chars.peek().is_some_and(|&(_, d)| d == '.') {
            chars.next();
            toks.push(Tok::DotDot);
        } else if "()[],:;".contains(c) {
            toks.push(Tok::Punct(c));
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(toks)
}

/// A cursor over one line's tokens; every method reports what it expected on failure.
struct Line {
    toks: Vec<Tok>,
    pos: usize,
}

type R<T> = Result<T, String>;

impl Line {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_word(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Word(w)) => Some(w),
            _ => None,
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn describe_next(&self) -> String {
        self.peek()
            .map_or_else(|| "end of line".to_string(), |t| t.to_string())
    }

    fn word(&mut self, what: &str) -> R<String> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(format!("expected {what}, found {}", self.describe_next())),
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn punct(&mut self, c: char) -> R<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(format!("expected `{c}`, found {}", self.describe_next()))
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.peek_word() == Some(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_arrow(&mut self) -> bool {
        if self.peek() == Some(&Tok::Arrow) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn end(&self) -> R<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(format!(
                "unexpected {} at end of line",
                self.describe_next()
            ))
        }
    }

    fn number(&mut self, what: &str) -> R<usize> {
        let w = self.word(what)?;
        parse_number(&w, what)
    }

    /// `[item, item, ...]`, possibly empty.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Line) -> R<T>) -> R<Vec<T>> {
        self.punct('[')?;
        let mut out = vec![];
        if self.eat_punct(']') {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat_punct(']') {
                return Ok(out);
            }
            self.punct(',')?;
        }
    }

    /// `(v1i, v2f)`, possibly empty.
    fn vreg_tuple(&mut self) -> R<Vec<VReg>> {
        self.punct('(')?;
        let mut out = vec![];
        if self.eat_punct(')') {
            return Ok(out);
        }
        loop {
            out.push(self.vreg()?);
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.punct(',')?;
        }
    }

    fn vreg(&mut self) -> R<VReg> {
        let w = self.word("a vreg like `v3i`")?;
        parse_vreg(&w)
    }

    fn preg(&mut self) -> R<PReg> {
        let w = self.word("a register like `p0i`")?;
        parse_preg(&w)
    }

    /// `[p0i, p3i..p7i, ...]`: a register set, `pA..pB` standing for every register of
    /// one class from A to B inclusive.
    fn preg_set(&mut self) -> R<PRegSet> {
        let mut set = PRegSet::empty();
        for (a, b) in self.list(|l| {
            let a = l.preg()?;
            if l.peek() != Some(&Tok::DotDot) {
                return Ok((a, a));
            }
            l.pos += 1;
            let b = l.preg()?;
            if b.class() != a.class() || b.hw_enc() < a.hw_enc() {
                return Err(format!("bad register range {a}..{b}"));
            }
            Ok((a, b))
        })? {
            for hw in a.hw_enc()..=b.hw_enc() {
                set.add(PReg::new(hw, a.class()));
            }
        }
        Ok(set)
    }

    fn block(&mut self) -> R<usize> {
        let w = self.word("a block like `block2`")?;
        parse_prefixed(&w, "block", "a block like `block2`")
    }
}

fn parse_number(w: &str, what: &str) -> R<usize> {
    if w.is_empty() || !w.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected {what}, found `{w}`"));
    }
    w.parse()
        .map_err(|_| format!("{what}: `{w}` is out of range"))
}

fn parse_prefixed(w: &str, prefix: &str, what: &str) -> R<usize> {
    match w.strip_prefix(prefix) {
        Some(n) => parse_number(n, what),
        None => Err(format!("expected {what}, found `{w}`")),
    }
}

fn class_of_letter(c: u8) -> Option<RegClass> {
    match c {
        b'i' => Some(RegClass::Int),
        b'f' => Some(RegClass::Float),
        b'v' => Some(RegClass::Vector),
        _ => None,
    }
}

/// `<prefix><number><class letter>`, as in `v12i` or `p3f`.
fn parse_numbered_class(w: &str, prefix: char, what: &str) -> R<(usize, RegClass)> {
    let bad = || format!("expected {what}, found `{w}`");
    let rest = w.strip_prefix(prefix).ok_or_else(bad)?;
    let (&last, digits) = rest.as_bytes().split_last().ok_or_else(bad)?;
    let class = class_of_letter(last).ok_or_else(bad)?;
    let n = parse_number(&rest[..digits.len()], what)?;
    Ok((n, class))
}

fn parse_vreg(w: &str) -> R<VReg> {
    let (n, class) = parse_numbered_class(w, 'v', "a vreg like `v3i`")?;
    if n > VReg::MAX {
        return Err(format!("vreg number {n} above the maximum {}", VReg::MAX));
    }
    Ok(VReg::new(n, class))
}

fn parse_preg(w: &str) -> R<PReg> {
    let (n, class) = parse_numbered_class(w, 'p', "a register like `p0i`")?;
    if n > PReg::MAX {
        return Err(format!(
            "register number {n} above the maximum {}",
            PReg::MAX
        ));
    }
    Ok(PReg::new(n, class))
}

fn parse_class_name(w: &str) -> R<usize> {
    CLASS_NAMES
        .iter()
        .position(|&n| n == w)
        .ok_or_else(|| format!("expected `int`, `float` or `vector`, found `{w}`"))
}

/// One operand: `def|use VREG CONSTRAINT [early|late]` or `nonalloc PREG`.
fn parse_operand(l: &mut Line) -> R<Operand> {
    let kind_word = l.word("an operand (`def`, `use` or `nonalloc`)")?;
    let kind = match kind_word.as_str() {
        "nonalloc" => {
            let p = l.preg()?;
            return Ok(Operand::fixed_nonallocatable(p));
        }
        "def" => OperandKind::Def,
        "use" => OperandKind::Use,
        other => {
            return Err(format!(
                "expected an operand (`def`, `use` or `nonalloc`), found `{other}`"
            ));
        }
    };
    let vreg = l.vreg()?;
    let cword = l.word("a constraint (any, reg, stack, fixed, reuse, limit)")?;
    let constraint = match cword.as_str() {
        "any" => OperandConstraint::Any,
        "reg" => OperandConstraint::Reg,
        "stack" => OperandConstraint::Stack,
        "fixed" => {
            let p = l.preg()?;
            if p.class() != vreg.class() {
                return Err(format!(
                    "fixed register {p} is not of {}'s class",
                    vreg_text(vreg)
                ));
            }
            OperandConstraint::FixedReg(p)
        }
        "reuse" => {
            l.punct('(')?;
            let k = l.number("an operand index")?;
            l.punct(')')?;
            // The operand encoding holds reuse indices in 5 bits.
            if k > 31 {
                return Err(format!("reuse index {k} above 31"));
            }
            OperandConstraint::Reuse(k)
        }
        "limit" => {
            l.punct('(')?;
            let n = l.number("a register limit")?;
            l.punct(')')?;
            // The operand encoding holds log2 of a power of two up to the register count.
            if !n.is_power_of_two() || n > PReg::MAX + 1 {
                return Err(format!(
                    "limit({n}) must be a power of two at most {}",
                    PReg::MAX + 1
                ));
            }
            OperandConstraint::Limit(n)
        }
        other => {
            return Err(format!(
                "expected a constraint (any, reg, stack, fixed, reuse, limit), found `{other}`"
            ));
        }
    };
    let usual = match kind {
        OperandKind::Def => OperandPos::Late,
        OperandKind::Use => OperandPos::Early,
    };
    let pos = if l.eat_word("early") {
        OperandPos::Early
    } else if l.eat_word("late") {
        OperandPos::Late
    } else {
        usual
    };
    Ok(Operand::new(vreg, constraint, kind, pos))
}

#[derive(Default)]
struct PBlock {
    params: Vec<VReg>,
    preds: Option<Vec<usize>>,
    succs: Option<Vec<usize>>,
    /// From the `->` of the block's last instruction.
    targets: Option<Vec<(usize, Vec<VReg>)>>,
    insts: Vec<InstData>,
}

#[derive(Default)]
struct Parser {
    env: Option<MachineEnv>,
    entry: Option<usize>,
    num_vregs: Option<usize>,
    spillslot_size: Option<[usize; 3]>,
    multi_by_last: bool,
    multi_defs: bool,
    blocks: Vec<PBlock>,
    num_insts: usize,
    labels: Vec<(VReg, Inst, Inst, u32)>,
    /// Every block number the text names, with its line, checked once the count is known.
    block_refs: Vec<(usize, usize)>,
    /// Highest vreg number named + 1 (fixed non-allocatable operands excluded).
    vreg_bound: usize,
}

impl Parser {
    fn env(&mut self) -> &mut MachineEnv {
        self.env.get_or_insert_with(|| MachineEnv {
            preferred_regs_by_class: [PRegSet::empty(); 3],
            non_preferred_regs_by_class: [PRegSet::empty(); 3],
            scratch_by_class: [None; 3],
            fixed_stack_slots: vec![],
        })
    }

    fn see_vreg(&mut self, v: VReg) {
        self.vreg_bound = self.vreg_bound.max(v.vreg() + 1);
    }

    fn line(&mut self, lineno: usize, l: &mut Line) -> R<()> {
        let Some(first) = l.peek_word().map(str::to_string) else {
            return Err(format!(
                "expected `env`, `func`, a block, an instruction or `debug`, found {}",
                l.describe_next()
            ));
        };
        match first.as_str() {
            "env" => self.env_line(l),
            "func" => self.func_line(l),
            "debug" => self.debug_line(l),
            w if w.starts_with("block") => self.block_line(lineno, l),
            _ => self.inst_line(lineno, l),
        }
    }

    fn before_blocks(&self, what: &str) -> R<()> {
        if self.blocks.is_empty() {
            Ok(())
        } else {
            Err(format!("`{what}` lines must come before the first block"))
        }
    }

    fn env_line(&mut self, l: &mut Line) -> R<()> {
        self.before_blocks("env")?;
        l.word("`env`")?;
        let what = l.word("a register class or `fixed_stack_slots`")?;
        if what == "fixed_stack_slots" {
            let slots = l.list(Line::preg)?;
            self.env().fixed_stack_slots.extend(slots);
            return l.end();
        }
        let c = parse_class_name(&what)?;
        let class = CLASSES[c];
        let check = |p: PReg| -> R<PReg> {
            if p.class() == class {
                Ok(p)
            } else {
                Err(format!("register {p} listed under class `{what}`"))
            }
        };
        while !l.at_end() {
            let key = l.word("`preferred`, `non_preferred` or `scratch`")?;
            match key.as_str() {
                "preferred" | "non_preferred" => {
                    let regs = l.preg_set()?;
                    for p in regs {
                        check(p)?;
                    }
                    let env = self.env();
                    let set = if key == "preferred" {
                        &mut env.preferred_regs_by_class[c]
                    } else {
                        &mut env.non_preferred_regs_by_class[c]
                    };
                    set.union_from(regs);
                }
                "scratch" => {
                    let p = check(l.preg()?)?;
                    self.env().scratch_by_class[c] = Some(p);
                }
                other => {
                    return Err(format!(
                        "expected `preferred`, `non_preferred` or `scratch`, found `{other}`"
                    ));
                }
            }
        }
        Ok(())
    }

    fn func_line(&mut self, l: &mut Line) -> R<()> {
        self.before_blocks("func")?;
        l.word("`func`")?;
        while !l.at_end() {
            let key = l.word("a function property")?;
            match key.as_str() {
                "entry" => self.entry = Some(l.block()?),
                "num_vregs" => self.num_vregs = Some(l.number("a vreg count")?),
                "spillslot_size" => {
                    let sizes = l.list(|l| l.number("a slot count"))?;
                    let sizes: [usize; 3] = sizes.try_into().map_err(|v: Vec<usize>| {
                        format!(
                            "spillslot_size needs 3 sizes (int, float, vector), found {}",
                            v.len()
                        )
                    })?;
                    self.spillslot_size = Some(sizes);
                }
                "allow_multiple_vreg_defs" => self.multi_defs = true,
                "multi_spillslot_named_by_last_slot" => self.multi_by_last = true,
                other => {
                    return Err(format!(
                        "unknown function property `{other}` (known: entry, num_vregs, \
                         spillslot_size, allow_multiple_vreg_defs, \
                         multi_spillslot_named_by_last_slot)"
                    ));
                }
            }
        }
        Ok(())
    }

    fn debug_line(&mut self, l: &mut Line) -> R<()> {
        l.word("`debug`")?;
        let v = l.vreg()?;
        self.see_vreg(v);
        let inst = |l: &mut Line, key: &str| -> R<Inst> {
            if !l.eat_word(key) {
                return Err(format!("expected `{key}`, found {}", l.describe_next()));
            }
            let w = l.word("an instruction like `i4`")?;
            let n = parse_prefixed(&w, "i", "an instruction like `i4`")?;
            u32::try_from(n)
                .map(Inst)
                .map_err(|_| format!("instruction number {n} out of range"))
        };
        let from = inst(l, "from")?;
        let to = inst(l, "to")?;
        if !l.eat_word("label") {
            return Err(format!("expected `label`, found {}", l.describe_next()));
        }
        let n = l.number("a label number")?;
        let label = u32::try_from(n).map_err(|_| format!("label {n} out of range"))?;
        self.labels.push((v, from, to, label));
        l.end()
    }

    fn block_line(&mut self, lineno: usize, l: &mut Line) -> R<()> {
        let n = l.block()?;
        if n != self.blocks.len() {
            return Err(format!(
                "block{n} out of order: blocks are numbered in layout order, expected block{}",
                self.blocks.len()
            ));
        }
        let mut b = PBlock::default();
        if l.peek() == Some(&Tok::Punct('(')) {
            b.params = l.vreg_tuple()?;
            for &v in &b.params {
                self.see_vreg(v);
            }
        }
        l.punct(':')?;
        while !l.at_end() {
            let key = l.word("`preds` or `succs`")?;
            let list = l.list(|l| l.number("a block number"))?;
            for &r in &list {
                self.block_refs.push((r, lineno));
            }
            match key.as_str() {
                "preds" if b.preds.is_none() => b.preds = Some(list),
                "succs" if b.succs.is_none() => b.succs = Some(list),
                "preds" | "succs" => return Err(format!("`{key}` given twice")),
                other => return Err(format!("expected `preds` or `succs`, found `{other}`")),
            }
        }
        self.blocks.push(b);
        Ok(())
    }

    fn inst_line(&mut self, lineno: usize, l: &mut Line) -> R<()> {
        let index = self.num_insts;
        if let Some(w) = l.peek_word()
            && w.starts_with('i')
            && w[1..].bytes().next().is_some_and(|b| b.is_ascii_digit())
        {
            let n = parse_prefixed(w, "i", "an instruction number")?;
            if n != index {
                return Err(format!(
                    "instruction label i{n} but this is instruction {index} \
                     (labels are optional; when given they count from 0 in layout order)"
                ));
            }
            l.pos += 1;
            l.punct(':')?;
        }
        let Some(block) = self.blocks.last() else {
            return Err("instruction before the first block".into());
        };
        if block.targets.is_some() {
            return Err("`->` targets are only allowed on a block's last instruction".into());
        }
        let kind = if l.eat_word("branch") {
            InstKind::Branch
        } else if l.eat_word("ret") {
            InstKind::Ret
        } else {
            l.eat_word("op");
            InstKind::Op
        };
        let mut operands = vec![];
        if matches!(l.peek_word(), Some("def" | "use" | "nonalloc")) {
            loop {
                let op = parse_operand(l)?;
                if op.as_fixed_nonallocatable().is_none() {
                    self.see_vreg(op.vreg());
                }
                operands.push(op);
                if !l.eat_punct(',') {
                    break;
                }
            }
        }
        let mut clobbers = PRegSet::empty();
        if l.eat_punct(';') {
            if !l.eat_word("clobbers") {
                return Err(format!(
                    "expected `clobbers` after `;`, found {}",
                    l.describe_next()
                ));
            }
            clobbers = l.preg_set()?;
        }
        let mut targets = None;
        if l.eat_arrow() {
            let mut t = vec![];
            loop {
                let b = l.block()?;
                self.block_refs.push((b, lineno));
                let args = l.vreg_tuple()?;
                for &v in &args {
                    self.see_vreg(v);
                }
                t.push((b, args));
                if !l.eat_punct(',') {
                    break;
                }
            }
            targets = Some(t);
        }
        if !l.at_end() {
            return Err(format!(
                "unexpected {} (an instruction is `[iN:] [op|branch|ret] operands \
                 [; clobbers [...]] [-> blockN(args), ...]`)",
                l.describe_next()
            ));
        }
        let block = self.blocks.last_mut().expect("checked above");
        if let (Some(t), Some(succs)) = (&targets, &block.succs) {
            let named: Vec<usize> = t.iter().map(|(b, _)| *b).collect();
            if &named != succs {
                return Err(format!(
                    "targets {named:?} disagree with the block's succs {succs:?}"
                ));
            }
        }
        block.targets = targets;
        block.insts.push(InstData {
            kind,
            operands,
            clobbers,
        });
        self.num_insts += 1;
        Ok(())
    }

    fn finish(self, last_line: usize) -> Result<(TestFunc, MachineEnv), ParseError> {
        let nb = self.blocks.len();
        if nb == 0 {
            return Err(ParseError {
                line: last_line,
                message: "no blocks".into(),
            });
        }
        if let Some(&(b, line)) = self.block_refs.iter().find(|&&(b, _)| b >= nb) {
            return Err(ParseError {
                line,
                message: format!("block{b} does not exist ({nb} blocks)"),
            });
        }
        let entry = self.entry.unwrap_or(0);
        if entry >= nb {
            return Err(ParseError {
                line: last_line,
                message: format!("entry block{entry} does not exist ({nb} blocks)"),
            });
        }
        let mut insts = Vec::with_capacity(self.num_insts);
        let mut ranges = Vec::with_capacity(nb);
        let mut block_succs = Vec::with_capacity(nb);
        let mut branch_args = Vec::with_capacity(nb);
        let mut block_params = Vec::with_capacity(nb);
        let mut given_preds = Vec::with_capacity(nb);
        for b in self.blocks {
            let start = insts.len();
            insts.extend(b.insts);
            ranges.push(InstRange::new(Inst::new(start), Inst::new(insts.len())));
            let (succs, args): (Vec<Block>, Vec<Vec<VReg>>) = match (b.targets, b.succs) {
                (Some(t), _) => t.into_iter().map(|(s, a)| (Block::new(s), a)).unzip(),
                (None, Some(s)) => s.into_iter().map(|s| (Block::new(s), vec![])).unzip(),
                (None, None) => (vec![], vec![]),
            };
            block_succs.push(succs);
            branch_args.push(args);
            block_params.push(b.params);
            given_preds.push(b.preds);
        }
        let mut func = TestFunc {
            insts,
            blocks: ranges,
            entry: Block::new(entry),
            block_succs,
            block_preds: vec![],
            block_params,
            branch_args,
            num_vregs: self.num_vregs.unwrap_or(self.vreg_bound),
            debug_value_labels: self.labels,
            spillslot_size: self.spillslot_size.unwrap_or([1, 1, 1]),
            multi_spillslot_named_by_last_slot: self.multi_by_last,
            allow_multiple_vreg_defs: self.multi_defs,
        };
        func.recompute_preds();
        for (b, given) in given_preds.into_iter().enumerate() {
            if let Some(p) = given {
                func.block_preds[b] = p.into_iter().map(Block::new).collect();
            }
        }
        let env = self.env.unwrap_or_else(|| MachineEnv {
            preferred_regs_by_class: [PRegSet::empty(); 3],
            non_preferred_regs_by_class: [PRegSet::empty(); 3],
            scratch_by_class: [None; 3],
            fixed_stack_slots: vec![],
        });
        Ok((func, env))
    }
}

/// Read a function and its environment written by [`print`] or by hand. Lines whose first
/// non-blank character is `;` are comments. Omitted parts take defaults: an empty
/// environment, entry `block0`, `num_vregs` one past the highest vreg named, spill slot
/// size 1, predecessors derived from the successors (in block order), successors from the
/// last instruction's `->` targets.
pub fn parse(text: &str) -> Result<(TestFunc, MachineEnv), ParseError> {
    let mut p = Parser::default();
    let mut last_line = 1;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        last_line = lineno;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with(';') {
            continue;
        }
        let err = |message| ParseError {
            line: lineno,
            message,
        };
        let toks = tokenize(trimmed).map_err(err)?;
        let mut l = Line { toks, pos: 0 };
        p.line(lineno, &mut l).map_err(err)?;
    }
    p.finish(last_line)
}

/// The `; expect: ...` lines of a case file, in order, without the prefix (e.g. `ok`,
/// `cost <= 120`, `error TooManyLiveRegs`).
pub fn expectations(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(';'))
        .filter_map(|l| l.trim().strip_prefix("expect:"))
        .map(|l| l.trim().to_string())
        .collect()
}
