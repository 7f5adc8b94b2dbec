//! The compaction a build runs when it is due: the core's ladder (`ladder/` in
//! ctxd-core) climbed cheapest layer first, each due layer's pass executed here, and the
//! failure count that pauses automatic compaction. A new layer's pass is one function
//! here and one arm in [`Engine::run_layer`].
use super::build_work::Work;
use super::clearing::{apply_to_view, plan_clearing};
use super::summary_pass::{Pass, PassOptions};
use super::{Engine, JobReason};
use crate::error::Result;
use crate::events::CompactionKind;
use crate::ladder::{Ask, Climb, LADDER, LayerKind, failures_after};
use crate::summarizer::Writer;

impl Engine {
    /// Climbs the ladder unless automatic compaction is paused; counts a due compaction
    /// that took nothing off.
    pub(super) async fn compact_for_build(&self, tenant_id: i64, work: &mut Work) -> Result<()> {
        let mut climb = Climb {
            inline: self.model_for(&work.policy)?.is_none(),
            ..Climb::default()
        };
        if work.paused() {
            return Ok(());
        }
        for layer in LADDER {
            for _ in 0..layer.max_passes() {
                let Some(ask) = layer.ask(&work.policy, &work.load(), &climb) else {
                    break;
                };
                climb.due |= layer.must_progress();
                if !self
                    .run_layer(layer.kind(), tenant_id, work, &ask, &climb)
                    .await?
                {
                    break;
                }
                climb.progress = true;
            }
        }
        self.count_failures(work, &climb).await
    }

    /// One pass of a layer; whether it took anything off.
    async fn run_layer(
        &self,
        layer: LayerKind,
        tenant_id: i64,
        work: &mut Work,
        ask: &Ask,
        climb: &Climb,
    ) -> Result<bool> {
        match layer {
            LayerKind::Clear => self.clear_pass(tenant_id, work, ask).await,
            LayerKind::Summarize => {
                self.summarize_pass(tenant_id, work, ask, climb.inline)
                    .await
            }
        }
    }

    /// Old tool results become placeholders, persisted: the next builds extend this view.
    async fn clear_pass(&self, tenant_id: i64, work: &mut Work, ask: &Ask) -> Result<bool> {
        let plan = plan_clearing(&work.policy, &work.view, ask.wanted, ask.min_savings);
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

    /// One chunk of the oldest turns outside the fresh tail into a summary: one deep
    /// compaction, then many builds that extend it (the provider's prompt cache survives
    /// those), rather than a small one every turn. A model-backed session is summarized
    /// by a job (enqueued at append); here only when the request would not fit
    /// otherwise, deterministically, asking for a job in the same transaction.
    async fn summarize_pass(
        &self,
        tenant_id: i64,
        work: &mut Work,
        ask: &Ask,
        inline: bool,
    ) -> Result<bool> {
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
            shed_tokens: ask.wanted,
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
            return Ok(false);
        };
        work.view.to_mut().drain(pass.covered.clone());
        work.row = pass.row;
        work.summaries = pass.summaries;
        work.render_ledger();
        Ok(true)
    }

    /// Stores the failure count when the climb changed it.
    async fn count_failures(&self, work: &mut Work, climb: &Climb) -> Result<()> {
        let row = &mut work.row;
        let failures = failures_after(row.compaction_failures, climb);
        if failures != row.compaction_failures {
            self.store.set_compaction_failures(row, failures).await?;
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
