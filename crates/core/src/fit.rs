//! How a build fits the window: given the provider-valid view (after compaction) and
//! what surrounds it — system prompt, tools, summaries, the ledger's block — the
//! earliest turn from which the history fits under the limit; when not even the newest
//! turn fits next to the summaries, the oldest summaries stay out, then the ledger's
//! block; when it still does not fit, the newest turn's previews shrink to what is left.
//! Pure: the engine renders and records what this decides.
use std::collections::HashMap;

use crate::budget::{self, Anchor, Estimate};
use crate::compaction::Render;
use crate::message::{Message, StoredMessage};
use crate::outlook::summary_region;
use crate::policy::Policy;
use crate::session::Summary;
use crate::turns;

/// What surrounds the history of a request.
pub struct Frame<'a> {
    pub policy: &'a Policy,
    /// Tokens the request may hold: the window's limit less the output reserve.
    pub limit: i64,
    pub system_tokens: i64,
    pub tool_tokens: i64,
    /// The active summaries, oldest first.
    pub summaries: &'a [Summary],
    /// The ledger's block, when there is one: its tokens without and with summaries
    /// beside it.
    pub ledger_tokens: Option<[i64; 2]>,
    /// The session's anchor to the provider's count, and its view epoch.
    pub anchor: Option<Anchor>,
    pub view_epoch: i64,
}

/// Where the history sent starts, and what of the frame stays out.
#[derive(Debug)]
pub struct Fit {
    /// Index into the view of the first message sent.
    pub cut: usize,
    /// Each message's tokens as sent (a shrunk preview's own).
    pub tokens: Vec<i64>,
    /// Previews shrunk to fit, by index into the view.
    pub shrunk: HashMap<usize, Message>,
    /// The oldest summaries left out of this request (they remain stored).
    pub omitted_summaries: usize,
    /// Whether the ledger's block goes out with it.
    pub ledger_kept: bool,
    /// Whole turns left out (messages before the first user message count as one).
    pub dropped_turns: usize,
}

/// Not even the newest turn fits: its tokens.
#[derive(Debug, PartialEq, Eq)]
pub struct TooBig {
    pub newest_turn_tokens: i64,
}

impl Frame<'_> {
    /// The fixed part of a request without the oldest `omitted` summaries, with the
    /// ledger's block or not.
    pub fn fixed(&self, omitted: usize, ledger: bool) -> i64 {
        let summaries = &self.summaries[omitted.min(self.summaries.len())..];
        let ledger = match (ledger, self.ledger_tokens) {
            (true, Some([alone, beside])) => {
                if summaries.is_empty() {
                    alone
                } else {
                    beside
                }
            }
            _ => 0,
        };
        self.system_tokens + self.tool_tokens + summary_region(summaries, self.policy) + ledger
    }

    /// The estimate of a request with `fixed` around the history `view[cut..]` of
    /// `history` tokens.
    pub fn estimate(
        &self,
        view: &[&StoredMessage],
        fixed: i64,
        cut: usize,
        history: i64,
    ) -> Estimate {
        budget::estimate(
            self.anchor.as_ref(),
            self.view_epoch,
            view.get(cut).map_or(0, |m| m.seq),
            view.last().map_or(0, |m| m.seq),
            fixed,
            history,
        )
    }
}

/// Fits `view` (provider-valid, oldest first) into `frame`.
pub fn fit(frame: &Frame<'_>, view: &[&StoredMessage]) -> Result<Fit, TooBig> {
    let mut tokens: Vec<i64> = view.iter().map(|m| m.view_tokens).collect();
    let starts = turns::turn_starts(view);
    let mut omitted = 0;
    let mut ledger = frame.ledger_tokens.is_some();
    let cut = loop {
        let fixed = frame.fixed(omitted, ledger);
        let cut = budget::fit_history(&tokens, &starts, |cut, history| {
            frame.estimate(view, fixed, cut, history).total_tokens <= frame.limit
        });
        if cut.is_some() {
            break cut;
        }
        if omitted < frame.summaries.len() {
            omitted += 1;
        } else if ledger {
            ledger = false;
        } else {
            break cut;
        }
    };
    let fixed = frame.fixed(omitted, ledger);
    // Not even the newest turn fits: its previews shrink to what is left.
    let newest = starts.last().copied().unwrap_or(0);
    let over = |tokens: &[i64]| {
        let history = tokens[newest..].iter().sum();
        frame.estimate(view, fixed, newest, history).total_tokens - frame.limit
    };
    let excess = if cut.is_none() { over(&tokens) } else { 0 };
    let render = Render::new(frame.policy);
    let shrunk = render.shrink_previews(view, newest, &mut tokens, excess);
    let fits = !shrunk.is_empty() && over(&tokens) <= 0;
    let Some(cut) = cut.or(fits.then_some(newest)) else {
        return Err(TooBig {
            newest_turn_tokens: tokens[newest..].iter().sum(),
        });
    };
    let dropped_turns = if cut == 0 {
        0
    } else {
        let whole = starts.iter().filter(|&&start| start < cut).count();
        whole + usize::from(starts.first() != Some(&0))
    };
    Ok(Fit {
        cut,
        tokens,
        shrunk,
        omitted_summaries: omitted,
        ledger_kept: ledger,
        dropped_turns,
    })
}
