//! `ragreedy explain` as a user runs it, on a bench program: the trace ends with a cost
//! whose parts add up, and the page's SVG (parsed as XML) has one bar per drawn piece,
//! one row per register of the environment, and a bar under every operand's allocation,
//! checked against allocations the test makes itself from the same function.

mod common;

use common::{ragreedy, scratch, success_stdout};
use regalloc2::{Algorithm, Function, Inst, OperandKind, OperandPos, RegClass, RegallocOptions};
use std::path::Path;

const MATMUL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench-programs/matmul.clif"
);

/// The number after `word ` in `line` (`moves 12 (3)` gives 12).
fn number_after(line: &str, word: &str) -> u64 {
    let rest = &line[line
        .find(word)
        .unwrap_or_else(|| panic!("{word} in {line}"))
        + word.len()..];
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a number after {word} in {line}"))
}

struct Bar {
    vreg: String,
    loc: String,
    start: u32,
    end: u32,
    title: String,
}

#[test]
fn explain_matmul_draws_every_piece_and_register() {
    let dir = scratch("cli-explain");
    let out = ragreedy(
        &[
            "explain",
            MATMUL,
            "--html",
            "matmul.html",
            "--compare",
            "ion",
        ],
        &dir,
    );
    let stdout = success_stdout(&out);
    assert!(stdout.contains("\ndecisions ("), "{stdout}");
    assert!(stdout.contains("dequeue iv0 "), "{stdout}");
    for allocator in ["greedy", "ion"] {
        assert!(
            stdout.contains(&format!("{allocator}: checker accepts")),
            "{stdout}"
        );
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{allocator}: weighted cost ")))
            .unwrap_or_else(|| panic!("no cost line for {allocator}:\n{stdout}"));
        let total = number_after(line, "weighted cost");
        let parts: u64 = ["moves", "spills", "reloads", "callee-saved"]
            .iter()
            .map(|w| number_after(line, w))
            .sum();
        assert_eq!(total, parts, "{line}");
    }

    // The same function as the tool saw it, and both allocations of it made here.
    let dump = ragreedy(&["dump", MATMUL, "--out", "dump"], &dir);
    success_stdout(&dump);
    let func = ragreedy_testkit::corpus::load_function(&dir.join("dump/matmul.matmul.json"))
        .expect("dump readable");
    let env = func.machine_env().clone();
    let greedy = regalloc_greedy::run(&func, &env, &regalloc_greedy::Options::default())
        .expect("greedy allocates");
    let ion = regalloc2::run(
        &func,
        &env,
        &RegallocOptions {
            algorithm: Algorithm::Ion,
            ..RegallocOptions::default()
        },
    )
    .expect("ion allocates");
    let mut env_regs = Vec::new();
    for class in [RegClass::Int, RegClass::Float, RegClass::Vector] {
        env_regs.extend(env.preferred_regs_by_class[class as usize]);
        env_regs.extend(env.non_preferred_regs_by_class[class as usize]);
    }
    let env_regs: Vec<String> = env_regs.iter().map(|r| r.to_string()).collect();
    assert!(env_regs.len() >= 16, "{env_regs:?}");

    let page = std::fs::read_to_string(dir.join("matmul.html")).expect("page written");
    for fetch in ["src=", "href=", "<link", "@import", "url(", "https:"] {
        assert!(!page.contains(fetch), "the page fetches something: {fetch}");
    }
    let svg = &page[page.find("<svg").expect("an svg")..page.find("</svg>").expect("svg end") + 6];
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let sidecar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("matmul.pieces.json")).expect("sidecar written"),
    )
    .expect("sidecar is JSON");

    let panels: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("panel"))
        .collect();
    let names: Vec<_> = panels
        .iter()
        .map(|p| p.attribute("data-allocator"))
        .collect();
    assert_eq!(names, [Some("greedy"), Some("ion")]);

    for (k, (panel, output)) in panels.iter().zip([&greedy, &ion]).enumerate() {
        let allocator = names[k].unwrap();
        let rows: Vec<String> = panel
            .descendants()
            .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("row"))
            .filter(|n| n.attribute("data-kind") == Some("reg"))
            .map(|n| n.attribute("data-loc").unwrap().to_string())
            .collect();
        assert_eq!(rows, env_regs, "{allocator}: one row per register");

        let bars: Vec<Bar> = panel
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some("piece"))
            .map(|n| Bar {
                vreg: n.attribute("data-vreg").unwrap().to_string(),
                loc: n.attribute("data-loc").unwrap().to_string(),
                start: n.attribute("data-start").unwrap().parse().unwrap(),
                end: n.attribute("data-end").unwrap().parse().unwrap(),
                title: n
                    .children()
                    .find(|c| c.has_tag_name("title"))
                    .and_then(|t| t.text())
                    .unwrap_or_default()
                    .to_string(),
            })
            .collect();
        let pieces = sidecar["panels"][k]["pieces"].as_array().expect("pieces");
        assert_eq!(bars.len(), pieces.len(), "{allocator}: one bar per piece");
        for (bar, piece) in bars.iter().zip(pieces) {
            assert_eq!(piece["vreg"], bar.vreg.as_str());
            assert_eq!(piece["loc"], bar.loc.as_str());
            assert_eq!(piece["start"], bar.start);
            assert_eq!(piece["end"], bar.end);
            assert!(bar.start < bar.end);
            assert!(
                bar.title
                    .starts_with(&format!("{} in {}", bar.vreg, bar.loc)),
                "{}",
                bar.title
            );
        }
        if allocator == "greedy" {
            assert!(bars.iter().any(|b| b.title.contains("dequeue iv")));
        }

        // Every operand's allocation, read from the output made here, lies under a bar of
        // its vreg in its location's row at its instruction.
        let mut checked = 0;
        for i in 0..func.num_insts() {
            let inst = Inst::new(i);
            for (op, alloc) in func
                .inst_operands(inst)
                .iter()
                .zip(output.inst_allocs(inst))
            {
                if alloc.is_none() || op.as_fixed_nonallocatable().is_some() {
                    continue;
                }
                let point = 2 * i as u32
                    + u32::from(op.kind() == OperandKind::Def && op.pos() == OperandPos::Late);
                let (vreg, loc) = (op.vreg().to_string(), alloc.to_string());
                assert!(
                    bars.iter().any(|b| b.vreg == vreg
                        && b.loc == loc
                        && b.start <= point
                        && point < b.end),
                    "{allocator}: no bar for {vreg} in {loc} at inst {i}"
                );
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} operands checked");
    }
    assert!(Path::new(&dir.join("matmul.pieces.json")).exists());
}

/// Bad input gets a clear error and a failing exit code, not a panic.
#[test]
fn explain_reports_bad_sources() {
    let dir = scratch("cli-explain-bad");
    std::fs::write(dir.join("broken.txt"), "this is not a function\n").unwrap();
    for (args, expect) in [
        (vec!["explain", "missing.clif"], "missing.clif"),
        (vec!["explain", "broken.txt"], "broken.txt"),
        (
            vec!["explain", MATMUL, "--func", "nope"],
            "no function %nope",
        ),
    ] {
        let out = ragreedy(&args, &dir);
        let stderr = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
