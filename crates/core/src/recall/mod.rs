//! Recall: two tools ctxd offers the model when a session's policy says so — search this
//! session's history, and expand what a search or a summary points at — and the answers
//! ctxd writes as their tool results. Compaction never loses anything for the model:
//! what it took out of the request, the model can ask back for.
//!
//! This module is pure: the definitions, the reading of a call's arguments, and the
//! rendering of an answer within its cap. The engine runs the search or the expand.
mod answer;
mod call;
mod round;

pub use answer::{Found, expand_answer, search_answer};
pub use call::{MAX_CAP, MAX_HITS, MIN_CAP, RecallCall, Target, parse};
pub use round::{Answered, MAX_ROUNDS, ROUND, Round, is_round, mark, not_run, round};

use crate::tokenize::ToolDefinition;

/// Every recall tool's name starts with this; a client's own tool may not while recall
/// is on, so the two can never be confused.
pub const PREFIX: &str = "ctxd_recall_";
pub const SEARCH: &str = "ctxd_recall_search";
pub const EXPAND: &str = "ctxd_recall_expand";
/// The metadata key ctxd sets on a recall answer ("search" or "expand"): the answer can
/// be made again from the log, so compaction clears it before anything else.
pub const ANSWER: &str = "ctxd.recall";

/// Whether `name` is one of ctxd's recall tools.
pub fn is_recall_tool(name: &str) -> bool {
    name == SEARCH || name == EXPAND
}

/// Whether a message is recall's own traffic — an answer, a reply of an endpoint's
/// round, or a model's message that only called recall tools — which a recall search
/// leaves out (it repeats what it found, and would crowd out the messages that hold it)
/// and an agent's history behind the endpoint never holds.
pub fn is_recall_traffic(message: &crate::message::Message) -> bool {
    message.metadata.contains_key(ANSWER)
        || message.metadata.contains_key(ROUND)
        || (!message.tool_calls.is_empty()
            && message.content.is_empty()
            && message
                .tool_calls
                .iter()
                .all(|call| is_recall_tool(&call.name)))
}

/// Hits a recall search asks Search for, per hit it answers: room for those
/// [`is_recall_traffic`] leaves out.
pub const SEARCH_OVERFETCH: u32 = 4;

/// The two definitions, as BuildMessages adds them to a request.
pub fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: SEARCH.into(),
            description: "Search this conversation's earlier history, including what no longer \
                appears above because it was summarized or cleared to save space. Use it when \
                you need an exact earlier detail (a command's output, a file's content, an \
                error message, a decision) that you no longer see. Returns matching snippets \
                with their seq numbers; read one whole with ctxd_recall_expand."
                .into(),
            parameters_json_schema: SEARCH_SCHEMA.into(),
        },
        ToolDefinition {
            name: EXPAND.into(),
            description: "Read earlier messages of this conversation exactly as they were: by \
                seq numbers (from ctxd_recall_search or a cleared result's note), a seq range, \
                or the id of a summary (the messages it condensed). Long answers stop at \
                max_tokens and say where to continue (first_seq and offset)."
                .into(),
            parameters_json_schema: EXPAND_SCHEMA.into(),
        },
    ]
}

const SEARCH_SCHEMA: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"Words to look for, as in a web search."},"role":{"type":"string","enum":["user","assistant","tool"],"description":"Only messages of this role."},"since":{"type":"string","description":"Only messages written at or after this RFC 3339 time."},"until":{"type":"string","description":"Only messages written before this RFC 3339 time."},"limit":{"type":"integer","minimum":1,"maximum":10,"description":"How many matches (default 5)."}},"required":["query"]}"#;

const EXPAND_SCHEMA: &str = r#"{"type":"object","properties":{"seqs":{"type":"array","items":{"type":"integer"},"maxItems":50,"description":"The messages' seq numbers."},"first_seq":{"type":"integer","description":"The first seq of a range."},"last_seq":{"type":"integer","description":"The last seq of a range (inclusive)."},"summary_id":{"type":"integer","description":"A summary's id: the messages it condensed."},"max_tokens":{"type":"integer","minimum":100,"maximum":4000,"description":"The answer's size cap (default 1500)."},"offset":{"type":"integer","minimum":0,"description":"Where to go on inside the first message, as an earlier answer that stopped there said."}}}"#;

#[cfg(test)]
mod tests;
