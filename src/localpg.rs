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

use std::ffi::{CString, OsStr};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgSslMode};
use sqlx::{ConnectOptions as _, Connection as _};
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep, timeout};

/// Superuser created by initdb and the database ctxd uses; one name keeps the URL obvious.
const USER: &str = "ctxd";
const DATABASE: &str = "ctxd";
/// A literal because sqlx only takes static (audited) SQL; keep in step with DATABASE.
const CREATE_DATABASE: &str = "create database ctxd";
/// Only names the socket file (`.s.PGSQL.5432`); nothing listens on TCP, so no clash with a system server.
const PORT: u16 = 5432;
const SOCKET_NAME: &str = ".s.PGSQL.5432";
/// sun_path is 104 (macOS) or 108 (Linux) bytes; stay clear of both.
const MAX_SOCKET_PATH: usize = 100;
const START_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(100);
const LOG_TAIL_LINES: usize = 30;
/// Rotate the log at start once it is this big, so a long-lived dev directory does not grow without bound.
const LOG_ROTATE_BYTES: u64 = 10 * 1024 * 1024;

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

        let postgres = bin.join("postgres");
        let socket_arg = socket_dir.as_os_str().to_owned();
        let mut cmd = Command::new(&postgres);
        cmd.arg("-D")
            .arg(&pgdata)
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
        format!(
            "postgres://{USER}@localhost:{PORT}/{DATABASE}?host={}",
            percent_encode(self.socket_dir.as_os_str())
        )
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

// ---------------------------------------------------------------------------
// Binaries

/// The directory holding `initdb` and `postgres` of one installation; the
/// PATH entry is resolved through symlinks so helpers from the same version are used.
fn find_bin_dir() -> Option<PathBuf> {
    let has_server =
        |d: &Path| is_executable(&d.join("initdb")) && is_executable(&d.join("postgres"));
    if let Some(path) = std::env::var_os("PATH") {
        for entry in std::env::split_paths(&path) {
            let initdb = entry.join("initdb");
            if !is_executable(&initdb) {
                continue;
            }
            let real = fs::canonicalize(&initdb).ok();
            if let Some(d) = real.as_deref().and_then(Path::parent)
                && has_server(d)
            {
                return Some(d.to_path_buf());
            }
            if has_server(&entry) {
                return Some(entry);
            }
        }
    }
    let mut versions: Vec<(Vec<u64>, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let version = name
                .split('.')
                .map(|p| p.parse::<u64>().ok())
                .collect::<Option<Vec<_>>>()?;
            let bin = e.path().join("bin");
            has_server(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
}

// ---------------------------------------------------------------------------
// Who runs the server, and where its files live

/// The account the server processes run as; PostgreSQL refuses root, so as
/// root we switch to an unprivileged user for initdb and postgres.
#[derive(Clone, Debug)]
struct Runner {
    uid: u32,
    gid: u32,
    /// Whether child processes must switch to `uid`/`gid` (only when we are root).
    switch: bool,
}

impl Runner {
    fn apply(&self, cmd: &mut Command) {
        if self.switch {
            cmd.uid(self.uid).gid(self.gid);
        }
    }

    fn chown(&self, path: &Path) -> Result<(), LocalPgError> {
        if self.switch {
            std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
                .map_err(io_err("change the owner of", path))?;
        }
        Ok(())
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// getpwnam_r rather than getpwnam: the latter's static buffer is not safe
/// with other threads of the runtime doing user lookups.
fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: passwd is plain old data; all-zero is a valid (empty) value.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to live, correctly sized storage owned by this frame.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &raw mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &raw mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
}

/// Decides where the cluster lives and who runs it. Existing data always
/// wins (so data never silently "moves"); otherwise `dir` when the server
/// user can reach it, else a root-managed fallback keyed by `dir`.
fn choose_base_and_runner(dir: &Path) -> Result<(PathBuf, Runner), LocalPgError> {
    let me = euid();
    if me != 0 {
        // SAFETY: getegid has no preconditions and cannot fail.
        let gid = unsafe { libc::getegid() };
        return Ok((
            dir.to_path_buf(),
            Runner {
                uid: me,
                gid,
                switch: false,
            },
        ));
    }

    let hash = short_hash(dir.as_os_str().as_bytes());
    let var_base = PathBuf::from("/var/lib/ctxd").join(&hash);
    let tmp_base = PathBuf::from(format!("/tmp/ctxd-data-{hash}"));

    // Reuse an existing cluster, running it as whoever owns it.
    for base in [dir, var_base.as_path(), tmp_base.as_path()] {
        if let Ok(md) = fs::symlink_metadata(base.join("pgdata")) {
            let runner = if md.uid() != 0 {
                Runner {
                    uid: md.uid(),
                    gid: md.gid(),
                    switch: true,
                }
            } else {
                default_root_runner()?
            };
            if !can_traverse(base, &runner) {
                return Err(LocalPgError::NoUsableDir {
                    dir: base.to_path_buf(),
                    uid: runner.uid,
                    reason: "the existing data there is unreachable for its owner".into(),
                });
            }
            return Ok((base.to_path_buf(), runner));
        }
    }

    let runner = default_root_runner()?;
    if can_traverse(dir, &runner) {
        return Ok((dir.to_path_buf(), runner));
    }
    let mut reasons = Vec::new();
    for base in [var_base, tmp_base] {
        match fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&base)
        {
            Ok(()) => match fs::symlink_metadata(&base) {
                // In /tmp anyone could have pre-created the path; only trust our own directory.
                Ok(md) if md.is_dir() && md.uid() == 0 && md.mode() & 0o022 == 0 => {
                    if can_traverse(&base, &runner) {
                        return Ok((base, runner));
                    }
                    reasons.push(format!(
                        "uid {} cannot reach {}",
                        runner.uid,
                        base.display()
                    ));
                }
                Ok(_) => reasons.push(format!(
                    "{} is not a root-owned private directory",
                    base.display()
                )),
                Err(e) => reasons.push(format!("{}: {e}", base.display())),
            },
            Err(e) => reasons.push(format!("{}: {e}", base.display())),
        }
    }
    Err(LocalPgError::NoUsableDir {
        dir: dir.to_path_buf(),
        uid: runner.uid,
        reason: reasons.join("; "),
    })
}

/// Debian's packages create `postgres`; `nobody` exists nearly everywhere else.
fn default_root_runner() -> Result<Runner, LocalPgError> {
    ["postgres", "nobody"]
        .into_iter()
        .find_map(lookup_user)
        .map(|(uid, gid)| Runner {
            uid,
            gid,
            switch: true,
        })
        .ok_or(LocalPgError::NoUnprivilegedUser)
}

/// Mode-bit check of search permission on every ancestor, as the kernel
/// would do for `runner` (primary group only: std drops supplementary
/// groups when switching uid). ACLs are ignored; a false "no" only means
/// using the fallback directory.
fn can_traverse(path: &Path, runner: &Runner) -> bool {
    path.ancestors().all(|p| match fs::metadata(p) {
        Ok(md) => {
            let bit = if md.uid() == runner.uid {
                0o100
            } else if md.gid() == runner.gid {
                0o010
            } else {
                0o001
            };
            md.mode() & bit != 0
        }
        Err(_) => false,
    })
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

fn lock_dir(base: &Path) -> Result<File, LocalPgError> {
    let path = base.join("localpg.lock");
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(&path)
        .map_err(io_err("open the lock file", &path))?;
    // SAFETY: the fd is valid for the lifetime of `file`; flock has no memory effects.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut s = String::new();
            let _ = file.read_to_string(&mut s);
            return Err(LocalPgError::InUse {
                dir: base.to_path_buf(),
                holder: s.trim().parse().ok(),
            });
        }
        return Err(LocalPgError::Io {
            action: "lock",
            path,
            source: err,
        });
    }
    // The pid is only informational (for the InUse message).
    let _ = file.set_len(0);
    let _ = writeln!(file, "{}", std::process::id());
    Ok(file)
}

/// `base/run`, unless that socket path would exceed sun_path (or is not
/// UTF-8, which the URL cannot carry): then a short, stable name in /tmp.
fn prepare_socket_dir(base: &Path, runner: &Runner) -> Result<PathBuf, LocalPgError> {
    let preferred = base.join("run");
    let fits = preferred.as_os_str().len() + 1 + SOCKET_NAME.len() < MAX_SOCKET_PATH
        && preferred.to_str().is_some();
    let dir = if fits {
        preferred
    } else {
        PathBuf::from(format!(
            "/tmp/ctxd-{}",
            short_hash(base.as_os_str().as_bytes())
        ))
    };
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => runner.chown(&dir)?,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_err("create the socket directory", &dir)(e)),
    }
    let md = fs::symlink_metadata(&dir).map_err(io_err("inspect the socket directory", &dir))?;
    if !md.is_dir() || md.uid() != runner.uid {
        return Err(LocalPgError::UnsafeSocketDir {
            path: dir,
            owner: md.uid(),
            expected: runner.uid,
        });
    }
    Ok(dir)
}

// ---------------------------------------------------------------------------
// initdb

/// initdb into `pgdata.init` and rename when complete, so an interrupted
/// first run never leaves a half-made `pgdata` that looks usable.
async fn ensure_initialized(
    bin: &Path,
    base: &Path,
    pgdata: &Path,
    runner: &Runner,
) -> Result<(), LocalPgError> {
    if pgdata.join("PG_VERSION").is_file() {
        return Ok(());
    }
    if pgdata.exists() {
        // An empty directory (e.g. made by hand) is harmless; anything else may be someone's data.
        if fs::remove_dir(pgdata).is_err() {
            return Err(LocalPgError::NotADataDir {
                path: pgdata.to_path_buf(),
            });
        }
    }
    let staging = base.join("pgdata.init");
    if staging.exists() {
        fs::remove_dir_all(&staging)
            .map_err(io_err("remove the unfinished initdb directory", &staging))?;
    }
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&staging)
        .map_err(io_err("create", &staging))?;
    runner.chown(&staging)?;

    let initdb = bin.join("initdb");
    // --locale=C: no dependency on which OS locales are installed, and
    // English server messages. No --no-instructions (PostgreSQL 14+ only):
    // the output is captured anyway.
    let args = ["--auth=trust", "-U", USER, "-E", "UTF8", "--locale=C"];
    let command = format!(
        "{} -D {} {}",
        initdb.display(),
        staging.display(),
        args.join(" ")
    );
    let mut cmd = Command::new(&initdb);
    cmd.arg("-D")
        .arg(&staging)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    runner.apply(&mut cmd);
    tracing::info!(data_dir = %pgdata.display(), "creating local PostgreSQL cluster (initdb)");
    let out = cmd.output().await.map_err(|source| LocalPgError::Spawn {
        command: command.clone(),
        source,
    })?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&staging);
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        return Err(LocalPgError::Initdb {
            command,
            status: out.status,
            output: output.trim_end().to_owned(),
            data_dir: pgdata.to_path_buf(),
        });
    }
    fs::rename(&staging, pgdata).map_err(io_err("move the new cluster into place at", pgdata))?;
    Ok(())
}

fn check_owner(pgdata: &Path, runner: &Runner) -> Result<(), LocalPgError> {
    let md = fs::metadata(pgdata).map_err(io_err("inspect", pgdata))?;
    if md.uid() != runner.uid {
        return Err(LocalPgError::WrongOwner {
            path: pgdata.to_path_buf(),
            owner: md.uid(),
            runner: runner.uid,
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Leftovers from a crashed run

/// A ctxd that crashed (SIGKILL, OOM kill, ...) can leave its postmaster
/// running, or leave a `postmaster.pid` that postgres itself misjudges.
/// Since we hold the directory lock, no live ctxd uses this cluster, so:
///
/// * pid running and it is the postmaster of this data directory: stop it
///   (SIGINT, 30 s, then SIGQUIT);
/// * pid is a zombie (containers whose init does not reap) or was reused by
///   an unrelated process: postgres would refuse to start ("lock file
///   already exists", since it only checks `kill(pid, 0)`), so once no
///   process is left working in the data directory the lock files go;
/// * pid gone: postgres handles that itself, including its shared-memory check.
async fn stop_stale_server(pgdata: &Path, socket_dir: &Path) -> Result<(), LocalPgError> {
    let pid_file = pgdata.join("postmaster.pid");
    let Some(pid) = read_pid(&pid_file) else {
        return Ok(());
    };
    match process_state(pid) {
        ProcState::Gone => return Ok(()),
        ProcState::Zombie => {}
        ProcState::Running => match serves_data_dir(pid, pgdata) {
            Some(true) => {
                tracing::warn!(pid, data_dir = %pgdata.display(), "stopping PostgreSQL left over from an earlier run");
                let _ = signal(pid, libc::SIGINT);
                if !wait_gone(pid, STOP_TIMEOUT).await {
                    let _ = signal(pid, libc::SIGQUIT);
                    if !wait_gone(pid, Duration::from_secs(10)).await {
                        return Err(LocalPgError::StaleServer {
                            pid,
                            data_dir: pgdata.to_path_buf(),
                        });
                    }
                }
                // A clean shutdown removes the pid file; if it is still there, clean up below.
                if read_pid(&pid_file) != Some(pid) {
                    return Ok(());
                }
            }
            Some(false) => {}
            // Cannot tell (no access to /proc/<pid>): leave it to postgres, whose error we report.
            None => return Ok(()),
        },
    }
    // Backends notice a dead postmaster and exit on their own; wait for that
    // before removing the lock, which is what postgres' own check protects.
    if !wait_no_processes_in(pgdata, STOP_TIMEOUT).await {
        return Err(LocalPgError::StaleServer {
            pid,
            data_dir: pgdata.to_path_buf(),
        });
    }
    tracing::warn!(pid, pid_file = %pid_file.display(), "removing stale postmaster.pid (its process is no longer a running postgres)");
    fs::remove_file(&pid_file).map_err(io_err("remove stale", &pid_file))?;
    for name in [format!("{SOCKET_NAME}.lock"), SOCKET_NAME.to_owned()] {
        let _ = fs::remove_file(socket_dir.join(name));
    }
    Ok(())
}

fn read_pid(pid_file: &Path) -> Option<i32> {
    fs::read_to_string(pid_file)
        .ok()
        .and_then(|s| s.lines().next()?.trim().parse::<i32>().ok())
        .map(i32::abs)
        .filter(|p| *p > 1)
}

enum ProcState {
    Running,
    Zombie,
    Gone,
}

fn process_state(pid: i32) -> ProcState {
    // SAFETY: kill with signal 0 only checks for existence/permission.
    let rc = unsafe { libc::kill(pid, 0) };
    if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
        ProcState::Gone
    } else if is_zombie(pid) {
        ProcState::Zombie
    } else {
        ProcState::Running
    }
}

fn is_alive(pid: i32) -> bool {
    matches!(process_state(pid), ProcState::Running)
}

/// A zombie has already exited; in containers whose init does not reap,
/// it would otherwise look alive forever.
#[cfg(target_os = "linux")]
fn is_zombie(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[cfg(not(target_os = "linux"))]
fn is_zombie(_pid: i32) -> bool {
    false
}

/// The postmaster chdirs into its data directory, so its cwd identifies it.
#[cfg(target_os = "linux")]
fn serves_data_dir(pid: i32, pgdata: &Path) -> Option<bool> {
    let cwd = fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    let pgdata = fs::canonicalize(pgdata).ok()?;
    Some(cwd == pgdata)
}

#[cfg(not(target_os = "linux"))]
fn serves_data_dir(_pid: i32, _pgdata: &Path) -> Option<bool> {
    None
}

async fn wait_gone(pid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !is_alive(pid) {
            return true;
        }
        sleep(POLL).await;
    }
    !is_alive(pid)
}

/// Waits until no (visible) process has its working directory in `pgdata`;
/// every postgres process chdirs there, so this finds orphaned backends.
async fn wait_no_processes_in(pgdata: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if !any_process_in(pgdata) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        sleep(POLL).await;
    }
}

#[cfg(target_os = "linux")]
fn any_process_in(pgdata: &Path) -> bool {
    let Ok(pgdata) = fs::canonicalize(pgdata) else {
        return false;
    };
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        e.file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
            && fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd == pgdata)
    })
}

#[cfg(not(target_os = "linux"))]
fn any_process_in(_pgdata: &Path) -> bool {
    false
}

fn signal(pid: i32, sig: libc::c_int) -> io::Result<()> {
    if pid <= 1 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no server pid"));
    }
    // SAFETY: plain syscall; pid > 1 so this never targets a process group or init.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

// ---------------------------------------------------------------------------
// Log

/// Appends (earlier runs stay readable) and returns the offset where this
/// run's output starts, so error messages show only this run's lines.
fn open_log(path: &Path, runner: &Runner) -> Result<(File, u64), LocalPgError> {
    if fs::metadata(path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let old = path.with_extension("log.1");
        fs::rename(path, &old).map_err(io_err("rotate", path))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(io_err("open the server log", path))?;
    runner.chown(path)?;
    let start = file.metadata().map_or(0, |m| m.len());
    Ok((file, start))
}

fn log_tail(path: &Path, from: u64) -> String {
    let mut buf = Vec::new();
    let read = File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(from))?;
        f.read_to_end(&mut buf)
    });
    if let Err(e) = read {
        return format!("(could not read the log: {e})");
    }
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n");
    if tail.trim().is_empty() {
        "(the log is empty)".into()
    } else {
        tail
    }
}

// ---------------------------------------------------------------------------
// Readiness and database

enum Ready {
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
async fn wait_ready(child: &mut Child, socket_dir: &Path) -> Result<PgConnection, Ready> {
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

async fn ensure_database(mut conn: PgConnection, socket_dir: &Path) -> Result<(), LocalPgError> {
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

// ---------------------------------------------------------------------------
// Process plumbing

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

/// Makes the kernel stop the server if ctxd dies without running its
/// cleanup (SIGKILL, abort), so no orphaned postmaster holds the directory.
///
/// std runs `pre_exec` closures after its setgid/setuid calls, and the
/// kernel clears the parent-death signal on credential changes, so it has
/// to be set here, not before. SIGINT (fast shutdown) rather than SIGTERM
/// (smart shutdown, which would wait for any psql session still open).
#[cfg(target_os = "linux")]
fn set_parent_death_signal(cmd: &mut Command) {
    // SAFETY: getpid has no preconditions and cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure only makes async-signal-safe syscalls (prctl, getppid).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGINT as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl.
            if libc::getppid() != parent {
                return Err(io::Error::other("parent exited during spawn"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn set_parent_death_signal(_cmd: &mut Command) {}

/// Linux delivers the parent-death signal when the *thread* that forked
/// the child exits, not the process. Runtime worker and blocking-pool
/// threads come and go, so the server is forked from one dedicated thread
/// that lives as long as the process.
#[cfg(target_os = "linux")]
async fn spawn_server(cmd: Command) -> io::Result<Child> {
    use std::sync::Mutex;
    use std::sync::mpsc;

    type Reply = tokio::sync::oneshot::Sender<io::Result<Child>>;
    type Job = (Command, tokio::runtime::Handle, Reply);
    static SPAWNER: Mutex<Option<mpsc::Sender<Job>>> = Mutex::new(None);

    let (reply, answer) = tokio::sync::oneshot::channel();
    let job: Job = (cmd, tokio::runtime::Handle::current(), reply);
    {
        let mut guard = SPAWNER
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tx = match guard.as_ref() {
            Some(tx) => tx.clone(),
            None => {
                let (tx, rx) = mpsc::channel::<Job>();
                std::thread::Builder::new()
                    .name("ctxd-localpg-spawn".into())
                    .spawn(move || {
                        for (mut cmd, handle, reply) in rx {
                            // tokio needs a runtime context to register the child for reaping.
                            let _enter = handle.enter();
                            let _ = reply.send(cmd.spawn());
                        }
                    })?;
                *guard = Some(tx.clone());
                tx
            }
        };
        tx.send(job)
            .map_err(|_| io::Error::other("the PostgreSQL spawner thread is gone"))?;
    }
    answer
        .await
        .map_err(|_| io::Error::other("the PostgreSQL spawner thread dropped the request"))?
}

#[cfg(not(target_os = "linux"))]
async fn spawn_server(mut cmd: Command) -> io::Result<Child> {
    cmd.spawn()
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
