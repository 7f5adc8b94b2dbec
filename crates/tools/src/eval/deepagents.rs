//! deepagents / LangChain: a tool result over the eviction size is replaced at once by a
//! pointer to where it was saved and its first 10 lines; past 85 % of the prompt room
//! the history is summarized except its newest 10 % (not splitting a tool step); and
//! each request past 60 % has every tool result but the newest 3 cleared (LangChain's
//! ClearToolUsesEdit edits the request, not the stored history).
use ctxd_core::message::{Message, Role};

use super::strategies::{Build, Setup, Strategy, View, cleared, step_boundary, tokens};

/// The placeholder of ClearToolUsesEdit.
pub const CLEARED: &str = "[cleared]";

/// Opens deepagents' summary message.
pub const SUMMARY_PREFIX: &str = "Here is a summary of the conversation to date:\n\n";

pub struct DeepAgents {
    view: View,
}

impl DeepAgents {
    pub fn new(setup: Setup, system: &str) -> DeepAgents {
        DeepAgents {
            view: View::new(setup, system),
        }
    }

    fn evict(&self, message: &Message) -> Message {
        let limit = self.view.setup.quarter_capped(20_000);
        if message.role != Role::Tool || self.view.setup.counter.text(&message.content) <= limit {
            return message.clone();
        }
        let head: Vec<String> = message
            .content
            .lines()
            .take(10)
            .enumerate()
            .map(|(n, line)| {
                let line: String = line.chars().take(1_000).collect();
                format!("{:6}\t{line}", n + 1)
            })
            .collect();
        let id = &message.tool_call_id;
        Message {
            content: format!(
                "Tool result too large, the result of this tool call {id} was saved in the \
                 filesystem at this path: /large_tool_results/{id}\nYou can read the result \
                 from the filesystem by using the read_file tool, but make sure to only read \
                 part of the result at a time.\nHere are the first 10 lines of the result:\n{}",
                head.join("\n")
            ),
            ..message.clone()
        }
    }
}

impl Strategy for DeepAgents {
    fn build(&mut self, history: &[Message]) -> Build {
        for message in self.view.take_new(history) {
            let item = self.view.item(self.evict(message));
            self.view.items.push(item);
        }
        let mut read = 0;
        if self.view.tokens() > self.view.setup.fraction(0.85) {
            let keep = self.view.setup.fraction(0.10);
            let mut cut = self.view.items.len();
            let mut kept = 0;
            while cut > 0 && kept + self.view.items[cut - 1].tokens <= keep {
                cut -= 1;
                kept += self.view.items[cut].tokens;
            }
            let cut = step_boundary(&self.view.items, cut);
            if cut > 0 {
                let target = self.view.setup.effective.condensed_target_tokens;
                let (text, input) = self.view.summarize(&self.view.items[..cut], target);
                read = input;
                let summary = self.view.summary_item(format!("{SUMMARY_PREFIX}{text}"), 0);
                let rest = self.view.items.split_off(cut);
                self.view.items = std::iter::once(summary).chain(rest).collect();
            }
        }
        let mut request = self.view.items.clone();
        if self.view.setup.fixed_tokens + tokens(&request) > self.view.setup.fraction(0.60) {
            let results: Vec<usize> = (0..request.len())
                .filter(|&i| request[i].message.role == Role::Tool)
                .collect();
            for &index in &results[..results.len().saturating_sub(3)] {
                request[index] = cleared(&self.view, &request[index], CLEARED);
            }
        }
        self.view.request(&request, read)
    }
}
