//! What a binary does with the schema it finds: the migrations it knows compared with
//! those the database has applied. Pure: the caller reads both lists.
//!
//! The rule (docs/decisions/0023-schema-upgrades.md): a migration only expands the
//! schema unless its name says `contract_NNNN_…`, which removes something no binary
//! knowing migration NNNN or later uses. So a binary runs on a schema with migrations it
//! does not know, unless one of them contracts what this binary still uses.
use std::fmt::Write as _;

/// A migration as the binary knows it or the database recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    pub version: i64,
    pub description: String,
    pub checksum: Vec<u8>,
}

/// A migration the database recorded, and whether it finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub migration: Migration,
    pub success: bool,
}

/// The schema against this binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// Known migrations the database has not applied, in order.
    pub pending: Vec<Migration>,
    /// Applied migrations this binary does not know (a newer binary's).
    pub newer: Vec<Migration>,
    /// Why this binary must not run on the schema at all, when it must not.
    pub refusal: Option<String>,
}

/// Compares the binary's migrations with the database's.
pub fn assess(known: &[Migration], applied: &[Applied]) -> Assessment {
    let newest_known = known.iter().map(|m| m.version).max().unwrap_or(0);
    let mut refusals = Vec::new();
    for record in applied {
        let m = &record.migration;
        if !record.success {
            refusals.push(format!(
                "migration {} ({}) did not finish; repair it by hand",
                m.version, m.description
            ));
        }
        if let Some(mine) = known.iter().find(|k| k.version == m.version)
            && mine.checksum != m.checksum
        {
            refusals.push(format!(
                "migration {} ({}) was applied from a different file than this ctxd carries",
                m.version, m.description
            ));
        }
    }
    let newer: Vec<Migration> = applied
        .iter()
        .map(|a| &a.migration)
        .filter(|m| !known.iter().any(|k| k.version == m.version))
        .cloned()
        .collect();
    for m in &newer {
        if let Some(after) = contracts_after(&m.description)
            && after > newest_known
        {
            refusals.push(format!(
                "migration {} ({}) removes what this ctxd still uses (it knows migrations up to {newest_known}); run a ctxd that knows migration {after} or later",
                m.version, m.description
            ));
        }
    }
    let pending = known
        .iter()
        .filter(|k| !applied.iter().any(|a| a.migration.version == k.version))
        .cloned()
        .collect();
    Assessment {
        pending,
        newer,
        refusal: (!refusals.is_empty()).then(|| refusals.join("; ")),
    }
}

/// For a contract migration (`contract NNNN …`, from a file `MMMM_contract_NNNN_….sql`),
/// the migration from which on binaries no longer use what it removes.
pub fn contracts_after(description: &str) -> Option<i64> {
    let rest = description.strip_prefix("contract ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

impl Assessment {
    /// The pending migrations as one line: `0016 subagent sessions, 0017 proxy heads`.
    pub fn pending_list(&self) -> String {
        list(&self.pending)
    }

    /// The newer migrations as one line.
    pub fn newer_list(&self) -> String {
        list(&self.newer)
    }
}

fn list(migrations: &[Migration]) -> String {
    let mut out = String::new();
    for (index, m) in migrations.iter().enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{:04} {}", m.version, m.description);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(version: i64, description: &str) -> Migration {
        Migration {
            version,
            description: description.into(),
            checksum: vec![version as u8],
        }
    }

    fn applied(migrations: &[Migration]) -> Vec<Applied> {
        migrations
            .iter()
            .map(|m| Applied {
                migration: m.clone(),
                success: true,
            })
            .collect()
    }

    #[test]
    fn a_fresh_database_has_everything_pending() {
        let known = [m(1, "core"), m(2, "jobs")];
        let a = assess(&known, &[]);
        assert_eq!(a.pending, known);
        assert!(a.newer.is_empty() && a.refusal.is_none());
        assert_eq!(a.pending_list(), "0001 core, 0002 jobs");
    }

    #[test]
    fn an_older_binary_runs_on_an_expanded_schema() {
        let known = [m(1, "core")];
        let a = assess(&known, &applied(&[m(1, "core"), m(2, "jobs")]));
        assert!(a.pending.is_empty());
        assert_eq!(a.newer, [m(2, "jobs")]);
        assert_eq!(a.refusal, None);
    }

    #[test]
    fn a_contract_refuses_only_the_binaries_that_still_use_what_it_removes() {
        let schema = applied(&[m(1, "core"), m(2, "jobs"), m(3, "contract 0002 drop x")]);
        let knows_two = assess(&[m(1, "core"), m(2, "jobs")], &schema);
        assert_eq!(knows_two.refusal, None);
        let knows_one = assess(&[m(1, "core")], &schema);
        let refusal = knows_one.refusal.unwrap();
        assert!(
            refusal.contains("migration 3 (contract 0002 drop x)"),
            "{refusal}"
        );
    }

    #[test]
    fn a_changed_or_unfinished_migration_is_refused() {
        let mut changed = m(1, "core");
        changed.checksum = vec![9];
        let a = assess(&[m(1, "core")], &applied(&[changed]));
        assert!(a.refusal.unwrap().contains("different file"));
        let unfinished = [Applied {
            migration: m(1, "core"),
            success: false,
        }];
        assert!(
            assess(&[m(1, "core")], &unfinished)
                .refusal
                .unwrap()
                .contains("did not finish")
        );
    }

    #[test]
    fn contract_names_are_read_strictly() {
        assert_eq!(contracts_after("contract 0018 drop foo"), Some(18));
        assert_eq!(contracts_after("contracts table"), None);
        assert_eq!(contracts_after("contract drop foo"), None);
        assert_eq!(contracts_after("proxy heads"), None);
    }
}
