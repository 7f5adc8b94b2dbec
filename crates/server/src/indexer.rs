//! The replica's search indexer: a background task that computes the search vectors of
//! new messages at a bounded pace (Search itself catches up on what is still pending in
//! its scope, so it never waits for this task and never misses a message).
use crate::store::Store;

/// The background indexer's pace: at most this many messages per statement, one
/// statement per pause (200 messages/s per replica). Indexing costs PostgreSQL about as
/// much CPU as an append; a burst of appends does not wait for it, and Search indexes
/// whatever of its scope is still pending first.
const INDEX_BATCH: i64 = 100;
const INDEX_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// The replica's indexer: computes the search vectors of new messages in the
/// background, at a bounded pace, until `shutdown`.
pub fn start(store: Store, shutdown: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        loop {
            if let Err(error) = store.index_some(INDEX_BATCH, false).await {
                tracing::warn!(%error, "indexing messages for search failed; retrying");
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(INDEX_PAUSE) => {}
            }
        }
    });
}
