//! Clearing: old tool results become placeholders (their originals stay expandable).
//! The cheapest layer: what it replaces the model has already acted on.
use super::{Ask, Climb, Layer, LayerKind, Load};
use crate::policy::Policy;

pub struct Clear;

impl Layer for Clear {
    fn kind(&self) -> LayerKind {
        LayerKind::Clear
    }

    fn cost(&self) -> u8 {
        0
    }

    /// Past the clear threshold, or over the limit: down to the clear target, or at
    /// least under the limit. Over the limit any saving helps. Opportunistic: with
    /// nothing to clear, the next layer decides (no failure counted).
    fn ask(&self, policy: &Policy, load: &Load, _climb: &Climb) -> Option<Ask> {
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
}
