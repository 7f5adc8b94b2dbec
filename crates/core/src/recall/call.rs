//! A recall tool call's arguments, read and bounded. A bad argument is a sentence naming
//! it, which the engine writes as the call's (error) result: never an RPC error.
use serde_json::{Map, Value};

use crate::message::Role;

/// Most hits a search returns, and its default.
pub const MAX_HITS: u32 = 10;
const DEFAULT_HITS: u32 = 5;
/// An expand's size cap in tokens: bounds and default.
pub const MIN_CAP: i64 = 100;
pub const MAX_CAP: i64 = 4000;
const DEFAULT_CAP: i64 = 1500;
const MAX_SEQS: usize = 50;
/// Largest offset into a message (a message's text is bounded far below it).
const MAX_OFFSET: i64 = 1 << 30;
const MAX_QUERY_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq)]
pub enum RecallCall {
    Search {
        query: String,
        roles: Vec<Role>,
        since: Option<chrono::DateTime<chrono::Utc>>,
        until: Option<chrono::DateTime<chrono::Utc>>,
        limit: u32,
    },
    Expand {
        target: Target,
        max_tokens: i64,
        /// Bytes of the first message's text already read (from an answer that
        /// stopped inside it).
        offset: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Seqs(Vec<i64>),
    Range { first_seq: i64, last_seq: i64 },
    Summary(i64),
}

/// The call to tool `name` with `arguments` (a JSON text), or what is wrong with it.
pub fn parse(name: &str, arguments: &str) -> Result<RecallCall, String> {
    let value: Value = serde_json::from_str(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    })
    .map_err(|_| "the arguments are not a JSON object".to_string())?;
    let Value::Object(args) = value else {
        return Err("the arguments are not a JSON object".into());
    };
    match name {
        super::SEARCH => search(&args),
        super::EXPAND => expand(&args),
        _ => Err(format!(
            "{} is not a recall tool",
            crate::error::quoted(name)
        )),
    }
}

fn search(args: &Map<String, Value>) -> Result<RecallCall, String> {
    let query = match args.get("query") {
        Some(Value::String(query)) if !query.trim().is_empty() => query.trim(),
        _ => return Err("query: give the words to look for".into()),
    };
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(format!("query: at most {MAX_QUERY_CHARS} characters"));
    }
    let roles = match args.get("role") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(role)) => vec![match role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return Err("role: one of user, assistant, tool".into()),
        }],
        Some(_) => return Err("role: one of user, assistant, tool".into()),
    };
    let limit = match integer(args, "limit")? {
        None => DEFAULT_HITS,
        Some(limit) if (1..=i64::from(MAX_HITS)).contains(&limit) => limit as u32,
        Some(_) => return Err(format!("limit: between 1 and {MAX_HITS}")),
    };
    Ok(RecallCall::Search {
        query: query.to_string(),
        roles,
        since: time(args, "since")?,
        until: time(args, "until")?,
        limit,
    })
}

fn expand(args: &Map<String, Value>) -> Result<RecallCall, String> {
    let max_tokens = match integer(args, "max_tokens")? {
        None => DEFAULT_CAP,
        Some(cap) if (MIN_CAP..=MAX_CAP).contains(&cap) => cap,
        Some(_) => return Err(format!("max_tokens: between {MIN_CAP} and {MAX_CAP}")),
    };
    let seqs = match args.get("seqs") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_SEQS => Some(
            items
                .iter()
                .map(|item| item.as_i64().filter(|seq| *seq > 0))
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(|| "seqs: positive whole numbers".to_string())?,
        ),
        Some(_) => return Err(format!("seqs: a list of 1 to {MAX_SEQS} seq numbers")),
    };
    let range = (integer(args, "first_seq")?, integer(args, "last_seq")?);
    let summary = integer(args, "summary_id")?;
    let target = match (seqs, range, summary) {
        (Some(seqs), (None, None), None) => Target::Seqs(seqs),
        (None, (Some(first_seq), Some(last_seq)), None)
            if 0 < first_seq && first_seq <= last_seq =>
        {
            Target::Range {
                first_seq,
                last_seq,
            }
        }
        (None, (Some(_), Some(_)), None) => {
            return Err("first_seq, last_seq: 1 <= first_seq <= last_seq".into());
        }
        (None, (None, None), Some(id)) if id > 0 => Target::Summary(id),
        _ => {
            return Err("give one of: seqs, first_seq with last_seq, or summary_id".into());
        }
    };
    let offset = match integer(args, "offset")? {
        None => 0,
        Some(offset) if (0..=MAX_OFFSET).contains(&offset) => offset as usize,
        Some(_) => return Err(format!("offset: between 0 and {MAX_OFFSET}")),
    };
    Ok(RecallCall::Expand {
        target,
        max_tokens,
        offset,
    })
}

fn integer(args: &Map<String, Value>, field: &str) -> Result<Option<i64>, String> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("{field}: a whole number")),
    }
}

fn time(
    args: &Map<String, Value>,
    field: &str,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => chrono::DateTime::parse_from_rfc3339(text)
            .map(|time| Some(time.with_timezone(&chrono::Utc)))
            .map_err(|_| format!("{field}: an RFC 3339 time, like 2026-01-31T12:00:00Z")),
        Some(_) => Err(format!(
            "{field}: an RFC 3339 time, like 2026-01-31T12:00:00Z"
        )),
    }
}
