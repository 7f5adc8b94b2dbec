//! Which span of the view a summary covers: the fresh tail compaction leaves alone, the
//! leaf chunk at the start of the view, the older steps of one long turn. Pure; every
//! chunk ends at a boundary that separates no tool call from its result.
use crate::message::Role;
use crate::policy::Policy;
use crate::turns::Shape;

/// Target size of a leaf summary, as in force ([`Policy::effective`]): at most a
/// twentieth of the prompt room, so summaries leave room for the conversation in small
/// windows.
pub fn leaf_target(policy: &Policy) -> i64 {
    policy.effective().leaf_target_tokens
}

/// Target size of a condensed summary, as in force ([`Policy::effective`]).
pub fn condensed_target(policy: &Policy) -> i64 {
    policy.effective().condensed_target_tokens
}

/// The fresh tail: how many of the newest messages compaction must not touch. Its
/// tokens as in force ([`Policy::effective`]: at most a quarter of the prompt room), so
/// small windows can still summarize.
pub fn fresh_tail_len(tokens: &[i64], policy: &Policy) -> usize {
    let max_tokens = policy.effective().fresh_tail_tokens;
    let max_messages = policy.fresh_tail_messages as usize;
    let mut total = 0;
    let mut len = 0;
    for &t in tokens.iter().rev() {
        if len >= max_messages || total + t > max_tokens {
            break;
        }
        total += t;
        len += 1;
    }
    len
}

/// The end (exclusive index) of the leaf chunk at the start of the view: the first turn
/// boundary at which the chunk has `leaf_chunk_messages` messages or
/// `leaf_chunk_tokens` tokens, before the fresh tail. `forced` (the request must shrink
/// now) takes the furthest boundary before the newest turn instead when no boundary
/// qualifies. `starts` are the view's safe turn starts ([`crate::turns::safe_starts`]:
/// a chunk never separates a tool call from its result); `None` when no chunk can be
/// taken.
pub fn leaf_chunk(
    tokens: &[i64],
    starts: &[usize],
    policy: &Policy,
    forced: bool,
) -> Option<usize> {
    let tail = fresh_tail_len(tokens, policy);
    let limit = tokens.len() - tail;
    let boundaries: Vec<usize> = starts.iter().copied().filter(|&s| s > 0).collect();
    let mut total = 0;
    let mut counted = 0;
    for &boundary in &boundaries {
        if boundary > limit {
            break;
        }
        total += tokens[counted..boundary].iter().sum::<i64>();
        counted = boundary;
        if boundary as i64 >= policy.leaf_chunk_messages || total >= policy.leaf_chunk_tokens {
            return Some(boundary);
        }
    }
    if forced {
        // The newest turn stays whole; everything before it may go.
        return boundaries.last().copied();
    }
    None
}

/// The older steps of the view's newest turn, as `from..to`: from just after its user
/// message (or the start; `starts` are the view's turn starts) to a step boundary — an
/// assistant message right after a completed step — that leaves at least the newest
/// step, and the fresh tail (by `tokens`, the view's token counts) unless
/// `newest_step_only` or no boundary does. When that chunk holds fewer than
/// `cover_tokens`, it takes whole steps of the fresh tail too, up to the first boundary
/// where it holds that many (or the newest step is all that is left): one pass takes
/// what the request must shed, rather than one step per pass. A chunk never separates a
/// tool call from its result (as when a result comes after a later user message).
/// `None` when the turn has no such boundary.
pub fn step_chunk<M: Shape>(
    view: &[M],
    tokens: &[i64],
    starts: &[usize],
    policy: &Policy,
    newest_step_only: bool,
    cover_tokens: i64,
) -> Option<(usize, usize)> {
    let from = starts.last().map_or(0, |&start| start + 1);
    let pairs = crate::turns::pairs(view);
    let boundaries: Vec<usize> = (from + 1..view.len())
        .filter(|&i| {
            let (before, here) = (&view[i - 1], &view[i]);
            here.role() == Role::Assistant
                && (before.role() == Role::Tool
                    || (before.role() == Role::Assistant && before.call_ids().is_empty()))
        })
        .filter(|&to| {
            let inside = |at: usize| (from..to).contains(&at);
            pairs
                .iter()
                .all(|&(call, result)| inside(call) == inside(result))
        })
        .collect();
    // Keep the fresh tail (at least the newest step); everything older goes.
    let keep_from = if newest_step_only {
        view.len()
    } else {
        view.len() - fresh_tail_len(tokens, policy)
    };
    let to = boundaries
        .iter()
        .copied()
        .filter(|&b| b <= keep_from)
        .max()
        .or_else(|| boundaries.first().copied())?;
    let held = |end: usize| {
        tokens[from..end]
            .iter()
            .fold(0i64, |a, &t| a.saturating_add(t))
    };
    if held(to) >= cover_tokens {
        return Some((from, to));
    }
    let mut further = boundaries.iter().copied().filter(|&b| b > to);
    let to = further
        .clone()
        .find(|&b| held(b) >= cover_tokens)
        .or_else(|| further.next_back())
        .unwrap_or(to);
    Some((from, to))
}

/// A summary as condensation planning sees it: the span of the log it covers, its depth
/// and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first_seq: i64,
    pub last_seq: i64,
    pub depth: i32,
    pub tokens: i64,
}

/// How many of the newest summaries of `chain` (the active summaries in log order, the
/// newest last) to condense into one, if any. Only the newest run consecutive in the log
/// is considered (a step summary inside the newest turn is not consecutive with those
/// before that turn's user message): all of it once it has grown past twice
/// `target_tokens` (two or more), else the newest `fanin` when they share a depth.
pub fn condensation_width(chain: &[Span], fanin: usize, target_tokens: i64) -> Option<usize> {
    let n = chain.len();
    if n == 0 {
        return None;
    }
    let mut run = 1;
    while run < n && chain[n - run].first_seq == chain[n - run - 1].last_seq + 1 {
        run += 1;
    }
    let run_tokens = chain[n - run..]
        .iter()
        .fold(0i64, |sum, s| sum.saturating_add(s.tokens));
    if run_tokens > target_tokens.saturating_mul(2) && run >= 2 {
        Some(run)
    } else if fanin > 0
        && run >= fanin
        && chain[n - fanin..]
            .iter()
            .all(|s| s.depth == chain[n - 1].depth)
    {
        Some(fanin)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    #[test]
    fn chunks_end_at_turn_boundaries_outside_the_fresh_tail() {
        let policy = Policy {
            context_window_tokens: 100_000,
            max_output_tokens: 10_000,
            fresh_tail_messages: 4,
            fresh_tail_tokens: 1_000_000,
            leaf_chunk_messages: 3,
            leaf_chunk_tokens: 1_000_000,
            ..Policy::default()
        };
        // Turns start at 0, 2, 5, 8; 10 messages of 10 tokens.
        let tokens = [10; 10];
        let starts = [0, 2, 5, 8];
        // 2 messages is not enough; 5 is; the tail is the last 4.
        assert_eq!(leaf_chunk(&tokens, &starts, &policy, false), Some(5));
        let big = Policy {
            leaf_chunk_messages: 100,
            ..policy.clone()
        };
        assert_eq!(leaf_chunk(&tokens, &starts, &big, false), None);
        // Forced: everything before the newest turn.
        assert_eq!(leaf_chunk(&tokens, &starts, &big, true), Some(8));
        // A single turn cannot be chunked.
        assert_eq!(leaf_chunk(&tokens, &[0], &big, true), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1_000))]
        /// Over a log as validation admits it (a result may come after a later user
        /// message), with its safe turn starts as the engine passes them, the leaf chunk
        /// covers a prefix of the unsummarized view ending at a
        /// turn start, leaves the newest turn, leaves the fresh tail unless forced, and
        /// never separates a tool call from its result.
        #[test]
        fn leaf_chunks_are_turn_aligned_prefixes_outside_the_fresh_tail(
            messages in crate::turns::arbitrary::log(40),
            sizes in proptest::collection::vec(0i64..3_000, 40),
            tail_messages in 0i64..12,
            tail_tokens in 0i64..20_000,
            chunk_messages in 1i64..12,
            chunk_tokens in 1i64..20_000,
            forced in proptest::prelude::any::<bool>(),
        ) {
            let policy = Policy {
                context_window_tokens: 200_000,
                max_output_tokens: 20_000,
                fresh_tail_messages: tail_messages,
                fresh_tail_tokens: tail_tokens,
                leaf_chunk_messages: chunk_messages,
                leaf_chunk_tokens: chunk_tokens,
                ..Policy::default()
            };
            let tokens: Vec<i64> = (0..messages.len()).map(|i| sizes[i]).collect();
            let starts = crate::turns::safe_starts(&messages);
            let Some(end) = leaf_chunk(&tokens, &starts, &policy, forced) else {
                return Ok(());
            };
            // A non-empty prefix ..end, ending where a turn starts, the newest turn kept.
            proptest::prop_assert!(end > 0 && starts.contains(&end), "end {}", end);
            proptest::prop_assert!(end <= *starts.last().unwrap());
            if !forced {
                let tail = fresh_tail_len(&tokens, &policy);
                proptest::prop_assert!(end <= tokens.len() - tail, "end {} in the fresh tail of {}", end, tail);
                let covered = &tokens[..end];
                proptest::prop_assert!(
                    covered.len() as i64 >= chunk_messages || covered.iter().sum::<i64>() >= chunk_tokens
                );
            }
            proptest::prop_assert!(
                !crate::turns::arbitrary::separates_a_pair(&messages, end),
                "chunk ..{} separates a call from its result in {:?}",
                end,
                messages.iter().map(|m| (m.role, m.tool_call_id.clone(), m.tool_calls.len())).collect::<Vec<_>>()
            );
        }

        /// The step chunk of the newest turn covers a contiguous run of its steps right
        /// after its user message, ends where an assistant message follows a completed
        /// step, leaves the newest step, and never separates a tool call from its result.
        #[test]
        fn step_chunks_are_whole_older_steps_of_the_newest_turn(
            messages in crate::turns::arbitrary::log(40),
            sizes in proptest::collection::vec(0i64..3_000, 40),
            tail_messages in 0i64..12,
            tail_tokens in 0i64..20_000,
            newest_step_only in proptest::prelude::any::<bool>(),
            cover_tokens in proptest::prop_oneof![proptest::strategy::Just(0i64), 0i64..40_000],
        ) {
            let policy = Policy {
                context_window_tokens: 200_000,
                max_output_tokens: 20_000,
                fresh_tail_messages: tail_messages,
                fresh_tail_tokens: tail_tokens,
                ..Policy::default()
            };
            let tokens: Vec<i64> = (0..messages.len()).map(|i| sizes[i]).collect();
            let starts = crate::turns::turn_starts(&messages);
            let Some((from, to)) = step_chunk(&messages, &tokens, &starts, &policy, newest_step_only, cover_tokens) else {
                return Ok(());
            };
            let turn = starts.last().map_or(0, |&start| start + 1);
            proptest::prop_assert_eq!(from, turn);
            proptest::prop_assert!(from < to && to < messages.len(), "{}..{}", from, to);
            proptest::prop_assert_eq!(messages[to].role, Role::Assistant);
            // Whether the chunk from..to holds a call or a result without the other.
            let separates = |from: usize, to: usize| {
                messages[from..to].iter().any(|inside| {
                    inside.tool_calls.iter().any(|call| {
                        messages[..from]
                            .iter()
                            .chain(&messages[to..])
                            .any(|other| other.role == Role::Tool && other.tool_call_id == call.id)
                    }) || (inside.role == Role::Tool
                        && !messages[from..to]
                            .iter()
                            .any(|m| m.call_ids().contains(&inside.answers())))
                })
            };
            let boundary = |b: usize| {
                let before = &messages[b - 1];
                messages[b].role == Role::Assistant
                    && (before.role == Role::Tool
                        || (before.role == Role::Assistant && before.tool_calls.is_empty()))
                    && !separates(from, b)
            };
            let held = |end: usize| tokens[from..end].iter().sum::<i64>();
            // Short of `cover_tokens` only when no step is left to take but the newest.
            if held(to) < cover_tokens {
                proptest::prop_assert!(
                    !(to + 1..messages.len()).any(boundary),
                    "{}..{} holds {} < {} with steps left", from, to, held(to), cover_tokens
                );
            }
            let tail = fresh_tail_len(&tokens, &policy);
            let keep_from = if newest_step_only { messages.len() } else { messages.len() - tail };
            // The chunk as far as the fresh tail allows (or the first step when it allows
            // none), and past it only as far as `cover_tokens` needs.
            let base = (from + 1..messages.len().min(keep_from + 1))
                .filter(|&b| boundary(b))
                .max()
                .or_else(|| (from + 1..messages.len()).find(|&b| boundary(b)));
            proptest::prop_assert!(base.is_some_and(|base| to >= base));
            let base = base.unwrap();
            if to > base {
                proptest::prop_assert!(
                    held(base) < cover_tokens,
                    "{}..{} enters the fresh tail of {} without need", from, to, tail
                );
                proptest::prop_assert!(
                    !(base + 1..to).any(|b| boundary(b) && held(b) >= cover_tokens),
                    "{}..{} goes past a boundary that holds enough", from, to
                );
            }
            let shape = |m: &Message| (m.role, m.tool_call_id.clone(), m.tool_calls.len());
            let separated = separates(from, to);
            proptest::prop_assert!(
                !separated,
                "chunk {}..{} separates a call from its result in {:?}",
                from, to, messages.iter().map(shape).collect::<Vec<_>>()
            );
        }

        /// The fresh tail is a suffix within both of its limits, as long as they allow.
        #[test]
        fn fresh_tail_is_the_longest_suffix_within_its_limits(
            tokens in proptest::collection::vec(0i64..3_000, 0..40),
            tail_messages in 0i64..12,
            tail_tokens in 0i64..20_000,
        ) {
            let policy = Policy {
                context_window_tokens: 200_000,
                max_output_tokens: 20_000,
                fresh_tail_messages: tail_messages,
                fresh_tail_tokens: tail_tokens,
                ..Policy::default()
            };
            let len = fresh_tail_len(&tokens, &policy);
            let within = |n: usize| {
                n as i64 <= tail_messages
                    && tokens[tokens.len() - n..].iter().sum::<i64>() <= tail_tokens
            };
            proptest::prop_assert!(within(len));
            proptest::prop_assert!(len == tokens.len() || !within(len + 1));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// Leaf summaries written one after another (sometimes after a gap, as a step
        /// summary is), each followed by every condensation it makes due: the active
        /// summaries stay in log order, never overlap, and cover every summarized seq
        /// exactly once; a condensed summary covers exactly its children, which were
        /// consecutive in the log.
        #[test]
        fn active_summaries_cover_what_was_summarized_exactly_once(
            leaves in proptest::collection::vec((1i64..20, 0i64..3, 1i64..2_000), 1..40),
            fanin in 2usize..6,
            target in 100i64..3_000,
            shrink in 1i64..4,
        ) {
            let mut chain: Vec<Span> = Vec::new();
            let mut summarized: Vec<i64> = Vec::new();
            let mut next = 1i64;
            for (len, gap, tokens) in leaves {
                // A gap (0 most often) stands for messages left unsummarized.
                let first = next + if gap == 2 { 3 } else { 0 };
                let leaf = Span { first_seq: first, last_seq: first + len - 1, depth: 0, tokens };
                summarized.extend(leaf.first_seq..=leaf.last_seq);
                next = leaf.last_seq + 1;
                chain.push(leaf);
                while let Some(width) = condensation_width(&chain, fanin, target) {
                    proptest::prop_assert!(width >= 2 && width <= chain.len());
                    let children = chain.split_off(chain.len() - width);
                    for pair in children.windows(2) {
                        proptest::prop_assert_eq!(pair[1].first_seq, pair[0].last_seq + 1);
                    }
                    let tokens: i64 = children.iter().map(|c| c.tokens).sum();
                    chain.push(Span {
                        first_seq: children[0].first_seq,
                        last_seq: children[width - 1].last_seq,
                        depth: children.iter().map(|c| c.depth).max().unwrap() + 1,
                        // A condensed summary is smaller than what it replaces.
                        tokens: (tokens / (shrink + 1)).max(1),
                    });
                }
            }
            let covered: Vec<i64> = chain.iter().flat_map(|s| s.first_seq..=s.last_seq).collect();
            proptest::prop_assert_eq!(covered, summarized);
            for pair in chain.windows(2) {
                proptest::prop_assert!(pair[0].last_seq < pair[1].first_seq);
            }
        }
    }
}
