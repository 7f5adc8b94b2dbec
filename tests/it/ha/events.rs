//! The tenant's event stream read through the faults as a subscriber reads it: on one
//! replica, and after any break (an error, the end of the stream, or five seconds
//! without a heartbeat) again on the other, after the last cursor it received.
//! Afterwards what it received is compared with the whole stream read from the start:
//! events missing, and events delivered twice.
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use tonic::transport::Channel;

use crate::support::wait_until;

/// Heartbeats asked for; a stream silent for five of them is taken as broken.
const HEARTBEAT_MS: u32 = 1000;

pub struct Subscriber {
    received: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

/// A client for a long stream: no per-call deadline.
fn streaming(addr: &str) -> ContextServiceClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(1))
        .connect_lazy();
    ContextServiceClient::new(channel)
}

impl Subscriber {
    pub fn start(addrs: &[String]) -> Subscriber {
        let received = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(subscribe(addrs.to_vec(), received.clone()));
        Subscriber { received, task }
    }

    /// Once the subscriber has caught up with the stream as `addr` gives it from the
    /// start: (events on the stream, missing, delivered twice).
    pub async fn finish(self, addr: &str) -> (usize, usize, usize) {
        let all = read_all(addr).await;
        let last = all.last().cloned();
        let caught_up = wait_until(|| {
            let received = self.received.clone();
            let last = last.clone();
            async move { last.is_none_or(|last| received.lock().unwrap().contains(&last)) }
        })
        .await;
        self.task.abort();
        let received = self.received.lock().unwrap().clone();
        let unique: HashSet<&String> = received.iter().collect();
        let missing = all.iter().filter(|c| !unique.contains(c)).count();
        if !caught_up {
            println!("the subscriber did not catch up within 30 s");
        }
        (all.len(), missing, received.len() - unique.len())
    }
}

async fn subscribe(addrs: Vec<String>, received: Arc<Mutex<Vec<String>>>) {
    let mut last = String::new();
    for attempt in 0.. {
        let mut replica = streaming(&addrs[attempt % addrs.len()]);
        let request = pb::SubscribeEventsRequest {
            after: last.clone(),
            heartbeat_interval_ms: HEARTBEAT_MS,
            ..Default::default()
        };
        if let Ok(response) = replica.subscribe_events(request).await {
            let mut stream = response.into_inner();
            let silence = Duration::from_millis(u64::from(HEARTBEAT_MS) * 5);
            while let Ok(Ok(Some(item))) = tokio::time::timeout(silence, stream.message()).await {
                if let Some(pb::subscribe_events_response::Item::Event(event)) = item.item {
                    received.lock().unwrap().push(event.cursor.clone());
                    last = event.cursor;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every event's cursor, from the oldest kept, up to the end of the backlog.
async fn read_all(addr: &str) -> Vec<String> {
    let request = pb::SubscribeEventsRequest {
        heartbeat_interval_ms: HEARTBEAT_MS,
        ..Default::default()
    };
    let mut stream = streaming(addr)
        .subscribe_events(request)
        .await
        .expect("a subscription from the start")
        .into_inner();
    let mut cursors = Vec::new();
    while let Some(item) = stream.message().await.expect("the backlog") {
        match item.item {
            Some(pb::subscribe_events_response::Item::Event(event)) => cursors.push(event.cursor),
            _ => return cursors,
        }
    }
    cursors
}
