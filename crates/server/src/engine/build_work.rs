//! What a BuildMessages works on — the session row, its policy, view, summaries and the
//! task ledger's block — as its compaction (`ladder.rs`) changes it.
use std::sync::Arc;

use super::Engine;
use super::ledger::ledger_block;
use super::report::{summary_region, view_estimate};
use crate::error::Result;
use crate::ladder::Load;
use crate::ledger::Entry;
use crate::ledger::render::Block;
use crate::policy::Policy;
use crate::session::{Session, Summary};
use crate::store::View;
use crate::summarize;
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

    /// What the request weighs now, for the compaction ladder.
    pub fn load(&self) -> Load {
        let (total, with_ledger) = self.totals();
        Load {
            total,
            with_ledger,
            limit: self.limit(),
        }
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

    pub fn render_ledger(&mut self) {
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
    pub fn paused(&self) -> bool {
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
            self.store.active_summaries(&row).await?
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
}
