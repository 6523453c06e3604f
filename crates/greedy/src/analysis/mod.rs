//! Analyses shared by every allocator: CFG and dominators, loops and block frequency,
//! SSA validation and liveness, live intervals. None of them knows about allocation
//! decisions.

pub(crate) mod cfg;
pub(crate) mod copies;
pub(crate) mod intervals;
pub(crate) mod liveness;
pub(crate) mod loops;

use regalloc2::{Function, RegAllocError};

/// Every analysis of one function, with buffers reused across functions.
#[derive(Default)]
pub(crate) struct Analyses {
    pub cfg: cfg::Cfg,
    pub loops: loops::LoopInfo,
    pub freq: loops::BlockFrequency,
    pub live: liveness::Liveness,
    pub intervals: intervals::LiveIntervals,
}

impl Analyses {
    pub fn compute<F: Function + ?Sized>(&mut self, f: &F) -> Result<(), RegAllocError> {
        self.cfg.compute(f)?;
        self.loops.compute(f, &self.cfg);
        self.freq.compute_from_loop_depth(&self.loops);
        self.live.compute(f, &self.cfg)?;
        self.intervals.build(f, &self.cfg, &self.live)?;
        Ok(())
    }
}
