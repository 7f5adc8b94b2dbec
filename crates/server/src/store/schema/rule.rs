//! The expand/contract rule, read from a migration's SQL: what a migration may do so a
//! binary that does not know it still runs on the schema it leaves. Checked over every
//! migration by this module's tests; docs/decisions/0023-schema-upgrades.md says why.
//!
//! An expand migration adds: tables, nullable columns or columns with a default,
//! indexes, and constraints on tables it creates itself. Anything that removes, renames
//! or narrows what exists (a binary one release older may still read or write it) is a
//! contract, named `NNNN_contract_MMMM_what.sql`: binaries knowing migration MMMM or
//! later no longer use what it removes.

/// Why `sql` is not an expand migration, one sentence per statement that breaks the
/// rule; empty when it is one.
pub fn contract_statements(sql: &str) -> Vec<String> {
    let statements = statements(sql);
    let created: Vec<String> = statements.iter().filter_map(|s| created_table(s)).collect();
    let mut out = Vec::new();
    for statement in &statements {
        if let Some(reason) = narrowing(statement, &created) {
            out.push(format!("{reason}: {}", clip(statement)));
        }
    }
    out
}

/// What in `statement` removes, renames or narrows something that exists.
fn narrowing(statement: &str, created: &[String]) -> Option<&'static str> {
    let words: Vec<&str> = statement.split_whitespace().collect();
    let has = |phrase: &str| {
        let phrase: Vec<&str> = phrase.split(' ').collect();
        words.windows(phrase.len()).any(|w| w == phrase.as_slice())
    };
    let on_new_table = altered_table(statement).is_some_and(|t| created.contains(&t));
    if words.first() == Some(&"drop") && !has("drop index") {
        return Some("drops what exists");
    }
    if has("drop column") || (has("drop constraint") && !on_new_table) {
        return Some("drops what exists");
    }
    if has("rename") {
        return Some("renames what exists");
    }
    if has("set not null") && !on_new_table {
        return Some("narrows a column older binaries write");
    }
    if words
        .windows(2)
        .any(|w| w[0] == "alter" && w[1] == "column")
        && has("type")
    {
        return Some("changes a column's type");
    }
    if has("add column") && has("not null") && !has("default") {
        return Some("adds a column older binaries do not write, not null and without a default");
    }
    if (has("add constraint") || has("create unique index")) && !on_new_table {
        return Some("adds a constraint older binaries' writes may break");
    }
    None
}

/// The statements of `sql`, comments removed, lower case, one space between words.
fn statements(sql: &str) -> Vec<String> {
    let text: String = sql
        .lines()
        .map(|line| line.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ");
    text.split(';')
        .map(|s| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

fn created_table(statement: &str) -> Option<String> {
    let rest = statement.strip_prefix("create table ")?;
    let rest = rest.strip_prefix("if not exists ").unwrap_or(rest);
    rest.split([' ', '(']).next().map(str::to_string)
}

/// The table an `alter table` or `create [unique] index … on` statement changes.
fn altered_table(statement: &str) -> Option<String> {
    if let Some(rest) = statement.strip_prefix("alter table ") {
        let rest = rest.strip_prefix("if exists ").unwrap_or(rest);
        let rest = rest.strip_prefix("only ").unwrap_or(rest);
        return rest.split([' ', '(']).next().map(str::to_string);
    }
    let (_, on) = statement.split_once(" on ")?;
    let on = on.strip_prefix("only ").unwrap_or(on);
    on.split([' ', '(']).next().map(str::to_string)
}

fn clip(statement: &str) -> String {
    statement.chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Migrations written before the rule, which the releases that shipped them did
    /// not run beside older binaries: version and why.
    const BEFORE_THE_RULE: &[(i64, &str)] = &[(
        2,
        "view_tokens filled for every row, then set not null: older binaries wrote none",
    )];

    #[test]
    fn every_migration_expands_or_is_named_a_contract() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let mut checked = 0;
        for m in super::super::known() {
            let file = std::fs::read_dir(&dir)
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .find(|path| {
                    path.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&format!("{:04}_", m.version)))
                })
                .unwrap();
            let sql = std::fs::read_to_string(&file).unwrap();
            let broken = contract_statements(&sql);
            let contract = super::super::contracts_after(&m.description).is_some();
            let excused = BEFORE_THE_RULE.iter().any(|(v, _)| *v == m.version);
            assert!(
                broken.is_empty() || contract || excused,
                "{} is not an expand migration; name it NNNN_contract_MMMM_what.sql (see docs/decisions/0023-schema-upgrades.md): {broken:?}",
                file.display()
            );
            assert!(
                !(excused && broken.is_empty()),
                "{} is excused from the rule but keeps it: drop it from BEFORE_THE_RULE",
                file.display()
            );
            checked += 1;
        }
        assert!(checked >= 17, "every migration read ({checked})");
    }

    #[test]
    fn the_rule_tells_expanding_from_narrowing() {
        let ok = "create table t (a int not null);\nalter table t add constraint c check (a > 0);\n\
                  alter table s add column b bigint not null default 0; -- drop column x\n\
                  alter table s add column c text;\ncreate index i on s (c);\ndrop index i;";
        assert_eq!(contract_statements(ok), Vec::<String>::new());
        for bad in [
            "alter table s drop column b",
            "drop table s",
            "alter table s rename column b to c",
            "alter table s alter column b set not null",
            "alter table s alter column b type text",
            "alter table s add column b bigint not null",
            "create unique index u on s (b)",
            "alter table s add constraint c check (b > 0)",
        ] {
            assert_eq!(contract_statements(bad).len(), 1, "{bad}");
        }
    }
}
