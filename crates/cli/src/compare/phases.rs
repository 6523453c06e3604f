//! `ragreedy compare --phases`: where greedy's time goes. Per group of the corpus (and
//! over all of it) the time of each allocation phase summed over the functions and its
//! share of the total; then the same breakdown for the ten functions where greedy's time
//! is worst against ion's. Phase times come from `regalloc_greedy::Stats::phases`, taken
//! per phase as the median over the timed runs (so a row's phases need not add up to the
//! measured median exactly).

use super::measure::FuncResult;
use super::{CorpusResult, fmt_time, time_ratio};
use ragreedy_jit::Allocator;
use regalloc_greedy::{Phase, PhaseTimes};
use std::fmt::Write as _;

/// Both tables, as Markdown.
pub fn report(r: &CorpusResult) -> String {
    let mut s = String::new();
    let mut groups: Vec<&str> = Vec::new();
    for f in &r.functions {
        if !groups.contains(&f.group.as_str()) {
            groups.push(&f.group);
        }
    }
    let mut sets: Vec<(&str, Vec<&FuncResult>)> = groups
        .iter()
        .map(|&g| (g, r.functions.iter().filter(|f| f.group == g).collect()))
        .collect();
    if sets.len() > 1 {
        sets.push(("all", r.functions.iter().collect()));
    }
    let sums: Vec<PhaseTimes> = sets.iter().map(|(_, fs)| sum(fs)).collect();
    if sums.iter().all(|p| p.total().is_zero()) {
        return s;
    }
    let _ = writeln!(
        s,
        "### Where greedy's time goes (sum over functions, share)\n"
    );
    s.push_str("| phase |");
    for (g, _) in &sets {
        let _ = write!(s, " {g} |");
    }
    s.push_str("\n|---|");
    for _ in &sets {
        s.push_str("---:|");
    }
    s.push('\n');
    for p in Phase::ALL {
        let _ = write!(s, "| {} |", p.name());
        for t in &sums {
            let _ = write!(s, " {} |", cell(t, p));
        }
        s.push('\n');
    }
    s.push_str("| **total** |");
    for t in &sums {
        let _ = write!(s, " **{}** |", fmt_time(t.total().as_nanos() as u64));
    }
    s.push_str("\n| ion |");
    for (_, fs) in &sets {
        let ion: u64 = fs
            .iter()
            .filter(|f| f.greedy_phases.is_some())
            .filter_map(|f| f.get(Allocator::Ion)?.time_ns)
            .sum();
        let _ = write!(s, " {} |", fmt_time(ion));
    }
    s.push_str("\n\n");
    let mut slow: Vec<(&FuncResult, f64)> = r
        .functions
        .iter()
        .filter(|f| f.greedy_phases.is_some())
        .filter_map(|f| Some((f, time_ratio(f, Allocator::Greedy)?)))
        .collect();
    slow.sort_by(|a, b| b.1.total_cmp(&a.1));
    if slow.is_empty() {
        return s;
    }
    let _ = writeln!(s, "### Phases of the ten functions slowest against ion\n");
    s.push_str("| function | insts | blocks | greedy | ion | time ratio |");
    for p in Phase::ALL {
        let _ = write!(s, " {} |", p.name());
    }
    s.push_str("\n|---|---:|---:|---:|---:|---:|");
    for _ in Phase::ALL {
        s.push_str("---:|");
    }
    s.push('\n');
    for (f, ratio) in slow.into_iter().take(10) {
        let t = f.greedy_phases.expect("filtered");
        let time = |a| {
            f.get(a)
                .and_then(|x| x.time_ns)
                .map_or("–".into(), fmt_time)
        };
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} | {ratio:.2} |",
            f.name,
            f.insts,
            f.blocks,
            time(Allocator::Greedy),
            time(Allocator::Ion)
        );
        for p in Phase::ALL {
            let _ = write!(s, " {} |", cell(&t, p));
        }
        s.push('\n');
    }
    s
}

fn sum(fs: &[&FuncResult]) -> PhaseTimes {
    let mut t = PhaseTimes::default();
    for f in fs {
        if let Some(p) = f.greedy_phases {
            t += p;
        }
    }
    t
}

/// "time (share of the total)", or "–" for a phase that took nothing.
fn cell(t: &PhaseTimes, p: Phase) -> String {
    let ns = t.nanos(p);
    let total = t.total().as_nanos() as f64;
    if ns == 0 || total == 0.0 {
        return "–".into();
    }
    format!("{} ({:.0}%)", fmt_time(ns), 100.0 * ns as f64 / total)
}
