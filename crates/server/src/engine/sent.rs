//! The messages a build sends, decided whole: the view's messages as rendered, the
//! summaries' message placed among them, and, for a provider, nothing after the last
//! complete step.
use crate::message::{Message, StoredMessage};
use crate::store::View;
use crate::turns;

use super::Recipient;

/// The messages a build sends: messages of the session's view (shared with the
/// replica's cache, not copied), each as sent, and the summaries' message when it goes
/// among them.
#[derive(Debug, Clone)]
pub struct Sent {
    view: View,
    items: Vec<SentItem>,
}

#[derive(Debug, Clone)]
enum SentItem {
    /// An index into the view, with the message as rendered when it is not sent whole
    /// (a placeholder, a preview).
    Stored(usize, Option<Message>),
    /// The summaries (and the task ledger) as a synthetic user message.
    Block(Message),
}

impl Sent {
    /// Each message sent, with its stored row (`None` for the summaries' message).
    pub fn iter(&self) -> impl Iterator<Item = (Option<&StoredMessage>, &Message)> {
        self.items.iter().map(|item| match item {
            SentItem::Stored(index, rendered) => {
                let stored = &self.view[*index];
                (Some(stored), rendered.as_ref().unwrap_or(&stored.message))
            }
            SentItem::Block(message) => (None, message),
        })
    }

    /// Each message sent, as the provider gets it.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.iter().map(|(_, message)| message)
    }

    /// The seq of the last stored message sent; 0 when none.
    pub fn last_seq(&self) -> i64 {
        self.iter()
            .filter_map(|(stored, _)| stored)
            .last()
            .map_or(0, |stored| stored.seq)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Messages of the view chosen by a build, before their final assembly.
pub(super) struct Chosen {
    pub view: View,
    /// Indexes into `view`, in order, with the message as rendered when it is not sent
    /// whole.
    pub sent: Vec<(usize, Option<Message>)>,
}

impl Chosen {
    pub fn iter(&self) -> impl Iterator<Item = (&StoredMessage, &Message)> {
        self.sent.iter().map(|(index, rendered)| {
            let stored = &self.view[*index];
            (stored, rendered.as_ref().unwrap_or(&stored.message))
        })
    }

    pub fn first_seq(&self) -> i64 {
        self.iter().next().map_or(0, |(stored, _)| stored.seq)
    }

    /// The final list for `recipient`, with the summaries' message after `at` of the
    /// messages sent (0: it leads), and how many messages of an open step at the end it
    /// left out (a provider's only).
    pub fn assemble(self, block: Option<(usize, Message)>, recipient: Recipient) -> (Sent, i64) {
        let messages: Vec<&Message> = self.iter().map(|(_, message)| message).collect();
        let sendable = match (recipient, turns::open_step(&messages)) {
            (Recipient::Provider, Some(start)) => start,
            _ => messages.len(),
        };
        let open = (messages.len() - sendable) as i64;
        let mut items: Vec<SentItem> = self
            .sent
            .into_iter()
            .take(sendable)
            .map(|(index, rendered)| SentItem::Stored(index, rendered))
            .collect();
        if let Some((at, message)) = block {
            items.insert(at.min(sendable), SentItem::Block(message));
        }
        let sent = Sent {
            view: self.view,
            items,
        };
        (sent, open)
    }
}
