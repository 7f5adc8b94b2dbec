//! The server's log file: opened for appending (rotated when large) and the tail of
//! this run's lines, which error messages quote.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::runner::Runner;
use super::{LocalPgError, io_err};

const LOG_TAIL_LINES: usize = 30;
/// Rotate the log at start once it is this big, so a long-lived dev directory does not grow without bound.
const LOG_ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Appends (earlier runs stay readable) and returns the offset where this
/// run's output starts, so error messages show only this run's lines.
pub(super) fn open_log(path: &Path, runner: &Runner) -> Result<(File, u64), LocalPgError> {
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

pub(super) fn log_tail(path: &Path, from: u64) -> String {
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
