//! Counting what a request carries: its system prompt and tools, its messages, and the
//! output reserve it asks for.
use super::{Engine, Tools};
use crate::error::{Error, Result};
use crate::message::Message;
use crate::policy::{MAX_TOKENS, Policy};
use crate::recall;
use crate::tokenize::{self, Counter, REPLY_PRIMING, TextCounts, ToolDefinition};
use crate::validate::validate_tools;

/// Texts above this size are tokenized on the blocking pool, not on the async runtime.
const INLINE_TOKENIZE_BYTES: usize = 32 * 1024;

impl Engine {
    /// The counter of `policy`, with its vocabulary built first (on the blocking pool)
    /// when this is the process's first use of it, so no request builds one on the async
    /// runtime and only the vocabularies sessions use take memory.
    pub(super) async fn counter(&self, policy: &Policy) -> Result<Counter> {
        let counter = policy.counter();
        if !tokenize::is_loaded(counter.tokenizer) {
            let tokenizer = counter.tokenizer;
            tokio::task::spawn_blocking(move || tokenize::load(tokenizer))
                .await
                .map_err(Error::internal)?;
        }
        Ok(counter)
    }

    /// Counts a request's system prompt and tools, from the remembered counts where it
    /// can. With `recall` (the policy's recall_tools) ctxd's recall tools follow the
    /// client's, which may then not use their names.
    pub(super) async fn count_request(
        &self,
        counter: Counter,
        system_prompt: &str,
        tools: Tools,
        recall: bool,
    ) -> Result<(i64, i64, Vec<ToolDefinition>)> {
        let (tool_tokens, definitions) = match tools {
            Tools::None => (0, Vec::new()),
            Tools::TokenCount(count) if !(0..=MAX_TOKENS).contains(&count) => {
                return Err(Error::invalid(
                    "tools.token_count",
                    format!("must be between 0 and {MAX_TOKENS}, got {count}"),
                ));
            }
            Tools::TokenCount(count) => (count, Vec::new()),
            Tools::Definitions(definitions) => {
                validate_tools(&definitions)?;
                (0, definitions)
            }
        };
        let definitions = if recall {
            with_recall_tools(definitions)?
        } else {
            definitions
        };
        // Remembered counts are looked up, the rest counted and remembered: inline for a
        // small request, on the blocking pool for a large one (a lookup hashes the
        // whole text).
        let bytes = system_prompt.len()
            + definitions
                .iter()
                .map(|tool| {
                    tool.name.len() + tool.description.len() + tool.parameters_json_schema.len()
                })
                .sum::<usize>();
        let count = move |prompt: &str, definitions: &[ToolDefinition], memo: &TextCounts| {
            (
                counter.system_prompt(prompt, memo) + REPLY_PRIMING,
                counter.tool_definitions(definitions, memo),
            )
        };
        let ((system, counted_tools), definitions) = if bytes > INLINE_TOKENIZE_BYTES {
            let prompt = system_prompt.to_string();
            let memo = self.request_texts.clone();
            tokio::task::spawn_blocking(move || (count(&prompt, &definitions, &memo), definitions))
                .await
                .map_err(Error::internal)?
        } else {
            (
                count(system_prompt, &definitions, &self.request_texts),
                definitions,
            )
        };
        Ok((system, tool_tokens + counted_tools, definitions))
    }
}

/// The client's tool definitions with ctxd's recall tools after them; a client tool
/// named like one (`ctxd_recall_…`) is refused, naming it.
fn with_recall_tools(mut definitions: Vec<ToolDefinition>) -> Result<Vec<ToolDefinition>> {
    if let Some(index) = definitions
        .iter()
        .position(|tool| tool.name.starts_with(recall::PREFIX))
    {
        return Err(Error::invalid(
            format!("tools.definitions.items[{index}].name"),
            format!(
                "names starting {} are ctxd's recall tools (the session's policy has recall_tools on)",
                recall::PREFIX
            ),
        ));
    }
    definitions.extend(recall::definitions());
    Ok(definitions)
}

pub(super) fn output_reserve(policy: &Policy, requested: Option<i64>) -> Result<i64> {
    let Some(reserve) = requested else {
        return Ok(policy.max_output_tokens);
    };
    if reserve <= 0 || reserve >= policy.limit_tokens() {
        return Err(Error::invalid(
            "max_output_tokens",
            format!(
                "must be positive and below the session's limit of {} tokens, got {reserve}",
                policy.limit_tokens()
            ),
        ));
    }
    Ok(reserve)
}

/// Counts each message; large batches go to the blocking pool.
pub(super) async fn count_messages(counter: Counter, messages: &[Message]) -> Result<Vec<i64>> {
    let bytes: usize = messages.iter().map(Message::counted_bytes).sum();
    if bytes <= INLINE_TOKENIZE_BYTES {
        return Ok(messages.iter().map(|m| counter.message(m)).collect());
    }
    let owned = messages.to_vec();
    tokio::task::spawn_blocking(move || owned.iter().map(|m| counter.message(m)).collect())
        .await
        .map_err(Error::internal)
}
