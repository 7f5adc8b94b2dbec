//! What a BuildMessages works on — the session row, its policy, view, summaries and the
//! task ledger's block — and the compaction a build runs when it is due: clearing past
//! the clear threshold, then summaries down to the low-water mark (inline for an
//! extractive session, as a fallback for a model-backed one whose request would not fit
//! otherwise), and the failure count that pauses automatic compaction.
use std::sync::Arc;

use super::clearing::{apply_to_view, plan_clearing};
use super::ledger::ledger_block;
use super::report::{summary_region, view_estimate};
use super::summary_pass::{MAX_SUMMARY_PASSES, Pass, PassOptions};
use super::{Engine, JobReason};
use crate::compaction;
use crate::error::Result;
use crate::events::CompactionKind;
use crate::ledger::Entry;
use crate::ledger::render::Block;
use crate::policy::Policy;
use crate::session::{Session, Summary};
use crate::store::View;
use crate::summarize;
use crate::summarizer::Writer;
use crate::tokenize::Counter;

/// A build's session as read, changed as its compaction goes.
pub(super) struct Work {
    pub row: Session,
    pub policy: Policy,
    pub counter: Counter,
    /// Tokens held back for the output.
    pub reserve: i64,
    pub system_tokens: i64,
    pub tool_tokens: i64,
    pub view: View,
    pub summaries: Vec<Summary>,
    /// The task ledger's entries, and the session's last seq when they were read.
    pub entries: Arc<Vec<Entry>>,
    pub entries_last_seq: i64,
    /// The ledger's block, rendered again whenever the view changes (it shows what the
    /// view no longer does).
    pub ledger: Option<Block>,
}

impl Work {
    /// Tokens the request may hold.
    pub fn limit(&self) -> i64 {
        self.policy.limit_tokens() - self.reserve
    }

    /// The ledger's block's tokens (or none), with summaries beside it or not.
    pub fn block_tokens(&self, ledger: &Option<Block>, with_summaries: bool) -> i64 {
        ledger.as_ref().map_or(0, |block| {
            summarize::appended_block_tokens(block.tokens, with_summaries, &self.counter)
        })
    }

    /// System prompt, tools and summaries.
    fn fixed(&self) -> i64 {
        self.system_tokens + self.tool_tokens + summary_region(&self.summaries, &self.policy)
    }

    /// The whole view's estimate without and with the ledger's block. The compaction
    /// thresholds and the low-water mark leave the block out, like a cap the client
    /// chose: otherwise the block (which grows as compaction hides more) would make
    /// every compaction come sooner and go deeper (decision 0018); the limit counts it.
    fn totals(&self) -> (i64, i64) {
        let fixed = self.fixed();
        let ledger = self.block_tokens(&self.ledger, !self.summaries.is_empty());
        (
            view_estimate(&self.row, &self.view, fixed).total_tokens,
            view_estimate(&self.row, &self.view, fixed + ledger).total_tokens,
        )
    }

    fn render_ledger(&mut self) {
        self.ledger = ledger_block(
            &self.entries,
            &self.view,
            &self.summaries,
            self.entries_last_seq,
            &self.policy,
            &self.counter,
        );
    }

    /// Loop guard: after repeated failures automatic compaction waits for a manual
    /// Compact or a new user message; after a revert, until the session has grown or a
    /// manual Compact (the fit still keeps the budget).
    fn paused(&self) -> bool {
        i64::from(self.row.compaction_failures) >= self.policy.compaction_failure_limit
            || self.row.compaction_held()
    }
}

impl Engine {
    /// Reads what a build of `session_id` works on.
    pub(super) async fn build_work(
        &self,
        row: Session,
        policy: Policy,
        counter: Counter,
        counted: (i64, i64, i64),
    ) -> Result<Work> {
        let (reserve, system_tokens, tool_tokens) = counted;
        let view = self.store.view(&row).await?;
        let summaries = if row.may_have_summaries() {
            self.store.active_summaries(row.id).await?
        } else {
            Vec::new()
        };
        let entries = self.store.ledger_at(&row).await?;
        let mut work = Work {
            entries_last_seq: row.message_count,
            row,
            policy,
            counter,
            reserve,
            system_tokens,
            tool_tokens,
            view,
            summaries,
            entries,
            ledger: None,
        };
        work.render_ledger();
        Ok(work)
    }

    /// Clears and summarizes when due; counts a due compaction that took nothing off.
    pub(super) async fn compact_for_build(&self, tenant_id: i64, work: &mut Work) -> Result<()> {
        let paused = work.paused();
        let cleared = !paused && self.clear_for_build(tenant_id, work).await?;
        // A clearing that did not reach the low-water mark already cost the cached
        // prefix: summarizing in the same build costs nothing more.
        let inline = self.model_for(&work.policy)?.is_none();
        let (due, summarized) = if paused {
            (false, false)
        } else {
            self.summarize_for_build(tenant_id, work, cleared && inline, inline)
                .await?
        };
        self.count_failures(work, due, summarized || cleared).await
    }

    /// Past the clearing threshold (or over the limit), old tool results become
    /// placeholders, persisted: the next builds extend this view. Whether it cleared.
    async fn clear_for_build(&self, tenant_id: i64, work: &mut Work) -> Result<bool> {
        let (before, before_with_ledger) = work.totals();
        let limit = work.limit();
        if before <= work.policy.clear_threshold_tokens() && before_with_ledger <= limit {
            return Ok(false);
        }
        let target = work.policy.clear_target_tokens();
        // Over the limit the request cannot go out as it is: any saving helps.
        let min_savings = if before_with_ledger > limit {
            0
        } else {
            compaction::clear_min_savings(&work.policy)
        };
        let wanted = (before - target).max(before_with_ledger - limit);
        let plan = plan_clearing(&work.policy, &work.view, wanted, min_savings);
        if plan.cleared.is_empty() {
            return Ok(false);
        }
        // When the session moved on meanwhile, the fit still keeps this build within
        // budget; the next build clears.
        let Ok(cleared) = self
            .apply_clearing(tenant_id, &work.row, &work.policy, &plan)
            .await?
        else {
            return Ok(false);
        };
        apply_to_view(work.view.to_mut(), &cleared);
        work.row = cleared.row;
        work.render_ledger();
        Ok(true)
    }

    /// Past the summarize threshold, or still over the limit, the oldest turns outside
    /// the fresh tail go into summaries, one chunk at a time, down to the clear target:
    /// one deep compaction, then many builds that extend it (the provider's prompt cache
    /// survives those), rather than a small one every turn. A model-backed session is
    /// summarized by a job (enqueued at append); here only when the request would not
    /// fit otherwise, deterministically, asking for a job in the same transaction.
    /// Whether summarizing was due, and whether it took anything off.
    async fn summarize_for_build(
        &self,
        tenant_id: i64,
        work: &mut Work,
        mut summarizing: bool,
        inline: bool,
    ) -> Result<(bool, bool)> {
        let summarize_at = work.policy.summarize_threshold_tokens();
        let low_water = work.policy.clear_target_tokens();
        let mut progress = false;
        for _ in 0..MAX_SUMMARY_PASSES {
            let (total, with_ledger) = work.totals();
            let over = with_ledger > work.limit();
            summarizing |= (total > summarize_at && inline) || over;
            if !summarizing || (total <= low_water && !over) {
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
                .summarize_chunk(
                    tenant_id,
                    &work.row,
                    &work.policy,
                    &work.view,
                    &work.summaries,
                    &options,
                )
                .await?;
            let Pass::Done(pass) = pass else {
                break;
            };
            work.view.to_mut().drain(pass.covered.clone());
            work.row = pass.row;
            work.summaries = pass.summaries;
            work.render_ledger();
            progress = true;
        }
        Ok((summarizing, progress))
    }

    /// A build where compaction was due but took nothing off is a failure; any progress
    /// resets the count.
    async fn count_failures(&self, work: &mut Work, due: bool, progress: bool) -> Result<()> {
        let row = &mut work.row;
        let failures = match (due, progress) {
            (true, false) => row.compaction_failures.saturating_add(1),
            (_, true) => 0,
            (false, false) => row.compaction_failures,
        };
        if failures != row.compaction_failures {
            self.store.set_compaction_failures(row.id, failures).await?;
            if i64::from(failures) >= work.policy.compaction_failure_limit {
                tracing::warn!(
                    session_id = %row.external_id,
                    failures,
                    "automatic compaction paused after repeated failures"
                );
            }
            row.compaction_failures = failures;
        }
        Ok(())
    }
}
