//! `ctxd events SESSION [--follow]`: a session's events from a running server, one line
//! each — cursor, time, session version, kind and what it says — read from
//! SubscribeEvents. Without `--follow` it stops once the backlog is printed (the
//! stream's first heartbeat); with it, it prints new events as they come until
//! interrupted. `--after CURSOR` resumes after an event printed before.
use crate::client::ClientTls;
use ctxd_server::pb;
use ctxd_server::pb::context_service_client::ContextServiceClient;
use ctxd_server::pb::subscribe_events_response::Item;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What to read.
pub struct Options<'a> {
    pub addr: &'a str,
    pub tls: &'a ClientTls,
    pub api_key: Option<&'a str>,
    pub session_id: &'a str,
    pub after: Option<&'a str>,
    pub follow: bool,
}

/// Prints the session's events to `out` (see the module's doc).
pub async fn run(
    options: &Options<'_>,
    out: &mut (dyn std::io::Write + Send),
) -> Result<(), BoxError> {
    let channel = crate::client::connect(
        options.addr,
        options.tls,
        std::time::Duration::from_secs(5),
        std::time::Duration::from_secs(30),
    )
    .await?;
    let mut client = ContextServiceClient::new(channel);
    let request = crate::client::with_key(
        pb::SubscribeEventsRequest {
            session_id: options.session_id.into(),
            after: options.after.unwrap_or_default().into(),
            ..Default::default()
        },
        options.api_key,
    )?;
    let mut stream = client
        .subscribe_events(request)
        .await
        .map_err(|status| format!("SubscribeEvents: {}", status.message()))?
        .into_inner();
    while let Some(response) = stream
        .message()
        .await
        .map_err(|status| format!("SubscribeEvents: {}", status.message()))?
    {
        match response.item {
            Some(Item::Event(event)) => {
                writeln!(out, "{}", line(&event))?;
                out.flush()?;
            }
            Some(Item::Heartbeat(_)) if !options.follow => return Ok(()),
            _ => {}
        }
    }
    Ok(())
}

/// One event as a line: cursor, time, version, kind, detail.
pub fn line(event: &pb::Event) -> String {
    let kind = pb::EventKind::try_from(event.kind)
        .map(|kind| {
            kind.as_str_name()
                .trim_start_matches("EVENT_KIND_")
                .to_string()
        })
        .unwrap_or_else(|_| format!("KIND_{}", event.kind));
    let at = event
        .created_at
        .as_ref()
        .and_then(|t| chrono::DateTime::from_timestamp(t.seconds, t.nanos.max(0) as u32))
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    let detail = event
        .detail
        .as_ref()
        .map(|detail| format!("{detail:?}"))
        .unwrap_or_default();
    format!(
        "{}\t{at}\tv{}\t{kind}\t{detail}",
        event.cursor, event.session_version
    )
}
