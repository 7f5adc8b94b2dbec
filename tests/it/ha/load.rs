//! Clients as an agent backend runs them through a failover: each appends to its own
//! session with an idempotency key per message, retrying the same key until it is
//! acknowledged, alternating between two ctxd replicas; every tenth turn is a tool call
//! and a result large enough to be evicted (an event on the tenant's stream); the
//! sessions' window is small enough that their appends enqueue summarization jobs. Every
//! acknowledgement and every INTERNAL answer is recorded. Afterwards each session is read
//! back (Expand) and compared with what was acknowledged.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use tokio::sync::Mutex;
use tonic::transport::Channel;

use crate::harness::{result, user};

type Client = ContextServiceClient<Channel>;

/// What the clients saw.
#[derive(Default)]
pub struct Record {
    /// When each append was acknowledged.
    pub acks: Vec<Instant>,
    /// Per client, the messages acknowledged (in order) and when.
    pub acknowledged: Vec<Vec<String>>,
    pub acknowledged_at: Vec<Vec<Instant>>,
    pub internal: usize,
}

pub struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    pub record: Arc<Mutex<Record>>,
}

/// Connects lazily, so a replica that is not reachable yet is tried again on each call.
pub fn client(addr: &str) -> Client {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(1))
        .timeout(Duration::from_secs(5))
        .connect_lazy();
    ContextServiceClient::new(channel)
}

pub fn session_id(client: usize) -> String {
    format!("ha-{client}")
}

impl Load {
    /// `clients` clients over the replicas at `addrs`, their sessions created.
    pub async fn start(addrs: &[String], clients: usize) -> Load {
        let record = Arc::new(Mutex::new(Record {
            acknowledged: vec![Vec::new(); clients],
            acknowledged_at: vec![Vec::new(); clients],
            ..Record::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for index in 0..clients {
            let replicas: Vec<Client> = addrs.iter().map(|a| client(a)).collect();
            let mut first = replicas[0].clone();
            first
                .create_session(pb::CreateSessionRequest {
                    session_id: session_id(index),
                    // Small enough that the appends cross the summarize threshold
                    // and enqueue jobs for the "model" profile.
                    policy: Some(pb::Policy {
                        summarizer_profile: Some("model".into()),
                        ..crate::harness::window(40_000, 4_000)
                    }),
                    ..Default::default()
                })
                .await
                .unwrap();
            tasks.push(tokio::spawn(run_client(
                index,
                replicas,
                stop.clone(),
                record.clone(),
            )));
        }
        Load {
            stop,
            tasks,
            record,
        }
    }

    /// Waits until `count` more appends are acknowledged after now.
    pub async fn wait_acks(&self, count: usize) {
        let start = self.record.lock().await.acks.len();
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.record.lock().await.acks.len() < start + count {
            assert!(
                Instant::now() < deadline,
                "appends did not resume within 120 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the clients once each has its current append acknowledged.
    pub async fn stop(self) -> Record {
        self.stop.store(true, Ordering::SeqCst);
        for task in self.tasks {
            task.await.unwrap();
        }
        Arc::try_unwrap(self.record).ok().unwrap().into_inner()
    }
}

async fn run_client(
    index: usize,
    mut replicas: Vec<Client>,
    stop: Arc<AtomicBool>,
    record: Arc<Mutex<Record>>,
) {
    let session = session_id(index);
    let mut turn = 0usize;
    while !stop.load(Ordering::SeqCst) {
        let messages = turn_messages(index, turn);
        let contents: Vec<String> = messages.iter().map(|m| m.content.clone()).collect();
        let request = pb::AppendTurnRequest {
            session_id: session.clone(),
            messages,
            idempotency_key: format!("{session}-{turn}"),
            ..Default::default()
        };
        let mut attempt = 0usize;
        loop {
            let replica = &mut replicas[(turn + attempt) % 2];
            match replica.append_turn(request.clone()).await {
                Ok(_) => break,
                Err(status) => {
                    if status.code() == tonic::Code::Internal {
                        record.lock().await.internal += 1;
                    }
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        let mut record = record.lock().await;
        let now = Instant::now();
        record.acks.push(now);
        record.acknowledged_at[index].extend(contents.iter().map(|_| now));
        record.acknowledged[index].extend(contents);
        turn += 1;
    }
}

/// A turn's messages: a user message, or every tenth turn a tool call and its result,
/// about 2 000 tokens (over the eviction threshold of the sessions' window, 1 500, so the
/// append evicts it and announces it).
fn turn_messages(index: usize, turn: usize) -> Vec<pb::Message> {
    if turn % 10 != 9 {
        return vec![user(&format!("client {index} message {turn}"))];
    }
    let id = format!("call-{index}-{turn}");
    let mut call = crate::harness::call(&[id.as_str()]);
    call.content = format!("client {index} call {turn}");
    let output: String = (0..200)
        .map(|line| format!("client {index} turn {turn} output line {line}: ok\n"))
        .collect();
    vec![call, result(&id, &output)]
}

/// An acknowledged append missing from its session: when it was acknowledged, by which
/// client, what it was.
#[derive(Debug, Clone)]
pub struct Lost {
    pub at: Instant,
    pub client: usize,
    pub message: String,
}

/// Each acknowledged append missing from its session, and how many messages are stored
/// more than once.
pub async fn check(addr: &str, record: &Record) -> (Vec<Lost>, usize) {
    let mut replica = client(addr);
    let (mut lost, mut doubled) = (Vec::new(), 0);
    for (index, acknowledged) in record.acknowledged.iter().enumerate() {
        let stored = contents(&mut replica, &session_id(index)).await;
        for (message, at) in acknowledged.iter().zip(&record.acknowledged_at[index]) {
            match stored.iter().filter(|s| *s == message).count() {
                0 => lost.push(Lost {
                    at: *at,
                    client: index,
                    message: message.clone(),
                }),
                1 => {}
                _ => doubled += 1,
            }
        }
        // Nothing but what the client sent, each once.
        let mut unique = stored.clone();
        unique.sort();
        unique.dedup();
        doubled += stored.len() - unique.len();
    }
    (lost, doubled)
}

/// A session's stored contents, in seq order.
async fn contents(replica: &mut Client, session: &str) -> Vec<String> {
    let info = replica
        .get_session(pb::GetSessionRequest {
            session_id: session.to_string(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner();
    let last = info.session.unwrap().message_count;
    let stored = crate::support::expand_all(replica, session, last).await;
    stored.into_iter().map(|m| m.content).collect()
}

/// The longest time between two acknowledgements (across clients) after `since`.
pub fn longest_gap(acks: &[Instant], since: Instant) -> (Duration, Instant) {
    let mut sorted: Vec<Instant> = acks.to_vec();
    sorted.sort();
    let mut best = (Duration::ZERO, since);
    for pair in sorted.windows(2) {
        if pair[1] >= since && pair[1] - pair[0] > best.0 {
            best = (pair[1] - pair[0], pair[1]);
        }
    }
    best
}
