//! Processes by pid: the pid file, running / zombie / gone, which data directory a
//! process serves, signals, waiting for exit, and stopping a server left over from a
//! crashed run.

use std::fs;
use std::io;
use std::path::Path;
use std::time::Duration;

use tokio::time::{Instant, sleep};

use super::{LocalPgError, POLL, SOCKET_NAME, STOP_TIMEOUT, io_err};

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
pub(super) async fn stop_stale_server(
    pgdata: &Path,
    socket_dir: &Path,
) -> Result<(), LocalPgError> {
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

pub(super) fn read_pid(pid_file: &Path) -> Option<i32> {
    fs::read_to_string(pid_file)
        .ok()
        .and_then(|s| s.lines().next()?.trim().parse::<i32>().ok())
        .map(i32::abs)
        .filter(|p| *p > 1)
}

pub(super) enum ProcState {
    Running,
    Zombie,
    Gone,
}

pub(super) fn process_state(pid: i32) -> ProcState {
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

pub(super) fn signal(pid: i32, sig: libc::c_int) -> io::Result<()> {
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
