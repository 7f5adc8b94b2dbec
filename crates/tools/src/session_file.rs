//! `ctxd session export ID > FILE` and `ctxd session import FILE`: a session's file
//! (ExportSession's format, `docs/api.md` "Export and import") from a running server,
//! and back into one.
use std::io::{Read, Write};

use crate::client::ClientTls;
use ctxd_server::pb;
use ctxd_server::pb::context_service_client::ContextServiceClient;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Bytes of the file per ImportSession message (under gRPC's default 4 MiB).
const CHUNK_BYTES: usize = 1 << 20;

/// Where the server is and who asks.
pub struct Server<'a> {
    pub addr: &'a str,
    pub tls: &'a ClientTls,
    pub api_key: Option<&'a str>,
}

async fn client(
    server: &Server<'_>,
) -> Result<ContextServiceClient<tonic::transport::Channel>, BoxError> {
    let channel = crate::client::connect(
        server.addr,
        server.tls,
        std::time::Duration::from_secs(5),
        std::time::Duration::from_secs(300),
    )
    .await?;
    // A file may hold a whole session: allow the largest chunk the server sends.
    Ok(ContextServiceClient::new(channel).max_decoding_message_size(4 * CHUNK_BYTES))
}

/// Writes session `session_id`'s file to `out`.
pub async fn export(
    server: &Server<'_>,
    session_id: &str,
    out: &mut (dyn Write + Send),
) -> Result<(), BoxError> {
    let request = crate::client::with_key(
        pb::ExportSessionRequest {
            session_id: session_id.into(),
        },
        server.api_key,
    )?;
    let mut stream = client(server)
        .await?
        .export_session(request)
        .await
        .map_err(|status| format!("ExportSession: {}", status.message()))?
        .into_inner();
    while let Some(chunk) = stream
        .message()
        .await
        .map_err(|status| format!("ExportSession: {}", status.message()))?
    {
        out.write_all(&chunk.data)?;
    }
    out.flush()?;
    Ok(())
}

/// Imports the file read from `input` (as `session_id`, or the file's own id when
/// empty); returns a line saying what was written.
pub async fn import(
    server: &Server<'_>,
    session_id: &str,
    input: &mut dyn Read,
) -> Result<String, BoxError> {
    let mut file = Vec::new();
    input.read_to_end(&mut file)?;
    let mut chunks: Vec<pb::ImportSessionRequest> = file
        .chunks(CHUNK_BYTES)
        .map(|data| pb::ImportSessionRequest {
            session_id: String::new(),
            data: data.to_vec(),
        })
        .collect();
    if let Some(first) = chunks.first_mut() {
        first.session_id = session_id.into();
    }
    let request = crate::client::with_key(futures::stream::iter(chunks), server.api_key)?;
    let response = client(server)
        .await?
        .import_session(request)
        .await
        .map_err(|status| format!("ImportSession: {}", status.message()))?
        .into_inner();
    let id = response.session.map(|s| s.session_id).unwrap_or_default();
    Ok(format!(
        "imported session {id}: {} messages, {} summaries, {} ledger entries\n",
        response.messages, response.summaries, response.ledger_entries
    ))
}
