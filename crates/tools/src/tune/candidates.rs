//! The policies a tune tries: the sessions' own, and each one change from it — the
//! ledger's share, when clearing and summarizing start, the eviction size, where the
//! summaries go — the settings the eval found to move cost and retention most.
use ctxd_server::pb;

/// One policy tried: its name and the fields it sets over a session's own policy.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub name: String,
    pub overrides: pb::Policy,
}

impl Candidate {
    /// `policy` with this candidate's fields in place.
    pub fn apply(&self, policy: &pb::Policy) -> pb::Policy {
        let o = &self.overrides;
        pb::Policy {
            ledger_fraction: o.ledger_fraction.or(policy.ledger_fraction),
            clear_threshold: o.clear_threshold.or(policy.clear_threshold),
            summarize_threshold: o.summarize_threshold.or(policy.summarize_threshold),
            eviction_threshold_tokens: (o.eviction_threshold_tokens)
                .or(policy.eviction_threshold_tokens),
            summary_placement: o.summary_placement.or(policy.summary_placement),
            ..policy.clone()
        }
    }

    /// Whether this is the sessions' own policy.
    pub fn is_current(&self) -> bool {
        self.overrides == pb::Policy::default()
    }
}

/// The candidates, the sessions' own first.
pub fn candidates() -> Vec<Candidate> {
    let one = |name: &str, overrides: pb::Policy| Candidate {
        name: name.to_string(),
        overrides,
    };
    let ledger = |share: f64| pb::Policy {
        ledger_fraction: Some(share),
        ..Default::default()
    };
    vec![
        one("current", pb::Policy::default()),
        one("ledger 1 %", ledger(0.01)),
        one("ledger 5 %", ledger(0.05)),
        one("ledger 20 %", ledger(0.2)),
        one(
            "clear at 50 %",
            pb::Policy {
                clear_threshold: Some(0.5),
                ..Default::default()
            },
        ),
        one(
            "summarize at 65 %",
            pb::Policy {
                summarize_threshold: Some(0.65),
                ..Default::default()
            },
        ),
        one(
            "summarize at 85 %",
            pb::Policy {
                summarize_threshold: Some(0.85),
                ..Default::default()
            },
        ),
        one(
            "summaries in the system prompt",
            pb::Policy {
                summary_placement: Some(pb::SummaryPlacement::System as i32),
                ..Default::default()
            },
        ),
    ]
}
