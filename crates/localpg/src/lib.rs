//! A private PostgreSQL server started from the locally installed binaries.
//!
//! ctxd needs PostgreSQL, but asking every developer to provision a server,
//! a role and a database before the first run is friction. When no
//! DATABASE_URL is configured, this module runs `initdb` once into a
//! directory ctxd owns and then starts `postgres` on a Unix socket only, so
//! it never clashes with a server already listening on port 5432 and is not
//! reachable over the network.
//!
//! Layout under the data directory (`dir`, or a fallback when running as
//! root and the server user cannot reach `dir`, see [`LocalPostgres::start`]):
//!
//! * `pgdata/`       the cluster (initdb into `pgdata.init/`, renamed when complete)
//! * `run/`          the Unix socket directory (or `/tmp/ctxd-<hash>` if the path is too long)
//! * `postgres.log`  the server's stderr
//! * `localpg.lock`  flock held while a ctxd process uses the directory
//!
//! The submodules, in the order `start` uses them: `install` (finding the binaries),
//! `runner` (who runs the server and where its data lives), `datadir` (lock, socket
//! directory, initdb, owner), `process` (pids, signals, a server left over from a
//! crash), `logfile` (the server log and its tail), `spawn` (the postmaster, tied to
//! ctxd's life) and `ready` (the first login, the `ctxd` database). `attach` finds the
//! server another ctxd runs in the directory, for [`LocalPostgres::start_or_attach`].

mod attach;
mod datadir;
mod install;
mod logfile;
mod process;
mod ready;
mod runner;
mod spawn;

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::time::timeout;

use datadir::{check_owner, ensure_initialized, lock_dir, prepare_socket_dir};
use install::find_bin_dir;
use logfile::{log_tail, open_log};
use process::{signal, stop_stale_server};
use ready::{Ready, ensure_database, wait_ready};
use runner::choose_base_and_runner;
use spawn::{set_parent_death_signal, spawn_server};

/// Superuser created by initdb and the database ctxd uses; one name keeps the URL obvious.
const USER: &str = "ctxd";
const DATABASE: &str = "ctxd";
/// A literal because sqlx only takes static (audited) SQL; keep in step with DATABASE.
const CREATE_DATABASE: &str = "create database ctxd";
/// Only names the socket file (`.s.PGSQL.5432`); nothing listens on TCP, so no clash with a system server.
const PORT: u16 = 5432;
const SOCKET_NAME: &str = ".s.PGSQL.5432";
const START_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(100);

/// A running private PostgreSQL; dropping it without [`LocalPostgres::stop`]
/// still asks the server to shut down, so a forgotten handle does not leak a server.
pub struct LocalPostgres {
    child: Option<Child>,
    pid: i32,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    log_path: PathBuf,
    command: String,
    /// Held for the lifetime of the server so a second ctxd on the same
    /// directory fails clearly instead of killing our server as "stale".
    _lock: File,
}

/// Why the private PostgreSQL could not be started or stopped; each message
/// says what to do about it, because these reach a person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum LocalPgError {
    /// Nothing to start: the machine has no PostgreSQL server installed.
    #[error(
        "no PostgreSQL server binaries found (looked for `initdb` and `postgres` on PATH and in \
         /usr/lib/postgresql/*/bin): install PostgreSQL server binaries (Debian/Ubuntu: apt install \
         postgresql; Fedora: dnf install postgresql-server; macOS: brew install postgresql) or set \
         DATABASE_URL to an existing server"
    )]
    BinariesNotFound,

    /// Root cannot run PostgreSQL, and there is no account to hand it to.
    #[error(
        "running as root, but neither a `postgres` nor a `nobody` user exists to run PostgreSQL as \
         (PostgreSQL refuses to run as root): create a `postgres` system user, run ctxd as a normal \
         user, or set DATABASE_URL"
    )]
    NoUnprivilegedUser,

    /// A filesystem step failed; the path says where to look.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being attempted (reads after "could not").
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// A process could not be started or waited for.
    #[error("could not run `{command}`: {source}")]
    Spawn {
        /// The command line, to reproduce the step by hand.
        command: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// First-run cluster creation failed; its output usually names the cause.
    #[error(
        "`{command}` failed ({status}); the data directory {} was left untouched, fix the cause \
         below and start again:\n{output}",
        data_dir.display()
    )]
    Initdb {
        /// The command line, to reproduce the step by hand.
        command: String,
        /// How the process ended.
        status: ExitStatus,
        /// initdb's stdout and stderr, which name the cause.
        output: String,
        /// The cluster directory concerned.
        data_dir: PathBuf,
    },

    /// Refuses to initdb over a directory that may hold someone's files.
    #[error(
        "{} exists but is not a PostgreSQL data directory (no PG_VERSION file): move it away or \
         delete it so a fresh one can be created",
        path.display()
    )]
    NotADataDir {
        /// The directory that is in the way.
        path: PathBuf,
    },

    /// PostgreSQL only runs on a data directory owned by its own user.
    #[error(
        "{} is owned by uid {owner}, but PostgreSQL would run as uid {runner} and refuses a data \
         directory it does not own: run ctxd as that user, `chown -R {runner} {}`, or set DATABASE_URL",
        path.display(), path.display()
    )]
    WrongOwner {
        /// The file or directory involved.
        path: PathBuf,
        /// Uid that owns it now.
        owner: u32,
        /// Uid the server would run as.
        runner: u32,
    },

    /// As root, no place was found that the server user can reach.
    #[error(
        "uid {uid} (the user PostgreSQL runs as) cannot reach {}, and no fallback directory under \
         /var/lib/ctxd or /tmp was usable ({reason}): choose a data directory that user can reach, \
         or set DATABASE_URL",
        dir.display()
    )]
    NoUsableDir {
        /// The directory concerned.
        dir: PathBuf,
        /// Uid the server runs as.
        uid: u32,
        /// Why each fallback directory was rejected.
        reason: String,
    },

    /// A shared /tmp path we did not create must not carry our socket.
    #[error(
        "{} is unsafe to use as the socket directory (owned by uid {owner}, expected uid {expected}, \
         or not a plain directory): remove it or choose a shorter data directory path",
        path.display()
    )]
    UnsafeSocketDir {
        /// The file or directory involved.
        path: PathBuf,
        /// Uid that owns it now.
        owner: u32,
        /// Uid that should own it.
        expected: u32,
    },

    /// Two ctxd processes must not share one cluster.
    #[error(
        "{} is in use by another ctxd process{}: stop that process or use a different data directory",
        dir.display(),
        holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    InUse {
        /// The directory concerned.
        dir: PathBuf,
        /// Pid written by the process holding the lock, if readable.
        holder: Option<i32>,
    },

    /// Another ctxd holds the directory, but its server never became ready to use.
    #[error(
        "{} is in use by another ctxd process{}, whose PostgreSQL did not become ready within {}s ({why}):          wait for it to finish starting, or stop it",
        dir.display(),
        holder.map(|p| format!(" (pid {p})")).unwrap_or_default(),
        START_TIMEOUT.as_secs()
    )]
    NotReady {
        /// The directory concerned.
        dir: PathBuf,
        /// Pid written by the process holding the lock, if readable.
        holder: Option<i32>,
        /// What was last seen of its server.
        why: &'static str,
    },

    /// A leftover server from a crashed run would not go away.
    #[error(
        "a PostgreSQL (pid {pid}) left over from an earlier run still uses {} and did not exit after \
         SIGINT and SIGQUIT: kill it (`kill -9 {pid}`) and start again",
        data_dir.display()
    )]
    StaleServer {
        /// The leftover postmaster's pid.
        pid: i32,
        /// The cluster directory concerned.
        data_dir: PathBuf,
    },

    /// The server died while starting; the log tail says why.
    #[error(
        "PostgreSQL exited during startup ({status}); command: `{command}`; last lines of {}:\n{tail}",
        log.display()
    )]
    ExitedEarly {
        /// How the process ended.
        status: ExitStatus,
        /// The command line, to reproduce the step by hand.
        command: String,
        /// The server log file.
        log: PathBuf,
        /// The last lines this run wrote to the log.
        tail: String,
    },

    /// The server never accepted a login within the deadline.
    #[error(
        "PostgreSQL did not accept connections on {} within {}s (last error: {last_error}); the \
         server was stopped. Command: `{command}`; last lines of {}:\n{tail}",
        socket_dir.display(), START_TIMEOUT.as_secs(), log.display()
    )]
    StartTimeout {
        /// The server's socket directory.
        socket_dir: PathBuf,
        /// The last connection error seen while polling.
        last_error: String,
        /// The command line, to reproduce the step by hand.
        command: String,
        /// The server log file.
        log: PathBuf,
        /// The last lines this run wrote to the log.
        tail: String,
    },

    /// The server runs, but the `ctxd` database could not be created.
    #[error("could not create database `{DATABASE}` on the server at {}: {source}", socket_dir.display())]
    CreateDatabase {
        /// The server's socket directory.
        socket_dir: PathBuf,
        /// The underlying error.
        #[source]
        source: sqlx::Error,
    },

    /// Shutdown hung and the server was killed; the next start recovers.
    #[error(
        "PostgreSQL (pid {pid}) did not finish shutting down within {}s and was killed; it will run \
         crash recovery on the next start (see {})",
        STOP_TIMEOUT.as_secs(), log.display()
    )]
    StopTimeout {
        /// The postmaster's pid.
        pid: i32,
        /// The server log file.
        log: PathBuf,
    },

    /// The server reported an error while shutting down.
    #[error("PostgreSQL (pid {pid}) exited with {status} while shutting down; see {}", log.display())]
    StopFailed {
        /// The postmaster's pid.
        pid: i32,
        /// How the process ended.
        status: ExitStatus,
        /// The server log file.
        log: PathBuf,
    },
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> LocalPgError {
    move |source| LocalPgError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// FNV-1a: stable across Rust releases (unlike DefaultHasher), so the
/// fallback and socket directory names stay the same from run to run.
fn short_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:012x}", h >> 16)
}

/// The `postgres` command for `pgdata`, listening only on a socket in `socket_dir`, its
/// output to `logs`, run as `runner`; and the command as logs show it.
fn server_command(
    bin: &Path,
    pgdata: &Path,
    socket_dir: &Path,
    runner: &runner::Runner,
    logs: (File, File),
) -> (Command, String) {
    let (log, log_err) = logs;
    let postgres = bin.join("postgres");
    let socket_arg = socket_dir.as_os_str().to_owned();
    let mut cmd = Command::new(&postgres);
    cmd.arg("-D")
        .arg(pgdata)
        .arg("-k")
        .arg(&socket_arg)
        .arg("-p")
        .arg(PORT.to_string())
        .args([
            "-c",
            "listen_addresses=",
            "-c",
            "unix_socket_permissions=0770",
            "-c",
            "logging_collector=off",
            // Modest settings for a developer machine; fsync stays on because this data is kept.
            "-c",
            "shared_buffers=128MB",
            "-c",
            "max_connections=200",
            "-c",
            "fsync=on",
        ])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .current_dir("/")
        // Ctrl-C in a terminal must reach ctxd only; ctxd then stops the server in order.
        .process_group(0)
        .kill_on_drop(false);
    runner.apply(&mut cmd);
    set_parent_death_signal(&mut cmd);
    let command = format!(
        "{} -D {} -k {} -p {PORT} -c listen_addresses= ...",
        postgres.display(),
        pgdata.display(),
        socket_dir.display()
    );
    (cmd, command)
}

impl LocalPostgres {
    /// Starts (initdb on first use) a PostgreSQL whose data lives under `dir`
    /// (created if absent; reused on the next run).
    ///
    /// As root, the server runs as `postgres` (or `nobody`) because PostgreSQL
    /// refuses root; if that user cannot reach `dir` (e.g. under /root), the
    /// data goes to /var/lib/ctxd/<hash of dir> (or /tmp) and a warning says where.
    pub async fn start(dir: &Path) -> Result<LocalPostgres, LocalPgError> {
        let bin = find_bin_dir().ok_or(LocalPgError::BinariesNotFound)?;
        fs::create_dir_all(dir).map_err(io_err("create the data directory", dir))?;
        let dir = fs::canonicalize(dir).map_err(io_err("resolve the data directory", dir))?;

        let (base, runner) = choose_base_and_runner(&dir)?;
        if base != dir {
            tracing::warn!(
                requested_dir = %dir.display(),
                data_dir = %base.display(),
                server_uid = runner.uid,
                "the PostgreSQL server user cannot reach the requested directory; keeping the local database elsewhere"
            );
        }

        let pgdata = base.join("pgdata");
        if pgdata.exists() {
            // Before taking the lock, whose file belongs to the same owner: say the useful thing.
            check_owner(&pgdata, &runner)?;
        }
        let lock = lock_dir(&base)?;
        let socket_dir = prepare_socket_dir(&base, &runner)?;

        ensure_initialized(&bin, &base, &pgdata, &runner).await?;
        check_owner(&pgdata, &runner)?;
        stop_stale_server(&pgdata, &socket_dir).await?;

        let log_path = base.join("postgres.log");
        let (log, log_start) = open_log(&log_path, &runner)?;
        let log_err = log.try_clone().map_err(io_err("open", &log_path))?;

        let (cmd, command) = server_command(&bin, &pgdata, &socket_dir, &runner, (log, log_err));

        let mut child = spawn_server(cmd)
            .await
            .map_err(|source| LocalPgError::Spawn {
                command: command.clone(),
                source,
            })?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        tracing::info!(pid, data_dir = %pgdata.display(), socket_dir = %socket_dir.display(), "starting local PostgreSQL");

        let conn = match wait_ready(&mut child, &socket_dir).await {
            Ok(conn) => conn,
            Err(Ready::Exited(status)) => {
                return Err(LocalPgError::ExitedEarly {
                    status,
                    command,
                    tail: log_tail(&log_path, log_start),
                    log: log_path,
                });
            }
            Err(Ready::Timeout(last_error)) => {
                let _ = signal(pid, libc::SIGQUIT);
                let _ = timeout(STOP_TIMEOUT, child.wait()).await;
                return Err(LocalPgError::StartTimeout {
                    socket_dir,
                    last_error,
                    command,
                    tail: log_tail(&log_path, log_start),
                    log: log_path,
                });
            }
        };

        let me = LocalPostgres {
            child: Some(child),
            pid,
            data_dir: pgdata,
            socket_dir,
            log_path,
            command,
            _lock: lock,
        };
        // On failure `me` is dropped, which asks the server to shut down.
        ensure_database(conn, &me.socket_dir).await?;
        tracing::info!(pid, url = %me.url(), "local PostgreSQL ready");
        Ok(me)
    }

    /// A connection URL for sqlx, e.g.
    /// `postgres://ctxd@localhost:5432/ctxd?host=/path/to/socketdir`; the port
    /// is spelled out so a PGPORT in the environment cannot redirect it.
    pub fn url(&self) -> String {
        url_for(&self.socket_dir)
    }

    /// The database of a data directory for a short command (an admin command, a
    /// migration): the private PostgreSQL a running `ctxd serve` holds there, found by
    /// its `postmaster.pid`, or else one started for the command (stop it after). A
    /// server still starting is waited for, up to a minute.
    pub async fn start_or_attach(
        dir: &Path,
    ) -> Result<(String, Option<LocalPostgres>), LocalPgError> {
        let deadline = tokio::time::Instant::now() + START_TIMEOUT;
        loop {
            let (base, holder) = match LocalPostgres::start(dir).await {
                Ok(local) => return Ok((local.url(), Some(local))),
                Err(LocalPgError::InUse { dir, holder }) => (dir, holder),
                Err(error) => return Err(error),
            };
            let why = match attach::running(&base) {
                attach::Running::Ready(url) => {
                    tracing::info!(data_dir = %base.display(), holder, "using the private PostgreSQL of the running ctxd");
                    return Ok((url, None));
                }
                attach::Running::NotYet(why) => why,
            };
            if tokio::time::Instant::now() >= deadline {
                return Err(LocalPgError::NotReady {
                    dir: base,
                    holder,
                    why,
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Fast shutdown (SIGINT to the postmaster) and wait for exit, so the
    /// next start needs no crash recovery; SIGKILL after 30 s so shutdown
    /// cannot hang the caller.
    pub async fn stop(mut self) -> Result<(), LocalPgError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = self.pid;
        if let Ok(Some(status)) = child.try_wait() {
            return stopped(pid, status, &self.log_path);
        }
        signal(pid, libc::SIGINT).map_err(|source| LocalPgError::Spawn {
            command: format!("kill -INT {pid}"),
            source,
        })?;
        match timeout(STOP_TIMEOUT, child.wait()).await {
            Ok(Ok(status)) => {
                tracing::info!(pid, data_dir = %self.data_dir.display(), "local PostgreSQL stopped");
                stopped(pid, status, &self.log_path)
            }
            Ok(Err(source)) => Err(LocalPgError::Spawn {
                command: format!("wait for {} (pid {pid})", self.command),
                source,
            }),
            Err(_) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                Err(LocalPgError::StopTimeout {
                    pid,
                    log: self.log_path.clone(),
                })
            }
        }
    }
}

/// The URL of the private server listening in `socket_dir`; the port is spelled out so
/// a PGPORT in the environment cannot redirect it.
fn url_for(socket_dir: &Path) -> String {
    format!(
        "postgres://{USER}@localhost:{PORT}/{DATABASE}?host={}",
        percent_encode(socket_dir.as_os_str())
    )
}

fn stopped(pid: i32, status: ExitStatus, log: &Path) -> Result<(), LocalPgError> {
    if status.success() {
        Ok(())
    } else {
        Err(LocalPgError::StopFailed {
            pid,
            status,
            log: log.to_path_buf(),
        })
    }
}

impl Drop for LocalPostgres {
    /// Best effort: a handle dropped without `stop()` (early return, panic)
    /// still starts a fast shutdown; nobody waits for it.
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut()
            && matches!(child.try_wait(), Ok(None))
        {
            let _ = signal(self.pid, libc::SIGINT);
        }
    }
}

/// Percent-encodes a path for the `host=` query parameter (which sqlx
/// form-decodes, so `+` and spaces must be escaped too).
fn percent_encode(s: &OsStr) -> String {
    let mut out = String::new();
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_short() {
        assert_eq!(
            short_hash(b"/root/.local/share/ctxd"),
            short_hash(b"/root/.local/share/ctxd")
        );
        assert_ne!(short_hash(b"/a"), short_hash(b"/b"));
        assert_eq!(short_hash(b"x").len(), 12);
    }

    #[test]
    fn url_escapes_socket_dir() {
        assert_eq!(percent_encode(OsStr::new("/tmp/a b+c")), "/tmp/a%20b%2Bc");
    }
}
