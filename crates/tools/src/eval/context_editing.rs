//! Anthropic context editing (`clear_tool_uses_20250919`): the client sends its whole
//! history; past the trigger (100 000 tokens of a 200 000-token window, so half the
//! window) the API clears every tool result but the newest 3, and only when that clears
//! at least the minimum (`clear_at_least`, here ctxd's clearing minimum for the window).
//! Nothing is summarized. Each request is edited afresh from the whole history.
use ctxd_core::message::{Message, Role};

use super::strategies::{Build, Setup, Strategy, View, cleared};

/// The text a cleared tool result is replaced by.
pub const CLEARED: &str = "[Tool result cleared]";

pub struct ContextEditing {
    view: View,
}

impl ContextEditing {
    pub fn new(setup: Setup, system: &str) -> ContextEditing {
        ContextEditing {
            view: View::new(setup, system),
        }
    }
}

impl Strategy for ContextEditing {
    fn build(&mut self, history: &[Message]) -> Build {
        self.view.append(history);
        let mut request = self.view.items.clone();
        if self.view.tokens() > self.view.setup.window / 2 {
            let results: Vec<usize> = (0..request.len())
                .filter(|&i| request[i].message.role == Role::Tool)
                .collect();
            let older = &results[..results.len().saturating_sub(3)];
            let mut saved = 0;
            for &index in older {
                let placeholder = cleared(&self.view, &request[index], CLEARED);
                saved += request[index].tokens - placeholder.tokens;
                request[index] = placeholder;
            }
            if saved < self.view.setup.effective.clear_min_savings_tokens {
                request = self.view.items.clone();
            }
        }
        self.view.request(&request, 0)
    }
}
