//! A Patroni cluster on loopback: one etcd, three PostgreSQL 15 nodes managed by Patroni
//! (Debian's `etcd-server`, `patroni`, `postgresql`), HAProxy sending connections to
//! whichever node Patroni's REST API calls the primary.
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::binary::free_port;
use crate::support::{pg_bin, postgres_user};

/// Patroni's leader key lifetime, seconds: a leader that stops renewing it is replaced
/// after at most this long.
pub const TTL_SECS: u64 = 10;

/// The leader key's TTL and Patroni's loop and retry timings: `TTL_SECS` (the suite's),
/// or CTXD_HA_TTL for the trials (a gentler timing for a loaded small machine), with
/// `loop_wait` a tenth of it and `retry_timeout` what Patroni's rule (ttl ≥ loop_wait +
/// 2 × retry_timeout) leaves.
fn timings() -> (u64, u64, u64) {
    let ttl = std::env::var("CTXD_HA_TTL")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|ttl| *ttl >= 10)
        .unwrap_or(TTL_SECS);
    let loop_wait = (ttl / 10).max(1);
    (ttl, loop_wait, (ttl - loop_wait - 1) / 2)
}
/// Which etcd API Patroni uses: `etcd` (v2) unless CTXD_HA_ETCD3 is set. Patroni 3.0's
/// etcd3 code refreshes the leader key with an unconditional put once its lease has
/// expired, so a leader frozen past its TTL and resumed takes the key back from the
/// leader that replaced it, and the new leader's commits are rewound away
/// (docs/operations.md, "Traced"); its v2 code refreshes the key only if it still holds
/// the node's name.
fn dcs() -> &'static str {
    if std::env::var_os("CTXD_HA_ETCD3").is_some() {
        "etcd3"
    } else {
        "etcd"
    }
}
/// Longest a cluster step may take before the test fails, not hangs (a reinitialized
/// replica took longer than 120 s once, under a full suite on 2 cores).
const PATIENCE: Duration = Duration::from_secs(240);
/// How long the cluster may have no synchronous standby before the harness deletes a
/// stale synchronous-replication key (see `Cluster::wait_healthy`).
const STUCK_SYNC: Duration = Duration::from_secs(30);

pub struct Node {
    pub name: String,
    pub pg_port: u16,
    pub rest_port: u16,
    config: PathBuf,
    data: PathBuf,
    patroni: Option<Child>,
}

pub struct Cluster {
    dir: tempfile::TempDir,
    etcd: Child,
    etcd_port: u16,
    /// Times the harness deleted a synchronous-replication key a former leader left
    /// (see `wait_healthy`).
    pub stale_sync_keys: AtomicUsize,
    /// Times the harness reinitialized a replica stuck off the leader's timeline.
    pub reinits: AtomicUsize,
    /// Keep the cluster's files (its logs) when it is dropped.
    keep: std::sync::atomic::AtomicBool,
    haproxy: Child,
    pub nodes: Vec<Node>,
    pub port: u16,
    uid: u32,
    gid: u32,
}

/// The binaries the harness needs, or what is missing.
pub fn missing_tools() -> Vec<&'static str> {
    ["etcd", "patroni", "patronictl", "haproxy"]
        .into_iter()
        .filter(|tool| {
            !Command::new("sh")
                .args([
                    "-c",
                    &format!("command -v {tool} || test -x /usr/sbin/{tool}"),
                ])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect()
}

impl Cluster {
    /// Starts etcd, three Patroni nodes and HAProxy; returns once a leader takes writes
    /// through HAProxy and (with `synchronous`) a synchronous standby is chosen.
    pub async fn start(synchronous: bool) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("ctxd-ha")
            .tempdir_in("/tmp")
            .unwrap();
        let (uid, gid) = postgres_user();
        std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        let (etcd_port, peer_port) = (free_port(), free_port());
        let etcd = Command::new("etcd")
            .stdin(Stdio::null())
            .args([
                "--name=e1",
                &format!("--data-dir={}", dir.path().join("etcd").display()),
                &format!("--listen-client-urls=http://127.0.0.1:{etcd_port}"),
                &format!("--advertise-client-urls=http://127.0.0.1:{etcd_port}"),
                &format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
                &format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}"),
                &format!("--initial-cluster=e1=http://127.0.0.1:{peer_port}"),
                // Patroni speaks etcd's v2 API unless CTXD_HA_ETCD3 is set (see `dcs`).
                "--enable-v2=true",
            ])
            .stdout(Stdio::null())
            .stderr(log(dir.path(), "etcd.log"))
            .spawn()
            .expect("etcd (Debian: apt install etcd-server)");
        let nodes: Vec<Node> = (1..=3)
            .map(|i| {
                let name = format!("node{i}");
                let node = Node {
                    config: dir.path().join(format!("{name}.yml")),
                    data: dir.path().join(&name),
                    name,
                    pg_port: free_port(),
                    rest_port: free_port(),
                    patroni: None,
                };
                std::fs::write(&node.config, node.yaml(dir.path(), etcd_port, synchronous))
                    .unwrap();
                node
            })
            .collect();
        let port = free_port();
        let haproxy_cfg = dir.path().join("haproxy.cfg");
        std::fs::write(&haproxy_cfg, haproxy_config(port, &nodes)).unwrap();
        let haproxy = Command::new(if Path::new("/usr/sbin/haproxy").exists() {
            "/usr/sbin/haproxy"
        } else {
            "haproxy"
        })
        .args(["-f", haproxy_cfg.to_str().unwrap()])
        .stdout(log(dir.path(), "haproxy.log"))
        .stderr(log(dir.path(), "haproxy.log"))
        .spawn()
        .expect("haproxy (Debian: apt install haproxy)");
        let mut cluster = Cluster {
            dir,
            etcd,
            etcd_port,
            stale_sync_keys: AtomicUsize::new(0),
            reinits: AtomicUsize::new(0),
            keep: std::sync::atomic::AtomicBool::new(false),
            haproxy,
            nodes,
            port,
            uid,
            gid,
        };
        for index in 0..3 {
            cluster.start_node(index);
        }
        if let Err(stuck) = cluster.wait_healthy(synchronous).await {
            panic!("{stuck}");
        }
        let mut admin = cluster.admin().await;
        for statement in [
            "create database ctxd",
            "create table ha_probe (at timestamptz)",
        ] {
            sqlx::raw_sql(statement).execute(&mut admin).await.unwrap();
        }
        cluster
    }

    /// Where the cluster's files and logs are.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The URL ctxd uses: the database `ctxd` through HAProxy.
    pub fn url(&self) -> String {
        format!("postgres://postgres:pw@127.0.0.1:{}/ctxd", self.port)
    }

    /// The harness's own database (`postgres`) through HAProxy; it holds `ha_probe`, the
    /// table whose inserts tell when the engine commits writes again.
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres:pw@127.0.0.1:{}/postgres", self.port)
    }

    async fn admin(&self) -> sqlx::PgConnection {
        use sqlx::Connection as _;
        sqlx::PgConnection::connect(&self.admin_url())
            .await
            .unwrap()
    }

    /// Starts (again) node `index`'s Patroni, which starts its PostgreSQL.
    pub fn start_node(&mut self, index: usize) {
        let node = &mut self.nodes[index];
        let child = Command::new("patroni")
            .arg(&node.config)
            .current_dir("/")
            .uid(self.uid)
            .gid(self.gid)
            // PostgreSQL in single-user mode (Patroni's crash recovery before pg_rewind)
            // reads commands from stdin: it must see none.
            .stdin(Stdio::null())
            .stdout(log(self.dir.path(), &format!("{}.log", node.name)))
            .stderr(log(self.dir.path(), &format!("{}.err.log", node.name)))
            .spawn()
            .expect("patroni (Debian: apt install patroni)");
        node.patroni = Some(child);
    }

    /// Waits until HAProxy reaches a primary and every node runs on the leader's
    /// timeline (with `synchronous`, one of them as the synchronous standby).
    ///
    /// Patroni 3.0.2 can leave the synchronous-replication key naming a former leader: a
    /// switchover whose old leader took the lock back for a moment writes it, and the new
    /// leader then never replaces a key another leader wrote, so no standby is ever
    /// synchronous again. After `STUCK_SYNC` without one, the harness writes the key anew
    /// naming the current leader and no standby, as the leader's own first write would,
    /// and counts it; the leader then names its standby. It never deletes the key: with
    /// the key empty Patroni lets any healthy replica promote (`ha.py`, "only last known
    /// primary and sync standby are allowed to promote" holds only for a non-empty key),
    /// which can lose commits only the synchronous standby had; a key naming the leader
    /// alone lets no replica promote until the leader has named one. A replica
    /// still off the leader's timeline then (its WAL diverged past the fork and Patroni
    /// did not rewind it) is reinitialized from the leader (`patronictl reinit`), as an
    /// operator would, and counted; once more 30 s later if it is still off (a base
    /// backup can fail). A cluster still not healthy after `PATIENCE` is an error.
    pub async fn wait_healthy(&self, synchronous: bool) -> Result<(), String> {
        let started = Instant::now();
        let deadline = started + PATIENCE;
        // Repairs made: the key and a reinit after STUCK_SYNC, a second reinit (one whose
        // base backup failed) after twice that.
        let mut repairs = 0u32;
        while !(self.leader().await.is_some() && self.settled(synchronous).await) {
            if repairs < 2 && started.elapsed() > STUCK_SYNC * (repairs + 1) {
                repairs += 1;
                if synchronous && self.rewrite_sync_key().await {
                    self.stale_sync_keys.fetch_add(1, Ordering::Relaxed);
                }
                for name in self.off_timeline().await {
                    self.reinit(&name);
                    self.reinits.fetch_add(1, Ordering::Relaxed);
                }
            }
            if Instant::now() >= deadline {
                // Kept for reading, whatever the test does next.
                self.keep.store(true, Ordering::Relaxed);
                return Err(format!(
                    "the Patroni cluster did not become healthy within {PATIENCE:?}; logs in {}",
                    self.dir.path().display()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// Whether Patroni's own view of the cluster (`GET /cluster`) has every node running
    /// on the leader's timeline, and a synchronous standby when `synchronous`.
    async fn settled(&self, synchronous: bool) -> bool {
        let Some(view) = self.cluster_view().await else {
            return false;
        };
        let members = view["members"].as_array().cloned().unwrap_or_default();
        let Some(leader) = members.iter().find(|m| m["role"] == "leader") else {
            return false;
        };
        let timeline = &leader["timeline"];
        members.len() == self.nodes.len()
            && members.iter().all(|m| {
                matches!(m["state"].as_str(), Some("running" | "streaming"))
                    && &m["timeline"] == timeline
            })
            && (!synchronous || members.iter().any(|m| m["role"] == "sync_standby"))
    }

    /// The members not running on the leader's timeline (none while there is no leader).
    async fn off_timeline(&self) -> Vec<String> {
        let Some(view) = self.cluster_view().await else {
            return Vec::new();
        };
        let members = view["members"].as_array().cloned().unwrap_or_default();
        let Some(leader) = members.iter().find(|m| m["role"] == "leader") else {
            return Vec::new();
        };
        members
            .iter()
            .filter(|m| m["timeline"] != leader["timeline"])
            .filter_map(|m| m["name"].as_str().map(str::to_string))
            .collect()
    }

    /// `patronictl reinit`: the replica's data taken anew from the leader.
    fn reinit(&self, name: &str) {
        let output = Command::new("patronictl")
            .arg("-c")
            .arg(&self.nodes[0].config)
            .args(["reinit", "ctxd-ha", name, "--force"])
            .current_dir("/")
            .uid(self.uid)
            .gid(self.gid)
            .output()
            .unwrap();
        println!(
            "harness: reinitialized {name}, off the leader's timeline: {}",
            String::from_utf8_lossy(&output.stdout).trim()
        );
    }

    /// Writes Patroni's synchronous-replication key through etcd's v3 JSON gateway:
    /// the current leader, no standby. Whether it was written.
    async fn rewrite_sync_key(&self) -> bool {
        let Some(leader) = self.leader().await else {
            return false;
        };
        let state = serde_json::json!({"leader": self.nodes[leader].name, "sync_standby": null});
        let body = serde_json::json!({
            "key": base64("/service/ctxd-ha/sync"),
            "value": base64(&state.to_string()),
        });
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/v3/kv/put", self.etcd_port))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .is_ok_and(|response| response.status().is_success())
    }

    async fn cluster_view(&self) -> Option<serde_json::Value> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(1))
            .build()
            .unwrap();
        for node in &self.nodes {
            let url = format!("http://127.0.0.1:{}/cluster", node.rest_port);
            if let Ok(response) = client.get(url).send().await
                && let Ok(text) = response.text().await
                && let Ok(view) = serde_json::from_str(&text)
            {
                return Some(view);
            }
        }
        None
    }

    /// The node Patroni calls the primary, if one is.
    pub async fn leader(&self) -> Option<usize> {
        for (index, node) in self.nodes.iter().enumerate() {
            if rest_status(node.rest_port, "primary").await == 200 {
                return Some(index);
            }
        }
        None
    }

    /// Kills node `index` whole: its Patroni and its postmaster, SIGKILL.
    pub fn kill_node(&mut self, index: usize) {
        if let Some(mut child) = self.nodes[index].patroni.take() {
            child.kill().ok();
            child.wait().ok();
        }
        self.signal_postmaster(index, libc::SIGKILL);
    }

    /// Kills node `index`'s postmaster alone (its Patroni restarts it).
    pub fn kill_postmaster(&self, index: usize) {
        self.signal_postmaster(index, libc::SIGKILL);
    }

    /// Stops (SIGSTOP) or resumes (SIGCONT) node `index`'s Patroni and postmaster.
    pub fn freeze(&self, index: usize, frozen: bool) {
        let signal = if frozen { libc::SIGSTOP } else { libc::SIGCONT };
        if let Some(child) = &self.nodes[index].patroni {
            // SAFETY: kill(2) on a child we own.
            unsafe { libc::kill(child.id() as i32, signal) };
        }
        self.signal_postmaster(index, signal);
    }

    fn signal_postmaster(&self, index: usize, signal: i32) {
        let pid_file = self.nodes[index].data.join("postmaster.pid");
        if let Ok(text) = std::fs::read_to_string(pid_file)
            && let Some(pid) = text
                .lines()
                .next()
                .and_then(|l| l.trim().parse::<i32>().ok())
        {
            // SAFETY: kill(2) on the postmaster this cluster started.
            unsafe { libc::kill(pid, signal) };
        }
    }

    /// `patronictl switchover` from the leader `from` to the node Patroni picks (with
    /// synchronous replication, the synchronous standby: no other may take over). A
    /// switchover the leader refuses for now (its standby still catching up) is asked
    /// again.
    pub async fn switchover(&self, from: usize) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let output = Command::new("patronictl")
                .arg("-c")
                .arg(&self.nodes[from].config)
                .args(["switchover", "--leader", &self.nodes[from].name, "--force"])
                .current_dir("/")
                .uid(self.uid)
                .gid(self.gid)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "patronictl switchover: {said}{}",
                String::from_utf8_lossy(&output.stderr)
            );
            // patronictl exits 0 when the leader refuses a switchover; it says so.
            if !said.contains("Switchover failed") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no switchover within {PATIENCE:?}: {said}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits until a node other than `old` is the primary; when it is.
    pub async fn wait_new_leader(&self, old: usize) -> Instant {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(leader) = self.leader().await
                && leader != old
            {
                return Instant::now();
            }
            assert!(
                Instant::now() < deadline,
                "no new leader within {PATIENCE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() || self.keep.load(Ordering::Relaxed) {
            // A failed run keeps its files: the logs say what the cluster did.
            eprintln!(
                "the cluster's files and logs: {}",
                self.dir.path().display()
            );
            self.dir.disable_cleanup(true);
        }
        for index in 0..self.nodes.len() {
            self.freeze(index, false);
            self.kill_node(index);
        }
        self.haproxy.kill().ok();
        self.haproxy.wait().ok();
        self.etcd.kill().ok();
        self.etcd.wait().ok();
    }
}

impl Node {
    fn yaml(&self, dir: &Path, etcd_port: u16, synchronous: bool) -> String {
        let (ttl, loop_wait, retry_timeout) = timings();
        // CTXD_HA_STRICT: commits wait for a synchronous standby even when none is left
        // (Patroni otherwise turns synchronous replication off to stay available).
        let strict = synchronous && std::env::var_os("CTXD_HA_STRICT").is_some();
        format!(
            "scope: ctxd-ha
name: {name}
restapi:
  listen: 127.0.0.1:{rest}
  connect_address: 127.0.0.1:{rest}
{dcs}:
  hosts: 127.0.0.1:{etcd_port}
bootstrap:
  dcs:
    ttl: {ttl}
    loop_wait: {loop_wait}
    retry_timeout: {retry_timeout}
    synchronous_mode: {synchronous}
    synchronous_mode_strict: {strict}
    maximum_lag_on_failover: {max_lag}
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 200
        wal_log_hints: 'on'
        wal_keep_size: 1GB
        wal_retrieve_retry_interval: 1s
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication replicator 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:{pg}
  connect_address: 127.0.0.1:{pg}
  data_dir: {data}
  bin_dir: {bin}
  pgpass: {dir}/{name}.pgpass
  authentication:
    superuser: {{username: postgres, password: pw}}
    replication: {{username: replicator, password: pw}}
    rewind: {{username: postgres, password: pw}}
  parameters:
    unix_socket_directories: {dir}
",
            // Patroni promotes no replica further behind than this (1 MB by default): with
            // asynchronous replication under load every replica can be, and a lost leader
            // then is never replaced. The asynchronous trials allow 256 MB (a failover
            // that may lose that much rather than none at all); synchronous replication
            // promotes only the synchronous standby whatever the setting.
            max_lag = if synchronous { 1_048_576 } else { 268_435_456 },
            dcs = dcs(),
            name = self.name,
            rest = self.rest_port,
            pg = self.pg_port,
            data = self.data.display(),
            bin = pg_bin().display(),
            dir = dir.display(),
        )
    }
}

fn haproxy_config(port: u16, nodes: &[Node]) -> String {
    let mut out = format!(
        "global
    maxconn 2000
    # Each connection, when it closes: when it was accepted, the node it went to, how
    # long it lasted (read beside a failed run's lost.txt).
    log stdout format raw local0
defaults
    log global
    option tcplog
    mode tcp
    timeout connect 2s
    timeout client 30m
    timeout server 30m
    timeout check 1s
listen primary
    bind 127.0.0.1:{port}
    option httpchk OPTIONS /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
"
    );
    for node in nodes {
        out.push_str(&format!(
            "    server {} 127.0.0.1:{} check port {}\n",
            node.name, node.pg_port, node.rest_port
        ));
    }
    out
}

async fn rest_status(port: u16, path: &str) -> u16 {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    client
        .get(format!("http://127.0.0.1:{port}/{path}"))
        .send()
        .await
        .map_or(0, |response| response.status().as_u16())
}

/// A log file, appended to: a node started again keeps its earlier runs' lines.
fn log(dir: &Path, name: &str) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))
        .unwrap()
}

/// Standard base64 of `text` (etcd's JSON gateway takes keys so).
fn base64(text: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let bytes = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let bits = u32::from(bytes[0]) << 16 | u32::from(bytes[1]) << 8 | u32::from(bytes[2]);
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(char::from(
                    ALPHABET[(bits >> (18 - 6 * index) & 63) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn base64_is_standard() {
    assert_eq!(
        base64("/service/ctxd-ha/sync"),
        "L3NlcnZpY2UvY3R4ZC1oYS9zeW5j"
    );
    assert_eq!(base64("ab"), "YWI=");
    assert_eq!(base64("a"), "YQ==");
}
