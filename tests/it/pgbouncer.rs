//! ctxd behind a real PgBouncer (Debian's `pgbouncer`) in transaction pooling mode: two
//! replicas (the `ctxd` binary) whose pools go through PgBouncer and whose LISTEN
//! connections go straight to PostgreSQL. Events written by one replica reach a
//! subscriber of the other, a summarization job enqueued through a replica without
//! workers is run by the other one (woken by NOTIFY: queue polling is off), a burst of
//! appends through both lands with one version each, and PgBouncer's admin console
//! shows the traffic went through it while the LISTEN backends are not its servers.
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ctxd::pb;
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection, Row};

use crate::binary::{free_port, terminate, wait_serving};
use crate::events::{evicting_turn, small_policy, until_live};
use crate::harness::*;

/// The password ctxd gives PgBouncer (md5 authentication against its auth file).
const PASSWORD: &str = "pooled-secret";
/// The name PgBouncer serves the test database under.
const ALIAS: &str = "ctxd";
/// Server connections PgBouncer keeps per database: fewer than either replica's pool,
/// so the replicas' transactions take turns on the same server connections.
const SERVER_CONNECTIONS: u32 = 4;
/// Longest a step waits for something it expects: a broken setup fails, not hangs.
const PATIENCE: Duration = Duration::from_secs(60);

/// A PgBouncer child process with its configuration in a temporary directory.
struct PgBouncer {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    user: String,
}

impl PgBouncer {
    /// Starts PgBouncer in front of the database `direct` points at, and waits until it
    /// accepts connections.
    async fn start(direct: &PgConnectOptions) -> PgBouncer {
        let binary = pgbouncer_binary();
        let runner = runner(direct);
        let dir = tempfile::Builder::new()
            .prefix("ctxd-pgb")
            .tempdir_in("/tmp")
            .unwrap();
        let port = free_port();
        let user = direct.get_username().to_string();
        let server = match direct.get_socket() {
            Some(socket_dir) => format!("host={}", socket_dir.display()),
            None => format!("host={}", direct.get_host()),
        };
        let database = direct.get_database().unwrap();
        let ini = format!(
            "[databases]\n\
             {ALIAS} = {server} port={port} dbname={database} user={user}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {listen}\n\
             unix_socket_dir = {dir}\n\
             auth_type = md5\n\
             auth_file = {dir}/userlist.txt\n\
             admin_users = {user}\n\
             pool_mode = transaction\n\
             default_pool_size = {SERVER_CONNECTIONS}\n\
             max_client_conn = 200\n\
             logfile = {dir}/pgbouncer.log\n\
             pidfile = {dir}/pgbouncer.pid\n",
            port = direct.get_port(),
            listen = port,
            dir = dir.path().display(),
        );
        std::fs::write(dir.path().join("pgbouncer.ini"), ini).unwrap();
        std::fs::write(
            dir.path().join("userlist.txt"),
            format!("\"{user}\" \"{PASSWORD}\"\n"),
        )
        .unwrap();
        let mut command = Command::new(&binary);
        command
            .arg(dir.path().join("pgbouncer.ini"))
            .current_dir("/")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some((uid, gid)) = runner {
            // PgBouncer refuses to run as root.
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
            use std::os::unix::process::CommandExt as _;
            command.uid(uid).gid(gid);
        }
        let child = command.spawn().unwrap_or_else(|error| {
            panic!("cannot start {}: {error}", binary.display());
        });
        let mut bouncer = PgBouncer {
            child,
            dir,
            port,
            user,
        };
        bouncer.wait_ready().await;
        bouncer
    }

    /// Polls the admin console until it answers.
    async fn wait_ready(&mut self) {
        let every = Duration::from_millis(50);
        let options = self.admin_options();
        let ready = crate::support::poll(PATIENCE, every, async || {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("pgbouncer exited with {status}:\n{}", self.log());
            }
            let mut admin = PgConnection::connect_with(&options).await.ok()?;
            let answered = sqlx::raw_sql("SHOW VERSION").execute(&mut admin).await;
            answered.ok().map(|_| ())
        })
        .await;
        assert!(
            ready.is_some(),
            "pgbouncer did not accept connections within {PATIENCE:?}:\n{}",
            self.log()
        );
    }

    /// The URL replicas connect to: the test database through PgBouncer.
    fn url(&self) -> String {
        format!(
            "postgres://{}:{PASSWORD}@127.0.0.1:{}/{ALIAS}",
            self.user, self.port
        )
    }

    /// The admin console (the virtual database `pgbouncer`), which speaks only the
    /// simple query protocol and takes no startup parameters PgBouncer does not know.
    fn admin_options(&self) -> PgConnectOptions {
        PgConnectOptions::new()
            .host("127.0.0.1")
            .port(self.port)
            .username(&self.user)
            .password(PASSWORD)
            .database("pgbouncer")
            .extra_float_digits(None)
    }

    /// Rows of an admin console command.
    async fn show(&self, command: &str) -> Vec<sqlx::postgres::PgRow> {
        let mut admin = PgConnection::connect_with(&self.admin_options())
            .await
            .unwrap();
        let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(command.to_string()))
            .fetch_all(&mut admin)
            .await
            .unwrap();
        admin.close().await.unwrap();
        rows
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- pgbouncer.log ---\n{}", self.log());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `pgbouncer` binary on PATH or in Debian's /usr/sbin; the test fails without it.
fn pgbouncer_binary() -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into()])
        .map(|dir| dir.join("pgbouncer"))
        .find(|candidate| candidate.is_file())
        .expect(
            "the pgbouncer binary is missing: install it (Debian/Ubuntu: apt-get install -y pgbouncer; .ci/run does)",
        )
}

/// Who PgBouncer runs as when we are root (it refuses root): the owner of the
/// PostgreSQL socket directory when there is one (so it can reach the socket), else
/// `postgres` or `nobody`. `None`: not root, run as ourselves.
fn runner(direct: &PgConnectOptions) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt as _;
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    if let Some(socket_dir) = direct.get_socket()
        && let Ok(metadata) = std::fs::metadata(socket_dir)
        && metadata.uid() != 0
    {
        return Some((metadata.uid(), metadata.gid()));
    }
    ["postgres", "nobody"].into_iter().find_map(|name| {
        let id = |flag: &str| -> Option<u32> {
            let output = Command::new("id").args([flag, name]).output().ok()?;
            String::from_utf8(output.stdout).ok()?.trim().parse().ok()
        };
        Some((id("-u")?, id("-g")?))
    })
}

/// A number the admin console sends (as text: it speaks the simple query protocol).
fn number(row: &sqlx::postgres::PgRow, column: &str) -> i64 {
    let text: String = row.try_get_unchecked(column).unwrap();
    text.parse()
        .unwrap_or_else(|_| panic!("{column} is not a number: {text:?}"))
}

/// A `ctxd serve` process whose pools go through `bouncer` and whose LISTEN
/// connections go to `direct`.
struct Replica {
    child: Option<Child>,
    addr: String,
    metrics_addr: String,
    log: PathBuf,
    _data: tempfile::TempDir,
}

impl Replica {
    async fn start(bouncer: &PgBouncer, direct: &str, workers: usize) -> Replica {
        let data = tempfile::Builder::new()
            .prefix("ctxd-pgb-replica")
            .tempdir_in("/tmp")
            .unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let metrics_addr = format!("127.0.0.1:{}", free_port());
        let log = data.path().join("ctxd.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctxd"))
            .args(["serve", "--listen", &addr])
            .args(["--database-url", &bouncer.url()])
            .args(["--database-listen-url", direct])
            .args(["--database-pooler", "transaction"])
            // On its test database, a deployment refuses calls without a key unless told.
            .args(["--anonymous-access", "allow"])
            .args(["--db-max-connections", "8"])
            .args(["--jobs-workers", &workers.to_string()])
            .args(["--metrics-listen", &metrics_addr])
            // No queue polling in a test's time: a job is claimed only when NOTIFY
            // reaches the workers' LISTEN connection.
            .args(["--jobs-poll-interval-ms", "3600000"])
            .env_remove("DATABASE_URL")
            .env("CTXD_DATA_DIR", data.path())
            .env("CTXD_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut replica = Replica {
            child: None,
            addr,
            metrics_addr,
            log,
            _data: data,
        };
        wait_serving(&replica.addr, &mut child).await;
        replica.child = Some(child);
        replica
    }

    async fn client(&self) -> Client {
        Client::new(channel(self.addr.parse().unwrap()).await)
    }

    /// The database pool gauges' lines of its `/metrics`.
    async fn pool_metrics(&self) -> Vec<String> {
        let text = reqwest::get(format!("http://{}/metrics", self.metrics_addr))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .filter(|line| line.starts_with("db_client_connection_"))
            .map(str::to_string)
            .collect()
    }

    /// Stops the process with SIGTERM; it must exit cleanly.
    async fn stop(mut self) {
        terminate(self.child.take().unwrap()).await;
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("--- ctxd {} ---\n{log}", self.addr);
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Events from `stream` until every kind in `wanted` (session, kind) has been seen.
async fn until_seen(
    stream: &mut tonic::Streaming<pb::SubscribeEventsResponse>,
    wanted: &[(&str, pb::EventKind)],
) {
    let mut missing: HashSet<(String, i32)> = wanted
        .iter()
        .map(|(session, kind)| (session.to_string(), *kind as i32))
        .collect();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !missing.is_empty() {
        let item = tokio::time::timeout_at(deadline, stream.message())
            .await
            .unwrap_or_else(|_| panic!("events never seen: {missing:?}"))
            .expect("stream failed")
            .expect("stream ended");
        if let Some(pb::subscribe_events_response::Item::Event(event)) = item.item {
            missing.remove(&(event.session_id.clone(), event.kind));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_work_behind_pgbouncer_in_transaction_mode() {
    let direct = empty_database_url("pgb").await;
    let direct_options: PgConnectOptions = direct.parse().unwrap();
    let bouncer = PgBouncer::start(&direct_options).await;
    // A runs no jobs: whatever job it enqueues, B's workers run.
    let a = Replica::start(&bouncer, &direct, 0).await;
    let b = Replica::start(&bouncer, &direct, 2).await;
    let mut on_a = a.client().await;
    let mut on_b = b.client().await;

    // Events: a tenant stream on A sees what B (and B's job workers) write.
    let mut stream = on_a
        .subscribe_events(pb::SubscribeEventsRequest {
            from_now: true,
            heartbeat_interval_ms: 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    until_live(&mut stream).await;
    create(&mut on_b, "ev", small_policy()).await;
    evicting_turn(&mut on_b, "ev", 0).await;
    until_seen(&mut stream, &[("ev", pb::EventKind::OutputEvicted)]).await;

    // Jobs: a summarization enqueued and waited for through A is run by B.
    create(
        &mut on_a,
        "job",
        pb::Policy {
            leaf_chunk_messages: Some(4),
            fresh_tail_messages: Some(4),
            ..window(100_000, 10_000)
        },
    )
    .await;
    for turn in 0..6 {
        let id = format!("c{turn}");
        let output: String = (0..40)
            .map(|line| format!("module {turn} line {line:05} lorem ipsum dolor\n"))
            .collect();
        let messages = vec![
            user(&format!("Step {turn}: check src/module_{turn}.rs")),
            call(&[&id]),
            result(&id, &output),
            assistant(&format!("Fixed module {turn}.")),
        ];
        append(&mut on_a, "job", messages).await.unwrap();
    }
    let compacted = on_a
        .compact(pb::CompactRequest {
            session_id: "job".into(),
            mode: pb::CompactMode::Summarize as i32,
            target_tokens: 1,
            wait: true,
            wait_timeout_ms: PATIENCE.as_millis() as u32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(compacted.applied, "{compacted:?}");
    let built = build(&mut on_b, "job", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(!built.summaries.is_empty(), "B builds with A's summary");
    until_seen(
        &mut stream,
        &[
            ("job", pb::EventKind::CompactionStarted),
            ("job", pb::EventKind::CompactionCompleted),
        ],
    )
    .await;

    // A burst of appends to one session through both replicas at once.
    create(&mut on_a, "burst", window(1_000_000, 10_000)).await;
    const TASKS_PER_REPLICA: usize = 6;
    const APPENDS: usize = 8;
    let mut tasks = Vec::new();
    for task in 0..2 * TASKS_PER_REPLICA {
        let mut client = if task % 2 == 0 {
            on_a.clone()
        } else {
            on_b.clone()
        };
        tasks.push(tokio::spawn(async move {
            let mut landed = Vec::new();
            for round in 0..APPENDS {
                let message = user(&format!("task {task} round {round}"));
                let response = append(&mut client, "burst", vec![message]).await.unwrap();
                landed.push((response.version, response.seqs));
            }
            landed
        }));
    }
    let mut versions = BTreeSet::new();
    let mut seqs = BTreeSet::new();
    for task in tasks {
        for (version, landed) in task.await.unwrap() {
            assert!(versions.insert(version), "version {version} given twice");
            assert_eq!(landed.len(), 1);
            assert!(seqs.insert(landed[0]), "seq {} given twice", landed[0]);
        }
    }
    let total = (2 * TASKS_PER_REPLICA * APPENDS) as i64;
    assert_eq!(versions, (1..=total).collect(), "one version per append");
    assert_eq!(seqs, (1..=total).collect(), "gap-free seqs");
    let burst = session(&mut on_b, "burst").await;
    assert_eq!((burst.version, burst.message_count), (total, total));

    // The pools' traffic went through PgBouncer...
    let transactions: i64 = bouncer
        .show("SHOW STATS")
        .await
        .iter()
        .filter(|row| row.get::<String, _>("database") == ALIAS)
        .map(|row| number(row, "total_xact_count"))
        .sum();
    assert!(
        transactions >= total,
        "PgBouncer pooled {transactions} transactions, fewer than the {total} appends"
    );
    let clients = bouncer
        .show("SHOW CLIENTS")
        .await
        .iter()
        .filter(|row| row.get::<String, _>("database") == ALIAS)
        .count();
    assert!(
        clients >= 2,
        "{clients} client connections through PgBouncer"
    );
    // ...and the LISTEN connections (jobs and events, in each replica) did not.
    let servers: HashSet<i32> = bouncer
        .show("SHOW SERVERS")
        .await
        .iter()
        .map(|row| number(row, "remote_pid") as i32)
        .collect();
    let mut inspector = PgConnection::connect(&direct).await.unwrap();
    let listening: Vec<i32> = sqlx::query_scalar(
        "select pid from pg_stat_activity where datname = current_database() and query ilike 'listen %'",
    )
    .fetch_all(&mut inspector)
    .await
    .unwrap();
    assert!(
        listening.len() >= 4,
        "two LISTEN connections per replica, found {listening:?}"
    );
    assert!(
        listening.iter().all(|pid| !servers.contains(pid)),
        "LISTEN backends {listening:?} are PgBouncer's server connections {servers:?}"
    );
    inspector.close().await.unwrap();

    drop(stream);
    // A's LISTEN connections (its event hub's, straight to PostgreSQL) are a pool of
    // their own in its metrics, holding the listener.
    let pools = a.pool_metrics().await;
    let listen_used = pools.iter().find(|line| {
        line.starts_with("db_client_connection_count{")
            && line.contains("db_client_connection_pool_name=\"listen\"")
            && line.contains("db_client_connection_state=\"used\"")
    });
    let used: f64 = listen_used
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no listen pool in {pools:#?}"));
    assert!(used >= 1.0, "{pools:#?}");
    assert!(
        pools
            .iter()
            .any(|line| line.starts_with("db_client_connection_max{")
                && line.contains("pool_name=\"listen\"")),
        "{pools:#?}"
    );
    a.stop().await;
    b.stop().await;
}
