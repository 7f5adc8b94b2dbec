//! Writing one summary, and the condensations it makes due, with the summarizer a
//! session's policy names: three levels per summary (normal, aggressive, deterministic
//! truncation) so compaction always makes progress. The extractive summarizer runs on
//! the blocking pool; a model is called over HTTP, never inside a transaction.
pub mod model;

use std::sync::{Arc, Mutex};

use crate::chunks::{Span, condensation_width};
use crate::message::Message;
use crate::session::{Session, Summary};
use crate::store::{NewSummary, Store, StoreResult};
use crate::summarize::{self, Extractive, Level, Summarizer};
use crate::tokenize::Counter;
use model::{CallError, ModelSummarizer};

/// Who writes a summary.
#[derive(Debug, Clone)]
pub enum Writer {
    /// The built-in extractive summarizer: all three levels, deterministic.
    Extractive,
    /// A model for the normal and aggressive levels; with `truncate`, deterministic
    /// truncation when both fail (otherwise the failure is returned).
    Model {
        model: Arc<ModelSummarizer>,
        truncate: bool,
        /// The model's error, kept when truncation stood in for it.
        failure: Arc<Mutex<Option<String>>>,
    },
    /// Deterministic truncation alone, the model not asked: a job's fallback run (the
    /// worker of its last attempt stopped).
    Truncation,
}

/// One summary to write: `span` is (first seq, last seq, depth).
#[derive(Debug, Clone)]
pub struct Task {
    pub messages: Vec<Message>,
    pub children: Vec<String>,
    /// The raw messages of the log the summary covers, when they are not `messages` (a
    /// condensed summary): what it keeps (paths, commands, identifiers) is counted
    /// against them, not against its children's text, which may have lost some already.
    pub covered: Option<Vec<Message>>,
    pub previous: Option<String>,
    pub span: (i64, i64, i32),
    pub target_tokens: i64,
    pub source_tokens: i64,
    /// Tokens the summary adds to a request beyond its text (a note put before it, its
    /// framing in the block): it must come out smaller than `source_tokens` with them.
    pub added_tokens: i64,
}

/// One condensation: the stored summaries it covers (besides the newest one) and the
/// summary that replaces them.
pub struct Condensation {
    pub children: Vec<i64>,
    pub summary: NewSummary,
}

/// The summary at the first level that comes out smaller than its source; `Ok(None)`
/// when none does; `Err` when a model failed and truncation was not allowed.
pub async fn write_summary(
    writer: &Writer,
    counter: &Counter,
    task: Task,
) -> Result<Option<NewSummary>, CallError> {
    match writer {
        Writer::Extractive => {
            let counter = *counter;
            Ok(tokio::task::spawn_blocking(move || {
                extractive(
                    &counter,
                    &task,
                    &[Level::Normal, Level::Aggressive, Level::Truncation],
                )
            })
            .await
            .unwrap_or(None))
        }
        Writer::Model {
            model,
            truncate,
            failure: noted,
        } => {
            let (first_seq, last_seq, _) = task.span;
            let request = model::Request {
                messages: task.messages.clone(),
                summaries: task.children.clone(),
                previous: task.previous.clone(),
                first_seq,
                last_seq,
                target_tokens: task.target_tokens,
            };
            let mut failure = None;
            for level in [Level::Normal, Level::Aggressive] {
                match model.summarize(&request, level).await {
                    Ok(text) => {
                        let text = summarize::fit(text, task.target_tokens, counter);
                        if let Some(summary) = finish(counter, &task, text, level) {
                            return Ok(Some(summary));
                        }
                    }
                    // An endpoint that is down or too slow will not do better with
                    // another prompt.
                    Err(error @ (CallError::Unreachable(_) | CallError::Timeout(_))) => {
                        failure = Some(error);
                        break;
                    }
                    Err(error) => failure = Some(error),
                }
            }
            if !truncate {
                return match failure {
                    Some(error) => Err(error),
                    None => Ok(None),
                };
            }
            if let Some(error) = failure {
                tracing::warn!(%error, "summarizer failed; truncating deterministically");
                if let Ok(mut noted) = noted.lock() {
                    *noted = Some(error.to_string());
                }
            }
            Ok(truncation(counter, task).await)
        }
        Writer::Truncation => Ok(truncation(counter, task).await),
    }
}

async fn truncation(counter: &Counter, task: Task) -> Option<NewSummary> {
    let counter = *counter;
    tokio::task::spawn_blocking(move || extractive(&counter, &task, &[Level::Truncation]))
        .await
        .unwrap_or(None)
}

fn extractive(counter: &Counter, task: &Task, levels: &[Level]) -> Option<NewSummary> {
    let (first_seq, last_seq, _) = task.span;
    // Never more than what it must come out smaller than: a small span's summary is
    // cut to fit under it, where the level's target would leave it as large.
    let target_tokens = task
        .target_tokens
        .min(task.source_tokens - 1 - task.added_tokens)
        .max(1);
    let input = summarize::Input {
        messages: &task.messages,
        summaries: &task.children,
        previous: task.previous.as_deref(),
        first_seq,
        last_seq,
        target_tokens,
    };
    levels.iter().find_map(|&level| {
        let text = Extractive.summarize(&input, level, counter);
        finish(counter, task, text, level)
    })
}

/// Past this share of its span's facts (paths, commands, identifiers) lost, a summary
/// gets the lost ones listed after its text (a wider extract).
const RETENTION_LOSS_LIMIT: f64 = 0.2;

/// The summary row for `text`, pinned messages appended, when it is smaller than its
/// source; with the retention figures (facts of the span it lost). The retention check:
/// a text that lost more than [`RETENTION_LOSS_LIMIT`] of the facts gets as many of the
/// lost ones listed as fit in a quarter of the target more (still smaller than the
/// source), whoever wrote it.
fn finish(counter: &Counter, task: &Task, text: String, level: Level) -> Option<NewSummary> {
    let (first_seq, last_seq, depth) = task.span;
    let facts = match &task.covered {
        Some(raw) => summarize::facts(raw, &[]),
        None => summarize::facts(&task.messages, &task.children),
    };
    let mut content = summarize::with_pinned(text.clone(), &task.messages, &task.children);
    let (mut retention, lost) = summarize::retention(&facts, &content);
    if retention.lost() as f64 > RETENTION_LOSS_LIMIT * retention.total() as f64 {
        let budget = (task.target_tokens + task.target_tokens / 4)
            .min(task.source_tokens - 1 - task.added_tokens);
        if let Some(wider) = summarize::with_facts(&text, &lost, budget, counter) {
            content = summarize::with_pinned(wider, &task.messages, &task.children);
            retention = summarize::retention(&facts, &content).0;
        }
    }
    let token_count = counter.text(&content);
    if token_count.saturating_add(task.added_tokens) >= task.source_tokens {
        return None;
    }
    Some(NewSummary {
        depth,
        first_seq,
        last_seq,
        content,
        token_count,
        level: level as i16,
        source_tokens: task.source_tokens,
        facts: retention.total(),
        facts_lost: retention.lost(),
        retention,
    })
}

/// Condensations due once `leaf` joins `active`: while the newest `fanin` active
/// summaries share a depth, they become one summary a level up. Stops at the first
/// condensation no level could write. What each keeps is counted against the raw
/// messages it covers, read from `log` (the store and the session's row).
pub async fn plan_condensing(
    writer: &Writer,
    counter: &Counter,
    active: &[Summary],
    leaf: &NewSummary,
    (fanin, target_tokens): (usize, i64),
    (store, session): (&Store, &Session),
) -> StoreResult<Result<Vec<Condensation>, CallError>> {
    // (stored id, or None for one written in this pass; summary), in log order, up to
    // and including the new one.
    let mut chain: Vec<(Option<i64>, NewSummary)> = active
        .iter()
        .filter(|s| s.last_seq < leaf.first_seq)
        .map(|s| (Some(s.id), stored_as_new(s)))
        .collect();
    chain.push((None, leaf.clone()));
    let mut steps = Vec::new();
    loop {
        let spans: Vec<Span> = chain
            .iter()
            .map(|(_, s)| Span {
                first_seq: s.first_seq,
                last_seq: s.last_seq,
                depth: s.depth,
                tokens: s.token_count,
            })
            .collect();
        let Some(width) = condensation_width(&spans, fanin, target_tokens) else {
            break;
        };
        let tail = &chain[chain.len() - width..];
        let depth = tail.iter().map(|(_, s)| s.depth).max().unwrap_or(0);
        let (first_seq, last_seq) = (tail[0].1.first_seq, tail[width - 1].1.last_seq);
        let covered = store
            .messages_in_range(session, first_seq, last_seq, 0)
            .await?;
        let task = Task {
            messages: Vec::new(),
            children: tail.iter().map(|(_, s)| s.content.clone()).collect(),
            covered: Some(covered.into_iter().map(|m| m.message).collect()),
            previous: None,
            span: (first_seq, last_seq, depth + 1),
            target_tokens,
            source_tokens: tail.iter().map(|(_, s)| s.token_count).sum(),
            added_tokens: 0,
        };
        let summary = match write_summary(writer, counter, task).await {
            Ok(Some(summary)) => summary,
            Ok(None) => break,
            Err(error) => return Ok(Err(error)),
        };
        let children: Vec<i64> = tail.iter().filter_map(|(id, _)| *id).collect();
        chain.truncate(chain.len() - width);
        chain.push((None, summary.clone()));
        steps.push(Condensation { children, summary });
    }
    Ok(Ok(steps))
}

fn stored_as_new(row: &Summary) -> NewSummary {
    NewSummary {
        depth: row.depth,
        first_seq: row.first_seq,
        last_seq: row.last_seq,
        content: row.content.clone(),
        token_count: i64::from(row.token_count),
        level: row.level,
        source_tokens: row.source_tokens,
        facts: i64::from(row.facts),
        facts_lost: i64::from(row.facts_lost),
        retention: row.retention,
    }
}
