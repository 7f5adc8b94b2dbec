//! What the integration tests share beyond the server harness.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `condition` until it holds or 30 s pass, for what no event announces (work a
/// server finishes after answering); whether it came true.
pub async fn wait_until<F, Fut>(mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if condition().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
