//! The stage machine and cascade numbers, read off the allocator's debug log: every
//! decision `select_or_split`, the split editor and eviction make is logged with the
//! interval's id, so the order of events per interval can be checked on whole functions.
//! Generated functions at 2 and 3 registers per class have plenty of evictions, splits
//! and spills; each allocation also goes through regalloc2's checker.

use super::{debug_log, try_alloc_with, waves_of_values};
use ragreedy_testkit::builder::env;
use ragreedy_testkit::fuzzgen;
use std::collections::{HashMap, HashSet};

/// The debug logs of allocating a few dozen generated functions at `k` registers, and of
/// two hand-built ones under pressure.
fn logs() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for k in [2, 3] {
        let e = fuzzgen::stress_env(Some(k));
        for seed in 0..150 {
            let Some(f) = fuzzgen::func_from_seed(seed, &fuzzgen::stress_options(seed, Some(k)))
            else {
                continue;
            };
            // An error is allowed here (some inputs are over-constrained); a rejected
            // allocation panics.
            let (_, lines) = debug_log(|| try_alloc_with(&f, &e, &crate::Options::default()));
            out.push(lines);
        }
    }
    for f in [waves_of_values(3, 5), waves_of_values(1, 9)] {
        let (_, lines) = debug_log(|| try_alloc_with(&f, &env(2, 0), &crate::Options::default()));
        out.push(lines);
    }
    assert!(
        out.iter().map(Vec::len).sum::<usize>() > 1000,
        "the debug log was not captured"
    );
    out
}

/// The interval a log line is about (`iv12`), and the rest of the line after its vreg.
fn subject(line: &str) -> Option<(&str, &str)> {
    let (id, rest) = line.split_once(' ')?;
    let (_, rest) = rest.split_once("): ")?;
    id.starts_with("iv").then_some((id, rest))
}

/// LLVM's stage machine: an interval that fails assignment and eviction is requeued in
/// stage `Split` ("wait for second round", behind everything not yet tried) before it is
/// split or spilled; only split products created in `Split2`, `Spill` or `Done` (a region
/// split's bridge, spilled at once), values with a
/// stack-only operand, and copy-only values sent to the stack after the main loop
/// (`copy_spill.rs`), skip that. Stages only move forward, so no interval waits twice.
#[test]
fn split_and_spill_come_after_a_second_round() {
    let (mut second_rounds, mut checked_splits, mut checked_spills) = (0, 0, 0);
    for lines in logs() {
        // Intervals that may be split or spilled by now.
        let mut ready: HashSet<&str> = HashSet::new();
        for line in &lines {
            let Some((id, rest)) = subject(line) else {
                continue;
            };
            if rest == "wait for second round" {
                assert!(ready.insert(id), "{id} waited twice or after a late start");
                second_rounds += 1;
            } else if rest.starts_with("split product of")
                && (rest.contains("stage Split2")
                    || rest.contains("stage Spill")
                    || rest.contains("stage Done"))
                || rest.starts_with("spilled up front")
                || rest.starts_with("copy-only value leaves")
            {
                ready.insert(id);
            } else if rest.starts_with("local split")
                || rest.starts_with("region split")
                || rest.starts_with("compact region")
                || rest.starts_with("block split")
                || rest.starts_with("instruction split")
            {
                assert!(ready.contains(id), "{id} split in its first round: {line}");
                checked_splits += 1;
            } else if rest.starts_with("spilled,") || rest.starts_with("spill deferred") {
                assert!(
                    ready.contains(id),
                    "{id} spilled in its first round: {line}"
                );
                checked_spills += 1;
            }
        }
    }
    // The corpus exercises every transition checked above.
    assert!(second_rounds > 50, "{second_rounds} second rounds");
    assert!(checked_splits > 50, "{checked_splits} splits");
    assert!(checked_spills > 50, "{checked_spills} spills");
}

/// One eviction line: victim, evictor, whether the evictor is spillable, the victim's
/// cascade before and the evictor's.
struct Eviction<'a> {
    victim: &'a str,
    evictor: &'a str,
    urgent: bool,
    before: u32,
    cascade: u32,
}

fn eviction(line: &str) -> Option<Eviction<'_>> {
    let (victim, rest) = subject(line)?;
    let rest = rest.strip_prefix("evicted from ")?;
    let (_, rest) = rest.split_once(" by ")?;
    let (evictor, rest) = rest.split_once(' ')?;
    let (_, rest) = rest.split_once(", weight ")?;
    let (weights, rest) = rest.split_once(", cascade ")?;
    let (cascades, _) = rest.split_once(", cost")?;
    let (before, cascade) = cascades.split_once(" -> ")?;
    Some(Eviction {
        victim,
        evictor,
        urgent: weights.ends_with("inf"),
        before: before.parse().ok()?,
        cascade: cascade.parse().ok()?,
    })
}

/// Cascade numbers, which make eviction chains terminate: an evictor takes a fresh number
/// (larger than every earlier one) the first time it evicts and keeps it; its victims take
/// it, and a spillable evictor only evicts intervals whose number is smaller than its own.
/// So every interval's number only grows while it is evicted, each eviction by a
/// spillable interval raises the victim's number, and an interval can be evicted at most
/// once per number ever issued. Unspillable evictors may ignore the numbers, since nothing
/// evicts them.
#[test]
fn eviction_cascades_only_increase() {
    let (mut checked, mut reevicted) = (0, 0);
    for lines in logs() {
        // Each interval's cascade number as the log reveals it, and the largest issued.
        let mut cascade: HashMap<&str, u32> = HashMap::new();
        let mut issued = 0;
        let mut times_evicted: HashMap<&str, u32> = HashMap::new();
        for line in &lines {
            if let Some((piece, rest)) = subject(line)
                && let Some(parent) = rest
                    .strip_prefix("split product of ")
                    .and_then(|r| r.split(',').next())
            {
                // Split products inherit their parent's number.
                let c = cascade.get(parent).copied().unwrap_or(0);
                cascade.insert(piece, c);
                continue;
            }
            let Some(ev) = eviction(line) else {
                assert!(
                    !line.contains("evicted from"),
                    "unparsed eviction line: {line}"
                );
                continue;
            };
            let known = cascade.get(ev.victim).copied().unwrap_or(0);
            assert_eq!(ev.before, known, "{line}: victim's number");
            let evictor_had = cascade.get(ev.evictor).copied().unwrap_or(0);
            if evictor_had == 0 {
                assert!(ev.cascade > issued, "{line}: a fresh number must be new");
                issued = ev.cascade;
            } else {
                assert_eq!(
                    ev.cascade, evictor_had,
                    "{line}: evictor changed its number"
                );
            }
            cascade.insert(ev.evictor, ev.cascade);
            if !ev.urgent {
                assert!(
                    ev.before < ev.cascade,
                    "{line}: victim not older than evictor"
                );
                let n = times_evicted.entry(ev.victim).or_insert(0);
                *n += 1;
                assert!(
                    *n <= issued,
                    "{line}: evicted more often than numbers issued"
                );
                reevicted += usize::from(*n > 1);
                checked += 1;
            }
            cascade.insert(ev.victim, ev.cascade);
        }
    }
    assert!(checked > 100, "{checked} evictions checked");
    assert!(reevicted > 0, "no interval was evicted twice");
}
