//! Policy overrides from the proto, the policy in force and tokenizers to it.

use crate::error::{Error, Result};
use crate::pb;
use crate::policy::{Policy, PolicyOverrides, SummaryPlacement, TokenizerKind};

pub(in crate::api) fn overrides_from_pb(policy: pb::Policy) -> Result<PolicyOverrides> {
    let tokenizer = match policy.tokenizer.map(pb::Tokenizer::try_from) {
        None | Some(Ok(pb::Tokenizer::Unspecified)) => None,
        Some(Ok(pb::Tokenizer::O200kBase)) => Some(TokenizerKind::O200kBase),
        Some(Ok(pb::Tokenizer::Cl100kBase)) => Some(TokenizerKind::Cl100kBase),
        Some(Ok(pb::Tokenizer::DeepseekV3)) => Some(TokenizerKind::DeepseekV3),
        Some(Ok(pb::Tokenizer::Heuristic)) => Some(TokenizerKind::Heuristic),
        Some(Err(_)) => return Err(Error::invalid("policy.tokenizer", "unknown tokenizer")),
    };
    let summary_placement = match policy.summary_placement.map(pb::SummaryPlacement::try_from) {
        None | Some(Ok(pb::SummaryPlacement::Unspecified)) => None,
        Some(Ok(pb::SummaryPlacement::System)) => Some(SummaryPlacement::System),
        Some(Ok(pb::SummaryPlacement::User)) => Some(SummaryPlacement::User),
        Some(Ok(pb::SummaryPlacement::AfterTask)) => Some(SummaryPlacement::AfterTask),
        Some(Err(_)) => {
            return Err(Error::invalid(
                "policy.summary_placement",
                "unknown placement",
            ));
        }
    };
    Ok(PolicyOverrides {
        context_window_tokens: policy.context_window_tokens,
        max_output_tokens: policy.max_output_tokens,
        tokenizer,
        heuristic_chars_per_token: policy.heuristic_chars_per_token,
        clear_threshold: policy.clear_threshold,
        clear_target: policy.clear_target,
        summarize_threshold: policy.summarize_threshold,
        hard_limit: policy.hard_limit,
        fresh_tail_messages: policy.fresh_tail_messages,
        fresh_tail_tokens: policy.fresh_tail_tokens,
        tool_output_protect_tokens: policy.tool_output_protect_tokens,
        clear_min_savings_tokens: policy.clear_min_savings_tokens,
        eviction_threshold_tokens: policy.eviction_threshold_tokens,
        leaf_chunk_messages: policy.leaf_chunk_messages,
        leaf_chunk_tokens: policy.leaf_chunk_tokens,
        leaf_target_tokens: policy.leaf_target_tokens,
        condense_fanin: policy.condense_fanin,
        condensed_target_tokens: policy.condensed_target_tokens,
        summary_placement,
        summarizer_profile: policy.summarizer_profile,
        media_item_tokens: policy.media_item_tokens,
        compaction_failure_limit: policy.compaction_failure_limit,
        ledger_fraction: policy.ledger_fraction,
        recall_tools: policy.recall_tools,
        retention_seconds: policy.retention_seconds,
    })
}

/// The proto value of a tokenizer.
pub fn tokenizer_to_pb(tokenizer: TokenizerKind) -> pb::Tokenizer {
    match tokenizer {
        TokenizerKind::O200kBase => pb::Tokenizer::O200kBase,
        TokenizerKind::Cl100kBase => pb::Tokenizer::Cl100kBase,
        TokenizerKind::DeepseekV3 => pb::Tokenizer::DeepseekV3,
        TokenizerKind::Heuristic => pb::Tokenizer::Heuristic,
    }
}

pub(in crate::api) fn policy_to_pb(policy: &Policy) -> pb::Policy {
    pb::Policy {
        context_window_tokens: Some(policy.context_window_tokens),
        max_output_tokens: Some(policy.max_output_tokens),
        tokenizer: Some(tokenizer_to_pb(policy.tokenizer) as i32),
        heuristic_chars_per_token: Some(policy.heuristic_chars_per_token),
        clear_threshold: Some(policy.clear_threshold),
        clear_target: Some(policy.clear_target),
        summarize_threshold: Some(policy.summarize_threshold),
        hard_limit: Some(policy.hard_limit),
        fresh_tail_messages: Some(policy.fresh_tail_messages),
        fresh_tail_tokens: Some(policy.fresh_tail_tokens),
        tool_output_protect_tokens: Some(policy.tool_output_protect_tokens),
        clear_min_savings_tokens: Some(policy.clear_min_savings_tokens),
        eviction_threshold_tokens: Some(policy.eviction_threshold_tokens),
        leaf_chunk_messages: Some(policy.leaf_chunk_messages),
        leaf_chunk_tokens: Some(policy.leaf_chunk_tokens),
        leaf_target_tokens: Some(policy.leaf_target_tokens),
        condense_fanin: Some(policy.condense_fanin),
        condensed_target_tokens: Some(policy.condensed_target_tokens),
        summary_placement: Some(match policy.summary_placement {
            SummaryPlacement::System => pb::SummaryPlacement::System,
            SummaryPlacement::User => pb::SummaryPlacement::User,
            SummaryPlacement::AfterTask => pb::SummaryPlacement::AfterTask,
        } as i32),
        summarizer_profile: Some(policy.summarizer_profile.clone()),
        media_item_tokens: Some(policy.media_item_tokens),
        compaction_failure_limit: Some(policy.compaction_failure_limit),
        ledger_fraction: Some(policy.ledger_fraction),
        recall_tools: Some(policy.recall_tools),
        retention_seconds: Some(policy.retention_seconds),
    }
}
