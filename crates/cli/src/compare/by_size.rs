//! `ragreedy compare --by-size`: each allocator's ratios against ion over the functions of
//! each size range (instructions). Real corpora hold thousands of small functions and a few
//! huge ones, and a corpus-wide ratio hides which end a change moved: the geomean follows the
//! small functions, the summed time the large ones. The ranges double and quadruple from 16
//! instructions, as in docs/benchmarks.md.

use super::measure::FuncResult;
use super::{AllocSummary, CorpusResult, fmt_ratio, summarize_sets};
use ragreedy_jit::Allocator;
use std::fmt::Write as _;

/// Lower bounds of the size ranges after the first (`< 16`).
const EDGES: [usize; 7] = [16, 32, 128, 512, 2048, 8192, 32768];

/// The range `insts` falls in: its index and its label.
pub(super) fn range_of(insts: usize) -> (usize, String) {
    let k = EDGES.iter().take_while(|&&e| insts >= e).count();
    let label = match (k.checked_sub(1).map(|i| EDGES[i]), EDGES.get(k)) {
        (None, Some(hi)) => format!("< {hi}"),
        (Some(lo), Some(hi)) => format!("{lo}-{}", hi - 1),
        (Some(lo), None) => format!("{lo} and up"),
        (None, None) => unreachable!("EDGES is not empty"),
    };
    (k, label)
}

/// The table, as Markdown: a row per allocator other than ion and non-empty size range.
pub fn report(r: &CorpusResult, allocators: &[Allocator]) -> String {
    let mut sets: Vec<(usize, String, Vec<&FuncResult>)> = Vec::new();
    for f in &r.functions {
        let (k, label) = range_of(f.insts);
        match sets.iter_mut().find(|(j, _, _)| *j == k) {
            Some((_, _, fs)) => fs.push(f),
            None => sets.push((k, label, vec![f])),
        }
    }
    sets.sort_by_key(|(k, _, _)| *k);
    let named: Vec<(String, Vec<&FuncResult>)> =
        sets.into_iter().map(|(_, label, fs)| (label, fs)).collect();
    let summaries = summarize_sets(&named, allocators);
    let ion_weighted = |range: &str| {
        summaries
            .iter()
            .find(|s| s.group == range && s.allocator == Allocator::Ion.name())
            .map_or(0, |s| s.weighted)
    };
    let mut s = String::new();
    let _ = writeln!(s, "### By function size (instructions)\n");
    s.push_str(
        "| allocator | instructions | functions | compared | time ratio | total time ratio | cost ratio | weighted cost | ion's |\n",
    );
    s.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for a in allocators.iter().filter(|&&a| a != Allocator::Ion) {
        for x in summaries.iter().filter(|x| x.allocator == a.name()) {
            let AllocSummary {
                group,
                functions,
                compared,
                time_ratio,
                total_time_ratio,
                cost_ratio,
                weighted,
                ..
            } = x;
            let _ = writeln!(
                s,
                "| {} | {group} | {functions} | {compared} | {} | {} | {} | {weighted} | {} |",
                a.name(),
                fmt_ratio(*time_ratio),
                fmt_ratio(*total_time_ratio),
                fmt_ratio(*cost_ratio),
                ion_weighted(group)
            );
        }
    }
    s.push_str(
        "\nRatios as in the table above (time ratio and cost ratio: geometric means; total time \
         ratio: summed time over ion's), over the functions of each size range.\n\n",
    );
    s
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::measure::{AllocResult, CostRec, Status};
    use super::*;

    /// A function of `insts` instructions named `f{insts}`, with greedy's and ion's
    /// (time, weighted cost).
    pub(in super::super) fn func(insts: usize, greedy: (u64, u64), ion: (u64, u64)) -> FuncResult {
        let result = |a: Allocator, (time, weighted): (u64, u64)| AllocResult {
            allocator: a.name().into(),
            status: Status::Ok,
            time_ns: Some(time),
            checked: true,
            cost: Some(CostRec {
                weighted,
                ..Default::default()
            }),
        };
        FuncResult {
            name: format!("f{insts}"),
            group: "g".into(),
            insts,
            blocks: 1,
            vregs: 1,
            results: vec![
                result(Allocator::Greedy, greedy),
                result(Allocator::Ion, ion),
            ],
            greedy_phases: None,
        }
    }

    #[test]
    fn ranges_split_at_the_edges() {
        assert_eq!(range_of(0), (0, "< 16".into()));
        assert_eq!(range_of(15), (0, "< 16".into()));
        assert_eq!(range_of(16), (1, "16-31".into()));
        assert_eq!(range_of(127), (2, "32-127".into()));
        assert_eq!(range_of(128), (3, "128-511".into()));
        assert_eq!(range_of(40_000), (7, "32768 and up".into()));
    }

    #[test]
    fn each_range_gets_its_own_ratios() {
        let allocators = [Allocator::Greedy, Allocator::Ion];
        let functions = vec![
            // Two small functions: greedy twice and half as fast.
            func(4, (200, 3), (100, 3)),
            func(10, (50, 1), (100, 3)),
            // A large one: greedy a quarter of ion's time, cost 9 against 19.
            func(3000, (250, 9), (1000, 19)),
        ];
        let r = CorpusResult {
            corpus: "test".into(),
            allocators: allocators.iter().map(|a| a.name().into()).collect(),
            reps: 1,
            problems: vec![],
            input_errors: 0,
            summaries: vec![],
            functions,
        };
        let table = report(&r, &allocators);
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with("| greedy"))
            .collect();
        assert_eq!(rows.len(), 2, "{table}");
        // < 16: time geomean sqrt(2 * 0.5) = 1, summed 250 / 200, cost geomean
        // sqrt(4/4 * 2/4) = 0.707, weighted 4 against 6.
        assert_eq!(
            rows[0],
            "| greedy | < 16 | 2 | 2 | 1.000 | 1.250 | 0.707 | 4 | 6 |"
        );
        assert_eq!(
            rows[1],
            "| greedy | 2048-8191 | 1 | 1 | 0.250 | 0.250 | 0.500 | 9 | 19 |"
        );
        assert!(!table.contains("| ion |"), "ion is the baseline: {table}");
    }
}
