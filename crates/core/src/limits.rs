//! Size limits a server puts on what one client may send or store: messages per request
//! and bytes per session. Pure checks; the settings come from the server's configuration.
use crate::error::{Error, Result};
use crate::message::Message;

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most messages one AppendTurn (or CheckBudget's pending_messages) may carry.
    pub max_append_messages: usize,
    /// Most bytes of text a session's log may hold (`Message::counted_bytes` summed).
    pub max_session_bytes: i64,
}

pub const DEFAULT_MAX_APPEND_MESSAGES: usize = 1_000;
pub const DEFAULT_MAX_SESSION_BYTES: i64 = 64 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_append_messages: DEFAULT_MAX_APPEND_MESSAGES,
            max_session_bytes: DEFAULT_MAX_SESSION_BYTES,
        }
    }
}

impl Limits {
    /// A request's message list (`field` names it) against the per-request bound.
    pub fn check_message_count(&self, field: &str, count: usize) -> Result<()> {
        if count > self.max_append_messages {
            return Err(Error::invalid(
                field,
                format!(
                    "holds {count} messages, over this server's limit of {} per request \
                     (max_append_messages); send them in several appends",
                    self.max_append_messages
                ),
            ));
        }
        Ok(())
    }

    /// The session's size after an append of `messages` to a log of `current_bytes`:
    /// the new size, or RESOURCE_EXHAUSTED when it would pass the limit.
    pub fn session_bytes_after(&self, current_bytes: i64, messages: &[Message]) -> Result<i64> {
        let added = messages.iter().fold(0i64, |sum, message| {
            sum.saturating_add(i64::try_from(message.counted_bytes()).unwrap_or(i64::MAX))
        });
        let after = current_bytes.saturating_add(added);
        if after > self.max_session_bytes {
            return Err(Error::ResourceExhausted {
                limit: "max_session_bytes",
                message: format!(
                    "the session would hold {after} bytes of text, over this server's limit of \
                     {} bytes per session (max_session_bytes); start a new session",
                    self.max_session_bytes
                ),
                retry_after: None,
            });
        }
        Ok(after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;

    #[test]
    fn the_session_limit_is_inclusive_and_sums_never_wrap() {
        let limits = Limits {
            max_append_messages: 2,
            max_session_bytes: 10,
        };
        let message = Message::text(Role::User, "12345");
        assert_eq!(
            limits
                .session_bytes_after(5, std::slice::from_ref(&message))
                .unwrap(),
            10
        );
        let error = limits
            .session_bytes_after(6, std::slice::from_ref(&message))
            .unwrap_err();
        assert!(error.to_string().contains("max_session_bytes"), "{error}");
        assert!(limits.session_bytes_after(i64::MAX, &[message]).is_err());
        assert!(limits.check_message_count("messages", 2).is_ok());
        let error = limits.check_message_count("messages", 3).unwrap_err();
        assert!(error.to_string().contains("max_append_messages"), "{error}");
    }
}
