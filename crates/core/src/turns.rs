//! Turn boundaries and tool-pair integrity over an ordered slice of messages. Pure: no
//! database, no clock.
//!
//! A turn starts at a user message. A *step* is an assistant message with tool calls
//! plus the run of tool results right after it. Providers reject an array in which a
//! tool call has no result or a result has no call, so every array ctxd returns goes
//! through [`provider_valid`].
use std::collections::HashSet;

use crate::message::{Message, Role, StoredMessage, ToolCall};

/// The parts of a message that turn and pair logic looks at.
pub trait Shape {
    fn role(&self) -> Role;
    /// The tool calls the message makes.
    fn calls(&self) -> &[ToolCall];
    fn answers(&self) -> &str;

    fn call_ids(&self) -> Vec<&str> {
        self.calls().iter().map(|call| call.id.as_str()).collect()
    }
}

impl Shape for Message {
    fn role(&self) -> Role {
        self.role
    }
    fn calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }
    fn answers(&self) -> &str {
        &self.tool_call_id
    }
}

impl Shape for StoredMessage {
    fn role(&self) -> Role {
        self.message.role
    }
    fn calls(&self) -> &[ToolCall] {
        &self.message.tool_calls
    }
    fn answers(&self) -> &str {
        &self.message.tool_call_id
    }
}

impl<M: Shape> Shape for &M {
    fn role(&self) -> Role {
        (**self).role()
    }
    fn calls(&self) -> &[ToolCall] {
        (**self).calls()
    }
    fn answers(&self) -> &str {
        (**self).answers()
    }
}

/// Indexes of the messages that start a turn (user messages).
pub fn turn_starts<M: Shape>(messages: &[M]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role() == Role::User)
        .map(|(index, _)| index)
        .collect()
}

/// Moves a cut (the index of the first message to keep) to a turn start where no tool
/// pair straddles the cut: the nearest such start at or before `target` (but after 0),
/// else the nearest after it, else 0, meaning nothing can be cut.
pub fn snap_cut<M: Shape>(messages: &[M], target: usize) -> usize {
    let safe: Vec<usize> = safe_starts(messages)
        .into_iter()
        .filter(|&start| start > 0)
        .collect();
    if let Some(&back) = safe.iter().rev().find(|&&start| start <= target) {
        return back;
    }
    safe.into_iter().find(|&start| start > target).unwrap_or(0)
}

/// Every tool pair of `messages`: (index of the call's message, index of its result),
/// in the order of the results. A result whose call is not before it is in no pair.
pub fn pairs<M: Shape>(messages: &[M]) -> Vec<(usize, usize)> {
    let mut calls: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut pairs = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        for id in message.call_ids() {
            calls.entry(id).or_insert(index);
        }
        if message.role() == Role::Tool
            && let Some(&call) = calls.get(message.answers())
            && call < index
        {
            pairs.push((call, index));
        }
    }
    pairs
}

/// The turn starts where a cut separates no tool call from its result: those no pair
/// straddles (a call before the start answered at or after it, as when a result comes
/// after a later user message). Where compaction may cut a stored log, which, unlike a
/// sanitized array, may hold such pairs. One pass over the log.
pub fn safe_starts<M: Shape>(messages: &[M]) -> Vec<usize> {
    // Each pair (call at i, result at j) makes the cuts i+1..=j unsafe: +1 at i+1, -1
    // after j; a cut is safe where the running sum is 0.
    let mut spans = vec![0i64; messages.len() + 2];
    for (call, result) in pairs(messages) {
        spans[call + 1] += 1;
        spans[result + 1] -= 1;
    }
    let mut open = 0;
    let mut unsafe_at = vec![false; messages.len()];
    for (index, at) in unsafe_at.iter_mut().enumerate() {
        open += spans[index];
        *at = open > 0;
    }
    turn_starts(messages)
        .into_iter()
        .filter(|&start| !unsafe_at[start])
        .collect()
}

/// Which messages of `messages` may be sent as they are: the indexes to keep, in order.
///
/// A step whose calls are not all answered by the tool results right after it is left
/// out together with its partial results, unless it is the last step and nothing but
/// its results follows it (the client is still running the tools). A tool result that
/// does not directly follow the step of its call is left out.
pub fn provider_valid<M: Shape>(messages: &[M]) -> Vec<usize> {
    let mut keep = Vec::with_capacity(messages.len());
    // Buffers reused from step to step: a build checks every step of the view.
    let mut step = StepCalls::default();
    let mut results = Vec::new();
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        if message.role() != Role::Assistant || message.calls().is_empty() {
            // A tool result here did not follow its step: an orphan.
            if message.role() != Role::Tool {
                keep.push(index);
            }
            index += 1;
            continue;
        }
        step.start(message.calls());
        results.clear();
        let mut end = index + 1;
        while end < messages.len() && messages[end].role() == Role::Tool {
            if step.answer(messages[end].answers()) {
                results.push(end);
            }
            end += 1;
        }
        let still_open = end == messages.len();
        if step.complete() || still_open {
            keep.push(index);
            keep.extend_from_slice(&results);
        }
        index = end;
    }
    keep
}

/// Steps with more calls than this are checked with hash sets; fewer (nearly every
/// step) with a short list searched in order, without allocating.
const SMALL_STEP: usize = 16;

/// The distinct call ids of one step, and which of them a result answered.
#[derive(Default)]
struct StepCalls<'a> {
    ids: Vec<&'a str>,
    answered: Vec<bool>,
    answered_count: usize,
    large: Option<(HashSet<&'a str>, HashSet<&'a str>)>,
}

impl<'a> StepCalls<'a> {
    fn start(&mut self, calls: &'a [ToolCall]) {
        self.ids.clear();
        self.answered.clear();
        self.answered_count = 0;
        self.large = None;
        if calls.len() > SMALL_STEP {
            let wanted = calls.iter().map(|call| call.id.as_str()).collect();
            self.large = Some((wanted, HashSet::new()));
            return;
        }
        for call in calls {
            if !self.ids.contains(&call.id.as_str()) {
                self.ids.push(&call.id);
                self.answered.push(false);
            }
        }
    }

    /// Whether `id` answers a call of the step not answered before.
    fn answer(&mut self, id: &'a str) -> bool {
        if let Some((wanted, answered)) = &mut self.large {
            return wanted.contains(id) && answered.insert(id);
        }
        match self.ids.iter().position(|&wanted| wanted == id) {
            Some(at) if !self.answered[at] => {
                self.answered[at] = true;
                self.answered_count += 1;
                true
            }
            _ => false,
        }
    }

    fn complete(&self) -> bool {
        match &self.large {
            Some((wanted, answered)) => answered.len() == wanted.len(),
            None => self.answered_count == self.ids.len(),
        }
    }
}

/// Where a step still open at the end starts: the last message's step when some of its
/// calls have no result yet (the client is still running the tools). [`provider_valid`]
/// keeps such a step, for the client's view of the session; a provider takes no request
/// that ends with an unanswered call, so the provider bodies end before it.
pub fn open_step<M: Shape>(messages: &[M]) -> Option<usize> {
    let start = messages
        .iter()
        .rposition(|message| message.role() != Role::Tool)?;
    let step = &messages[start];
    if step.role() != Role::Assistant {
        return None;
    }
    let calls = step.call_ids();
    let answered: HashSet<&str> = messages[start + 1..]
        .iter()
        .map(|message| message.answers())
        .collect();
    let open = !calls.is_empty() && calls.iter().any(|id| !answered.contains(id));
    open.then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn u() -> Message {
        Message::text(Role::User, "question")
    }
    fn a() -> Message {
        Message::text(Role::Assistant, "answer")
    }
    fn atc(ids: &[&str]) -> Message {
        let mut message = Message::text(Role::Assistant, "");
        message.tool_calls = ids
            .iter()
            .map(|id| ToolCall {
                id: (*id).to_string(),
                name: "bash".into(),
                arguments: "{}".into(),
            })
            .collect();
        message
    }
    fn t(id: &str) -> Message {
        let mut message = Message::text(Role::Tool, "output");
        message.tool_call_id = id.into();
        message
    }

    #[test]
    fn turn_starts_follow_user_messages() {
        assert_eq!(turn_starts(&[u(), a(), u(), a()]), vec![0, 2]);
        assert_eq!(
            turn_starts(&[u(), atc(&["1"]), t("1"), a(), u(), a()]),
            vec![0, 4]
        );
        let chained = [u(), atc(&["1"]), t("1"), atc(&["2"]), t("2"), a()];
        assert_eq!(turn_starts(&chained), vec![0]);
        assert!(turn_starts(&[atc(&["1"]), t("1"), a()]).is_empty());
        assert_eq!(turn_starts(&[atc(&["1"]), t("1"), a(), u(), a()]), vec![3]);
    }

    #[test]
    fn snap_cut_moves_to_safe_boundaries() {
        assert_eq!(snap_cut(&[u(), a(), u(), a(), u()], 3), 2);
        let parallel = [u(), a(), u(), atc(&["1", "2"]), t("1"), t("2"), a(), u()];
        assert_eq!(snap_cut(&parallel, 4), 2);
        assert_eq!(snap_cut(&parallel, 5), 2);
        // Nothing backwards, found forwards.
        assert_eq!(snap_cut(&[atc(&["1"]), t("1"), a(), u()], 1), 3);
        // A single turn: nothing can be cut.
        assert_eq!(snap_cut(&[u(), atc(&["1"]), t("1"), a()], 2), 0);
        let two_steps = [u(), atc(&["1"]), t("1"), atc(&["2"]), t("2"), a(), u(), a()];
        assert_eq!(snap_cut(&two_steps, 3), 6);
    }

    #[test]
    fn snap_cut_never_separates_a_pair_answered_after_a_user_message() {
        // B is answered after the second user message: cutting at 3 would orphan it.
        let late = [u(), atc(&["A", "B"]), t("A"), u(), t("B"), a(), u(), a()];
        assert_eq!(snap_cut(&late, 3), 6);
    }

    #[test]
    fn an_open_last_step_is_found_and_a_complete_one_is_not() {
        assert_eq!(open_step(&[u(), atc(&["x", "y"]), t("x")]), Some(1));
        assert_eq!(open_step(&[u(), atc(&["x"])]), Some(1));
        assert_eq!(open_step(&[u(), atc(&["x"]), t("x")]), None);
        assert_eq!(open_step(&[u(), a()]), None);
        assert_eq!(open_step::<Message>(&[]), None);
    }

    #[test]
    fn incomplete_step_is_dropped_with_its_partial_results() {
        let messages = [u(), atc(&["A", "B"]), t("A"), u(), a()];
        assert_eq!(provider_valid(&messages), vec![0, 3, 4]);
    }

    #[test]
    fn last_open_step_is_kept() {
        let messages = [u(), atc(&["A", "B"]), t("A")];
        assert_eq!(provider_valid(&messages), vec![0, 1, 2]);
        let waiting = [u(), atc(&["A"])];
        assert_eq!(provider_valid(&waiting), vec![0, 1]);
    }

    /// provider_valid as first written, with a hash set per step: the reference.
    fn hash_set_definition(messages: &[Message]) -> Vec<usize> {
        let mut keep = Vec::new();
        let mut index = 0;
        while index < messages.len() {
            let message = &messages[index];
            let calls = message.call_ids();
            if message.role != Role::Assistant || calls.is_empty() {
                if message.role != Role::Tool {
                    keep.push(index);
                }
                index += 1;
                continue;
            }
            let wanted: HashSet<&str> = calls.iter().copied().collect();
            let mut answered = HashSet::new();
            let mut results = Vec::new();
            let mut end = index + 1;
            while end < messages.len() && messages[end].role == Role::Tool {
                let answers = messages[end].tool_call_id.as_str();
                if wanted.contains(answers) && answered.insert(answers) {
                    results.push(end);
                }
                end += 1;
            }
            if answered.len() == wanted.len() || end == messages.len() {
                keep.push(index);
                keep.extend(results);
            }
            index = end;
        }
        keep
    }

    #[test]
    fn results_away_from_their_step_are_orphans() {
        let messages = [u(), atc(&["A"]), t("A"), u(), t("A"), a()];
        assert_eq!(provider_valid(&messages), vec![0, 1, 2, 3, 5]);
        assert_eq!(provider_valid(&[t("X"), u(), a()]), vec![1, 2]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Whatever a client sent, the sanitizer's output holds no orphan tool result and
        /// no unanswered call (but the last step's), and keeps every message that is
        /// neither a tool result nor a call, in order.
        #[test]
        fn sanitized_output_is_provider_valid(messages in arbitrary::raw(40)) {
            let keep = provider_valid(&messages);
            proptest::prop_assert!(keep.windows(2).all(|w| w[0] < w[1]));
            let sent: Vec<Message> = keep.iter().map(|&i| messages[i].clone()).collect();
            if let Some(why) = arbitrary::provider_invalid(&sent) {
                proptest::prop_assert!(false, "{}: kept {:?}", why, keep);
            }
            for (index, message) in messages.iter().enumerate() {
                if message.role != Role::Tool && message.tool_calls.is_empty() {
                    proptest::prop_assert!(keep.contains(&index), "dropped {}", index);
                }
            }
            // Sanitizing is idempotent: a valid array is sent as it is.
            proptest::prop_assert_eq!(provider_valid(&sent), (0..sent.len()).collect::<Vec<_>>());
        }

        /// The sanitizer without allocation keeps exactly what the hash-set definition
        /// keeps, for steps small and large (past SMALL_STEP calls), with repeated ids
        /// and stray results.
        #[test]
        fn provider_valid_matches_the_hash_set_definition(
            shapes in proptest::collection::vec(
                (0u8..4, proptest::collection::vec(0u8..24, 0..40)),
                0..30,
            )
        ) {
            let messages: Vec<Message> = shapes
                .iter()
                .map(|(kind, ids)| match kind {
                    0 => u(),
                    1 => {
                        let ids: Vec<String> = ids.iter().map(|id| format!("c{id}")).collect();
                        atc(&ids.iter().map(String::as_str).collect::<Vec<_>>())
                    }
                    _ => t(&format!("c{}", ids.first().copied().unwrap_or(0))),
                })
                .collect();
            proptest::prop_assert_eq!(provider_valid(&messages), hash_set_definition(&messages));
        }

        /// A snapped cut is 0 or a turn start, and never separates a call from its result,
        /// even in a log where a result comes after a later user message; the safe starts
        /// are exactly the turn starts that separate no pair.
        #[test]
        fn snapped_cuts_are_safe_turn_starts(messages in arbitrary::log(40), target in 0usize..40) {
            let cut = snap_cut(&messages, target);
            proptest::prop_assert!(cut == 0 || turn_starts(&messages).contains(&cut));
            proptest::prop_assert!(!arbitrary::separates_a_pair(&messages, cut), "cut {}", cut);
            let safe: Vec<usize> = turn_starts(&messages)
                .into_iter()
                .filter(|&start| !arbitrary::separates_a_pair(&messages, start))
                .collect();
            proptest::prop_assert_eq!(safe_starts(&messages), safe);
        }
    }

    #[test]
    fn complete_parallel_step_is_kept_whole() {
        let messages = [u(), atc(&["A", "B"]), t("B"), t("A"), a()];
        assert_eq!(provider_valid(&messages), vec![0, 1, 2, 3, 4]);
    }
}

/// Random conversations for property tests over turn and pair logic.
#[cfg(test)]
pub(crate) mod arbitrary {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use crate::message::{Message, Role, ToolCall};

    /// One message to append: a user message, a plain assistant message, an assistant
    /// message with 1 to 3 calls, or a tool result answering the call picked by `pick`
    /// (among those made so far).
    #[derive(Debug, Clone, Copy)]
    pub(crate) enum Op {
        User,
        Assistant,
        Calls(u8),
        Result(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => Just(Op::User),
            1 => Just(Op::Assistant),
            3 => (1u8..=3).prop_map(Op::Calls),
            5 => any::<u16>().prop_map(Op::Result),
        ]
    }

    fn call(id: String) -> ToolCall {
        ToolCall {
            id,
            name: "bash".into(),
            arguments: "{}".into(),
        }
    }

    fn result(id: &str) -> Message {
        let mut message = Message::text(Role::Tool, "output");
        message.tool_call_id = id.to_string();
        message
    }

    /// Any sequence, as a client might send it before validation: results may answer
    /// unknown calls, answer a call twice, or come anywhere after their call.
    pub(crate) fn raw(max: usize) -> impl Strategy<Value = Vec<Message>> {
        proptest::collection::vec(op(), 0..max).prop_map(|ops| build(&ops, false))
    }

    /// A log as validation admits it: each result answers a call made before it and not
    /// yet answered (possibly after later messages, user ones included); calls may stay
    /// unanswered.
    pub(crate) fn log(max: usize) -> impl Strategy<Value = Vec<Message>> {
        proptest::collection::vec(op(), 0..max).prop_map(|ops| build(&ops, true))
    }

    fn build(ops: &[Op], validated: bool) -> Vec<Message> {
        let mut messages = Vec::new();
        let mut made: Vec<String> = Vec::new();
        let mut answered: HashSet<String> = HashSet::new();
        for &op in ops {
            match op {
                Op::User => messages.push(Message::text(Role::User, "question")),
                Op::Assistant => messages.push(Message::text(Role::Assistant, "answer")),
                Op::Calls(n) => {
                    let mut message = Message::text(Role::Assistant, "");
                    for _ in 0..n {
                        let id = format!("call{}", made.len());
                        made.push(id.clone());
                        message.tool_calls.push(call(id));
                    }
                    messages.push(message);
                }
                Op::Result(pick) => {
                    if validated {
                        let open: Vec<&String> =
                            made.iter().filter(|id| !answered.contains(*id)).collect();
                        if open.is_empty() {
                            continue;
                        }
                        // Mostly the oldest open call, as tools answer in order.
                        let id = open[usize::from(pick) % open.len().min(2)].clone();
                        answered.insert(id.clone());
                        messages.push(result(&id));
                    } else {
                        let pick = usize::from(pick) % (made.len() + 1);
                        let id = made.get(pick).map_or("unknown", String::as_str);
                        messages.push(result(id));
                    }
                }
            }
        }
        messages
    }

    /// Whether the cut (index of the first message kept) separates a tool call from a
    /// result answering it (written out again here, independently of the code tested).
    pub(crate) fn separates_a_pair(messages: &[Message], cut: usize) -> bool {
        messages[..cut].iter().any(|before| {
            before.tool_calls.iter().any(|call| {
                messages[cut..]
                    .iter()
                    .any(|after| after.role == Role::Tool && after.tool_call_id == call.id)
            })
        })
    }

    /// Why `messages` is not provider-valid, if it is not: each tool result follows the
    /// assistant message of its call (in the run of results right after it), answers it
    /// once, and each call has its result unless its step is the last thing sent.
    pub(crate) fn provider_invalid(messages: &[Message]) -> Option<String> {
        let mut open: Option<(usize, HashSet<&str>)> = None;
        for (index, message) in messages.iter().enumerate() {
            if message.role == Role::Tool {
                let Some((_, wanted)) = open.as_mut() else {
                    return Some(format!("orphan tool result at {index}"));
                };
                if !wanted.remove(message.tool_call_id.as_str()) {
                    return Some(format!("result at {index} answers no open call"));
                }
                continue;
            }
            if let Some((step, wanted)) = open.take()
                && !wanted.is_empty()
            {
                return Some(format!("call at {step} unanswered before {index}"));
            }
            if message.role == Role::Assistant && !message.tool_calls.is_empty() {
                let wanted = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
                open = Some((index, wanted));
            }
        }
        // The last step may still be waiting for its results.
        None
    }
}
