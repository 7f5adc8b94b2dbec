//! Readiness through the faults: each replica's `GET /readyz` (on its metrics listener)
//! asked every 100 ms, its changes kept with their times, so a fault's figures can say
//! whether every replica reported itself not ready while the engine was gone and how
//! soon after the engine took writes again all were ready.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::wait_until;

/// (replica, when, ready) at each change of a replica's answer.
type Changes = Arc<Mutex<Vec<(usize, Instant, bool)>>>;

pub struct Watch {
    changes: Changes,
    replicas: usize,
    task: tokio::task::JoinHandle<()>,
}

impl Watch {
    pub fn start(metrics: &[String]) -> Watch {
        let changes: Changes = Arc::default();
        let task = tokio::spawn(watch(metrics.to_vec(), changes.clone()));
        Watch {
            changes,
            replicas: metrics.len(),
            task,
        }
    }

    fn ready_now(&self) -> bool {
        let changes = self.changes.lock().unwrap();
        (0..self.replicas).all(|replica| {
            changes
                .iter()
                .rev()
                .find(|(r, _, _)| *r == replica)
                .is_some_and(|(_, _, ready)| *ready)
        })
    }

    /// Once every replica is ready again: whether each said not ready after `since`,
    /// and when the last of them became ready again.
    pub async fn after(&self, since: Instant) -> (bool, Instant) {
        assert!(
            wait_until(|| async { self.ready_now() }).await,
            "replicas not ready 30 s after the cluster was healthy"
        );
        let changes = self.changes.lock().unwrap();
        let later = changes.iter().filter(|(_, at, _)| *at >= since);
        let mut went_down = vec![false; self.replicas];
        let mut back = since;
        for (replica, at, ready) in later {
            if *ready {
                back = back.max(*at);
            } else {
                went_down[*replica] = true;
            }
        }
        (went_down.iter().all(|down| *down), back)
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

async fn watch(metrics: Vec<String>, changes: Changes) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let mut last: Vec<Option<bool>> = vec![None; metrics.len()];
    loop {
        for (replica, addr) in metrics.iter().enumerate() {
            let ready = http
                .get(format!("http://{addr}/readyz"))
                .send()
                .await
                .is_ok_and(|response| response.status().is_success());
            if last[replica] != Some(ready) {
                last[replica] = Some(ready);
                changes
                    .lock()
                    .unwrap()
                    .push((replica, Instant::now(), ready));
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
