//! Spawning the postmaster so it dies with ctxd: the parent-death signal, set after
//! the credential switch, from one long-lived spawner thread.

use std::io;

use tokio::process::{Child, Command};

/// Makes the kernel stop the server if ctxd dies without running its
/// cleanup (SIGKILL, abort), so no orphaned postmaster holds the directory.
///
/// std runs `pre_exec` closures after its setgid/setuid calls, and the
/// kernel clears the parent-death signal on credential changes, so it has
/// to be set here, not before. SIGINT (fast shutdown) rather than SIGTERM
/// (smart shutdown, which would wait for any psql session still open).
#[cfg(target_os = "linux")]
pub(super) fn set_parent_death_signal(cmd: &mut Command) {
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
pub(super) fn set_parent_death_signal(_cmd: &mut Command) {}

/// Linux delivers the parent-death signal when the *thread* that forked
/// the child exits, not the process. Runtime worker and blocking-pool
/// threads come and go, so the server is forked from one dedicated thread
/// that lives as long as the process.
#[cfg(target_os = "linux")]
pub(super) async fn spawn_server(cmd: Command) -> io::Result<Child> {
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
pub(super) async fn spawn_server(mut cmd: Command) -> io::Result<Child> {
    cmd.spawn()
}
