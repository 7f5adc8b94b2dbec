//! Who runs the server: ctxd's own user, or (as root, which PostgreSQL refuses) an
//! unprivileged one, and where the cluster lives so that user can reach it (the
//! requested directory, or a root-managed fallback keyed by it).

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use tokio::process::Command;

use super::{LocalPgError, io_err, short_hash};

/// The account the server processes run as; PostgreSQL refuses root, so as
/// root we switch to an unprivileged user for initdb and postgres.
#[derive(Clone, Debug)]
pub(super) struct Runner {
    pub(super) uid: u32,
    gid: u32,
    /// Whether child processes must switch to `uid`/`gid` (only when we are root).
    switch: bool,
}

impl Runner {
    pub(super) fn apply(&self, cmd: &mut Command) {
        if self.switch {
            cmd.uid(self.uid).gid(self.gid);
        }
    }

    pub(super) fn chown(&self, path: &Path) -> Result<(), LocalPgError> {
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
pub(super) fn choose_base_and_runner(dir: &Path) -> Result<(PathBuf, Runner), LocalPgError> {
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
