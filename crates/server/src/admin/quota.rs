//! `ctxd tenant quota NAME [--requests-per-sec N] … [--reset]`: sets a tenant's own
//! quotas (the rest keep the server's defaults) and prints the quotas in force. Servers
//! apply a change within `quotas::OVERRIDES_TTL` (5 s), without a restart.
use clap::Args;
use serde_json::json;

use super::{AdminError, check_tenant_name, table};
use crate::error::quoted;
use crate::quota::{QuotaOverrides, Quotas, check_rate, check_value};
use crate::quotas::OVERRIDES_TTL;
use crate::store::Store;

/// The overrides a `ctxd tenant quota` sets; an absent flag keeps the tenant's value.
#[derive(Debug, Clone, Default, Args)]
pub struct QuotaChanges {
    /// RPCs per second on each replica, e.g. 50 or 0.5 (0: off).
    #[arg(long)]
    pub requests_per_sec: Option<f64>,
    /// RPCs at once after a quiet spell (0: one second's worth).
    #[arg(long)]
    pub requests_burst: Option<u64>,
    /// Bytes of text appended per minute on each replica (0: off).
    #[arg(long)]
    pub append_bytes_per_min: Option<u64>,
    /// Sessions the tenant may hold (0: off).
    #[arg(long)]
    pub live_sessions: Option<u64>,
    /// Bytes of text the tenant's sessions may hold together (0: off).
    #[arg(long)]
    pub stored_bytes: Option<u64>,
    /// Clear the tenant's own quotas first (back to the server's defaults), then apply
    /// the flags given with it.
    #[arg(long)]
    pub reset: bool,
}

impl QuotaChanges {
    /// The overrides asked for, each within its bounds (the error names the flag).
    fn overrides(&self) -> Result<QuotaOverrides, AdminError> {
        if let Some(rate) = self.requests_per_sec {
            check_rate(rate).map_err(|reason| format!("--requests-per-sec: {reason}"))?;
        }
        for (flag, value) in [
            ("--requests-burst", self.requests_burst),
            ("--append-bytes-per-min", self.append_bytes_per_min),
            ("--live-sessions", self.live_sessions),
            ("--stored-bytes", self.stored_bytes),
        ] {
            if let Some(value) = value {
                check_value(value).map_err(|reason| format!("{flag}: {reason}"))?;
            }
        }
        Ok(QuotaOverrides {
            requests_per_sec: self.requests_per_sec,
            requests_burst: self.requests_burst,
            append_bytes_per_min: self.append_bytes_per_min,
            live_sessions: self.live_sessions,
            stored_bytes: self.stored_bytes,
        })
    }
}

/// Applies `changes` to the tenant's quotas and lists the quotas in force with where
/// each comes from (the tenant's own, or the server's `defaults`).
pub async fn run(
    store: &Store,
    name: &str,
    changes: &QuotaChanges,
    defaults: &Quotas,
    json: bool,
) -> Result<String, AdminError> {
    check_tenant_name(name)?;
    let overrides = changes.overrides()?;
    let stored = store
        .set_tenant_quotas(name, &overrides, changes.reset)
        .await?
        .ok_or_else(|| AdminError::NoTenant(quoted(name)))?;
    eprintln!(
        "quotas of tenant {name:?} set; every server applies them within {} s",
        OVERRIDES_TTL.as_secs()
    );
    Ok(listing(name, &stored, defaults, json))
}

/// Each quota's name, value in force (0: off) and source.
fn listing(name: &str, own: &QuotaOverrides, defaults: &Quotas, json: bool) -> String {
    let in_force = defaults.with(own);
    let rows = [
        (
            "requests_per_sec",
            in_force.requests_per_sec.to_string(),
            own.requests_per_sec.is_some(),
        ),
        (
            "requests_burst",
            in_force.requests_burst.to_string(),
            own.requests_burst.is_some(),
        ),
        (
            "append_bytes_per_min",
            in_force.append_bytes_per_min.to_string(),
            own.append_bytes_per_min.is_some(),
        ),
        (
            "live_sessions",
            in_force.live_sessions.to_string(),
            own.live_sessions.is_some(),
        ),
        (
            "stored_bytes",
            in_force.stored_bytes.to_string(),
            own.stored_bytes.is_some(),
        ),
    ];
    let source = |own: bool| if own { "tenant" } else { "default" };
    if json {
        let quotas: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|(quota, value, own)| {
                let value: serde_json::Value = value.parse().unwrap_or(json!(value));
                (
                    quota.to_string(),
                    json!({"value": value, "source": source(*own)}),
                )
            })
            .collect();
        return format!("{}\n", json!({"tenant": name, "quotas": quotas}));
    }
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(quota, value, own)| {
            let shown = match (*quota, value.as_str()) {
                ("requests_burst", "0") => "0 (one second's worth)".into(),
                (_, "0") => "0 (off)".into(),
                _ => value.clone(),
            };
            vec![quota.to_string(), shown, source(*own).to_string()]
        })
        .collect();
    table::render(&["QUOTA", "VALUE", "SOURCE"], &rows)
}
