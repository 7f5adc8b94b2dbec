//! ExportSession and ImportSession: a session as the core's file (`export`), read in one
//! consistent state, and written back as a new root session in one transaction.
use super::sessions::taken;
use super::{Engine, SessionInfo};
use crate::error::{Error, Result, quoted};
use crate::export::{self, Import, LedgerRecord, MessageRecord, SessionRecord, Snapshot};
use crate::quota::live_sessions_full;
use crate::validate::{NUL_REASON, validate_session_id};

/// Summaries taken out of the view by reverts that an export carries at most (the
/// newest; GetSession lists 100).
const MAX_REVERTED: i64 = 1_000;
/// Reads of a session that changed meanwhile before an export gives up.
const EXPORT_TRIES: usize = 5;

/// What an import wrote.
#[derive(Debug, Clone)]
pub struct Imported {
    pub info: SessionInfo,
    pub messages: i64,
    pub summaries: i64,
    pub ledger_entries: i64,
}

impl Engine {
    /// The session's file. Its parts are read in separate statements, then the row
    /// again: when the session changed meanwhile they are read once more, so the file
    /// is one state of the session.
    pub async fn export_session(&self, tenant_id: i64, session_id: &str) -> Result<Vec<u8>> {
        let mut versions = (0, 0);
        for _ in 0..EXPORT_TRIES {
            let row = self.session_row(tenant_id, session_id).await?;
            let messages = self
                .store
                .messages_in_range(&row, 1, row.message_count, 0)
                .await?;
            let summaries = self.store.export_summaries(&row, MAX_REVERTED).await?;
            let ledger = self.store.ledger(row.tenant_id, row.id).await?;
            let again = self.session_row(tenant_id, session_id).await?;
            if again.version != row.version {
                versions = (row.version, again.version);
                continue;
            }
            let snapshot = Snapshot {
                session: SessionRecord::from_session(&row),
                messages: messages.iter().map(MessageRecord::from_stored).collect(),
                summaries,
                ledger: ledger.iter().map(LedgerRecord::from_entry).collect(),
            };
            return Ok(export::write(&snapshot, chrono::Utc::now()));
        }
        // The session changed during every read: ABORTED, as a write racing another is.
        Err(Error::Conflict {
            current_version: versions.1,
            expected_version: versions.0,
        })
    }

    /// Creates a session from a file, as `session_id` (empty: the file's id).
    pub async fn import_session(
        &self,
        tenant_id: i64,
        session_id: &str,
        file: &[u8],
    ) -> Result<Imported> {
        let limits = export::Limits {
            max_message_bytes: self.config.max_content_bytes,
            max_session_bytes: self.config.limits.max_session_bytes,
        };
        let import = export::read(file, limits)?;
        let session_id = if session_id.is_empty() {
            import.session.id.clone()
        } else {
            validate_session_id(session_id)?;
            session_id.to_string()
        };
        check_here(self, &import)?;
        // The imported text counts as appended text: the tenant's stored bytes and bytes
        // per minute admit it as they would the appends that wrote it.
        self.quotas
            .admit_append(tenant_id, import.session.state.content_bytes.max(0) as u64)
            .await?;
        let live_sessions = self.quotas.quotas(tenant_id).await?.live_sessions;
        let create = self
            .store
            .begin_create(tenant_id, live_sessions > 0)
            .await?;
        if let Some(live) = create.live.filter(|&live| live >= live_sessions) {
            return Err(live_sessions_full(live, live_sessions));
        }
        let row = create
            .import(&session_id, &import)
            .await
            .map_err(|error| taken(error, &session_id))?;
        Ok(Imported {
            info: SessionInfo { row },
            messages: import.messages.len() as i64,
            summaries: import.summaries.len() as i64,
            ledger_entries: import.ledger.len() as i64,
        })
    }
}

/// What the file must agree with on this server: its summarizer profile exists here,
/// and its metadata can be stored.
fn check_here(engine: &Engine, import: &Import) -> Result<()> {
    engine
        .model_for(&import.session.policy)
        .map_err(|error| match error {
            Error::InvalidArgument { field, reason } => {
                Error::invalid(format!("record 2 (session).{field}"), reason)
            }
            other => other,
        })?;
    if let Some((key, _)) = import
        .session
        .metadata
        .iter()
        .find(|(key, value)| key.contains('\0') || value.contains('\0'))
    {
        return Err(Error::invalid(
            format!("record 2 (session).metadata[{}]", quoted(key)),
            NUL_REASON,
        ));
    }
    Ok(())
}
