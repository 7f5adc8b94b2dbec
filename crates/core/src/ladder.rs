//! The compaction ladder a build climbs when its request is due for compaction: an
//! ordered list of layers, cheapest first, and for each the pure decision whether it is
//! due and how much it should take off. The engine runs each due layer's pass in this
//! order (`crates/server/src/engine/ladder.rs`); adding a layer is its decision here, its
//! pass there, and one line in [`LADDER`].
//!
//! Large tool results are evicted earlier, at append (`compaction.rs`'s previews), and an
//! emergency compaction is asked for by a client (Compact) or by the provider endpoint
//! after a refusal for length: neither waits for a build.
use crate::policy::Policy;

/// One layer of the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Old tool results become placeholders (their originals stay expandable).
    Clear,
    /// The oldest turns outside the fresh tail go into summaries, a chunk per pass.
    Summarize,
}

/// The ladder, cheapest first: a layer runs only after every cheaper one had its turn.
pub const LADDER: &[Layer] = &[Layer::Clear, Layer::Summarize];

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

impl Layer {
    /// Its rank in cost to the provider's prompt cache and to what the model still
    /// reads: clearing replaces results the model has acted on, summarizing rewrites
    /// turns.
    pub fn cost(self) -> u8 {
        match self {
            Layer::Clear => 0,
            Layer::Summarize => 1,
        }
    }

    /// Passes it may run in one build.
    pub fn max_passes(self) -> usize {
        match self {
            Layer::Clear => 1,
            Layer::Summarize => MAX_SUMMARY_PASSES,
        }
    }

    /// Whether a build where it was due but nothing was taken off counts as a failed
    /// compaction. Clearing is opportunistic: with nothing to clear, the next layer
    /// decides.
    pub fn must_progress(self) -> bool {
        matches!(self, Layer::Summarize)
    }

    /// Whether it is due at this load, and what it should take off.
    pub fn ask(self, policy: &Policy, load: &Load, climb: &Climb) -> Option<Ask> {
        match self {
            Layer::Clear => ask_clear(policy, load),
            Layer::Summarize => ask_summarize(policy, load, climb),
        }
    }
}

/// Summary passes in one build, at most: each takes one chunk of the oldest turns.
pub const MAX_SUMMARY_PASSES: usize = 16;

/// Past the clear threshold, or over the limit: down to the clear target, or at least
/// under the limit. Over the limit any saving helps.
fn ask_clear(policy: &Policy, load: &Load) -> Option<Ask> {
    if load.total <= policy.clear_threshold_tokens() && !load.over() {
        return None;
    }
    let target = policy.clear_target_tokens();
    let min_savings = if load.over() {
        0
    } else {
        crate::compaction::clear_min_savings(policy)
    };
    Some(Ask {
        wanted: (load.total - target).max(load.with_ledger - load.limit),
        min_savings,
    })
}

/// Past the summarize threshold (inline sessions; a model-backed one is summarized by a
/// job), or over the limit, down to the low-water mark. Once due it stays due for the
/// build; and when an earlier layer already cost the cached prefix, an inline session
/// summarizes down to the low-water mark in the same build (it costs nothing more).
fn ask_summarize(policy: &Policy, load: &Load, climb: &Climb) -> Option<Ask> {
    let low_water = policy.clear_target_tokens();
    let due = climb.due
        || (climb.progress && climb.inline)
        || (load.total > policy.summarize_threshold_tokens() && climb.inline)
        || load.over();
    if !due || (load.total <= low_water && !load.over()) {
        return None;
    }
    Some(Ask {
        wanted: load.total - low_water,
        min_savings: 0,
    })
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
