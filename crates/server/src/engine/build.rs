//! BuildMessages (clear and summarize when due, fit the history, record the build) and
//! CheckBudget.
use super::build_work::Work;
use super::clearing::tool_names;
use super::report::{session_report, summary_region};
use super::request::{count_messages, output_reserve};
use super::sent::Chosen;
use super::{BuildRequest, Built, CheckRequest, Engine, Trimmed};
use crate::budget::{self, Estimate, Regions, Report};
use crate::compaction;
use crate::error::{Error, Result};
use crate::fit::{self, Fit, Frame};
use crate::message::{Message, Role, StoredMessage, ViewState};
use crate::metrics::{BuildFigures, BuildKind, metrics};
use crate::policy::{Policy, SummaryPlacement};
use crate::session::{Session, Summary};
use crate::store::{BuildRecord, ChartPoint};
use crate::summarize;
use crate::turns;
use crate::validate::validate_message;

impl Engine {
    pub async fn build_messages(&self, tenant_id: i64, request: BuildRequest) -> Result<Built> {
        let row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = row.policy.clone();
        let reserve = output_reserve(&policy, request.max_output_tokens)?;
        let counter = self.counter(&policy).await?;
        let (system_tokens, tool_tokens, tool_definitions) = self
            .count_request(
                counter,
                &request.system_prompt,
                request.tools,
                policy.recall_tools,
            )
            .await?;
        let counted = (reserve, system_tokens, tool_tokens);
        let mut work = self.build_work(row, policy, counter, counted).await?;
        self.compact_for_build(tenant_id, &mut work).await?;
        let (history, fitted) = fit_view(&mut work)?;
        let report = self.record(&work, &history, &fitted).await?;
        let first_seq = history.first_seq();
        let Work {
            row,
            policy,
            summaries,
            ledger,
            ..
        } = work;
        let placed = place_block(&policy, &summaries, ledger, &history, request.system_prompt);
        let (messages, open) = history.assemble(placed.message, request.recipient);
        // Where the prompt is stable until the next compaction: the summaries' block.
        let stable = crate::render::Stable {
            block_in_system: (placed.system_block.as_ref())
                .map(|block| placed.system_prompt.len().saturating_sub(block.len())),
            block_message: messages.iter().position(|(stored, _)| stored.is_none()),
        };
        Ok(Built {
            stable,
            last_seq: messages.last_seq(),
            messages,
            system_prompt: placed.system_prompt,
            system_block: placed.system_block,
            summaries,
            report,
            version: row.version,
            trimmed: Trimmed {
                turns: fitted.dropped_turns as i64,
                messages: fitted.cut as i64 + fitted.incomplete + open,
                tokens: fitted.dropped_tokens,
                incomplete_step_messages: fitted.incomplete + open,
                summaries: fitted.omitted_summaries as i64,
            },
            tool_definitions,
            first_seq,
        })
    }

    /// Writes the build's record (unless a repeat), counts it, and reports its budget.
    async fn record(&self, work: &Work, history: &Chosen, fitted: &Fitted) -> Result<Report> {
        let (system_tokens, tool_tokens) = (work.system_tokens, work.tool_tokens);
        let ledger_tokens = work.block_tokens(&work.ledger, !work.summaries.is_empty());
        let (history_tokens, estimate) = (fitted.history_tokens, fitted.estimate);
        // The ledger's block is part of the summaries region.
        let summary_tokens = summary_region(&work.summaries, &work.policy) + ledger_tokens;
        let regions = Regions {
            system_tokens,
            summary_tokens,
            history_tokens,
            tool_tokens,
        };
        let report = budget::report(&work.policy, work.reserve, regions, estimate, true);
        // The ledger's block counts with the system prompt here: a change of it is a new
        // prefix (not an extension), and a usage report anchors on a fixed part that
        // includes it.
        let record = BuildRecord {
            first_seq: history.first_seq(),
            last_seq: history.iter().last().map_or(0, |(stored, _)| stored.seq),
            system_tokens: system_tokens + ledger_tokens,
            tool_tokens,
            history_tokens,
            estimate_tokens: estimate.total_tokens,
            view_epoch: work.row.view_epoch,
        };
        let chart = ChartPoint {
            ledger_tokens,
            summary_tokens,
            window_tokens: work.policy.context_window_tokens,
        };
        let kind = self.record_build(&work.row, record, chart).await?;
        metrics().build_finished(
            &BuildFigures {
                system_tokens,
                tool_tokens,
                summary_tokens,
                history_tokens,
                estimate_tokens: estimate.total_tokens,
                window_tokens: work.policy.context_window_tokens,
            },
            kind,
        );
        Ok(report)
    }

    /// Writes `record` unless it repeats the last (a retry, a second reader); whether it
    /// extends the last build's prefix.
    async fn record_build(
        &self,
        row: &Session,
        record: BuildRecord,
        chart: ChartPoint,
    ) -> Result<BuildKind> {
        let previous = row.builds.last;
        if record == previous {
            return Ok(BuildKind::Repeats);
        }
        let extends = previous.first_seq > 0
            && record.first_seq == previous.first_seq
            && record.view_epoch == previous.view_epoch
            && record.last_seq >= previous.last_seq
            && record.system_tokens == previous.system_tokens
            && record.tool_tokens == previous.tool_tokens;
        self.store.record_build(row, record, extends, chart).await?;
        Ok(if extends {
            BuildKind::Extends
        } else {
            BuildKind::Restarts
        })
    }

    pub async fn check_budget(&self, tenant_id: i64, request: CheckRequest) -> Result<Report> {
        let row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = row.policy.clone();
        let reserve = output_reserve(&policy, request.max_output_tokens)?;
        let counter = self.counter(&policy).await?;
        let (system_tokens, tool_tokens, _) = self
            .count_request(
                counter,
                &request.system_prompt,
                request.tools,
                policy.recall_tools,
            )
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

/// What fitting the view left out, and the history it sends.
struct Fitted {
    /// Index into the provider-valid view of the first message sent.
    cut: usize,
    /// Messages of an incomplete step the provider-valid view left out.
    incomplete: i64,
    dropped_turns: usize,
    dropped_tokens: i64,
    omitted_summaries: usize,
    history_tokens: i64,
    estimate: Estimate,
}

/// Fits the (compacted) view into the window: the core decides where the history starts
/// and what of the summaries and the ledger's block stays out (`fit::fit`); the
/// messages not sent whole are rendered here (placeholders, previews). Takes the view
/// out of `work` into the chosen history.
fn fit_view(work: &mut Work) -> Result<(Chosen, Fitted)> {
    let stored = std::mem::take(&mut work.view);
    // Indexes into the view, which stays shared with the cache unless this build
    // changed it: a build copies only what it renders differently.
    let keep = turns::provider_valid(&stored);
    let messages: Vec<&StoredMessage> = keep.iter().map(|&index| &stored[index]).collect();
    let ledger = &work.ledger;
    let frame = Frame {
        policy: &work.policy,
        limit: work.limit(),
        system_tokens: work.system_tokens,
        tool_tokens: work.tool_tokens,
        summaries: &work.summaries,
        ledger_tokens: ledger
            .is_some()
            .then(|| [false, true].map(|beside| work.block_tokens(ledger, beside))),
        anchor: work.row.anchor(),
        view_epoch: work.row.view_epoch,
    };
    let fit = fit::fit(&frame, &messages).map_err(|too_big| {
        let (system, tools) = (work.system_tokens, work.tool_tokens);
        does_not_fit(
            &work.policy,
            work.reserve,
            system,
            tools,
            too_big.newest_turn_tokens,
        )
    })?;
    let fixed = frame.fixed(fit.omitted_summaries, fit.ledger_kept);
    let history_tokens: i64 = fit.tokens[fit.cut..].iter().sum();
    let fitted = Fitted {
        cut: fit.cut,
        incomplete: (stored.len() - messages.len()) as i64,
        dropped_turns: fit.dropped_turns,
        dropped_tokens: fit.tokens[..fit.cut].iter().sum(),
        omitted_summaries: fit.omitted_summaries,
        history_tokens,
        estimate: frame.estimate(&messages, fixed, fit.cut, history_tokens),
    };
    let ledger_kept = fit.ledger_kept;
    let sent = render_sent(&work.policy, &messages, &keep, fit);
    work.summaries.drain(..fitted.omitted_summaries);
    if !ledger_kept {
        work.ledger = None;
    }
    Ok((Chosen { view: stored, sent }, fitted))
}

/// The messages sent, as indexes into the view, each with its rendering when it is not
/// sent whole (a shrunk preview, a placeholder, an eviction's preview).
fn render_sent(
    policy: &Policy,
    messages: &[&StoredMessage],
    keep: &[usize],
    mut fit: Fit,
) -> Vec<(usize, Option<Message>)> {
    let render = compaction::Render::new(policy);
    // Tool names for the placeholders and previews, gathered only when a message sent
    // is not whole (most builds send every message as it is).
    let mut names = None;
    (fit.cut..keep.len())
        .map(|at| {
            let message = messages[at];
            let rendered = fit.shrunk.remove(&at).or_else(|| {
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
        .collect()
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
