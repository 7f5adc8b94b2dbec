//! Turn boundaries and tool-pair integrity over an ordered slice of messages. Pure: no
//! database, no clock.
//!
//! A turn starts at a user message. A *step* is an assistant message with tool calls
//! plus the run of tool results right after it. Providers reject an array in which a
//! tool call has no result or a result has no call, so every array ctxd returns goes
//! through [`provider_valid`].
use std::collections::HashSet;

use crate::message::{Message, Role, StoredMessage};

/// The parts of a message that turn and pair logic looks at.
pub trait Shape {
    fn role(&self) -> Role;
    fn call_ids(&self) -> Vec<&str>;
    fn answers(&self) -> &str;
}

impl Shape for Message {
    fn role(&self) -> Role {
        self.role
    }
    fn call_ids(&self) -> Vec<&str> {
        self.tool_calls
            .iter()
            .map(|call| call.id.as_str())
            .collect()
    }
    fn answers(&self) -> &str {
        &self.tool_call_id
    }
}

impl Shape for StoredMessage {
    fn role(&self) -> Role {
        self.message.role
    }
    fn call_ids(&self) -> Vec<&str> {
        self.message.call_ids()
    }
    fn answers(&self) -> &str {
        &self.message.tool_call_id
    }
}

impl<M: Shape> Shape for &M {
    fn role(&self) -> Role {
        (**self).role()
    }
    fn call_ids(&self) -> Vec<&str> {
        (**self).call_ids()
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
    let safe: Vec<usize> = turn_starts(messages)
        .into_iter()
        .filter(|&start| start > 0 && !straddles(messages, start))
        .collect();
    if let Some(&back) = safe.iter().rev().find(|&&start| start <= target) {
        return back;
    }
    safe.into_iter().find(|&start| start > target).unwrap_or(0)
}

/// Whether a tool call before `cut` is answered at or after it.
fn straddles<M: Shape>(messages: &[M], cut: usize) -> bool {
    let before: HashSet<&str> = messages[..cut]
        .iter()
        .flat_map(|message| message.call_ids())
        .collect();
    messages[cut..]
        .iter()
        .any(|message| message.role() == Role::Tool && before.contains(message.answers()))
}

/// Which messages of `messages` may be sent as they are: the indexes to keep, in order.
///
/// A step whose calls are not all answered by the tool results right after it is left
/// out together with its partial results, unless it is the last step and nothing but
/// its results follows it (the client is still running the tools). A tool result that
/// does not directly follow the step of its call is left out.
pub fn provider_valid<M: Shape>(messages: &[M]) -> Vec<usize> {
    let mut keep = Vec::with_capacity(messages.len());
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        let calls = message.call_ids();
        if message.role() != Role::Assistant || calls.is_empty() {
            // A tool result here did not follow its step: an orphan.
            if message.role() != Role::Tool {
                keep.push(index);
            }
            index += 1;
            continue;
        }
        let wanted: HashSet<&str> = calls.iter().copied().collect();
        let mut answered = HashSet::new();
        let mut results = Vec::new();
        let mut end = index + 1;
        while end < messages.len() && messages[end].role() == Role::Tool {
            let answers = messages[end].answers();
            if wanted.contains(answers) && answered.insert(answers) {
                results.push(end);
            }
            end += 1;
        }
        let complete = answered.len() == wanted.len();
        let still_open = end == messages.len();
        if complete || still_open {
            keep.push(index);
            keep.extend(results);
        }
        index = end;
    }
    keep
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

    #[test]
    fn results_away_from_their_step_are_orphans() {
        let messages = [u(), atc(&["A"]), t("A"), u(), t("A"), a()];
        assert_eq!(provider_valid(&messages), vec![0, 1, 2, 3, 5]);
        assert_eq!(provider_valid(&[t("X"), u(), a()]), vec![1, 2]);
    }

    #[test]
    fn complete_parallel_step_is_kept_whole() {
        let messages = [u(), atc(&["A", "B"]), t("B"), t("A"), a()];
        assert_eq!(provider_valid(&messages), vec![0, 1, 2, 3, 4]);
    }
}
