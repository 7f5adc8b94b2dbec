//! The summarization pass: a chunk of the oldest turns (or of the newest turn's older
//! steps) becomes a summary, condensed with earlier ones, committed when no other
//! compaction got in first; and runs of passes down to a target.
use super::Engine;
use super::report::{summary_region, view_estimate};
use crate::chunks;
use crate::error::Result;
use crate::events::CompactionKind;
use crate::message::StoredMessage;
use crate::policy::Policy;
use crate::session::{Session, Summary};
use crate::store::{NewJob, NewSummary, View};
use crate::summarize;
use crate::summarizer::{self, Condensation, Writer};
use crate::turns;

pub(super) use crate::ladder::MAX_SUMMARY_PASSES;

/// How a summarization pass runs.
#[derive(Debug, Clone)]
pub(super) struct PassOptions {
    /// Who writes the summaries.
    pub(super) writer: Writer,
    /// The request must shrink now: take every turn but the newest if no chunk qualifies.
    pub(super) forced: bool,
    /// Compute the pass, write nothing.
    pub(super) dry_run: bool,
    /// The provider refused the request for length: the oldest half of the turns (or,
    /// in a single turn, its older steps) at once, as a deterministic note.
    pub(super) emergency: bool,
    /// A job to enqueue with the commit (a proper summary, later).
    pub(super) follow_up: Option<NewJob>,
    /// What the COMPACTION_COMPLETED events call the pass.
    pub(super) compaction: CompactionKind,
    /// The job running the pass, when one does.
    pub(super) job_id: i64,
    /// Tokens the request must still shed to reach its target (0: none given): a step
    /// chunk takes as many whole steps as that needs in one pass.
    pub(super) shed_tokens: i64,
}

/// What a summarization pass covers, as indices into the view.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// Whole turns at the start of the view: `..end`.
    Turns(usize),
    /// Older steps of the newest turn, after its user message: `from..to`.
    Steps(usize, usize),
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        match self {
            Span::Turns(end) => 0..end,
            Span::Steps(from, to) => from..to,
        }
    }
}

/// A session's view as loaded: the row, the visible messages, the active summaries.
pub(super) struct ViewNow {
    pub(super) row: Session,
    pub(super) stored: View,
    pub(super) summaries: Vec<Summary>,
}

impl ViewNow {
    pub(super) fn total(&self, around: i64, policy: &Policy) -> i64 {
        view_estimate(
            &self.row,
            &self.stored,
            around + summary_region(&self.summaries, policy),
        )
        .total_tokens
    }
}

/// What a run of summarization passes did.
#[derive(Default)]
pub(super) struct Progress {
    pub(super) summarized: Option<(i64, i64)>,
    pub(super) passes: usize,
    pub(super) stale: bool,
    pub(super) failed: Option<crate::summarizer::model::CallError>,
}

/// How a summarization pass ended.
pub(super) enum Pass {
    Done(Box<SummaryPass>),
    /// Nothing to take, or no level made the summary smaller than its source.
    Nothing,
    /// Another compaction committed first; nothing was written.
    Stale,
    /// The model failed and deterministic truncation was not allowed.
    Failed(crate::summarizer::model::CallError),
}

/// A committed (or, on a dry run, computed) summarization pass.
pub(super) struct SummaryPass {
    /// The messages of the view it covered.
    pub(super) covered: std::ops::Range<usize>,
    pub(super) row: Session,
    pub(super) summaries: Vec<Summary>,
}

pub(super) fn summary_row(id: i64, summary: &NewSummary) -> Summary {
    Summary {
        id,
        depth: summary.depth,
        first_seq: summary.first_seq,
        last_seq: summary.last_seq,
        content: summary.content.clone(),
        token_count: i32::try_from(summary.token_count).unwrap_or(i32::MAX),
        level: summary.level,
        source_tokens: summary.source_tokens,
        facts: i32::try_from(summary.facts).unwrap_or(i32::MAX),
        facts_lost: i32::try_from(summary.facts_lost).unwrap_or(i32::MAX),
        retention: summary.retention,
    }
}

impl Engine {
    /// Summarization passes until the request is at most `target` (-1: exactly
    /// `max_passes` passes), there is nothing left to take, another compaction got in
    /// first, or the model failed. `state` follows what was committed.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn summarize_down(
        &self,
        tenant_id: i64,
        policy: &Policy,
        state: &mut ViewNow,
        around: i64,
        target: i64,
        options: &PassOptions,
        max_passes: usize,
    ) -> Result<Progress> {
        let mut progress = Progress::default();
        for _ in 0..max_passes {
            let total = view_estimate(
                &state.row,
                &state.stored,
                around + summary_region(&state.summaries, policy),
            )
            .total_tokens;
            if total <= target {
                break;
            }
            let options = PassOptions {
                shed_tokens: if target >= 0 { total - target } else { 0 },
                ..options.clone()
            };
            let pass = self
                .summarize_chunk(
                    tenant_id,
                    &state.row,
                    policy,
                    &state.stored,
                    &state.summaries,
                    &options,
                )
                .await?;
            let pass = match pass {
                Pass::Done(pass) => pass,
                Pass::Nothing => break,
                Pass::Stale => {
                    progress.stale = true;
                    break;
                }
                Pass::Failed(error) => {
                    progress.failed = Some(error);
                    break;
                }
            };
            let covered = (
                state.stored[pass.covered.start].seq,
                state.stored[pass.covered.end - 1].seq,
            );
            progress.summarized = Some(match progress.summarized {
                Some((first, _)) => (first, covered.1),
                None => covered,
            });
            state.stored.to_mut().drain(pass.covered.clone());
            state.row = pass.row;
            state.summaries = pass.summaries;
            progress.passes += 1;
        }
        Ok(progress)
    }

    /// Summarizes the leaf chunk at the start of `view` — whole turns outside the fresh
    /// tail — or, when the request must shrink and the newest turn is all that is left,
    /// the older steps of that turn (its user message stays). Extractive, three levels
    /// until the summary is smaller than what it covers; then runs of same-depth
    /// summaries are condensed, and it commits — only when no other compaction of the
    /// session committed meanwhile (appends are fine: they come after the chunk).
    pub(super) async fn summarize_chunk(
        &self,
        tenant_id: i64,
        row: &Session,
        policy: &Policy,
        view: &[StoredMessage],
        active: &[Summary],
        options: &PassOptions,
    ) -> Result<Pass> {
        let started = std::time::Instant::now();
        let Some(chunk) = Chunk::choose(view, active, policy, options) else {
            return Ok(Pass::Nothing);
        };
        let written = match self.write_pass(row, policy, view, &chunk, options).await? {
            Ok(written) => written,
            Err(pass) => return Ok(pass),
        };
        if options.dry_run {
            let summaries = written.summaries_after(&chunk, 0, &[]);
            let mut after = chunk.moved(row.clone());
            after.summary_tokens = summary_region(&summaries, policy);
            return Ok(Pass::Done(Box::new(SummaryPass {
                covered: chunk.covered,
                row: after,
                summaries,
            })));
        }
        let pass = PassCommit {
            tenant_id,
            row,
            policy,
            view,
            active,
            options,
            started,
        };
        self.commit_pass(&pass, chunk, written).await
    }

    /// The chunk's summary, written (`Err`: how the pass ends without one), and the
    /// condensing it brings about.
    async fn write_pass(
        &self,
        row: &Session,
        policy: &Policy,
        view: &[StoredMessage],
        chunk: &Chunk,
        options: &PassOptions,
    ) -> Result<std::result::Result<Written, Pass>> {
        let counter = self.counter(policy).await?;
        let (first_seq, last_seq) = (chunk.first_seq, chunk.last_seq);
        let note = options.emergency.then(|| chunk.span.emergency_note());
        let task = summarizer::Task {
            messages: view[chunk.covered.clone()]
                .iter()
                .map(|m| m.message.clone())
                .collect(),
            children: chunk.children.iter().map(|s| s.content.clone()).collect(),
            covered: None,
            previous: chunk.previous(),
            span: (first_seq, last_seq, 0),
            target_tokens: chunks::leaf_target(policy),
            source_tokens: chunk.replaced_tokens(),
            // With its note and its framing, the summary must still be smaller than what
            // it replaces: otherwise the pass would grow the request.
            added_tokens: summarize::SUMMARY_FRAMING_TOKENS
                + note.map_or(0, |note| counter.text(note)),
        };
        let mut leaf = match summarizer::write_summary(&options.writer, &counter, task).await {
            Ok(Some(leaf)) => leaf,
            Ok(None) => {
                tracing::warn!(session_id = %row.external_id, first_seq, last_seq, "no summary level made progress");
                return Ok(Err(Pass::Nothing));
            }
            Err(error) => return Ok(Err(Pass::Failed(error))),
        };
        if let Some(note) = note {
            leaf.content = format!("{note}{}", leaf.content);
            leaf.token_count = counter.text(&leaf.content);
        }
        let sizes = (
            policy.condense_fanin as usize,
            chunks::condensed_target(policy),
        );
        let log = (&self.store, row);
        let by = &options.writer;
        let others = &chunk.others;
        Ok(
            match summarizer::plan_condensing(by, &counter, others, &leaf, sizes, log).await? {
                Ok(condensed) => Ok(Written { leaf, condensed }),
                Err(error) => Err(Pass::Failed(error)),
            },
        )
    }
}

/// What a pass takes: a span of the view, and the summaries it replaces or follows.
pub(super) struct Chunk {
    span: Span,
    pub(super) covered: std::ops::Range<usize>,
    pub(super) first_seq: i64,
    pub(super) last_seq: i64,
    /// The view tokens of the messages covered.
    pub(super) source_tokens: i64,
    /// Step summaries of turns now summarized whole: the new summary's sources.
    pub(super) children: Vec<Summary>,
    /// The other active summaries.
    pub(super) others: Vec<Summary>,
}

impl Chunk {
    /// The chunk the options call for, if any qualifies.
    fn choose(
        view: &[StoredMessage],
        active: &[Summary],
        policy: &Policy,
        options: &PassOptions,
    ) -> Option<Chunk> {
        let span = Span::choose(view, policy, options)?;
        let covered = span.range();
        let source_tokens: i64 = view[covered.clone()].iter().map(|m| m.view_tokens).sum();
        let (first_seq, last_seq) = (view[covered.start].seq, view[covered.end - 1].seq);
        let (children, others) = active
            .iter()
            .cloned()
            .partition(|s| s.first_seq >= first_seq && s.last_seq <= last_seq);
        Some(Chunk {
            span,
            covered,
            first_seq,
            last_seq,
            source_tokens,
            children,
            others,
        })
    }

    /// The summary before the chunk, for continuity.
    fn previous(&self) -> Option<String> {
        self.others
            .iter()
            .rev()
            .find(|s| s.last_seq < self.first_seq)
            .map(|s| s.content.clone())
    }

    /// What the new summary replaces: the visible messages and the step summaries
    /// (each with its framing; the block's header stays).
    fn replaced_tokens(&self) -> i64 {
        let children = self.children.iter().map(|s| i64::from(s.token_count));
        self.source_tokens + summarize::framed_tokens(children).0
    }

    /// Whether the chunk is older steps of the newest turn (else whole turns).
    pub(super) fn is_steps(&self) -> bool {
        matches!(self.span, Span::Steps(..))
    }

    /// The session row once the chunk left the view.
    pub(super) fn moved(&self, mut after: Session) -> Session {
        if let Span::Turns(_) = self.span {
            after.view_first_seq = self.last_seq + 1;
        }
        after.view_tokens -= self.source_tokens;
        after.view_epoch += 1;
        after
    }
}

impl Span {
    /// The span a pass takes: the oldest half of the turns in an emergency, else the
    /// leaf chunk; when none qualifies and the request must shrink, older steps of the
    /// newest turn.
    fn choose(view: &[StoredMessage], policy: &Policy, options: &PassOptions) -> Option<Span> {
        let tokens: Vec<i64> = view.iter().map(|m| m.view_tokens).collect();
        // Where a chunk may end: a turn start that separates no call from its result.
        let safe = turns::safe_starts(view);
        let chunk_end = if options.emergency {
            // The oldest half of the turns (at least one), never the newest.
            let boundaries: Vec<usize> = safe.iter().copied().filter(|&s| s > 0).collect();
            boundaries
                .get(boundaries.len().saturating_sub(1) / 2)
                .copied()
        } else {
            chunks::leaf_chunk(&tokens, &safe, policy, options.forced)
        };
        if let Some(end) = chunk_end {
            return Some(Span::Turns(end));
        }
        if !(options.forced || options.emergency) {
            return None;
        }
        // The summary adds back up to its target: the chunk must hold that more.
        let cover = match options.shed_tokens {
            0 => 0,
            shed => shed.saturating_add(chunks::leaf_target(policy)),
        };
        let starts = turns::turn_starts(view);
        chunks::step_chunk(view, &tokens, &starts, policy, options.emergency, cover)
            .map(|(from, to)| Span::Steps(from, to))
    }

    fn emergency_note(self) -> &'static str {
        match self {
            Span::Turns(_) => {
                "Emergency compaction (the provider refused the request for its length): the oldest half of the conversation is reduced to this note.\n"
            }
            Span::Steps(..) => {
                "Emergency compaction (the provider refused the request for its length): one long turn was all there was; its user message and its newest step are kept, the steps between are reduced to this note.\n"
            }
        }
    }
}

/// A pass's summaries as written, before they are stored.
pub(super) struct Written {
    pub(super) leaf: NewSummary,
    /// Runs of same-depth summaries the new leaf condenses, in order.
    pub(super) condensed: Vec<Condensation>,
}

impl Written {
    /// The active summaries once the pass is stored: the leaf (or the last condensed
    /// summary, `ids`' last) in place of what it replaces, by first seq.
    pub(super) fn summaries_after(&self, chunk: &Chunk, leaf_id: i64, ids: &[i64]) -> Vec<Summary> {
        let mut all: Vec<Summary> = chunk
            .others
            .iter()
            .filter(|s| {
                !self
                    .condensed
                    .iter()
                    .any(|step| step.children.contains(&s.id))
            })
            .cloned()
            .collect();
        match self.condensed.last() {
            Some(step) => all.push(summary_row(*ids.last().unwrap_or(&leaf_id), &step.summary)),
            None => all.push(summary_row(leaf_id, &self.leaf)),
        }
        all.sort_by_key(|s| s.first_seq);
        all
    }

    /// The highest level among the summaries written.
    pub(super) fn level(&self) -> i16 {
        self.condensed
            .iter()
            .map(|step| step.summary.level)
            .fold(self.leaf.level, i16::max)
    }
}

/// The pass being committed, as `summarize_chunk` was asked for it.
pub(super) struct PassCommit<'a> {
    pub(super) tenant_id: i64,
    pub(super) row: &'a Session,
    pub(super) policy: &'a Policy,
    pub(super) view: &'a [StoredMessage],
    pub(super) active: &'a [Summary],
    pub(super) options: &'a PassOptions,
    pub(super) started: std::time::Instant,
}
