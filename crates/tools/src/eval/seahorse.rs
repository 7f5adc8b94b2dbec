//! PicoClaw's seahorse: past 75 % of the prompt room, the oldest messages outside a
//! fresh tail of 32 messages become leaf summaries, a chunk of at most 8 messages or
//! 20 000 tokens (capped for the window) each, of 1 200 tokens; when no such chunk is
//! left, the oldest 4 summaries of one depth become one of 2 000 tokens (both targets
//! capped for the window as ctxd caps its own). Repeated until the request is back
//! under 75 % or nothing more can be compacted. Summaries stay in place, in order.
use ctxd_core::message::{Message, Role};

use super::strategies::{Build, Setup, Strategy, View, step_boundary};

pub const FRESH_TAIL_MESSAGES: usize = 32;
pub const LEAF_CHUNK_MESSAGES: usize = 8;
pub const CONDENSE_FANIN: usize = 4;

pub struct Seahorse {
    view: View,
}

impl Seahorse {
    pub fn new(setup: Setup, system: &str) -> Seahorse {
        Seahorse {
            view: View::new(setup, system),
        }
    }

    /// The oldest run of raw messages before the fresh tail, as a chunk: at most 8
    /// messages or the chunk size in tokens (one message at least), ending after a whole
    /// tool step.
    fn leaf_chunk(&self) -> Option<(usize, usize)> {
        let items = &self.view.items;
        let mut tail = items.len().saturating_sub(FRESH_TAIL_MESSAGES);
        while tail > 0 && items[tail].message.role == Role::Tool {
            tail -= 1;
        }
        let start = items[..tail].iter().position(|item| item.depth.is_none())?;
        let limit = self.view.setup.quarter_capped(20_000);
        let (mut end, mut total) = (start, 0);
        while end < tail
            && items[end].depth.is_none()
            && end - start < LEAF_CHUNK_MESSAGES
            && (end == start || total + items[end].tokens <= limit)
        {
            total += items[end].tokens;
            end += 1;
        }
        // Never leave a call's results out of its chunk (the tail starts at no result).
        let end = step_boundary(items, end);
        (end > start).then_some((start, end))
    }

    /// The oldest run of [`CONDENSE_FANIN`] adjacent summaries of one depth.
    fn condensable(&self) -> Option<usize> {
        let items = &self.view.items;
        (0..items.len().saturating_sub(CONDENSE_FANIN - 1)).find(|&start| {
            let depth = items[start].depth;
            depth.is_some()
                && items[start..start + CONDENSE_FANIN]
                    .iter()
                    .all(|item| item.depth == depth)
        })
    }
}

impl Strategy for Seahorse {
    fn build(&mut self, history: &[Message]) -> Build {
        self.view.append(history);
        let mut read = 0;
        let threshold = self.view.setup.fraction(0.75);
        while self.view.tokens() > threshold {
            let effective = self.view.setup.effective;
            let (start, end, target, depth) = if let Some((start, end)) = self.leaf_chunk() {
                (start, end, effective.leaf_target_tokens, 0)
            } else if let Some(start) = self.condensable() {
                let depth = self.view.items[start].depth.unwrap_or(0) + 1;
                let end = start + CONDENSE_FANIN;
                (start, end, effective.condensed_target_tokens, depth)
            } else {
                break;
            };
            let (text, input) = self.view.summarize(&self.view.items[start..end], target);
            read += input;
            let summary = self.view.summary_item(text, depth);
            self.view.items.splice(start..end, std::iter::once(summary));
        }
        self.view.request(&self.view.items, read)
    }
}
