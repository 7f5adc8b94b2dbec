//! Changes to the view state of stored messages, the one way they are written (decision
//! 0019): a session's state of a message it inherits goes to its overlay
//! (`message_views`); a change to one of its own rows first copies the row's state to
//! the overlay of each session that reads the row (a fork, a fork of a fork, …) and has
//! none of its own, so no other session's view changes.
use super::SessionTx;
use super::StoreResult;
use crate::message::ViewState;

/// Rounds of locking the dependants before their set is known to be whole (each round
/// after the first finds only forks that committed while the previous one waited).
const DEPENDANT_ROUNDS: usize = 8;

impl SessionTx {
    /// Sets `state` and the view tokens of each `(seq, tokens)` for this session, under
    /// its row lock.
    pub async fn set_view_states(
        &mut self,
        state: ViewState,
        messages: &[(i64, i64)],
    ) -> StoreResult<()> {
        if messages.is_empty() {
            return Ok(());
        }
        let dependants = self.lock_dependants().await?;
        let (seqs, tokens): (Vec<i64>, Vec<i32>) = messages
            .iter()
            .map(|&(seq, tokens)| (seq, i32::try_from(tokens).unwrap_or(i32::MAX)))
            .unzip();
        let session_id = self.session.id;
        let base_seq = self.session.base_seq;
        let states = vec![state as i16; seqs.len()];
        sqlx::query(include_str!("sql/forks/set_view_states.sql"))
            .bind(session_id)
            .bind(seqs)
            .bind(states)
            .bind(tokens)
            .bind(base_seq)
            .bind(dependants)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        Ok(())
    }

    /// Every session that reads some of this session's own rows, each locked (`for key
    /// share`) until the commit: none is deleted, and none is forked (a fork holds its
    /// source's row lock), before the change is pushed down. Read again until a read
    /// finds no new one: a fork of a dependant that committed while the lock waited for
    /// it shows only in the next statement.
    pub(super) async fn lock_dependants(&mut self) -> StoreResult<Vec<i64>> {
        let session_id = self.session.id;
        let mut locked: Vec<i64> = Vec::new();
        for _ in 0..DEPENDANT_ROUNDS {
            let found: Vec<i64> = sqlx::query_scalar(include_str!("sql/forks/dependants.sql"))
                .bind(session_id)
                .bind(self.session.tenant_id)
                .fetch_all(self.conn())
                .await?;
            if found == locked {
                return Ok(locked);
            }
            locked = found;
        }
        Ok(locked)
    }
}
