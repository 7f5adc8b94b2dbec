//! Budget math: estimates anchored on provider usage, the per-region breakdown, the
//! verdict against a policy's thresholds, and choosing how much history fits. Pure.
use serde::{Deserialize, Serialize};

use crate::policy::Policy;

/// The provider's reported input tokens for one request, and ctxd's own count of that
/// same request, so later requests can be estimated from it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    pub reported_tokens: i64,
    /// System prompt, tools and framing of the anchored request, by the tokenizer.
    pub fixed_tokens: i64,
    /// History of the anchored request, by the tokenizer.
    pub history_tokens: i64,
    pub first_seq: i64,
    pub last_seq: i64,
    pub view_epoch: i64,
    /// Provider tokens per counted token of growth between anchors; 0 when unknown.
    pub delta_ratio: f64,
}

impl Anchor {
    /// Provider tokens per tokenizer token, bounded so one odd report cannot distort
    /// estimates wildly.
    pub fn ratio(&self) -> f64 {
        let counted = self.fixed_tokens.saturating_add(self.history_tokens);
        if counted <= 0 || self.reported_tokens <= 0 {
            return 1.0;
        }
        (self.reported_tokens as f64 / counted as f64).clamp(0.5, 2.0)
    }

    /// The ratio for what was added since the anchor: the marginal one once the session
    /// has reported (from the first report on, see [`first_delta_ratio`]), else 1 (the
    /// tokenizer's count as is). Not the whole request's ratio: that one is dominated by
    /// how the provider's template renders the system prompt and tools, which says little
    /// about the messages that follow (on the recorded corpus it doubled the worst early
    /// error).
    pub fn growth_ratio(&self) -> f64 {
        if self.delta_ratio > 0.0 {
            self.delta_ratio.clamp(0.5, 2.0)
        } else {
            1.0
        }
    }

    /// The marginal ratio after a new report extending this anchor's request by
    /// `counted_growth` tokens: a moving average of the observed growth ratios, starting
    /// from the first report's prior. An anchor without a ratio (set before sessions had
    /// a prior) takes its first observation shrunk halfway towards 1 so one odd step
    /// cannot swing it.
    pub fn next_delta_ratio(&self, reported_tokens: i64, counted_growth: i64) -> f64 {
        if counted_growth < MIN_GROWTH_FOR_RATIO {
            return self.delta_ratio;
        }
        let observed = (reported_tokens.saturating_sub(self.reported_tokens) as f64
            / counted_growth as f64)
            .clamp(0.5, 2.0);
        if self.delta_ratio > 0.0 {
            0.7 * self.delta_ratio + 0.3 * observed
        } else {
            0.5 + 0.5 * observed
        }
    }
}

/// The marginal ratio a session starts with, from its first report: before any growth
/// has been observed, what does the first request say about how the provider counts
/// messages?
///
/// The first report exceeds ctxd's count (`reported_tokens - counted_tokens`) for two
/// reasons one report cannot tell apart. The provider's template around the system
/// prompt and tools (tool-use instructions, tool schemas rendered its own way) adds a
/// constant of a few hundred tokens: Anthropic documents 159 to 530 tokens of tool-use
/// system prompt alone, by model and tool choice. Its tokenizer counts the content
/// differently from ours by a ratio, typically within about 10 % of 1 between current
/// tokenizers. Taking these as independent zero-mean priors, σt = 300 tokens of template
/// and σr = 0.1 per token of content, the expected tokenizer part of the excess is the
/// share `(σr·M)² / ((σr·M)² + σt²)` of it, where `M` is the content the tokenizer
/// counted (`content_tokens`: system prompt and messages, tool definitions excluded). A
/// small first request's excess is thus mostly template (a 1 000-token request credits a
/// tenth of it to the tokenizer), a large one's mostly tokenizer; a provider counting
/// like ctxd gets 1. The result stays between 1 and the whole request's ratio.
///
/// Taking the whole excess as tokenizer instead (the whole request's ratio) overshoots
/// by the template; ignoring it (ratio 1) leaves the first steps, where one large tool
/// output is most of the growth and the request is still small, with the full tokenizer
/// difference. The moving average in [`Anchor::next_delta_ratio`] replaces the prior
/// with observed growth as reports come in. 0 (unknown) without a report or content.
pub fn first_delta_ratio(reported_tokens: i64, counted_tokens: i64, content_tokens: i64) -> f64 {
    if reported_tokens <= 0 || counted_tokens <= 0 || content_tokens <= 0 {
        return 0.0;
    }
    let content = TOKENIZER_RATIO_SPREAD * content_tokens as f64;
    let tokenizer_share = content * content / (content * content + TEMPLATE_SPREAD_TOKENS.powi(2));
    let excess = (reported_tokens - counted_tokens) as f64;
    let prior = 1.0 + tokenizer_share * excess / content_tokens as f64;
    let whole = reported_tokens as f64 / counted_tokens as f64;
    prior.clamp(whole.min(1.0), whole.max(1.0)).clamp(0.5, 2.0)
}

/// Typical spread of a provider's tokenizer against ctxd's, per token of content.
const TOKENIZER_RATIO_SPREAD: f64 = 0.1;
/// Typical spread of the tokens a provider's template adds around the system prompt and
/// tools beyond ctxd's framing (the middle of the documented tool-use prompts above).
const TEMPLATE_SPREAD_TOKENS: f64 = 300.0;

/// Growth too small to measure a ratio on (framing noise dominates).
const MIN_GROWTH_FOR_RATIO: i64 = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    Anchored,
    Tokenizer,
    Calibrated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    pub total_tokens: i64,
    pub source: Source,
    /// The tokenizer's count alone.
    pub tokenizer_tokens: i64,
}

/// Estimates a request made of `fixed_tokens` (system prompt, tools, framing) and a
/// history starting at `first_seq` and ending at `last_seq` that the tokenizer counts
/// as `history_tokens`.
///
/// When the request extends the anchored one (same start, same view epoch, no earlier
/// end), the estimate is the reported figure plus what changed since, scaled by the
/// anchor's ratio. Otherwise, with an anchor, the tokenizer's count is calibrated by
/// that ratio; without one, it is the tokenizer's count.
pub fn estimate(
    anchor: Option<&Anchor>,
    view_epoch: i64,
    first_seq: i64,
    last_seq: i64,
    fixed_tokens: i64,
    history_tokens: i64,
) -> Estimate {
    let tokenizer_tokens = fixed_tokens.saturating_add(history_tokens);
    let Some(anchor) = anchor.filter(|anchor| anchor.reported_tokens > 0) else {
        return Estimate {
            total_tokens: tokenizer_tokens,
            source: Source::Tokenizer,
            tokenizer_tokens,
        };
    };
    let extends = anchor.view_epoch == view_epoch
        && anchor.first_seq == first_seq
        && last_seq >= anchor.last_seq;
    if extends {
        let delta = fixed_tokens
            .saturating_sub(anchor.fixed_tokens)
            .saturating_add(history_tokens.saturating_sub(anchor.history_tokens));
        // Float to integer casts saturate.
        let scaled = (delta as f64 * anchor.growth_ratio()).round() as i64;
        let total = anchor.reported_tokens.saturating_add(scaled);
        return Estimate {
            total_tokens: total.max(0),
            source: Source::Anchored,
            tokenizer_tokens,
        };
    }
    Estimate {
        total_tokens: (tokenizer_tokens as f64 * anchor.ratio()).round() as i64,
        source: Source::Calibrated,
        tokenizer_tokens,
    }
}

/// Token figures per region, by the tokenizer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Regions {
    /// The system prompt plus the request's fixed framing.
    pub system_tokens: i64,
    pub summary_tokens: i64,
    pub history_tokens: i64,
    pub tool_tokens: i64,
}

impl Regions {
    pub fn fixed_tokens(&self) -> i64 {
        self.system_tokens
            .saturating_add(self.tool_tokens)
            .saturating_add(self.summary_tokens)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    #[default]
    Ok,
    Warn,
    Over,
}

impl Status {
    /// The status as stored and announced (BUDGET_THRESHOLD_CROSSED): 1, 2, 3.
    pub fn code(self) -> i16 {
        match self {
            Status::Ok => 1,
            Status::Warn => 2,
            Status::Over => 3,
        }
    }

    /// A stored code read back; anything but 2 and 3 is OK (the column's default).
    pub fn from_code(code: i16) -> Status {
        match code {
            2 => Status::Warn,
            3 => Status::Over,
            _ => Status::Ok,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    None,
    ClearToolResults,
    Summarize,
    ReduceRequest,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub regions: Regions,
    pub output_reserve_tokens: i64,
    pub context_window_tokens: i64,
    pub estimate: Estimate,
    /// limit - reserve - total; negative when over.
    pub headroom_tokens: i64,
    pub status: Status,
    pub action: Action,
    pub window_fraction: f64,
}

/// Judges a request against the policy. `minimum_fits` says whether the smallest
/// request BuildMessages could make (system prompt, tools, newest turn) fits.
pub fn report(
    policy: &Policy,
    output_reserve_tokens: i64,
    regions: Regions,
    estimate: Estimate,
    minimum_fits: bool,
) -> Report {
    let window = policy.context_window_tokens;
    let total = estimate.total_tokens;
    let headroom_tokens = policy
        .limit_tokens()
        .saturating_sub(output_reserve_tokens)
        .saturating_sub(total);
    let window_fraction = total as f64 / window as f64;
    let (status, action) = if headroom_tokens < 0 {
        // BuildMessages summarizes the oldest turns itself; the client may also Compact.
        let action = if minimum_fits {
            Action::Summarize
        } else {
            Action::ReduceRequest
        };
        (Status::Over, action)
    } else if window_fraction >= policy.summarize_threshold {
        (Status::Warn, Action::Summarize)
    } else if window_fraction >= policy.clear_threshold {
        (Status::Warn, Action::ClearToolResults)
    } else {
        (Status::Ok, Action::None)
    };
    Report {
        regions,
        output_reserve_tokens,
        context_window_tokens: window,
        estimate,
        headroom_tokens,
        status,
        action,
        window_fraction,
    }
}

/// Picks where the history sent to the model starts: the earliest candidate cut (0,
/// then each turn start in order) whose suffix fits. `tokens[i]` is message i's count;
/// `fits(cut, suffix_tokens)` says whether a history from `cut` of that size fits.
/// `None` when not even the newest turn fits.
pub fn fit_history(
    tokens: &[i64],
    turn_starts: &[usize],
    fits: impl Fn(usize, i64) -> bool,
) -> Option<usize> {
    let mut suffix = vec![0i64; tokens.len() + 1];
    for index in (0..tokens.len()).rev() {
        suffix[index] = suffix[index + 1].saturating_add(tokens[index]);
    }
    std::iter::once(0)
        .chain(turn_starts.iter().copied().filter(|&start| start > 0))
        .find(|&cut| fits(cut, suffix[cut]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor() -> Anchor {
        Anchor {
            reported_tokens: 1_100,
            fixed_tokens: 200,
            history_tokens: 800,
            first_seq: 1,
            last_seq: 10,
            view_epoch: 0,
            delta_ratio: 0.0,
        }
    }

    #[test]
    fn anchored_estimate_adds_scaled_delta() {
        let estimate = estimate(Some(&anchor()), 0, 1, 12, 200, 900);
        assert_eq!(estimate.source, Source::Anchored);
        // No marginal ratio observed yet: 1100 + 100 counted as is.
        assert_eq!(estimate.total_tokens, 1_200);
        assert_eq!(estimate.tokenizer_tokens, 1_100);
        let learned = Anchor {
            delta_ratio: 1.2,
            ..anchor()
        };
        // 1100 + 100 x 1.2
        assert_eq!(
            super::estimate(Some(&learned), 0, 1, 12, 200, 900).total_tokens,
            1_220
        );
    }

    #[test]
    fn marginal_ratio_is_a_shrunk_moving_average() {
        // 300 counted tokens of growth, reported 1100 -> 1460: observed 1.2, shrunk to 1.1.
        let first = anchor().next_delta_ratio(1_460, 300);
        assert!((first - 1.1).abs() < 1e-9, "{first}");
        let second = Anchor {
            delta_ratio: first,
            ..anchor()
        }
        .next_delta_ratio(1_460, 300);
        // 0.7 x 1.1 + 0.3 x 1.2
        assert!((second - 1.13).abs() < 1e-9, "{second}");
        // Growth too small to measure keeps the ratio.
        assert_eq!(anchor().next_delta_ratio(1_130, 20), 0.0);
    }

    #[test]
    fn first_report_credits_the_tokenizer_by_content_size() {
        // A provider counting like ctxd: no correction.
        assert_eq!(first_delta_ratio(1_000, 1_000, 900), 1.0);
        // 1 000 counted content tokens: a tenth of the 300-token excess is the tokenizer's.
        let small = first_delta_ratio(1_400, 1_100, 1_000);
        assert!((small - 1.03).abs() < 1e-9, "{small}");
        // 30 000: nearly all of a 10 % excess is the tokenizer's.
        let large = first_delta_ratio(33_100, 30_100, 30_000);
        assert!((large - (1.0 + 0.1 * 9.0 / 9.09)).abs() < 1e-9, "{large}");
        // Always between 1 and the whole request's ratio, on either side of 1, even when
        // most of the count is tool definitions (the last case is bounded by 1.075).
        for (reported, counted, content) in [
            (1_400, 1_100, 1_000),
            (900, 1_100, 1_000),
            (43_000, 40_000, 30_000),
        ] {
            let prior = first_delta_ratio(reported, counted, content);
            let whole = reported as f64 / counted as f64;
            assert!(
                prior > whole.min(1.0) && prior <= whole.max(1.0),
                "{prior} vs {whole}"
            );
        }
        // Nothing reported or counted: unknown.
        assert_eq!(first_delta_ratio(0, 1_100, 1_000), 0.0);
        assert_eq!(first_delta_ratio(1_400, 1_100, 0), 0.0);
    }

    #[test]
    fn prior_is_used_and_then_averaged_with_observed_growth() {
        let primed = Anchor {
            delta_ratio: first_delta_ratio(1_400, 1_100, 1_000),
            ..anchor()
        };
        // 1100 + 100 x 1.03
        assert_eq!(
            estimate(Some(&primed), 0, 1, 12, 200, 900).total_tokens,
            1_203
        );
        // The first observation (1.2) joins the moving average, not a halfway shrink.
        let next = primed.next_delta_ratio(1_460, 300);
        assert!((next - (0.7 * 1.03 + 0.3 * 1.2)).abs() < 1e-9, "{next}");
    }

    #[test]
    fn moved_start_or_new_epoch_falls_back_to_calibration() {
        let moved = estimate(Some(&anchor()), 0, 5, 12, 200, 500);
        assert_eq!(moved.source, Source::Calibrated);
        assert_eq!(moved.total_tokens, 770);
        let rewritten = estimate(Some(&anchor()), 1, 1, 12, 200, 900);
        assert_eq!(rewritten.source, Source::Calibrated);
        let none = estimate(None, 0, 1, 12, 200, 900);
        assert_eq!((none.source, none.total_tokens), (Source::Tokenizer, 1_100));
    }

    #[test]
    fn fit_history_drops_oldest_whole_turns() {
        let tokens = [10, 10, 10, 10, 10, 10];
        let starts = [0, 2, 4];
        assert_eq!(fit_history(&tokens, &starts, |_, t| t <= 60), Some(0));
        assert_eq!(fit_history(&tokens, &starts, |_, t| t <= 45), Some(2));
        assert_eq!(fit_history(&tokens, &starts, |_, t| t <= 25), Some(4));
        assert_eq!(fit_history(&tokens, &starts, |_, t| t <= 15), None);
        // No user message: the whole history is one unit.
        assert_eq!(fit_history(&tokens, &[], |_, t| t <= 45), None);
    }

    #[test]
    fn report_classifies_against_thresholds() {
        let policy = Policy {
            context_window_tokens: 1_000,
            max_output_tokens: 200,
            ..Policy::default()
        };
        let judge = |total| {
            let estimate = Estimate {
                total_tokens: total,
                source: Source::Tokenizer,
                tokenizer_tokens: total,
            };
            let r = report(&policy, 200, Regions::default(), estimate, true);
            (r.status, r.action, r.headroom_tokens)
        };
        assert_eq!(judge(100), (Status::Ok, Action::None, 700));
        assert_eq!(judge(650), (Status::Warn, Action::ClearToolResults, 150));
        assert_eq!(judge(780), (Status::Warn, Action::Summarize, 20));
        assert_eq!(judge(801), (Status::Over, Action::Summarize, -1));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Over a sanitized conversation, as BuildMessages fits it: the cut is 0 or a turn
        /// start, its suffix fits, it is the earliest candidate that fits (so the suffix
        /// fits whenever any candidate does, and `None` only when none does), and it
        /// never separates a tool call from its result.
        #[test]
        fn fitted_history_starts_at_a_safe_turn_start_and_fits(
            messages in crate::turns::arbitrary::raw(40),
            sizes in proptest::collection::vec(0i64..500, 40),
            budget in 0i64..8_000,
        ) {
            use crate::turns::{self, arbitrary};
            let keep = turns::provider_valid(&messages);
            let sent: Vec<crate::message::Message> =
                keep.iter().map(|&i| messages[i].clone()).collect();
            let tokens: Vec<i64> = (0..sent.len()).map(|i| sizes[i]).collect();
            let starts = turns::turn_starts(&sent);
            let suffix = |cut: usize| -> i64 { tokens[cut..].iter().sum() };
            let candidates: Vec<usize> = std::iter::once(0)
                .chain(starts.iter().copied().filter(|&s| s > 0))
                .collect();
            let cut = fit_history(&tokens, &starts, |cut, history| {
                // The size offered is the suffix's, wherever the cut.
                assert_eq!(history, suffix(cut));
                history <= budget
            });
            match cut {
                None => {
                    for &candidate in &candidates {
                        proptest::prop_assert!(suffix(candidate) > budget, "{} fits", candidate);
                    }
                }
                Some(cut) => {
                    proptest::prop_assert!(candidates.contains(&cut), "{} is no turn start", cut);
                    proptest::prop_assert!(suffix(cut) <= budget);
                    for &earlier in candidates.iter().filter(|&&c| c < cut) {
                        proptest::prop_assert!(suffix(earlier) > budget, "{} fits too", earlier);
                    }
                    proptest::prop_assert!(
                        !arbitrary::separates_a_pair(&sent, cut),
                        "cut {} separates a pair in {:?}", cut, sent
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// Whatever token figures reach the budget (a client's counts are bounded at the
        /// edge, but the core does not rely on it), its sums never wrap: no panic, a total
        /// never below what was counted, and headroom never above the policy's limit.
        #[test]
        fn budget_sums_never_wrap(
            reported in 0..=i64::MAX,
            anchor_fixed in 0..=i64::MAX,
            anchor_history in 0..=i64::MAX,
            fixed in 0..=i64::MAX,
            history in 0..=i64::MAX,
            reserve in 1..1_000i64,
            extends in proptest::prelude::any::<bool>(),
        ) {
            let anchor = Anchor {
                reported_tokens: reported,
                fixed_tokens: anchor_fixed,
                history_tokens: anchor_history,
                first_seq: 1,
                last_seq: 5,
                view_epoch: 0,
                delta_ratio: 1.3,
            };
            let first_seq = if extends { 1 } else { 2 };
            let estimate = estimate(Some(&anchor), 0, first_seq, 9, fixed, history);
            proptest::prop_assert!(estimate.tokenizer_tokens >= fixed.max(history));
            proptest::prop_assert!(estimate.total_tokens >= 0);
            let policy = Policy::default();
            let regions = Regions {
                system_tokens: fixed,
                summary_tokens: history,
                history_tokens: history,
                tool_tokens: fixed,
            };
            let _ = regions.fixed_tokens();
            let report = report(&policy, reserve, regions, estimate, true);
            proptest::prop_assert!(report.headroom_tokens <= policy.limit_tokens());
            if estimate.total_tokens > policy.limit_tokens() {
                proptest::prop_assert_eq!(report.status, Status::Over);
            }
            let _ = anchor.ratio();
            let _ = anchor.next_delta_ratio(reported, 1_000);
            let tokens = [fixed, history, reported];
            let _ = fit_history(&tokens, &[1, 2], |_, suffix| suffix <= 0);
        }
    }
}
