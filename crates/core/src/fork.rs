//! Forking a session at a seq: which of the source's summaries the fork reuses, where
//! its view starts, and what a message the source had taken out of its view looks like
//! in a fork that does not reuse the summary that took it (decision 0019).
use crate::message::ViewState;

/// Forks of forks of … at most this deep (the lineage a fork's reads join).
pub const MAX_FORK_DEPTH: i64 = 64;

/// Where a summary's span lies against a cut after `at_seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Covers only seqs up to the cut: the fork reuses it.
    Within,
    /// Covers seqs on both sides: the fork may reuse its children within the cut.
    Crosses,
    /// Covers only seqs past the cut.
    Beyond,
}

pub fn cut(first_seq: i64, last_seq: i64, at_seq: i64) -> Cut {
    if last_seq <= at_seq {
        Cut::Within
    } else if first_seq <= at_seq {
        Cut::Crosses
    } else {
        Cut::Beyond
    }
}

/// The fork's first seq of the view: one past the run of seqs from 1 that the reused
/// summaries (`(first_seq, last_seq)`, any order) cover without a gap, and never past
/// the source's own first seq (a step summary inside the source's view does not move
/// it).
pub fn view_first_seq(reused: &[(i64, i64)], source_view_first_seq: i64) -> i64 {
    let mut spans = reused.to_vec();
    spans.sort_unstable();
    let mut covered = 0;
    for (first, last) in spans {
        if first == covered + 1 {
            covered = last;
        } else if first > covered + 1 {
            break;
        }
    }
    (covered + 1).min(source_view_first_seq.max(1))
}

/// A message a step summary had taken out of the source's view, back in the fork's
/// view because the fork does not reuse that summary: full when its view tokens are its
/// whole count, else cleared with the tokens it had in the view (a placeholder renders
/// no larger than a preview, so the count stays an upper bound).
pub fn restored(token_count: i64, view_tokens: i64) -> (ViewState, i64) {
    if view_tokens >= token_count {
        (ViewState::Full, token_count)
    } else {
        (ViewState::Cleared, view_tokens)
    }
}

/// Whether `seq` lies in one of `spans` (inclusive).
pub fn covered(seq: i64, spans: &[(i64, i64)]) -> bool {
    spans
        .iter()
        .any(|&(first, last)| first <= seq && seq <= last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_cut_sorts_spans() {
        assert_eq!(cut(1, 10, 10), Cut::Within);
        assert_eq!(cut(1, 11, 10), Cut::Crosses);
        assert_eq!(cut(10, 11, 10), Cut::Crosses);
        assert_eq!(cut(11, 20, 10), Cut::Beyond);
    }

    #[test]
    fn the_view_starts_after_the_covered_prefix() {
        // Leaves 1-8 and 9-20 reused, a step summary 25-27 inside the view.
        assert_eq!(view_first_seq(&[(9, 20), (1, 8), (25, 27)], 40), 21);
        // Nothing reused.
        assert_eq!(view_first_seq(&[], 40), 1);
        // Never past the source's first seq.
        assert_eq!(view_first_seq(&[(1, 8), (9, 20)], 9), 9);
        // A gap (the crossing leaf's span) ends the run.
        assert_eq!(view_first_seq(&[(1, 8), (15, 17)], 40), 9);
    }

    #[test]
    fn restored_messages_never_render_larger_than_counted() {
        assert_eq!(restored(500, 500), (ViewState::Full, 500));
        assert_eq!(restored(500, 12), (ViewState::Cleared, 12));
    }

    proptest! {
        /// Whatever leaves tile the prefix and whatever the cut, the reused leaves
        /// (those within the cut) end exactly where the fork's view starts, and the
        /// fork's view starts within the cut (at most one past it) and no later than
        /// the source's.
        #[test]
        fn reused_leaves_cover_exactly_the_prefix_before_the_view(
            sizes in proptest::collection::vec(1i64..20, 0..12),
            tail in 0i64..30,
            at_frac in 0.0f64..=1.0,
        ) {
            let mut spans = Vec::new();
            let mut next = 1;
            for size in &sizes {
                spans.push((next, next + size - 1));
                next += size;
            }
            let source_vfs = next;
            let last = next - 1 + tail;
            let at = (last as f64 * at_frac) as i64;
            let reused: Vec<(i64, i64)> = spans
                .iter()
                .copied()
                .filter(|&(first, last)| cut(first, last, at) == Cut::Within)
                .collect();
            let vfs = view_first_seq(&reused, source_vfs);
            prop_assert!(vfs >= 1 && vfs <= at + 1 && vfs <= source_vfs);
            let covered_through = reused.iter().map(|&(_, last)| last).max().unwrap_or(0);
            prop_assert_eq!(vfs, covered_through + 1);
            for seq in 1..vfs {
                prop_assert!(covered(seq, &reused));
            }
        }
    }
}
