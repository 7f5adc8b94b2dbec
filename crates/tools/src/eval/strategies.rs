//! What every re-implemented strategy shares: the window and the sizes scaled to it, the
//! view a strategy keeps (messages with their token counts), summaries written by ctxd's
//! extractive summarizer, and the two strategies that summarize the whole history
//! (OpenCode / BaseAgent and Codex). Pure: recorded messages in, requests out.
use ctxd_core::message::{Message, Role};
use ctxd_core::policy::{Effective, Policy, PolicyOverrides};
use ctxd_core::summarize::{Extractive, Input, Level, Summarizer, fit};
use ctxd_core::tokenize::{Counter, REPLY_PRIMING, TextCounts, ToolDefinition};

/// One strategy's window: the room for the prompt and the anchors' absolute sizes
/// scaled to it by the caps ctxd's policy applies to the same sizes
/// ([`Policy::effective`]), so that every strategy, ctxd's included, works with the same
/// numbers.
#[derive(Debug, Clone)]
pub struct Setup {
    pub window: i64,
    /// Window minus the output reserve (a quarter of the window, the 4:1 rule).
    pub room: i64,
    pub counter: Counter,
    pub effective: Effective,
    /// Tokens of the system prompt, the tool definitions and the reply priming.
    pub fixed_tokens: i64,
}

impl Setup {
    pub fn new(window: i64, system: &str, tools: &[ToolDefinition]) -> Result<Setup, String> {
        let overrides = PolicyOverrides {
            context_window_tokens: Some(window),
            ..Default::default()
        };
        let policy = Policy::resolve(&Policy::default(), overrides)
            .map_err(|error| format!("window {window}: {error}"))?;
        let counter = policy.counter();
        let memo = TextCounts::new(0);
        Ok(Setup {
            window,
            room: policy.available_tokens(),
            counter,
            effective: policy.effective(),
            fixed_tokens: counter.system_prompt(system, &memo)
                + counter.tool_definitions(tools, &memo)
                + REPLY_PRIMING,
        })
    }

    /// `fraction` of the prompt room, in tokens: the anchors' percentages are of the
    /// input a model accepts (window minus output reserve).
    pub fn fraction(&self, fraction: f64) -> i64 {
        (fraction * self.room as f64).floor() as i64
    }

    /// A size the anchors give for a 200 000-token window, capped at a quarter of the
    /// prompt room, as ctxd caps its fresh tail and protected tool output (ctxd's own
    /// eviction size is capped lower, at a twenty-fourth; docs/benchmarks.md reports
    /// deepagents measured with that cap too).
    pub fn quarter_capped(&self, size: i64) -> i64 {
        size.min(self.room / 4).max(1)
    }
}

/// One request a strategy sends: its system prompt and message array, and the tokens a
/// model summarizer would have read to write the summaries made for it.
#[derive(Debug, Clone)]
pub struct Build {
    pub system: String,
    pub messages: Vec<Message>,
    pub summarizer_input: i64,
}

/// A compaction strategy, driven step by step: before each assistant message of a
/// recorded session it gets the history so far and returns the request it would send.
pub trait Strategy: Send {
    fn build(&mut self, history: &[Message]) -> Build;
}

/// A message of a strategy's view with its token count (framing included).
#[derive(Debug, Clone)]
pub struct Item {
    pub message: Message,
    pub tokens: i64,
    /// Some(depth) for a summary (0: of messages; n: of depth n-1 summaries).
    pub depth: Option<u32>,
    /// A tool result already replaced by a placeholder.
    pub cleared: bool,
}

/// The messages a strategy keeps and sends, fed from the recorded history.
pub struct View {
    pub setup: Setup,
    pub system: String,
    pub items: Vec<Item>,
    /// Recorded messages taken into the view so far.
    seen: usize,
}

impl View {
    pub fn new(setup: Setup, system: &str) -> View {
        View {
            setup,
            system: system.to_string(),
            items: Vec::new(),
            seen: 0,
        }
    }

    pub fn item(&self, message: Message) -> Item {
        Item {
            tokens: self.setup.counter.message(&message),
            message,
            depth: None,
            cleared: false,
        }
    }

    /// The recorded messages not yet in the view, in order.
    pub fn take_new<'a>(&mut self, history: &'a [Message]) -> &'a [Message] {
        let start = self.seen.min(history.len());
        self.seen = history.len();
        &history[start..]
    }

    /// Appends the recorded messages not yet in the view.
    pub fn append(&mut self, history: &[Message]) {
        for message in self.take_new(history) {
            let item = self.item(message.clone());
            self.items.push(item);
        }
    }

    pub fn tokens(&self) -> i64 {
        self.setup.fixed_tokens + tokens(&self.items)
    }

    /// `items` summarized to `target` tokens: earlier summaries are carried as the
    /// summarizer's earlier parts, messages are extracted. Returns the summary's text and
    /// the tokens a model summarizer would read (every item's tokens).
    pub fn summarize(&self, items: &[Item], target: i64) -> (String, i64) {
        let summaries: Vec<String> = items
            .iter()
            .filter(|item| item.depth.is_some())
            .map(|item| item.message.content.clone())
            .collect();
        let messages: Vec<Message> = items
            .iter()
            .filter(|item| item.depth.is_none())
            .map(|item| item.message.clone())
            .collect();
        let input = Input {
            messages: &messages,
            summaries: &summaries,
            previous: summaries.last().map(String::as_str),
            first_seq: 1,
            last_seq: items.len() as i64,
            target_tokens: target,
        };
        let text = Extractive.summarize(&input, Level::Normal, &self.setup.counter);
        (text, tokens(items))
    }

    /// A summary as a user message of the view.
    pub fn summary_item(&self, text: String, depth: u32) -> Item {
        Item {
            depth: Some(depth),
            ..self.item(Message::text(Role::User, text))
        }
    }

    pub fn request(&self, items: &[Item], summarizer_input: i64) -> Build {
        Build {
            system: self.system.clone(),
            messages: items.iter().map(|item| item.message.clone()).collect(),
            summarizer_input,
        }
    }
}

pub fn tokens(items: &[Item]) -> i64 {
    items.iter().map(|item| item.tokens).sum()
}

/// `item` with its content replaced by `placeholder`, recounted.
pub fn cleared(view: &View, item: &Item, placeholder: &str) -> Item {
    let mut message = item.message.clone();
    message.content = placeholder.to_string();
    Item {
        cleared: true,
        ..view.item(message)
    }
}

/// The first index at or after `index` where a cut keeps every tool call with its
/// results: not a tool result.
pub fn step_boundary(items: &[Item], mut index: usize) -> usize {
    while index < items.len() && items[index].message.role == Role::Tool {
        index += 1;
    }
    index
}

/// Tokens of a message's framing, role included, with room to spare.
const MESSAGE_FRAMING: i64 = 8;

/// OpenCode / BaseAgent: tool output older than the newest protected amount is pruned to
/// a placeholder when that saves at least the minimum; past 85 % of the prompt room the
/// whole history becomes one summary.
pub struct OpenCode {
    view: View,
}

/// The placeholder OpenCode shows for a pruned tool output.
pub const OPENCODE_PRUNED: &str = "[Old tool result content cleared]";

impl OpenCode {
    pub fn new(setup: Setup, system: &str) -> OpenCode {
        OpenCode {
            view: View::new(setup, system),
        }
    }

    /// Prunes tool outputs beyond the newest `protect` tokens of them (walking back to
    /// the first one already pruned) when they add up to at least `minimum`.
    fn prune(&mut self) {
        let protect = self.view.setup.effective.tool_output_protect_tokens;
        let minimum = self.view.setup.effective.clear_min_savings_tokens;
        let (mut total, mut pruned, mut chosen) = (0, 0, Vec::new());
        for (index, item) in self.view.items.iter().enumerate().rev() {
            if item.message.role != Role::Tool {
                continue;
            }
            if item.cleared {
                break;
            }
            total += item.tokens;
            if total > protect {
                pruned += item.tokens;
                chosen.push(index);
            }
        }
        if pruned < minimum {
            return;
        }
        for index in chosen {
            self.view.items[index] = cleared(&self.view, &self.view.items[index], OPENCODE_PRUNED);
        }
    }
}

impl Strategy for OpenCode {
    fn build(&mut self, history: &[Message]) -> Build {
        self.view.append(history);
        self.prune();
        let mut read = 0;
        if self.view.tokens() > self.view.setup.fraction(0.85) {
            let target = self.view.setup.effective.condensed_target_tokens;
            let (text, input) = self.view.summarize(&self.view.items, target);
            read = input;
            self.view.items = vec![self.view.summary_item(text, 0)];
        }
        self.view.request(&self.view.items, read)
    }
}

/// Codex: past 90 % of the prompt room the history becomes one summary, after the most
/// recent user messages (up to Codex's 20 000 tokens of them, capped for the window).
pub struct Codex {
    view: View,
}

impl Codex {
    pub fn new(setup: Setup, system: &str) -> Codex {
        Codex {
            view: View::new(setup, system),
        }
    }
}

impl Strategy for Codex {
    fn build(&mut self, history: &[Message]) -> Build {
        self.view.append(history);
        let mut read = 0;
        if self.view.tokens() > self.view.setup.fraction(0.90) {
            let target = self.view.setup.effective.condensed_target_tokens;
            let (text, input) = self.view.summarize(&self.view.items, target);
            read = input;
            let mut room = self.view.setup.quarter_capped(20_000);
            let mut kept = Vec::new();
            for message in history.iter().rev().filter(|m| m.role == Role::User) {
                let item = self.view.item(message.clone());
                if item.tokens > room {
                    // Codex keeps the part of a message that fits.
                    if room > MESSAGE_FRAMING {
                        let counter = &self.view.setup.counter;
                        let text = fit(message.content.clone(), room - MESSAGE_FRAMING, counter);
                        kept.push(self.view.item(Message::text(Role::User, text)));
                    }
                    break;
                }
                room -= item.tokens;
                kept.push(item);
            }
            kept.reverse();
            kept.push(self.view.summary_item(text, 0));
            self.view.items = kept;
        }
        self.view.request(&self.view.items, read)
    }
}
