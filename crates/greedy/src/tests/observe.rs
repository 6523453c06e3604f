//! The decision observer: the events match what the allocator did (its statistics), the
//! output does not depend on whether an observer is attached, and without one no event
//! is even built.

use super::{alloc_checked, value_across_busy_loop};
use crate::observe::{Event, Observer, observe};
use ragreedy_testkit::builder::{FuncBuilder, env};
use ragreedy_testkit::fuzzgen;
use regalloc2::{Operand, RegClass};

/// One register. `v` spans the block with two uses, so it is queued first (larger) and
/// takes the register; `x` is short and dense, heavier, and evicts it. Back in its second
/// round, `v` has no free window for its uses except around them: split or spilled.
fn eviction_then_split_or_spill() -> ragreedy_testkit::builder::TestFunc {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (v, x) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b0, &[Operand::reg_def(v)]);
    for _ in 0..6 {
        b.inst(b0, &[]);
    }
    b.inst(b0, &[Operand::reg_def(x)]);
    for _ in 0..4 {
        b.inst(b0, &[Operand::reg_use(x)]);
    }
    for _ in 0..6 {
        b.inst(b0, &[]);
    }
    b.inst(b0, &[Operand::reg_use(v)]);
    b.ret(b0, &[]);
    b.build().func
}

fn observed<F: regalloc2::Function>(
    f: &F,
    e: &regalloc2::MachineEnv,
) -> (regalloc2::Output, crate::Stats, Vec<Event>) {
    let mut events = Vec::new();
    let mut ctx = crate::Context::new();
    let out = crate::run_observed(f, e, &crate::Options::default(), &mut ctx, &mut events)
        .expect("allocates");
    (out, *ctx.stats(), events)
}

fn count(events: &[Event], pred: impl Fn(&Event) -> bool) -> usize {
    events.iter().filter(|e| pred(e)).count()
}

/// Every eviction, split and spill the statistics count is an event, in an order that
/// makes sense: an interval is dequeued before anything is decided about it, a split is
/// followed by its products, and the victim of an eviction had been assigned the register
/// it leaves.
#[test]
fn events_match_the_decisions() {
    let f = eviction_then_split_or_spill();
    let e = env(1, 0);
    let (out, stats, events) = observed(&f, &e);
    let (plain, _) = alloc_checked(&f, &e);
    assert_eq!(out.allocs, plain.allocs);
    assert_eq!(format!("{:?}", out.edits), format!("{:?}", plain.edits));
    let evictions = count(&events, |e| matches!(e, Event::Evicted { .. }));
    let splits = count(&events, |e| matches!(e, Event::Split { .. }));
    let spills = count(&events, |e| matches!(e, Event::Spilled { .. }));
    assert!(evictions >= 1, "{events:#?}");
    assert!(splits + spills >= 1, "{events:#?}");
    assert_eq!(evictions, stats.evictions);
    assert_eq!(spills, stats.spills);
    let split_stats =
        stats.local_splits + stats.region_splits + stats.block_splits + stats.instruction_splits;
    assert_eq!(splits, split_stats);
    assert_eq!(
        count(&events, |e| matches!(e, Event::Assigned { .. })),
        stats.assignments - stats.last_chance_recolorings
    );
    let mut dequeued = std::collections::HashSet::new();
    let mut assigned = std::collections::HashMap::new();
    for (k, ev) in events.iter().enumerate() {
        match ev {
            Event::Dequeue { interval, .. } => {
                dequeued.insert(*interval);
            }
            Event::Evicted {
                victim, reg, by, ..
            } => {
                assert_eq!(assigned.get(victim), Some(reg), "{ev}");
                assert!(dequeued.contains(by), "{ev}");
            }
            Event::Assigned { interval, reg, .. } => {
                assigned.insert(*interval, *reg);
            }
            Event::Split { interval, .. } => {
                assert!(dequeued.contains(interval), "{ev}");
                assert!(
                    matches!(events.get(k + 1), Some(Event::SplitProduct { of, .. }) if of == interval),
                    "{ev} not followed by its products"
                );
            }
            _ => {}
        }
    }
}

/// A region split, for the `Split` event's kind.
#[test]
fn region_split_is_reported_with_its_kind() {
    let (f, v, _, _) = value_across_busy_loop();
    let (_, stats, events) = observed(&f, &env(2, 0));
    assert!(stats.region_splits >= 1);
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Split { kind: crate::SplitKind::Region | crate::SplitKind::CompactRegion, vreg, .. } if *vreg == v
        )),
        "{events:#?}"
    );
    // Somewhere a register was refused because it was held.
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Refused { reason: crate::Refusal::Occupied { by, .. }, .. } if !by.is_empty()
    )));
}

/// Attaching an observer changes nothing in the output, over generated functions under
/// pressure (evictions, splits, recoloring).
#[test]
fn observer_does_not_change_the_output() {
    let mut compared = 0;
    for seed in 0..100 {
        let e = fuzzgen::stress_env(Some(3));
        let Some(f) = fuzzgen::func_from_seed(seed, &fuzzgen::stress_options(seed, Some(3))) else {
            continue;
        };
        let plain = crate::run(&f, &e, &crate::Options::default());
        let mut events = Vec::new();
        let mut ctx = crate::Context::new();
        let seen = crate::run_observed(&f, &e, &crate::Options::default(), &mut ctx, &mut events);
        match (plain, seen) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.allocs, b.allocs, "seed {seed}");
                assert_eq!(
                    format!("{:?}", a.edits),
                    format!("{:?}", b.edits),
                    "seed {seed}"
                );
                assert!(!events.is_empty());
                compared += 1;
            }
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (a, b) => panic!("seed {seed}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
        }
    }
    assert!(compared > 30, "only {compared} functions allocated");
}

/// Without an observer the event expression is never evaluated: nothing is built, nothing
/// recorded.
#[test]
fn no_observer_builds_no_event() {
    struct Host<'a> {
        observer: Option<&'a mut dyn Observer>,
    }
    let mut built = 0;
    let mut host = Host { observer: None };
    observe!(host, {
        built += 1;
        Event::Requeued {
            interval: 0,
            vreg: regalloc2::VReg::new(0, RegClass::Int),
            why: "test",
        }
    });
    assert_eq!(built, 0);
    let mut events = Vec::new();
    let mut host = Host {
        observer: Some(&mut events),
    };
    observe!(host, {
        built += 1;
        Event::Requeued {
            interval: 0,
            vreg: regalloc2::VReg::new(0, RegClass::Int),
            why: "test",
        }
    });
    assert_eq!(built, 1);
    assert_eq!(events.len(), 1);
}

/// The queue's hint bit: `s`, inside one block with a fixed-register operand, is dequeued
/// before `long`, which lives through three blocks and is larger; `long`, with no hint,
/// before `p`, shorter, whose only preference is a copy partner (the block parameter it
/// is passed to) and `f`, shorter, whose fixed operand is in a block it only passes
/// through to the next.
#[test]
fn queue_raises_only_single_block_fixed_operands() {
    let mut b = FuncBuilder::new();
    let (b0, b1) = (b.block(), b.block());
    let (long, s, p, f) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    let param = b.vreg(RegClass::Int);
    let b2 = b.block_with_params(&[param]);
    let p0 = regalloc2::PReg::new(0, RegClass::Int);
    b.inst(b0, &[Operand::reg_def(long)]);
    b.inst(b0, &[Operand::reg_fixed_def(s, p0)]);
    b.inst(b0, &[Operand::reg_use(s)]);
    b.inst(b0, &[Operand::reg_def(f)]);
    b.inst(b0, &[Operand::reg_fixed_use(f, p0)]);
    b.jump(b0, b1, &[]);
    b.inst(b1, &[Operand::reg_use(f)]);
    b.inst(b1, &[Operand::reg_def(p)]);
    b.jump(b1, b2, &[p]);
    b.inst(b2, &[Operand::reg_use(param)]);
    b.inst(b2, &[]);
    b.ret(b2, &[Operand::reg_use(long)]);
    let func = b.build().func;
    alloc_checked(&func, &env(4, 0));
    let (_, _, events) = observed(&func, &env(4, 0));
    let first_dequeue = |v: regalloc2::VReg| {
        events
            .iter()
            .position(|e| matches!(e, Event::Dequeue { vreg, .. } if *vreg == v))
            .unwrap_or_else(|| panic!("{v} never dequeued: {events:#?}"))
    };
    assert!(first_dequeue(s) < first_dequeue(long), "{events:#?}");
    assert!(first_dequeue(long) < first_dequeue(p), "{events:#?}");
    assert!(first_dequeue(long) < first_dequeue(f), "{events:#?}");
}
