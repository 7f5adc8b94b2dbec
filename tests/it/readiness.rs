//! Readiness tells the truth: while the database is stopped, gRPC health says
//! NOT_SERVING and `/readyz` 503 (`/livez` stays 200); once it is back, SERVING and 200
//! again. A plain PostgreSQL (ctxd's own launcher, in a temporary directory) stopped and
//! started under a running `ctxd serve`.
use std::process::Stdio;

use ctxd::localpg::LocalPostgres;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::binary::{free_port, terminate, wait_serving};
use crate::support::wait_until;

async fn health(addr: &str) -> Option<ServingStatus> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .ok()?
        .connect()
        .await
        .ok()?;
    let request = HealthCheckRequest {
        service: String::new(),
    };
    let response = HealthClient::new(channel).check(request).await.ok()?;
    Some(response.into_inner().status())
}

async fn status(url: &str) -> u16 {
    reqwest::get(url)
        .await
        .map_or(0, |response| response.status().as_u16())
}

#[tokio::test]
async fn health_and_readyz_follow_the_database() {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-ready")
        .tempdir_in("/tmp")
        .unwrap();
    let data = dir.path().join("pg");
    let postgres = LocalPostgres::start(&data)
        .await
        .expect("a private PostgreSQL");
    let url = postgres.url();
    let (port, metrics) = (free_port(), free_port());
    let addr = format!("127.0.0.1:{port}");
    let readyz = format!("http://127.0.0.1:{metrics}/readyz");
    let livez = format!("http://127.0.0.1:{metrics}/livez");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args([
            "serve",
            "--listen",
            &addr,
            "--metrics-listen",
            &format!("127.0.0.1:{metrics}"),
        ])
        .env("DATABASE_URL", &url)
        .env("CTXD_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_serving(&addr, &mut child).await;
    assert_eq!(status(&readyz).await, 200);

    postgres.stop().await.expect("stop PostgreSQL");
    let down = wait_until(|| async {
        health(&addr).await == Some(ServingStatus::NotServing) && status(&readyz).await == 503
    })
    .await;
    assert!(
        down,
        "health {:?}, /readyz {}",
        health(&addr).await,
        status(&readyz).await
    );
    assert_eq!(status(&livez).await, 200);

    let postgres = LocalPostgres::start(&data).await.expect("PostgreSQL again");
    assert_eq!(postgres.url(), url);
    let up = wait_until(|| async {
        health(&addr).await == Some(ServingStatus::Serving) && status(&readyz).await == 200
    })
    .await;
    assert!(
        up,
        "health {:?}, /readyz {}",
        health(&addr).await,
        status(&readyz).await
    );
    terminate(child).await;
    postgres.stop().await.expect("stop PostgreSQL");
}
