//! Waiting until the started server accepts a login, then creating the `ctxd`
//! database if it is missing.

use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgSslMode};
use sqlx::{ConnectOptions as _, Connection as _};
use tokio::process::Child;
use tokio::time::{Instant, sleep, timeout};

use super::{
    CREATE_DATABASE, DATABASE, LocalPgError, POLL, PORT, SOCKET_NAME, START_TIMEOUT, USER,
};

pub(super) enum Ready {
    Exited(ExitStatus),
    Timeout(String),
}

fn admin_options(socket_dir: &Path, database: &str) -> PgConnectOptions {
    PgConnectOptions::new_without_pgpass()
        .socket(socket_dir)
        .port(PORT)
        .username(USER)
        .database(database)
        .ssl_mode(PgSslMode::Disable)
        .disable_statement_logging()
}

/// Polls until a real login succeeds: the socket appears before the server
/// accepts sessions ("the database system is starting up"), and crash
/// recovery after an unclean stop can take a while.
pub(super) async fn wait_ready(
    child: &mut Child,
    socket_dir: &Path,
) -> Result<PgConnection, Ready> {
    let deadline = Instant::now() + START_TIMEOUT;
    let socket = socket_dir.join(SOCKET_NAME);
    let opts = admin_options(socket_dir, "postgres");
    let mut last_error = String::from("socket not created yet");
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Err(Ready::Exited(status)),
            Ok(None) => {}
            Err(e) => last_error = format!("checking the server process: {e}"),
        }
        if Instant::now() >= deadline {
            return Err(Ready::Timeout(last_error));
        }
        match tokio::net::UnixStream::connect(&socket).await {
            Ok(_) => match timeout(Duration::from_secs(5), PgConnection::connect_with(&opts)).await
            {
                Ok(Ok(conn)) => return Ok(conn),
                Ok(Err(e)) => last_error = e.to_string(),
                Err(_) => last_error = "login timed out".into(),
            },
            Err(e) => last_error = format!("{}: {e}", socket.display()),
        }
        sleep(POLL).await;
    }
}

pub(super) async fn ensure_database(
    mut conn: PgConnection,
    socket_dir: &Path,
) -> Result<(), LocalPgError> {
    let err = |source| LocalPgError::CreateDatabase {
        socket_dir: socket_dir.to_path_buf(),
        source,
    };
    let exists: bool =
        sqlx::query_scalar("select exists(select 1 from pg_database where datname = $1)")
            .bind(DATABASE)
            .fetch_one(&mut conn)
            .await
            .map_err(err)?;
    if !exists {
        match sqlx::query(CREATE_DATABASE).execute(&mut conn).await {
            Ok(_) => tracing::info!(database = DATABASE, "created database"),
            Err(e) if e.as_database_error().and_then(|d| d.code()).as_deref() == Some("42P04") => {}
            Err(e) => return Err(err(e)),
        }
    }
    let _ = conn.close().await;
    Ok(())
}
