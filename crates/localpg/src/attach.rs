//! Finding the private PostgreSQL another ctxd process runs in a data directory, so
//! that short admin commands (`ctxd tenant …`, `ctxd key …`, `ctxd migrate`) work while
//! `ctxd serve` holds the directory: the running postmaster's `postmaster.pid` names its
//! socket directory and says when it is ready.

use std::fs;
use std::path::{Path, PathBuf};

use super::process::{ProcState, process_state, read_pid};
use super::{SOCKET_NAME, url_for};

/// What the data directory's `postmaster.pid` says of a running server.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Running {
    /// Ready for connections at this URL.
    Ready(String),
    /// No server, or one still starting or already stopping: ask again shortly.
    NotYet(&'static str),
}

/// The URL of the server running on `base/pgdata`, if it is ready. `postmaster.pid`
/// holds the pid (line 1), the first socket directory (line 5) and the status (line 8:
/// `ready`, `starting`, `stopping`; PostgreSQL 10 and later).
pub(super) fn running(base: &Path) -> Running {
    let pgdata = base.join("pgdata");
    let pid_file = pgdata.join("postmaster.pid");
    let Ok(text) = fs::read_to_string(&pid_file) else {
        return Running::NotYet("no postmaster.pid yet");
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let Some(pid) = read_pid(&pid_file) else {
        return Running::NotYet("postmaster.pid names no pid yet");
    };
    if !matches!(process_state(pid), ProcState::Running) {
        return Running::NotYet("the postmaster named by postmaster.pid is not running");
    }
    if lines.get(7).copied() != Some("ready") {
        return Running::NotYet("the server is not ready for connections");
    }
    let Some(socket_dir) = lines.get(4).filter(|dir| !dir.is_empty()) else {
        return Running::NotYet("postmaster.pid names no socket directory");
    };
    let socket_dir = PathBuf::from(socket_dir);
    if !socket_dir.join(SOCKET_NAME).exists() {
        return Running::NotYet("the server's socket is missing");
    }
    Running::Ready(url_for(&socket_dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid_file(base: &Path, status: &str, socket_dir: &Path) {
        fs::create_dir_all(base.join("pgdata")).unwrap();
        let text = format!(
            "{}\n{}\n1700000000\n5432\n{}\n\n  5432001    42\n{status}\n",
            std::process::id(),
            base.join("pgdata").display(),
            socket_dir.display()
        );
        fs::write(base.join("pgdata/postmaster.pid"), text).unwrap();
    }

    #[test]
    fn a_ready_server_with_its_socket_is_found_and_others_are_waited_for() {
        let base = tempfile::tempdir().unwrap();
        let run = base.path().join("run");
        fs::create_dir_all(&run).unwrap();
        assert!(matches!(running(base.path()), Running::NotYet(_)));
        pid_file(base.path(), "starting", &run);
        assert!(matches!(running(base.path()), Running::NotYet(_)));
        pid_file(base.path(), "ready", &run);
        assert!(
            matches!(running(base.path()), Running::NotYet(_)),
            "no socket"
        );
        fs::write(run.join(SOCKET_NAME), "").unwrap();
        assert_eq!(running(base.path()), Running::Ready(url_for(&run)));
    }
}
