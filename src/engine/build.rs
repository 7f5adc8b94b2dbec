//! BuildMessages (clear and summarize when due, fit the history, record the build) and
//! CheckBudget.
use super::clearing::{apply_to_view, plan_clearing, tool_names};
use super::ledger::ledger_block;
use super::report::{policy_of, session_report, summary_region, view_estimate};
use super::request::{count_messages, output_reserve};
use super::sent::Chosen;
use super::summary_pass::{MAX_SUMMARY_PASSES, Pass, PassOptions};
use super::{BuildRequest, Built, CheckRequest, Engine, JobReason, Trimmed};
use crate::budget::{self, Regions, Report};
use crate::compaction;
use crate::error::{Error, Result};
use crate::events::CompactionKind;
use crate::message::{Message, Role, StoredMessage, ViewState};
use crate::metrics::{BuildFigures, BuildKind, metrics};
use crate::policy::{Policy, SummaryPlacement};
use crate::session::{Session, Summary};
use crate::store::BuildRecord;
use crate::summarize;
use crate::summarizer::Writer;
use crate::turns;
use crate::validate::validate_message;

impl Engine {
    pub async fn build_messages(&self, tenant_id: i64, request: BuildRequest) -> Result<Built> {
        let mut row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = policy_of(&row)?;
        let reserve = output_reserve(&policy, request.max_output_tokens)?;
        let counter = self.counter(&policy).await?;
        let (system_tokens, tool_tokens, tool_definitions) = self
            .count_request(counter, &request.system_prompt, request.tools)
            .await?;
        let mut stored = self.store.view(&row).await?;
        let mut summaries = if row.may_have_summaries() {
            self.store.active_summaries(row.id).await?
        } else {
            Vec::new()
        };
        // The task ledger's block is rendered with the summaries and counted against the
        // limit; it follows the view (what the view no longer shows), so it is rendered
        // again whenever compaction below changes the view. The compaction thresholds and
        // the low-water mark leave it out, like a cap the client chose: otherwise the
        // block (which grows as compaction hides more) would make every compaction come
        // sooner and go deeper, and cost the prompt cache more restarts (decision 0018).
        let entries = self.store.ledger_at(&row).await?;
        let last_seq = row.message_count;
        let block_tokens = |block: &Option<crate::ledger::render::Block>, with_summaries: bool| {
            block.as_ref().map_or(0, |block| {
                summarize::appended_block_tokens(block.tokens, with_summaries, &counter)
            })
        };
        let mut ledger = ledger_block(&entries, &stored, &summaries, last_seq, &policy, &counter);
        let mut fixed = system_tokens + tool_tokens + summary_region(&summaries, &policy);
        // Past the clearing threshold, old tool results become placeholders (persisted:
        // the next builds extend this view).
        let before = view_estimate(&row, &stored, fixed).total_tokens;
        let before_with_ledger = view_estimate(
            &row,
            &stored,
            fixed + block_tokens(&ledger, !summaries.is_empty()),
        )
        .total_tokens;
        let limit = policy.limit_tokens() - reserve;
        let mut compacted = false;
        let threshold = policy.clear_threshold_tokens();
        // Loop guard: after repeated failures automatic compaction waits for a manual
        // Compact or a new user message; after a revert, until the session has grown or
        // a manual Compact (the trimming below still keeps the budget).
        let paused = i64::from(row.compaction_failures) >= policy.compaction_failure_limit
            || row.compaction_held();
        if (before > threshold || before_with_ledger > limit) && !paused {
            let target = policy.clear_target_tokens();
            // Over the limit the request cannot go out as it is: any saving helps.
            let min_savings = if before_with_ledger > limit {
                0
            } else {
                compaction::clear_min_savings(&policy)
            };
            let wanted = (before - target).max(before_with_ledger - limit);
            let plan = plan_clearing(&policy, &stored, wanted, min_savings);
            if !plan.cleared.is_empty() {
                // When the session moved on meanwhile, the trimming below still keeps
                // this build within budget; the next build clears.
                if let Ok(cleared) = self.apply_clearing(tenant_id, &row, &policy, &plan).await? {
                    apply_to_view(stored.to_mut(), &cleared);
                    row = cleared.row;
                    compacted = true;
                    ledger =
                        ledger_block(&entries, &stored, &summaries, last_seq, &policy, &counter);
                }
            }
        }
        // Past the summarize threshold, or still over the limit, the oldest turns outside
        // the fresh tail go into summaries, one chunk at a time, down to the clear target:
        // one deep compaction, then many builds that extend it (the provider's prompt
        // cache survives those), rather than a small one every turn.
        let summarize_at = policy.summarize_threshold_tokens();
        let low_water = policy.clear_target_tokens();
        // A clearing that did not reach the low-water mark already cost the cached
        // prefix: summarizing in the same build costs nothing more.
        // A model-backed session is summarized by a job (enqueued at append); here only
        // when the request would not fit otherwise, deterministically, asking for a job
        // in the same transaction.
        let inline = self.model_for(&policy)?.is_none();
        let mut summarizing = compacted && inline;
        let mut progress = false;
        for _ in 0..MAX_SUMMARY_PASSES {
            let total = view_estimate(&row, &stored, fixed).total_tokens;
            let with_ledger = view_estimate(
                &row,
                &stored,
                fixed + block_tokens(&ledger, !summaries.is_empty()),
            )
            .total_tokens;
            let over = with_ledger > limit;
            summarizing |= (total > summarize_at && inline) || over;
            if paused || !summarizing || (total <= low_water && !over) {
                break;
            }
            let options = PassOptions {
                writer: Writer::Extractive,
                forced: true,
                dry_run: false,
                emergency: false,
                follow_up: (!inline).then(|| self.summarize_job(JobReason::Fallback, 0, false)),
                compaction: if inline {
                    CompactionKind::Summarize
                } else {
                    CompactionKind::Fallback
                },
                job_id: 0,
                shed_tokens: total - low_water,
            };
            let pass = self
                .summarize_chunk(tenant_id, &row, &policy, &stored, &summaries, &options)
                .await?;
            let Pass::Done(pass) = pass else {
                break;
            };
            stored.to_mut().drain(pass.covered.clone());
            row = pass.row;
            summaries = pass.summaries;
            ledger = ledger_block(&entries, &stored, &summaries, last_seq, &policy, &counter);
            fixed = system_tokens + tool_tokens + summary_region(&summaries, &policy);
            progress = true;
        }
        // A build where compaction was due but took nothing off is a failure; any
        // progress resets the count.
        let due = summarizing && !paused;
        let failures = match (due, progress || compacted) {
            (true, false) => row.compaction_failures.saturating_add(1),
            (_, true) => 0,
            (false, false) => row.compaction_failures,
        };
        if failures != row.compaction_failures {
            self.store.set_compaction_failures(row.id, failures).await?;
            if i64::from(failures) >= policy.compaction_failure_limit {
                tracing::warn!(
                    session_id = %row.external_id,
                    failures,
                    "automatic compaction paused after repeated failures"
                );
            }
            row.compaction_failures = failures;
        }

        // Indexes into the view, which stays shared with the cache unless this build
        // changed it: a build copies only what it renders differently.
        let keep = turns::provider_valid(&stored);
        let messages: Vec<&StoredMessage> = keep.iter().map(|&index| &stored[index]).collect();
        let incomplete = (stored.len() - messages.len()) as i64;

        let anchor = row.anchor();
        let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
        let last_seq = seqs.last().copied().unwrap_or(0);
        let estimate_from = |fixed: i64, cut: usize, history: i64| {
            let first_seq = seqs.get(cut).copied().unwrap_or(0);
            budget::estimate(
                anchor.as_ref(),
                row.view_epoch,
                first_seq,
                last_seq,
                fixed,
                history,
            )
        };
        let mut tokens: Vec<i64> = messages.iter().map(|m| m.view_tokens).collect();
        let starts = turns::turn_starts(&messages);
        // When even the newest turn does not fit next to the summaries, the oldest
        // summaries stay out of this request (they remain stored), and last the ledger's
        // block (it remains too).
        let mut omitted_summaries = 0;
        let cut = loop {
            let fixed = system_tokens
                + tool_tokens
                + summary_region(&summaries[omitted_summaries..], &policy)
                + block_tokens(&ledger, omitted_summaries < summaries.len());
            let cut = budget::fit_history(&tokens, &starts, |cut, history| {
                estimate_from(fixed, cut, history).total_tokens <= limit
            });
            if cut.is_some() {
                break cut;
            }
            if omitted_summaries < summaries.len() {
                omitted_summaries += 1;
            } else if ledger.is_some() {
                ledger = None;
            } else {
                break cut;
            }
        };
        summaries.drain(..omitted_summaries);
        let ledger_tokens = block_tokens(&ledger, !summaries.is_empty());
        let fixed =
            system_tokens + tool_tokens + summary_region(&summaries, &policy) + ledger_tokens;
        // Not even the newest turn fits: its previews shrink to what is left.
        let render = compaction::Render::new(&policy);
        let newest = starts.last().copied().unwrap_or(0);
        let over = |tokens: &[i64]| {
            estimate_from(fixed, newest, tokens[newest..].iter().sum()).total_tokens - limit
        };
        let excess = if cut.is_none() { over(&tokens) } else { 0 };
        let mut shrunk = render.shrink_previews(&messages, newest, &mut tokens, excess);
        let fits = !shrunk.is_empty() && over(&tokens) <= 0;
        let Some(cut) = cut.or(fits.then_some(newest)) else {
            let newest_tokens = tokens[newest..].iter().sum();
            return Err(does_not_fit(
                &policy,
                reserve,
                system_tokens,
                tool_tokens,
                newest_tokens,
            ));
        };

        let dropped_tokens: i64 = tokens[..cut].iter().sum();
        let dropped_turns = if cut == 0 {
            0
        } else {
            let whole = starts.iter().filter(|&&start| start < cut).count();
            // Messages before the first user message form one more unit.
            whole + usize::from(starts.first() != Some(&0))
        };
        // Tool names for the placeholders and previews, gathered only when a message
        // sent is not whole (most builds send every message as it is).
        let mut names = None;
        let sent: Vec<(usize, Option<Message>)> = (cut..keep.len())
            .map(|at| {
                let message = &stored[keep[at]];
                let rendered = shrunk.remove(&at).or_else(|| {
                    (message.view_state != ViewState::Full).then(|| {
                        let name = names
                            .get_or_insert_with(|| tool_names(messages.iter().copied()))
                            .get(&message.message.tool_call_id)
                            .map_or("unknown", String::as_str);
                        let (seq, count) = (message.seq, message.token_count);
                        render.message(&message.message, message.view_state, seq, count, name)
                    })
                });
                (keep[at], rendered)
            })
            .collect();
        let history = Chosen { view: stored, sent };
        let history_tokens: i64 = tokens[cut..].iter().sum();
        let estimate = estimate_from(fixed, cut, history_tokens);
        // The ledger's block is part of the summaries region.
        let summary_tokens = summary_region(&summaries, &policy) + ledger_tokens;
        let regions = Regions {
            system_tokens,
            summary_tokens,
            history_tokens,
            tool_tokens,
        };
        let report = budget::report(&policy, reserve, regions, estimate, true);
        let first_seq = history.first_seq();
        let chosen_last_seq = history.iter().last().map_or(0, |(stored, _)| stored.seq);
        // The ledger's block counts with the system prompt here: a change of it is a new
        // prefix (not an extension), and a usage report anchors on a fixed part that
        // includes it.
        let record = BuildRecord {
            first_seq,
            last_seq: chosen_last_seq,
            system_tokens: system_tokens + ledger_tokens,
            tool_tokens,
            history_tokens,
            estimate_tokens: estimate.total_tokens,
            view_epoch: row.view_epoch,
        };
        // A repeated build (a retry, a second reader) needs no write.
        let previous = last_build(&row);
        let kind = if record != previous {
            let extends = previous.first_seq > 0
                && record.first_seq == previous.first_seq
                && record.view_epoch == previous.view_epoch
                && record.last_seq >= previous.last_seq
                && record.system_tokens == previous.system_tokens
                && record.tool_tokens == previous.tool_tokens;
            self.store.record_build(row.id, record, extends).await?;
            if extends {
                BuildKind::Extends
            } else {
                BuildKind::Restarts
            }
        } else {
            BuildKind::Repeats
        };
        metrics().build_finished(
            &BuildFigures {
                system_tokens,
                tool_tokens,
                summary_tokens,
                history_tokens,
                estimate_tokens: estimate.total_tokens,
                window_tokens: policy.context_window_tokens,
            },
            kind,
        );
        let placed = place_block(&policy, &summaries, ledger, &history, request.system_prompt);
        let (messages, open) = history.assemble(placed.message, request.recipient);
        Ok(Built {
            last_seq: messages.last_seq(),
            messages,
            system_prompt: placed.system_prompt,
            system_block: placed.system_block,
            summaries,
            report,
            version: row.version,
            trimmed: Trimmed {
                turns: dropped_turns as i64,
                messages: cut as i64 + incomplete + open,
                tokens: dropped_tokens,
                incomplete_step_messages: incomplete + open,
                summaries: omitted_summaries as i64,
            },
            tool_definitions,
            first_seq,
        })
    }

    pub async fn check_budget(&self, tenant_id: i64, request: CheckRequest) -> Result<Report> {
        let row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = policy_of(&row)?;
        let reserve = output_reserve(&policy, request.max_output_tokens)?;
        let counter = self.counter(&policy).await?;
        let (system_tokens, tool_tokens, _) = self
            .count_request(counter, &request.system_prompt, request.tools)
            .await?;
        (self.config.limits).check_message_count("pending_messages", request.pending.len())?;
        for (index, message) in request.pending.iter().enumerate() {
            validate_message(
                index,
                message,
                self.config.max_content_bytes,
                "pending_messages",
            )?;
        }
        let pending = count_messages(counter, &request.pending).await?;
        let mut newest_turn = row.last_turn_tokens;
        for (message, tokens) in request.pending.iter().zip(&pending) {
            if message.role == Role::User {
                newest_turn = 0;
            }
            newest_turn += tokens;
        }
        let mut after = row.clone();
        after.view_tokens += pending.iter().sum::<i64>();
        after.message_count += pending.len() as i64;
        let regions = Regions {
            system_tokens,
            summary_tokens: row.summary_tokens,
            history_tokens: after.view_tokens,
            tool_tokens,
        };
        Ok(session_report(
            &policy,
            reserve,
            &after,
            regions,
            newest_turn,
        ))
    }
}

/// The summaries' (and the ledger's) block where a build puts it.
struct Placed {
    /// The system prompt to send: the request's, with the block when it goes there.
    system_prompt: String,
    /// The block, when it went into the system prompt.
    system_block: Option<String>,
    /// The block as a user message and how many messages go before it, otherwise.
    message: Option<(usize, Message)>,
}

/// Joins the summaries' and the ledger's blocks and places them: in the system prompt,
/// leading the history, or after the task's first message (the policy's placement).
fn place_block(
    policy: &Policy,
    summaries: &[Summary],
    ledger: Option<crate::ledger::render::Block>,
    history: &Chosen,
    system_prompt: String,
) -> Placed {
    let block = match (
        summarize::block(summaries.iter().map(|s| s.content.as_str())),
        ledger,
    ) {
        (summaries, None) => summaries,
        (None, Some(ledger)) => Some(ledger.text),
        (Some(summaries), Some(ledger)) => Some(format!("{summaries}\n\n{}", ledger.text)),
    };
    let placement = match policy.summary_placement {
        SummaryPlacement::AfterTask if starts_a_summarized_task(history, summaries) => {
            Placement::AfterFirst
        }
        SummaryPlacement::AfterTask | SummaryPlacement::System => Placement::System,
        SummaryPlacement::User => Placement::Leading,
    };
    let as_message = |at: usize, block: String| Placed {
        system_prompt: system_prompt.clone(),
        system_block: None,
        message: Some((at, Message::text(Role::User, block))),
    };
    match (block, placement) {
        (None, _) => Placed {
            system_prompt,
            system_block: None,
            message: None,
        },
        (Some(block), Placement::System) => Placed {
            system_prompt: if system_prompt.is_empty() {
                block.clone()
            } else {
                format!("{system_prompt}\n\n{block}")
            },
            system_block: Some(block),
            message: None,
        },
        (Some(block), Placement::Leading) => as_message(0, block),
        (Some(block), Placement::AfterFirst) => as_message(1, block),
    }
}

/// Where a build puts the block of summaries.
enum Placement {
    System,
    Leading,
    AfterFirst,
}

/// Whether the history sent starts with a user message whose turn has steps a summary
/// covers (a step summary starts after it): the summaries then follow that message.
fn starts_a_summarized_task(history: &Chosen, summaries: &[Summary]) -> bool {
    let first_seq = history.first_seq();
    let starts_with_user = history
        .iter()
        .next()
        .is_some_and(|(_, message)| message.role == Role::User);
    starts_with_user
        && summaries
            .iter()
            .any(|summary| summary.first_seq > first_seq)
}

fn last_build(row: &Session) -> BuildRecord {
    BuildRecord {
        view_epoch: row.last_build_view_epoch,
        first_seq: row.last_build_first_seq,
        last_seq: row.last_build_last_seq,
        system_tokens: row.last_build_system_tokens,
        tool_tokens: row.last_build_tool_tokens,
        history_tokens: row.last_build_history_tokens,
        estimate_tokens: row.last_build_estimate_tokens,
    }
}

fn does_not_fit(policy: &Policy, reserve: i64, system: i64, tools: i64, newest_turn: i64) -> Error {
    let available = policy.limit_tokens() - reserve;
    Error::FailedPrecondition {
        message: format!(
            "the request cannot fit: system prompt {system} + tools {tools} + newest turn \
             {newest_turn} tokens exceed the {available} available \
             (window {} - output reserve {reserve}); shorten the system prompt or tools, \
             lower max_output_tokens, or use a larger window",
            policy.context_window_tokens
        ),
        figures: vec![
            ("system_tokens", system),
            ("tool_tokens", tools),
            ("newest_turn_tokens", newest_turn),
            ("output_reserve_tokens", reserve),
            ("available_tokens", available),
            ("context_window_tokens", policy.context_window_tokens),
        ],
    }
}
