//! The conversation's messages as the engine sees them: plain data, no transport or
//! storage types.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Who wrote a message. The numbers match the proto's `Role` and the `messages.role`
/// column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    System = 1,
    User = 2,
    Assistant = 3,
    Tool = 4,
}

impl Role {
    pub fn from_i32(value: i32) -> Option<Role> {
        match value {
            1 => Some(Role::System),
            2 => Some(Role::User),
            3 => Some(Role::Assistant),
            4 => Some(Role::Tool),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// How a stored message is rendered in the model's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewState {
    Full = 1,
    Cleared = 2,
    Evicted = 3,
    /// Covered by a summary of the older steps of its turn; not in the view.
    Summarized = 4,
}

impl ViewState {
    pub fn from_i16(value: i16) -> ViewState {
        match value {
            2 => ViewState::Cleared,
            3 => ViewState::Evicted,
            4 => ViewState::Summarized,
            _ => ViewState::Full,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    Media {
        uri: String,
        mime_type: String,
        /// 0: the policy's flat per-item cost.
        token_estimate: u32,
    },
    /// A provider's own block or item that ctxd does not model (a hosted tool's call and
    /// result, a document), kept whole: counted, stored, expandable, sent back as it
    /// came to its own format and as a short note to any other.
    Native {
        /// The format it came in (`ingest::NATIVE_ANTHROPIC`, ...).
        format: String,
        /// The block or item, as JSON.
        json: String,
    },
}

impl Part {
    /// The JSON `type` of a native part, for notes ("web_search_tool_result").
    pub fn native_type(json: &str) -> String {
        serde_json::from_str::<serde_json::Value>(json)
            .ok()
            .and_then(|value| value.get("type")?.as_str().map(str::to_string))
            .unwrap_or_else(|| "unknown".to_string())
    }
}

/// A message's content and identity, as appended by a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: String,
    pub parts: Vec<Part>,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: String,
    pub name: String,
    pub metadata: BTreeMap<String, String>,
    pub pinned: bool,
}

impl Message {
    /// A message with only a role and text, the common case in tests and tools.
    pub fn text(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            parts: Vec::new(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: String::new(),
            name: String::new(),
            metadata: BTreeMap::new(),
            pinned: false,
        }
    }

    /// Bytes of text the message carries, for size limits.
    pub fn content_bytes(&self) -> usize {
        let parts: usize = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Text { text } => text.len(),
                Part::Media { uri, .. } => uri.len(),
                Part::Native { json, .. } => json.len(),
            })
            .sum();
        self.content.len() + parts
    }

    /// Bytes of everything the tokenizer reads of the message: content and parts,
    /// reasoning, tool calls, the tool-call id and the name.
    pub fn counted_bytes(&self) -> usize {
        let calls: usize = self
            .tool_calls
            .iter()
            .map(|call| call.id.len() + call.name.len() + call.arguments.len())
            .sum();
        self.content_bytes()
            + self.reasoning.len()
            + calls
            + self.tool_call_id.len()
            + self.name.len()
    }

    pub fn has_content(&self) -> bool {
        !self.content.is_empty() || !self.parts.is_empty()
    }
}

/// A message of the log with what the store knows about it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    pub seq: i64,
    pub turn: i64,
    pub token_count: i64,
    /// Tokens as rendered in the view (equal to token_count when full).
    pub view_tokens: i64,
    pub view_state: ViewState,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub message: Message,
}

/// Token usage the provider reported for one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cached_input_tokens: i64,
}
