//! Sessions, summaries and budget reports to the proto.

use super::policy::policy_to_pb;
use super::timestamp;
use crate::budget::{self, Report};
use crate::engine;
use crate::pb;
use crate::tree;

pub(in crate::api) fn session_to_pb(info: &engine::SessionInfo) -> pb::Session {
    let row = &info.row;
    let mean = if row.est_samples > 0 {
        row.est_abs_err_sum / row.est_samples as f64
    } else {
        0.0
    };
    pb::Session {
        session_id: row.external_id.clone(),
        policy: Some(policy_to_pb(&info.row.policy.in_force())),
        requested_policy: Some(policy_to_pb(&info.row.policy)),
        version: row.version,
        message_count: row.message_count,
        turn_count: row.turn_count,
        log_tokens: row.log_tokens,
        view_tokens: row.view_tokens,
        metadata: row.metadata.clone().into_iter().collect(),
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        estimator: Some(pb::EstimatorStats {
            samples: row.est_samples,
            mean_abs_error_pct: mean * 100.0,
            max_abs_error_pct: row.est_max_abs_err * 100.0,
            last_error_pct: row.est_last_err * 100.0,
            anchor_input_tokens: row.anchor.map_or(0, |anchor| anchor.reported_tokens),
        }),
        // The link is the tree's: `with_link` fills it in.
        parent_session_id: String::new(),
        parent_tool_call_id: String::new(),
        depth: 0,
        finished_at: row.finished_at.map(timestamp),
        usage_total: Some(pb::Usage {
            input_tokens: row.usage_input_tokens,
            output_tokens: row.usage_output_tokens,
            cached_input_tokens: row.usage_cached_tokens,
        }),
        forked_from_session_id: row.forked_from.clone().unwrap_or_default(),
        forked_at_seq: if row.forked_from.is_some() {
            row.base_seq
        } else {
            0
        },
        compaction: Some(pb::CompactionStats {
            cleared_messages: row.cleared_messages,
            evicted_messages: row.evicted_messages,
            builds: row.builds.count,
            extending_builds: row.builds.extending,
            summaries_written: row.summaries_written,
            summary_tokens: row.summary_tokens,
            consecutive_failures: i64::from(row.compaction_failures),
            paused: i64::from(row.compaction_failures) >= info.row.policy.compaction_failure_limit,
            compaction_held: row.compaction_held(),
            resume_at_log_tokens: row.compaction_resume_log_tokens,
            cache_stable_pct: if row.builds.count > 1 {
                row.builds.extending as f64 * 100.0 / (row.builds.count - 1) as f64
            } else {
                100.0
            },
        }),
    }
}

/// `session` with its link to its parent (None: a root).
pub(in crate::api) fn with_link(
    mut session: pb::Session,
    link: Option<&tree::Link>,
) -> pb::Session {
    if let Some(link) = link {
        session.parent_session_id = link.parent_session_id.clone().unwrap_or_default();
        session.parent_tool_call_id = link.parent_tool_call_id.clone();
        session.depth = i32::try_from(link.depth).unwrap_or(i32::MAX);
    }
    session
}

pub(in crate::api) fn child_to_pb(child: &tree::Child) -> pb::ChildSession {
    pb::ChildSession {
        session_id: child.session_id.clone(),
        parent_tool_call_id: child.parent_tool_call_id.clone(),
        finished: child.finished_at.is_some(),
        finished_at: child.finished_at.map(timestamp),
        created_at: Some(timestamp(child.created_at)),
    }
}

pub(in crate::api) fn subtree_to_pb(rollup: &tree::Rollup) -> pb::SubtreeTotals {
    pb::SubtreeTotals {
        sessions: rollup.sessions,
        log_tokens: rollup.log_tokens,
        usage_total: Some(pb::Usage {
            input_tokens: rollup.input_tokens,
            output_tokens: rollup.output_tokens,
            cached_input_tokens: rollup.cached_input_tokens,
        }),
    }
}

pub(in crate::api) fn summary_to_pb(summary: &crate::session::Summary) -> pb::Summary {
    pb::Summary {
        summary_id: summary.id,
        depth: summary.depth,
        first_seq: summary.first_seq,
        last_seq: summary.last_seq,
        content: summary.content.clone(),
        token_count: i64::from(summary.token_count),
        source_tokens: summary.source_tokens,
        facts: i64::from(summary.facts),
        facts_lost: i64::from(summary.facts_lost),
        paths: summary.retention.paths,
        paths_lost: summary.retention.paths_lost,
        commands: summary.retention.commands,
        commands_lost: summary.retention.commands_lost,
        identifiers: summary.retention.identifiers,
        identifiers_lost: summary.retention.identifiers_lost,
        reverted: false,
    }
}

pub(in crate::api) fn report_to_pb(report: &Report) -> pb::BudgetReport {
    let regions = report.regions;
    pb::BudgetReport {
        breakdown: Some(pb::BudgetBreakdown {
            system_tokens: regions.system_tokens,
            summary_tokens: regions.summary_tokens,
            history_tokens: regions.history_tokens,
            tool_tokens: regions.tool_tokens,
            output_reserve_tokens: report.output_reserve_tokens,
            total_tokens: report.estimate.total_tokens,
            context_window_tokens: report.context_window_tokens,
            headroom_tokens: report.headroom_tokens,
            estimate_source: match report.estimate.source {
                budget::Source::Anchored => pb::EstimateSource::Anchored,
                budget::Source::Tokenizer => pb::EstimateSource::Tokenizer,
                budget::Source::Calibrated => pb::EstimateSource::Calibrated,
            } as i32,
            tokenizer_total_tokens: report.estimate.tokenizer_tokens,
        }),
        status: match report.status {
            budget::Status::Ok => pb::BudgetStatus::Ok,
            budget::Status::Warn => pb::BudgetStatus::Warn,
            budget::Status::Over => pb::BudgetStatus::Over,
        } as i32,
        recommended_action: match report.action {
            budget::Action::None => pb::RecommendedAction::None,
            budget::Action::ClearToolResults => pb::RecommendedAction::ClearToolResults,
            budget::Action::Summarize => pb::RecommendedAction::Summarize,
            budget::Action::ReduceRequest => pb::RecommendedAction::ReduceRequest,
        } as i32,
        window_fraction: report.window_fraction,
    }
}
