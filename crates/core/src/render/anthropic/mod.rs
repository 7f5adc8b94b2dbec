//! Anthropic Messages: `{"system", "messages", "tools", "max_tokens"}`.
//!
//! Reasoning goes back as a `thinking` block (first in its assistant message) only when
//! the message carries the block's signature (`ctxd.anthropic.thinking_signature`, kept
//! by AppendNative): Anthropic refuses a thinking block it cannot verify, so reasoning
//! without one (another provider's, or appended as plain text) is not sent. Redacted
//! thinking kept the same way follows it.
use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

mod cache;

pub use cache::{MAX_BREAKPOINTS, Stable};

use super::{Object, is_image, media_note, native_note, serialize};
use crate::ingest::{
    ANTHROPIC_CACHE_MARK, ANTHROPIC_INLINE_SYSTEM, ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE, NATIVE_ANTHROPIC, TOOL_ERROR,
};
use crate::media::{self, Source};
use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;
use cache::Breakpoints;

#[derive(Serialize)]
struct AnthropicBody<'a> {
    #[serde(skip_serializing_if = "System::is_empty")]
    system: System,
    messages: Vec<AnthropicMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<AnthropicTool<'a>>,
    max_tokens: i64,
}

/// The system field: its text, or text blocks when the prompt cache is marked in it.
#[derive(Serialize)]
#[serde(untagged)]
enum System {
    Text(String),
    Blocks(Vec<SystemBlock>),
}

impl System {
    fn is_empty(&self) -> bool {
        matches!(self, System::Text(text) if text.is_empty())
    }
}

#[derive(Serialize)]
struct SystemBlock {
    r#type: &'static str,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

/// Anthropic's prompt-cache breakpoint.
#[derive(Serialize, Clone, Copy)]
struct Ephemeral {
    r#type: &'static str,
}

const EPHEMERAL: Ephemeral = Ephemeral {
    r#type: "ephemeral",
};

#[derive(Serialize)]
struct AnthropicMessage<'a> {
    role: &'static str,
    content: Vec<Item<'a>>,
}

/// A block, and whether a prompt-cache breakpoint is on it.
struct Item<'a> {
    block: Block<'a>,
    cached: bool,
}

impl Serialize for Item<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Marked<'b, 'a> {
            #[serde(flatten)]
            block: &'b Block<'a>,
            cache_control: Ephemeral,
        }
        match self.cached {
            false => self.block.serialize(serializer),
            true => Marked {
                block: &self.block,
                cache_control: EPHEMERAL,
            }
            .serialize(serializer),
        }
    }
}

impl Block<'_> {
    /// Whether Anthropic takes a breakpoint on the block (not on thinking blocks; a
    /// block kept whole keeps what it came with).
    fn cacheable(&self) -> bool {
        matches!(
            self,
            Block::Text { .. }
                | Block::Image { .. }
                | Block::ToolUse { .. }
                | Block::ToolResult { .. }
        )
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: String,
    },
    Text {
        text: Cow<'a, str>,
    },
    Image {
        source: ImageSource<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Object<'a>,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// A block ctxd keeps whole (`Part::Native`), as it came.
    #[serde(untagged)]
    Native(&'a RawValue),
    /// One made again without its `cache_control`.
    #[serde(untagged)]
    Owned(Box<RawValue>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ImageSource<'a> {
    Url { url: &'a str },
    Base64 { media_type: &'a str, data: &'a str },
}

/// Where Anthropic finds an image: inline for a base64 `data:` URI (Anthropic fetches
/// only http(s) URLs), else the URL; `None` for a `data:` URI it cannot take.
/// The media types Anthropic takes as a base64 image; another (an SVG, say) would fail
/// the whole request, so it stays a note.
const BASE64_IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn image_source<'a>(uri: &'a str, mime_type: &'a str) -> Option<ImageSource<'a>> {
    match media::source(uri, mime_type) {
        Source::Base64 { media_type, data } if BASE64_IMAGE_TYPES.contains(&media_type) => {
            Some(ImageSource::Base64 { media_type, data })
        }
        Source::Base64 { .. } => None,
        Source::Reference(url) => Some(ImageSource::Url { url }),
        Source::Unsupported => None,
    }
}

#[derive(Serialize)]
struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Object<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

/// An Anthropic Messages body: `{"system", "messages", "tools", "max_tokens"}`, with
/// tool calls as `tool_use` blocks, results as `tool_result` blocks in user turns, and
/// consecutive same-role messages merged. Stored system messages join the system field.
pub fn anthropic_messages<'a>(
    system_prompt: &str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_tokens: i64,
) -> String {
    let messages: Vec<&Message> = messages.into_iter().collect();
    let (system, out) = assemble(system_prompt, &messages, None);
    serialize(&AnthropicBody {
        system: System::Text(system),
        messages: out,
        tools: anthropic_tools(tools, false),
        max_tokens,
    })
}

/// The same body with Anthropic's prompt cache marked where the prefix is stable, at
/// most [`MAX_BREAKPOINTS`]: the newest turn's last block (the next request extends
/// it), the end of the tools and the client's system prompt, the end of the summaries'
/// block (stable until the next compaction), then the client's own marks
/// ([`ANTHROPIC_CACHE_MARK`]), newest first, while any are left; a block kept whole
/// with its own `cache_control` takes one too.
pub fn anthropic_messages_cached<'a>(
    system_prompt: &str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_tokens: i64,
    stable: Stable,
) -> String {
    let messages: Vec<&Message> = messages.into_iter().collect();
    let plan = Breakpoints::plan(system_prompt, &messages, tools, stable);
    let (system, mut out) = assemble(system_prompt, &messages, Some(&plan));
    if plan.newest {
        mark_last(
            out.last_mut()
                .map_or(&mut [][..], |m| m.content.as_mut_slice()),
        );
    }
    let system = match (plan.system, system.is_empty()) {
        (false, _) | (_, true) => System::Text(system),
        (true, false) => {
            let split = stable.block_in_system.filter(|_| plan.system_split);
            System::Blocks(system_blocks(system, split))
        }
    };
    serialize(&AnthropicBody {
        system,
        messages: out,
        tools: anthropic_tools(tools, plan.tools),
        max_tokens,
    })
}

/// The system prompt as text blocks, each marked: the client's, then the summaries'
/// block when it is in it.
fn system_blocks(system: String, block_at: Option<usize>) -> Vec<SystemBlock> {
    let block = |text: String| SystemBlock {
        r#type: "text",
        text,
        cache_control: Some(EPHEMERAL),
    };
    match block_at {
        Some(at) if at > 0 && at < system.len() && system.is_char_boundary(at) => {
            let (client, summaries) = system.split_at(at);
            vec![
                block(client.trim_end().to_string()),
                block(summaries.to_string()),
            ]
        }
        _ => vec![block(system)],
    }
}

/// Takes the `cache_control` off the blocks kept whole that carry one, but the last
/// `kept` of them.
fn unmark_native(blocks: &mut [Block<'_>], kept: usize) {
    let mut seen = 0;
    for block in blocks.iter_mut().rev() {
        if let Block::Native(raw) = block
            && cache::has_mark(raw.get())
        {
            seen += 1;
            if seen > kept {
                *block = Block::Owned(without_mark(raw));
            }
        }
    }
}

/// A block kept whole, without its `cache_control`.
fn without_mark(raw: &RawValue) -> Box<RawValue> {
    let mut value: serde_json::Value = serde_json::from_str(raw.get()).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("cache_control");
    }
    RawValue::from_string(value.to_string()).unwrap_or_else(|_| raw.to_owned())
}

/// Marks the last block of `items` Anthropic takes a breakpoint on.
fn mark_last(items: &mut [Item<'_>]) {
    if let Some(item) = items.iter_mut().rev().find(|item| item.block.cacheable()) {
        item.cached = true;
    }
}

fn anthropic_tools(tools: &[ToolDefinition], mark_last: bool) -> Vec<AnthropicTool<'_>> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| AnthropicTool {
            name: &tool.name,
            description: &tool.description,
            input_schema: Object::schema(&tool.parameters_json_schema),
            cache_control: (mark_last && index == last).then_some(EPHEMERAL),
        })
        .collect()
}

/// The system text and the messages; with a plan, the last block of each message it
/// marks carrying a breakpoint, and blocks kept whole with a `cache_control` the plan
/// leaves out going without it.
fn assemble<'a>(
    system_prompt: &str,
    messages: &[&'a Message],
    plan: Option<&Breakpoints>,
) -> (String, Vec<AnthropicMessage<'a>>) {
    let mut system = system_prompt.to_string();
    let mut out: Vec<AnthropicMessage<'a>> = Vec::new();
    for (index, message) in messages.iter().copied().enumerate() {
        let Some((role, mut blocks)) = blocks_of(message, &mut system) else {
            continue;
        };
        if let Some(plan) = plan {
            unmark_native(&mut blocks, plan.native_kept[index]);
        }
        // Anthropic rejects a message without content (only empty text parts).
        if blocks.is_empty() {
            continue;
        }
        let mut items: Vec<Item<'a>> = blocks
            .into_iter()
            .map(|block| Item {
                block,
                cached: false,
            })
            .collect();
        if plan.is_some_and(|plan| plan.messages.contains(&index)) {
            mark_last(&mut items);
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(items),
            _ => out.push(AnthropicMessage {
                role,
                content: items,
            }),
        }
    }
    // Tool results come first in their user message (a user message between a call and
    // its result merges ahead of it otherwise), as Anthropic requires.
    for message in &mut out {
        message
            .content
            .sort_by_key(|item| !matches!(item.block, Block::ToolResult { .. }));
    }
    (system, out)
}

/// A message's role and blocks; `None` for a stored system message, whose text joins
/// `system`.
fn blocks_of<'a>(
    message: &'a Message,
    system: &mut String,
) -> Option<(&'static str, Vec<Block<'a>>)> {
    Some(match message.role {
        Role::System if message.metadata.contains_key(ANTHROPIC_INLINE_SYSTEM) => {
            ("system", anthropic_content(message))
        }
        Role::System => {
            for block in anthropic_content(message) {
                if let Block::Text { text } = block {
                    if !system.is_empty() {
                        system.push_str("\n\n");
                    }
                    system.push_str(&text);
                }
            }
            return None;
        }
        Role::User => ("user", anthropic_content(message)),
        Role::Tool => (
            "user",
            vec![Block::ToolResult {
                tool_use_id: &message.tool_call_id,
                content: anthropic_content(message),
                is_error: message
                    .metadata
                    .get(TOOL_ERROR)
                    .is_some_and(|flag| flag == "true"),
            }],
        ),
        Role::Assistant => {
            let mut blocks = thinking(message);
            blocks.extend(anthropic_content(message));
            blocks.extend(message.tool_calls.iter().map(|call| Block::ToolUse {
                id: &call.id,
                name: &call.name,
                input: Object::parse(&call.arguments),
            }));
            ("assistant", blocks)
        }
    })
}

/// The signed thinking block and the redacted ones an assistant message came with.
fn thinking(message: &Message) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    if let Some(signature) = message.metadata.get(ANTHROPIC_THINKING_SIGNATURE)
        && !signature.is_empty()
    {
        blocks.push(Block::Thinking {
            thinking: &message.reasoning,
            signature,
        });
    }
    if let Some(redacted) = message.metadata.get(ANTHROPIC_REDACTED_THINKING) {
        let data: Vec<String> = serde_json::from_str(redacted).unwrap_or_default();
        blocks.extend(
            data.into_iter()
                .map(|data| Block::RedactedThinking { data }),
        );
    }
    blocks
}

/// Text and media blocks; Anthropic rejects empty text blocks, so none are made.
fn anthropic_content(message: &Message) -> Vec<Block<'_>> {
    let mut blocks = Vec::with_capacity(message.parts.len() + 1);
    if !message.content.is_empty() {
        blocks.push(Block::Text {
            text: Cow::Borrowed(&message.content),
        });
    }
    for part in &message.parts {
        match part {
            Part::Text { text } if !text.is_empty() => blocks.push(Block::Text {
                text: Cow::Borrowed(text),
            }),
            Part::Text { .. } => {}
            Part::Media { uri, mime_type, .. }
                if is_image(mime_type) && message.role != Role::System =>
            {
                blocks.push(match image_source(uri, mime_type) {
                    Some(source) => Block::Image { source },
                    None => Block::Text {
                        text: Cow::Owned(media_note(uri, mime_type)),
                    },
                });
            }
            Part::Media { uri, mime_type, .. } => blocks.push(Block::Text {
                text: Cow::Owned(media_note(uri, mime_type)),
            }),
            Part::Native { format, json } => blocks.push(native(format, json)),
        }
    }
    blocks
}

/// A native block back as it came when it is Anthropic's, else a note.
fn native<'a>(format: &str, json: &'a str) -> Block<'a> {
    match serde_json::from_str::<&RawValue>(json) {
        Ok(raw) if format == NATIVE_ANTHROPIC => Block::Native(raw),
        _ => Block::Text {
            text: Cow::Owned(native_note(format, json)),
        },
    }
}

#[cfg(test)]
mod tests;
