//! The decision observer: structured events for what the greedy allocator decides and
//! why, for tools that explain an allocation (`ragreedy explain`) and for tests.
//!
//! An [`Observer`] is handed to [`run_observed`](crate::run_observed); plain
//! [`run`](crate::run) and [`run_with_context`](crate::run_with_context) attach none.
//! Every emission point in the allocator is one `observe!` call that tests whether an
//! observer is attached and only then builds the event, so allocating without one costs a
//! branch per decision and allocates nothing. Events never feed back into the allocation:
//! the output is the same with or without an observer.
//!
//! Intervals are named by their index (`iv7` in the allocator's debug log); an interval
//! is a piece of one vreg's live range, over program points (`2 × inst` is the early
//! point of an instruction, `2 × inst + 1` its late point).

use regalloc2::{PReg, VReg};
use std::fmt;

/// Receives the allocator's decisions, in the order they are made.
pub trait Observer {
    /// One decision.
    fn event(&mut self, event: Event);
}

/// Collecting into a vector is the usual observer.
impl Observer for Vec<Event> {
    fn event(&mut self, event: Event) {
        self.push(event);
    }
}

/// An interval in the way of another one in some register.
#[derive(Clone, Debug, PartialEq)]
pub struct Occupant {
    /// The occupying interval.
    pub interval: u32,
    /// Its vreg.
    pub vreg: VReg,
    /// Its spill weight (infinite: unspillable).
    pub weight: f32,
    /// Its cascade number (0: never evicted and never evicted anything).
    pub cascade: u32,
}

/// Why a register could not be taken as it was.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// A fixed-register operand of another value reserves it somewhere in the interval.
    Reserved,
    /// These intervals hold it over part of the interval (at most 16 are listed;
    /// `more` says some were left off).
    Occupied {
        /// The occupants found.
        by: Vec<Occupant>,
        /// More occupants than listed.
        more: bool,
    },
    /// It is free, but an untouched callee-saved register whose save and restore cost
    /// more than spilling the interval.
    CalleeSavedCost,
}

/// The kinds of live-range split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitKind {
    /// Inside one block: a window of uses keeps a register.
    Local,
    /// Across blocks: a register in some blocks, the stack in the others.
    Region,
    /// Across blocks: the value's own register in its use blocks only.
    CompactRegion,
    /// A local piece per block with uses, the rest on the stack.
    Block,
    /// Around each use pinned to a fixed register.
    Instruction,
    /// After the main loop, a spilled piece's head: from the def up to some first uses
    /// in a register, the rest still spilled (`Options::head_splits`).
    Head,
}

/// One decision of the greedy allocator.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// An interval taken off the queue.
    Dequeue {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// First program point it covers.
        start: u32,
        /// One past the last program point it covers.
        end: u32,
        /// Spill weight (infinite: unspillable).
        weight: f32,
        /// Queue priority it was dequeued with (larger first).
        priority: u64,
        /// Stage: `assign`, `split`, `split2`, `spill` or `done`.
        stage: &'static str,
    },
    /// A register of the allocation order the interval could not simply take; emitted
    /// for every such register when no free one was found.
    Refused {
        /// The interval.
        interval: u32,
        /// The register.
        reg: PReg,
        /// Why.
        reason: Refusal,
    },
    /// An interval placed in a register.
    Assigned {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// The register.
        reg: PReg,
        /// It is the first use of an untouched callee-saved register (the function now
        /// saves and restores it).
        first_callee_saved_use: bool,
    },
    /// An interval taken out of its register for a heavier one, and requeued.
    Evicted {
        /// The evicted interval.
        victim: u32,
        /// Its vreg.
        vreg: VReg,
        /// The register it leaves.
        reg: PReg,
        /// The interval that takes it.
        by: u32,
        /// The victim's spill weight.
        victim_weight: f32,
        /// The evictor's spill weight.
        evictor_weight: f32,
        /// The victim's cascade number before, and the evictor's it now carries.
        cascade: (u32, u32),
    },
    /// An interval put back in the queue to be tried again later.
    Requeued {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// `second round` (try splitting after everything else was tried) or `deferred
        /// spill` (spill only if still nothing is free at the end).
        why: &'static str,
    },
    /// An interval replaced by split products (listed by the `SplitProduct` events that
    /// follow).
    Split {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// Which split.
        kind: SplitKind,
    },
    /// A piece of a split interval.
    SplitProduct {
        /// The new interval.
        interval: u32,
        /// The interval it comes from.
        of: u32,
        /// Its vreg.
        vreg: VReg,
        /// First program point.
        start: u32,
        /// One past the last program point.
        end: u32,
        /// Its stage.
        stage: &'static str,
        /// Its spill weight.
        weight: f32,
    },
    /// An interval sent to its vreg's spill slot.
    Spilled {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// Its spill weight.
        weight: f32,
    },
    /// A register piece of a spilled interval around one instruction: a reload before a
    /// use, or a store after a def.
    ReloadPiece {
        /// The new interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// The instruction it serves.
        inst: u32,
        /// A store after a def (else a reload before a use).
        is_def: bool,
    },
    /// A last-chance recoloring attempt: the interval takes a register whose occupants
    /// move elsewhere, recursively.
    Recoloring {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// What it tries to avoid: `unspillable` or `instead of a spill`.
        why: &'static str,
        /// The register it got, `None` if the attempt failed (nothing changed).
        outcome: Option<PReg>,
        /// The occupants moved: (interval, from, to; `None`: evicted back to the queue).
        moved: Vec<(u32, PReg, Option<PReg>)>,
    },
    /// After the main loop: an interval moved to another register to join its copy
    /// partners, or exchanged with the occupants of theirs.
    HintRecolored {
        /// The interval.
        interval: u32,
        /// Its vreg.
        vreg: VReg,
        /// Its register before.
        from: PReg,
        /// Its register now.
        to: PReg,
        /// Why.
        why: &'static str,
    },
}

impl Event {
    /// The interval the event is about (the victim, for an eviction).
    pub fn interval(&self) -> u32 {
        match *self {
            Event::Dequeue { interval, .. }
            | Event::Refused { interval, .. }
            | Event::Assigned { interval, .. }
            | Event::Requeued { interval, .. }
            | Event::Split { interval, .. }
            | Event::SplitProduct { interval, .. }
            | Event::Spilled { interval, .. }
            | Event::ReloadPiece { interval, .. }
            | Event::Recoloring { interval, .. }
            | Event::HintRecolored { interval, .. } => interval,
            Event::Evicted { victim, .. } => victim,
        }
    }
}

impl fmt::Display for SplitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SplitKind::Local => "local",
            SplitKind::Region => "region",
            SplitKind::CompactRegion => "compact region",
            SplitKind::Block => "block",
            SplitKind::Instruction => "instruction",
            SplitKind::Head => "head",
        })
    }
}

/// A weight as the trace prints it: `inf` for unspillable.
struct Weight(f32);

impl fmt::Display for Weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() {
            write!(f, "{:.3}", self.0)
        } else {
            f.write_str("inf")
        }
    }
}

/// One line, naming intervals `iv<N>` as the allocator's debug log does.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Dequeue {
                interval,
                vreg,
                start,
                end,
                weight,
                priority,
                stage,
            } => write!(
                f,
                "dequeue iv{interval} ({vreg}) [{start}, {end}) weight {} priority {priority:#x} stage {stage}",
                Weight(*weight)
            ),
            Event::Refused {
                interval,
                reg,
                reason,
            } => {
                write!(f, "  iv{interval}: {reg} refused: ")?;
                match reason {
                    Refusal::Reserved => f.write_str("reserved by a fixed operand"),
                    Refusal::CalleeSavedCost => f.write_str(
                        "untouched callee-saved, its save and restore cost more than a spill",
                    ),
                    Refusal::Occupied { by, more } => {
                        f.write_str("held by")?;
                        for (k, o) in by.iter().enumerate() {
                            let sep = if k == 0 { " " } else { ", " };
                            write!(
                                f,
                                "{sep}iv{} ({}) weight {} cascade {}",
                                o.interval,
                                o.vreg,
                                Weight(o.weight),
                                o.cascade
                            )?;
                        }
                        if *more {
                            f.write_str(", ...")?;
                        }
                        Ok(())
                    }
                }
            }
            Event::Assigned {
                interval,
                vreg,
                reg,
                first_callee_saved_use,
            } => {
                write!(f, "  iv{interval} ({vreg}) -> {reg}")?;
                if *first_callee_saved_use {
                    f.write_str(" (first use of a callee-saved register, cheaper than spilling)")?;
                }
                Ok(())
            }
            Event::Evicted {
                victim,
                vreg,
                reg,
                by,
                victim_weight,
                evictor_weight,
                cascade,
            } => write!(
                f,
                "  iv{victim} ({vreg}) evicted from {reg} by iv{by}: weight {} < {}, cascade {} -> {}",
                Weight(*victim_weight),
                Weight(*evictor_weight),
                cascade.0,
                cascade.1
            ),
            Event::Requeued {
                interval,
                vreg,
                why,
            } => write!(f, "  iv{interval} ({vreg}) requeued: {why}"),
            Event::Split {
                interval,
                vreg,
                kind,
            } => write!(f, "  iv{interval} ({vreg}) {kind} split"),
            Event::SplitProduct {
                interval,
                of,
                vreg,
                start,
                end,
                stage,
                weight,
            } => write!(
                f,
                "    product iv{interval} of iv{of} ({vreg}) [{start}, {end}) stage {stage} weight {}",
                Weight(*weight)
            ),
            Event::Spilled {
                interval,
                vreg,
                weight,
            } => write!(
                f,
                "  iv{interval} ({vreg}) spilled, weight {}",
                Weight(*weight)
            ),
            Event::ReloadPiece {
                interval,
                vreg,
                inst,
                is_def,
            } => {
                let what = if *is_def {
                    "store after"
                } else {
                    "reload before"
                };
                write!(f, "    iv{interval} ({vreg}): {what} inst{inst}")
            }
            Event::Recoloring {
                interval,
                vreg,
                why,
                outcome,
                moved,
            } => {
                write!(
                    f,
                    "  iv{interval} ({vreg}) last-chance recoloring ({why}): "
                )?;
                match outcome {
                    None => f.write_str("failed"),
                    Some(p) => {
                        write!(f, "takes {p}")?;
                        for (j, from, to) in moved {
                            match to {
                                Some(to) => write!(f, "; iv{j} {from} -> {to}")?,
                                None => write!(f, "; iv{j} evicted from {from}")?,
                            }
                        }
                        Ok(())
                    }
                }
            }
            Event::HintRecolored {
                interval,
                vreg,
                from,
                to,
                why,
            } => write!(f, "  iv{interval} ({vreg}) recolored {from} -> {to} {why}"),
        }
    }
}

/// Emits an event if an observer is attached: `observe!(self, Event::...)`. The event
/// expression is evaluated only then (it may read `self`), so an allocation without an
/// observer pays one branch here; the builders it calls are cold and never inlined, so
/// the hot paths around an emission point keep their size.
macro_rules! observe {
    ($a:expr, $event:expr) => {
        if $a.observer.is_some() {
            let event = $event;
            $crate::observe::emit(&mut $a.observer, event);
        }
    };
}
pub(crate) use observe;

/// Hands `event` to the observer, if any (the dispatch, out of line).
#[cold]
#[inline(never)]
pub(crate) fn emit(observer: &mut Option<&mut dyn Observer>, event: Event) {
    if let Some(o) = observer.as_deref_mut() {
        o.event(event);
    }
}
