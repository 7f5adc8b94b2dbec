//! The data directory's own files: the lock held while a ctxd uses it, the Unix
//! socket directory, the cluster (initdb on first use) and the check of its owner.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

use super::runner::Runner;
use super::{LocalPgError, SOCKET_NAME, USER, io_err, short_hash};

/// sun_path is 104 (macOS) or 108 (Linux) bytes; stay clear of both.
const MAX_SOCKET_PATH: usize = 100;

pub(super) fn lock_dir(base: &Path) -> Result<File, LocalPgError> {
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
pub(super) fn prepare_socket_dir(base: &Path, runner: &Runner) -> Result<PathBuf, LocalPgError> {
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
pub(super) async fn ensure_initialized(
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

pub(super) fn check_owner(pgdata: &Path, runner: &Runner) -> Result<(), LocalPgError> {
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
