//! docker-compose.yml kept in step with the binary, without a Docker engine: the `ctxd`
//! service's environment, as compose would pass it, starts `ctxd serve` and serves
//! gRPC and metrics; the `observability` profile's Prometheus configuration passes
//! `promtool check config` and scrapes the port that environment opens; the Grafana
//! dashboard uses the data source the provisioning file defines.
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::*;
use crate::metrics::Killed;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The `environment:` map of one service of docker-compose.yml, `${VAR:-default}`
/// resolved to its default as compose does with VAR unset. (A reader of the file's
/// plain two-level layout, not a YAML parser.)
fn service_environment(service: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("docker-compose.yml")).unwrap();
    let mut in_service = false;
    let mut in_environment = false;
    let mut environment = BTreeMap::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if indent == 2 {
            in_service = trimmed == format!("{service}:");
            in_environment = false;
        } else if in_service && indent == 4 {
            in_environment = trimmed == "environment:";
        } else if in_service && in_environment && indent == 6 {
            let (key, value) = trimmed.split_once(':').expect("KEY: value");
            let value = value.trim().trim_matches('"');
            let value = match value.strip_prefix("${").and_then(|v| v.strip_suffix('}')) {
                Some(reference) => reference
                    .split_once(":-")
                    .map_or(String::new(), |(_, default)| default.to_string()),
                None => value.to_string(),
            };
            environment.insert(key.to_string(), value);
        }
    }
    assert!(!environment.is_empty(), "no environment for {service}");
    environment
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compose_environment_starts_ctxd() {
    let environment = service_environment("ctxd");
    for key in ["DATABASE_URL", "CTXD_LISTEN", "CTXD_METRICS_LISTEN"] {
        assert!(environment.contains_key(key), "the compose file sets {key}");
    }
    let (_pool, url) = fresh_database_url("compose").await;
    let addr = format!("127.0.0.1:{}", free_port());
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxd"));
    command.arg("serve");
    // Nothing from the test's own environment but what a container has too.
    for (key, _) in std::env::vars() {
        if key.starts_with("CTXD_") || key.starts_with("OTEL_") || key == "DATABASE_URL" {
            command.env_remove(key);
        }
    }
    for (key, value) in &environment {
        // The compose network's host names and ports, as this machine has them.
        let value = match key.as_str() {
            "DATABASE_URL" => url.clone(),
            "CTXD_LISTEN" => addr.replace("127.0.0.1", "0.0.0.0"),
            "CTXD_METRICS_LISTEN" => metrics_addr.clone(),
            _ => value.clone(),
        };
        command.env(key, value);
    }
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_serving(&addr, &mut child).await;
    let child = Killed::new(child);
    let response = reqwest::get(format!("http://{metrics_addr}/metrics"))
        .await
        .unwrap();
    assert!(response.status().is_success());
    terminate(child.into_inner()).await;
}

/// Every setting the compose file names for ctxd (set, or shown in a comment) is one
/// `ctxd serve` reads: a misspelt variable would be ignored silently.
#[test]
fn every_variable_the_compose_file_names_is_a_setting() {
    let help = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_ctxd"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    // `serve`'s settings, and the healthcheck's the image runs.
    let known = format!(
        "{}{}{}",
        help(&["--help"]),
        help(&["serve", "--help"]),
        help(&["healthcheck", "--help"])
    );
    let text = std::fs::read_to_string(Path::new(ROOT).join("docker-compose.yml")).unwrap();
    let mut named: Vec<String> = service_environment("ctxd").into_keys().collect();
    // Commented alternatives: `#   CTXD_NAME: value`.
    named.extend(text.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let (key, _) = rest.split_once(':')?;
        (key.starts_with("CTXD_") && key.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .then(|| key.to_string())
    }));
    for key in named
        .iter()
        .filter(|key| key.starts_with("CTXD_") || *key == "DATABASE_URL")
    {
        assert!(
            known.contains(&format!("env: {key}=")),
            "docker-compose.yml names {key}, which `ctxd serve` does not read"
        );
    }
}

/// The alert rules fire on the series that should raise them and stay silent on a
/// healthy replica (`promtool test rules`), and the compose file mounts them where
/// deploy/prometheus.yml loads them.
#[test]
fn the_alert_rules_pass_their_tests() {
    let deploy = Path::new(ROOT).join("deploy");
    let output = Command::new("promtool")
        .args(["test", "rules", "prometheus-alerts.test.yml"])
        .current_dir(&deploy)
        .output()
        .expect("promtool (installed with prometheus) must be on PATH");
    assert!(
        output.status.success(),
        "promtool test rules: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let compose = std::fs::read_to_string(Path::new(ROOT).join("docker-compose.yml")).unwrap();
    assert!(
        compose.contains("./deploy/prometheus-alerts.yml:/etc/prometheus/prometheus-alerts.yml:ro"),
        "docker-compose.yml mounts the rules next to prometheus.yml"
    );
}

#[test]
fn the_observability_profile_matches_the_service() {
    let prometheus = Path::new(ROOT).join("deploy/prometheus.yml");
    let output = Command::new("promtool")
        .arg("check")
        .arg("config")
        .arg(&prometheus)
        .output()
        .expect("promtool (installed with prometheus) must be on PATH");
    assert!(
        output.status.success(),
        "promtool check config: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Prometheus scrapes the port the ctxd service's metrics listen on.
    let environment = service_environment("ctxd");
    let port = environment["CTXD_METRICS_LISTEN"]
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let config = std::fs::read_to_string(&prometheus).unwrap();
    assert!(
        config.contains(&format!("\"ctxd:{port}\"")),
        "deploy/prometheus.yml scrapes ctxd:{port}"
    );
    // The dashboard's panels name the data source the provisioning defines.
    let datasource = std::fs::read_to_string(
        Path::new(ROOT).join("deploy/grafana/provisioning/datasources/prometheus.yml"),
    )
    .unwrap();
    let uid = datasource
        .lines()
        .find_map(|line| line.trim().strip_prefix("uid: "))
        .expect("a data source uid")
        .to_string();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("deploy/grafana/ctxd-dashboard.json"))
            .unwrap(),
    )
    .unwrap();
    for panel in dashboard["panels"].as_array().unwrap() {
        for source in std::iter::once(&panel["datasource"]).chain(
            panel["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|target| &target["datasource"]),
        ) {
            if !source.is_null() {
                assert_eq!(source["uid"], uid.as_str(), "{}", panel["title"]);
            }
        }
    }
}
