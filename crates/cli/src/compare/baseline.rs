//! `ragreedy compare --baseline RUN.json`: greedy's allocation time in this run against
//! another build's, both taken from one corpus by `compare --json`. A build cannot be timed
//! against another in one process, and two runs differ by the machine's drift, so each
//! build's time is read relative to ion's in its own run: per size range (as `--by-size`),
//! this build's summed time over ion's, the baseline's, and their quotient; then the
//! functions whose time moved most, in nanoseconds at this run's ion speed. Built to find
//! which functions a slower build lost its time on (docs/benchmarks.md, session 48).
//!
//! The baseline is read loosely (name, size, per-allocator `time_ns`), so the JSON of
//! older builds, with fewer fields, serves as well.

use super::by_size::range_of;
use super::measure::FuncResult;
use super::{CorpusResult, fmt_time};
use ragreedy_jit::Allocator;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Functions listed as having moved most.
const MOVED: usize = 10;

/// One function of the baseline run: greedy's and ion's time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Timed {
    greedy_ns: u64,
    ion_ns: u64,
}

impl Timed {
    /// Greedy's time over ion's.
    fn ratio(self) -> f64 {
        self.greedy_ns as f64 / self.ion_ns.max(1) as f64
    }
}

/// A baseline run: its functions by name.
pub struct Baseline {
    functions: HashMap<String, Timed>,
}

impl Baseline {
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the baseline {}: {e}", path.display()))?;
        Baseline::parse(&text).map_err(|e| format!("baseline {}: {e}", path.display()))
    }

    fn parse(text: &str) -> Result<Baseline, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let functions = v
            .get("functions")
            .and_then(|f| f.as_array())
            .ok_or("no `functions` array: not the output of `compare --json`")?;
        let time_of = |results: &[serde_json::Value], name: &str| {
            results
                .iter()
                .find(|r| r.get("allocator").and_then(|a| a.as_str()) == Some(name))
                .and_then(|r| r.get("time_ns"))
                .and_then(|t| t.as_u64())
        };
        let mut out = HashMap::new();
        for f in functions {
            let (Some(name), Some(results)) = (
                f.get("name").and_then(|n| n.as_str()),
                f.get("results").and_then(|r| r.as_array()),
            ) else {
                return Err("a function without `name` or `results`".into());
            };
            if let (Some(greedy_ns), Some(ion_ns)) = (
                time_of(results, Allocator::Greedy.name()),
                time_of(results, Allocator::Ion.name()),
            ) {
                out.insert(name.to_string(), Timed { greedy_ns, ion_ns });
            }
        }
        Ok(Baseline { functions: out })
    }
}

/// Summed times over one set of functions present in both runs.
#[derive(Default, Clone, Copy)]
struct Sums {
    functions: usize,
    now: Timed,
    base: Timed,
}

impl Sums {
    fn add(&mut self, now: Timed, base: Timed) {
        self.functions += 1;
        for (sum, t) in [(&mut self.now, now), (&mut self.base, base)] {
            sum.greedy_ns += t.greedy_ns;
            sum.ion_ns += t.ion_ns;
        }
    }

    /// (this run's summed ratio, the baseline's, their quotient).
    fn ratios(&self) -> (f64, f64, f64) {
        let (now, base) = (self.now.ratio(), self.base.ratio());
        (now, base, now / base)
    }
}

fn timed(f: &FuncResult) -> Option<Timed> {
    let time = |a: Allocator| f.get(a).filter(|r| r.ok()).and_then(|r| r.time_ns);
    Some(Timed {
        greedy_ns: time(Allocator::Greedy)?,
        ion_ns: time(Allocator::Ion)?,
    })
}

/// The Markdown section: the table by size range, then the functions that moved most.
pub fn report(r: &CorpusResult, base: &Baseline) -> String {
    let mut ranges: Vec<(usize, String, Sums)> = Vec::new();
    let mut all = Sums::default();
    // (function, time moved at this run's ion speed, this run's ratio, the baseline's)
    let mut moved: Vec<(&FuncResult, f64, f64, f64)> = Vec::new();
    let mut unmatched = 0;
    for f in &r.functions {
        let (Some(now), Some(&then)) = (timed(f), base.functions.get(&f.name)) else {
            unmatched += 1;
            continue;
        };
        let (k, label) = range_of(f.insts);
        match ranges.iter_mut().find(|(j, _, _)| *j == k) {
            Some((_, _, s)) => s.add(now, then),
            None => {
                let mut s = Sums::default();
                s.add(now, then);
                ranges.push((k, label, s));
            }
        }
        all.add(now, then);
        let speed = now.ion_ns as f64 / then.ion_ns.max(1) as f64;
        moved.push((
            f,
            now.greedy_ns as f64 - then.greedy_ns as f64 * speed,
            now.ratio(),
            then.ratio(),
        ));
    }
    ranges.sort_by_key(|(k, _, _)| *k);
    let mut s = String::new();
    let _ = writeln!(s, "### Greedy's time against the baseline\n");
    s.push_str(
        "| instructions | functions | greedy | summed vs ion | baseline's vs its ion | change |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for (label, sums) in ranges
        .iter()
        .map(|(_, l, s)| (l.as_str(), s))
        .chain([("all", &all)])
    {
        let (now, then, change) = sums.ratios();
        let _ = writeln!(
            s,
            "| {label} | {} | {} | {now:.3} | {then:.3} | {change:.3} |",
            sums.functions,
            fmt_time(sums.now.greedy_ns)
        );
    }
    if unmatched > 0 {
        let _ = writeln!(
            s,
            "\n{unmatched} functions of this run are not in the baseline (or failed in one run): left out."
        );
    }
    moved.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let _ = writeln!(
        s,
        "\n### Functions whose time moved most (at this run's ion speed)\n"
    );
    s.push_str("| function | insts | blocks | moved | vs ion | baseline's vs ion |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for (f, delta, now, then) in moved.iter().take(MOVED) {
        let sign = if *delta < 0.0 { "-" } else { "+" };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {sign}{} | {now:.3} | {then:.3} |",
            f.name,
            f.insts,
            f.blocks,
            fmt_time(delta.abs() as u64)
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::super::by_size::tests::func;
    use super::*;

    fn corpus(functions: Vec<FuncResult>) -> CorpusResult {
        CorpusResult {
            corpus: "test".into(),
            allocators: vec!["greedy".into(), "ion".into()],
            reps: 1,
            problems: vec![],
            input_errors: 0,
            summaries: vec![],
            functions,
        }
    }

    /// The baseline as `compare --json` of an older build writes it (no phases, no cost).
    fn baseline_json(functions: &[(&str, u64, u64)]) -> String {
        let fs: Vec<String> = functions
            .iter()
            .map(|(name, g, i)| {
                format!(
                    r#"{{"name": "{name}", "insts": 1, "results": [
                        {{"allocator": "greedy", "time_ns": {g}}},
                        {{"allocator": "ion", "time_ns": {i}}}]}}"#
                )
            })
            .collect();
        format!(r#"{{"corpus": "test", "functions": [{}]}}"#, fs.join(","))
    }

    #[test]
    fn each_build_is_read_against_its_own_ion() {
        // The baseline ran on a machine twice as fast: ion took half the time. A small
        // function (f40) lost time against ion (0.5 -> 0.8), a large one (f3000) gained
        // (0.9 -> 0.6); f50 is new.
        let r = corpus(vec![
            func(40, (800, 0), (1000, 0)),
            func(3000, (6000, 0), (10000, 0)),
            func(50, (100, 0), (100, 0)),
        ]);
        let base =
            Baseline::parse(&baseline_json(&[("f40", 250, 500), ("f3000", 4500, 5000)])).unwrap();
        let table = report(&r, &base);
        let row = |label: &str| {
            table
                .lines()
                .find(|l| l.starts_with(&format!("| {label} |")))
                .unwrap_or_else(|| panic!("no {label} row in {table}"))
                .to_string()
        };
        assert_eq!(
            row("32-127"),
            "| 32-127 | 1 | 0.8 µs | 0.800 | 0.500 | 1.600 |"
        );
        assert_eq!(
            row("2048-8191"),
            "| 2048-8191 | 1 | 6.0 µs | 0.600 | 0.900 | 0.667 |"
        );
        // Summed: 6800 / 11000 against 4750 / 5500.
        assert_eq!(row("all"), "| all | 2 | 6.8 µs | 0.618 | 0.864 | 0.716 |");
        assert!(table.contains("1 functions of this run are not in the baseline"));
        // Moved at this run's ion speed: f3000 6000 - 4500 * 2 = -3000, f40 800 - 500.
        let moved: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.contains("moved most"))
            .filter(|l| l.starts_with("| f") && !l.starts_with("| function"))
            .collect();
        assert_eq!(
            moved,
            [
                "| f3000 | 3000 | 1 | -3.0 µs | 0.600 | 0.900 |",
                "| f40 | 40 | 1 | +0.3 µs | 0.800 | 0.500 |"
            ]
        );
    }

    #[test]
    fn a_file_that_is_not_a_compare_run_is_refused() {
        assert!(Baseline::parse("[1, 2]").is_err());
        assert!(Baseline::parse("not json").is_err());
        assert!(Baseline::parse(r#"{"functions": [{"insts": 3}]}"#).is_err());
    }
}
