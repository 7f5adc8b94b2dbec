//! Summarizing: the oldest turns outside the fresh tail go into summaries, a chunk per
//! pass, down to the low-water mark.
use super::{Ask, Climb, Layer, LayerKind, Load};
use crate::policy::Policy;

/// Summary passes in one build, at most: each takes one chunk of the oldest turns.
pub const MAX_SUMMARY_PASSES: usize = 16;

pub struct Summarize;

impl Layer for Summarize {
    fn kind(&self) -> LayerKind {
        LayerKind::Summarize
    }

    fn cost(&self) -> u8 {
        1
    }

    fn max_passes(&self) -> usize {
        MAX_SUMMARY_PASSES
    }

    /// Due and fruitless is a failed compaction.
    fn must_progress(&self) -> bool {
        true
    }

    /// Past the summarize threshold (inline sessions; a model-backed one is summarized
    /// by a job), or over the limit, down to the low-water mark. Once due it stays due
    /// for the build; and when an earlier layer already cost the cached prefix, an
    /// inline session summarizes down to the low-water mark in the same build (it costs
    /// nothing more).
    fn ask(&self, policy: &Policy, load: &Load, climb: &Climb) -> Option<Ask> {
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
}
