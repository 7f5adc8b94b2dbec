//! The summaries as a request carries them: one block, oldest first, after the system
//! prompt (or as the leading user message), and what that block costs at most.
use crate::tokenize::{Counter, MESSAGE_OVERHEAD};

/// Opens the block of summaries.
pub const BLOCK_HEADER: &str = "Earlier parts of this conversation, summarized:";

/// Tokens of framing counted for each summary of the block (the blank line before it,
/// and tokens merging differently across its edges).
pub const SUMMARY_FRAMING_TOKENS: i64 = 4;

/// The summaries as one text, oldest first; None without summaries.
pub fn block<'a>(summaries: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let parts: Vec<&str> = summaries.into_iter().collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!("{BLOCK_HEADER}\n\n{}", parts.join("\n\n")))
}

/// Tokens the block of summaries whose texts count `token_counts` adds to a request, at
/// least: each summary with its framing, and the block's header with the blank line
/// joining it to the system prompt, or the framing of a message of its own (the system
/// prompt it becomes when there is none, or the leading user message).
pub fn block_tokens(token_counts: impl IntoIterator<Item = i64>, counter: &Counter) -> i64 {
    let (framed, count) = framed_tokens(token_counts);
    if count == 0 {
        return 0;
    }
    let header = counter.text(&format!("\n\n{BLOCK_HEADER}\n\n"));
    framed.saturating_add(header.saturating_add(own_message_tokens(counter)))
}

/// Tokens of summaries whose texts count `token_counts`, each with its framing in the
/// block (without the block's header), and how many there are: what some summaries of a
/// block take of it.
pub fn framed_tokens(token_counts: impl IntoIterator<Item = i64>) -> (i64, usize) {
    token_counts
        .into_iter()
        .fold((0i64, 0usize), |(total, count), tokens| {
            (
                total.saturating_add(tokens.saturating_add(SUMMARY_FRAMING_TOKENS)),
                count + 1,
            )
        })
}

/// Tokens a text of `tokens` tokens adds when it follows the summaries' block in the same
/// block (`after_summaries`), or is the block alone: its framing, and alone also the
/// framing of a message of its own.
pub fn appended_block_tokens(tokens: i64, after_summaries: bool, counter: &Counter) -> i64 {
    let own = if after_summaries {
        0
    } else {
        own_message_tokens(counter)
    };
    tokens
        .saturating_add(SUMMARY_FRAMING_TOKENS)
        .saturating_add(own)
}

/// The framing of the block as a message of its own: the system prompt it becomes when
/// there is none, or the leading user message.
fn own_message_tokens(counter: &Counter) -> i64 {
    MESSAGE_OVERHEAD + counter.text("system").max(counter.text("user"))
}

#[cfg(test)]
mod tests;
