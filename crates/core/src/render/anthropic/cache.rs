//! Anthropic's prompt cache: which breakpoints a built body gets. Anthropic caches a
//! prompt only up to a block marked `cache_control`, at most four per request; the
//! others providers cache a repeated prefix on their own.
use super::{ANTHROPIC_CACHE_MARK, ANTHROPIC_INLINE_SYSTEM};
use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

/// Where a build's prompt is stable, for the cache breakpoints of
/// [`anthropic_messages_cached`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stable {
    /// Where the summaries' block starts in the system prompt, when it is there.
    pub block_in_system: Option<usize>,
    /// The index of the summaries' message among the messages, when it is one.
    pub block_message: Option<usize>,
}

/// Breakpoints Anthropic takes in one request at most.
pub const MAX_BREAKPOINTS: usize = 4;

/// Which breakpoints a body gets.
pub(super) struct Breakpoints {
    pub newest: bool,
    pub system: bool,
    /// The summaries' block in the system prompt is a marked block of its own.
    pub system_split: bool,
    pub tools: bool,
    /// Indexes of the messages whose last block is marked.
    pub messages: Vec<usize>,
    /// Per message, how many of its blocks kept whole keep their own `cache_control`
    /// (the last ones); the others go without.
    pub native_kept: Vec<usize>,
}

impl Breakpoints {
    /// ctxd's breakpoints first, then the client's, newest first, while any are left.
    pub(super) fn plan(
        system_prompt: &str,
        messages: &[&Message],
        tools: &[ToolDefinition],
        stable: Stable,
    ) -> Breakpoints {
        let mut left = MAX_BREAKPOINTS;
        let mut take = |wanted: bool| {
            let taken = wanted && left > 0;
            left -= usize::from(taken);
            taken
        };
        let newest = take(!messages.is_empty());
        let system_text = !system_prompt.is_empty()
            || messages.iter().any(|m| {
                m.role == Role::System && !m.metadata.contains_key(ANTHROPIC_INLINE_SYSTEM)
            });
        let system = take(system_text);
        let tools = take(!system_text && !tools.is_empty());
        // The summaries' block in the system prompt: the system's second block.
        let system_split = take(system && stable.block_in_system.is_some_and(|at| at > 0));
        let mut marked = Vec::new();
        if let Some(index) = stable.block_message
            && take(index + 1 < messages.len())
        {
            marked.push(index);
        }
        let last = messages.len().saturating_sub(1);
        let mut native_kept = vec![0; messages.len()];
        for (index, message) in messages.iter().enumerate().rev() {
            for _ in 0..native_marks(message) {
                native_kept[index] += usize::from(take(true));
            }
            if index != last && message.metadata.contains_key(ANTHROPIC_CACHE_MARK) && take(true) {
                marked.push(index);
            }
        }
        Breakpoints {
            newest,
            system,
            system_split,
            tools,
            messages: marked,
            native_kept,
        }
    }
}

/// Blocks of the message kept whole with a `cache_control` of their own.
pub(super) fn native_marks(message: &Message) -> usize {
    message
        .parts
        .iter()
        .filter(|part| matches!(part, Part::Native { json, .. } if has_mark(json)))
        .count()
}

pub(super) fn has_mark(json: &str) -> bool {
    json.contains("\"cache_control\"")
}
