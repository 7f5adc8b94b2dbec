//! Expand: original messages by seq range, list or summary, within a token cap.
use super::{Engine, ExpandRequest, ExpandTarget, Expanded, MAX_EXPAND_SEQS};
use crate::error::{Error, Result, quoted};
use crate::message::StoredMessage;

impl Engine {
    /// Original messages by seq, byte-exact, within an optional token cap.
    pub async fn expand(&self, tenant_id: i64, request: ExpandRequest) -> Result<Expanded> {
        if request.max_tokens < 0 {
            return Err(Error::invalid(
                "max_tokens",
                format!("must be 0 (no cap) or positive, got {}", request.max_tokens),
            ));
        }
        let row = self.session_row(tenant_id, &request.session_id).await?;
        let target = match request.target {
            ExpandTarget::Summary(id) => {
                let summary = self.store.summary(&row, id).await?.ok_or_else(|| {
                    Error::not_found(format!(
                        "summary {id} of session {}",
                        quoted(&request.session_id)
                    ))
                })?;
                ExpandTarget::Range {
                    first_seq: summary.first_seq,
                    last_seq: summary.last_seq,
                }
            }
            target => target,
        };
        let request = ExpandRequest { target, ..request };
        let wanted = validate_expand_target(&request.target)?;
        let last_seq = row.message_count;
        match &request.target {
            ExpandTarget::Range { last_seq: end, .. } if *end > last_seq => {
                return Err(Error::invalid(
                    "range.last_seq",
                    format!("{end} is past the session's last seq ({last_seq})"),
                ));
            }
            ExpandTarget::List(_) => {
                if let Some(past) = wanted.iter().find(|&&seq| seq > last_seq) {
                    return Err(Error::invalid(
                        "list.seqs",
                        format!("{past} is past the session's last seq ({last_seq})"),
                    ));
                }
            }
            ExpandTarget::Range { .. } | ExpandTarget::Summary(_) => {}
        }
        let (messages, requested_after) = match request.target {
            ExpandTarget::Range {
                first_seq,
                last_seq,
            } => {
                let messages = self
                    .store
                    .messages_in_range(&row, first_seq, last_seq, request.max_tokens)
                    .await?;
                let next = messages.last().map_or(first_seq, |m| m.seq + 1);
                (messages, (next <= last_seq).then_some(next))
            }
            ExpandTarget::List(_) | ExpandTarget::Summary(_) => {
                let mut messages = self.store.messages_by_seq(&row, &wanted).await?;
                let kept = within_cap(&messages, request.max_tokens);
                let next = messages.get(kept).map(|m| m.seq);
                messages.truncate(kept);
                (messages, next)
            }
        };
        Ok(Expanded {
            total_tokens: messages.iter().map(|m| m.token_count).sum(),
            messages,
            next_seq: requested_after.unwrap_or(0),
        })
    }
}

/// Checks an Expand target and returns its seqs when it is a list (sorted, deduplicated).
fn validate_expand_target(target: &ExpandTarget) -> Result<Vec<i64>> {
    match target {
        ExpandTarget::Range {
            first_seq,
            last_seq,
        } => {
            if *first_seq < 1 {
                return Err(Error::invalid(
                    "range.first_seq",
                    format!("must be at least 1, got {first_seq}"),
                ));
            }
            if last_seq < first_seq {
                return Err(Error::invalid(
                    "range.last_seq",
                    format!("must be at least first_seq ({first_seq}), got {last_seq}"),
                ));
            }
            Ok(Vec::new())
        }
        ExpandTarget::List(seqs) => {
            if seqs.is_empty() {
                return Err(Error::invalid("list.seqs", "must name at least one seq"));
            }
            if seqs.len() > MAX_EXPAND_SEQS {
                return Err(Error::invalid(
                    "list.seqs",
                    format!(
                        "may name at most {MAX_EXPAND_SEQS} seqs, got {}",
                        seqs.len()
                    ),
                ));
            }
            if let Some(bad) = seqs.iter().find(|&&seq| seq < 1) {
                return Err(Error::invalid(
                    "list.seqs",
                    format!("seqs start at 1, got {bad}"),
                ));
            }
            let mut sorted = seqs.clone();
            sorted.sort_unstable();
            sorted.dedup();
            Ok(sorted)
        }
        // Resolved to its range before validation.
        ExpandTarget::Summary(_) => Ok(Vec::new()),
    }
}

/// How many of `messages`, in order, fit in `max_tokens` (0: all); at least one.
fn within_cap(messages: &[StoredMessage], max_tokens: i64) -> usize {
    if max_tokens == 0 {
        return messages.len();
    }
    let mut total = 0;
    let fitting = messages
        .iter()
        .take_while(|m| {
            total += m.token_count;
            total <= max_tokens
        })
        .count();
    fitting.max(1).min(messages.len())
}
