//! The compaction ladder a build climbs when its request is due for compaction: an
//! ordered list of layers, cheapest first, each a small type in its own file with the
//! pure decision whether it is due and how much it should take off (`clear.rs`,
//! `summarize.rs`). The engine runs each due layer's pass in this order
//! (`crates/server/src/engine/ladder.rs`); adding a layer is its file here and one line
//! in [`LADDER`], and its pass there with one arm.
//!
//! Large tool results are evicted earlier, at append (`compaction.rs`'s previews), and an
//! emergency compaction is asked for by a client (Compact) or by the provider endpoint
//! after a refusal for length: neither waits for a build.
use crate::policy::Policy;

mod clear;
mod summarize;

pub use clear::Clear;
pub use summarize::{MAX_SUMMARY_PASSES, Summarize};

/// Which layer a pass is, for the engine to run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    Clear,
    Summarize,
}

/// One layer of the ladder: its own file, one job.
pub trait Layer: Sync {
    fn kind(&self) -> LayerKind;
    /// Its rank in cost to the provider's prompt cache and to what the model still
    /// reads (clearing replaces results the model has acted on, summarizing rewrites
    /// turns): the ladder is in this order.
    fn cost(&self) -> u8;
    /// Passes it may run in one build.
    fn max_passes(&self) -> usize {
        1
    }
    /// Whether a build where it was due but nothing was taken off counts as a failed
    /// compaction.
    fn must_progress(&self) -> bool {
        false
    }
    /// Whether it is due at this load, and what it should take off.
    fn ask(&self, policy: &Policy, load: &Load, climb: &Climb) -> Option<Ask>;
}

/// The ladder, cheapest first: a layer runs only after every cheaper one had its turn.
pub static LADDER: &[&dyn Layer] = &[&Clear, &Summarize];

/// What a build's request weighs at a point of the climb.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// System, tools, summaries and history: the request without the ledger's block.
    pub total: i64,
    /// The same with the task ledger's block.
    pub with_ledger: i64,
    /// The most the request may use.
    pub limit: i64,
}

impl Load {
    /// The request cannot go out as it is.
    pub fn over(&self) -> bool {
        self.with_ledger > self.limit
    }
}

/// The climb so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Climb {
    /// The session's summaries are written here, deterministically (no model behind it,
    /// so no job does it).
    pub inline: bool,
    /// A layer that must make progress was asked to.
    pub due: bool,
    /// Some layer took something off.
    pub progress: bool,
}

/// What a due layer is asked to take off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    /// Tokens wanted off the request.
    pub wanted: i64,
    /// A pass that would save fewer tokens than this is not worth the cached prefix.
    pub min_savings: i64,
}

/// The failure count after a climb: a build where compaction was due and nothing was
/// taken off adds one; any progress resets it.
pub fn failures_after(current: i32, climb: &Climb) -> i32 {
    match (climb.due, climb.progress) {
        (_, true) => 0,
        (true, false) => current.saturating_add(1),
        (false, false) => current,
    }
}
