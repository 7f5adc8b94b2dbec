//! Whether a statement stays on one tenant's rows, read from its SQL: every distributed
//! table it reads or writes is filtered by `tenant_id` compared with one parameter (an
//! insert names `tenant_id` among its columns). A distributed database then sends the
//! whole statement to the one node holding that tenant, so it never needs a
//! transaction across nodes.
//!
//! A reader of SQL text, not a parser: it finds each table reference (after `from`,
//! `join`, `update`, `into`, `delete from`, or a comma in a `from` list) and its alias,
//! and looks for `alias.tenant_id = $n` (or `= any($n…)`) anywhere in the statement.
//! It can be fooled by SQL written to fool it; it is a check on ctxd's own statements.

use super::{DISTRIBUTED, Table};

/// What keeps a statement from being routed to one tenant's node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unrouted {
    /// A distributed table read or written without a filter on its tenant.
    Unfiltered { table: String, alias: String },
    /// An insert into a distributed table that does not name `tenant_id`.
    NoTenantColumn { table: String },
    /// Tenant filters compare with different parameters.
    SeveralTenants { parameters: Vec<String> },
    /// A common table expression that inserts: Citus (13.2) plans such a statement
    /// part by part, sending each part's rows to every node, instead of routing it.
    InsertInCte { cte: String },
    /// A common table expression that calls a volatile function: likewise.
    VolatileInCte { cte: String, function: String },
    /// An insert of rows selected from a distributed table: Citus plans the select
    /// apart from the insert unless both are joined on the tenant, which it does not
    /// see through ctxd's filters.
    InsertFromTables { table: String },
}

/// The volatile functions ctxd's statements call.
const VOLATILE: &[&str] = &[
    "pg_notify",
    "set_config",
    "nextval",
    "pg_current_xact_id",
    "random",
    "clock_timestamp",
];

/// The reasons `sql` (one statement, or a part of one) is not routed to one tenant.
pub fn unrouted(sql: &str) -> Vec<Unrouted> {
    let tokens = tokens(sql);
    let mut found = Vec::new();
    for reference in references(&tokens) {
        if reference.insert {
            if !inserts_tenant(&tokens, reference.at) {
                found.push(Unrouted::NoTenantColumn {
                    table: reference.table.to_string(),
                });
            }
        } else if tenant_parameters(&tokens, &reference.alias).is_empty() {
            found.push(Unrouted::Unfiltered {
                table: reference.table.to_string(),
                alias: reference.alias.clone(),
            });
        }
    }
    let mut parameters: Vec<String> = references(&tokens)
        .iter()
        .flat_map(|r| tenant_parameters(&tokens, &r.alias))
        .collect();
    parameters.sort();
    parameters.dedup();
    if parameters.len() > 1 {
        found.push(Unrouted::SeveralTenants { parameters });
    }
    found.extend(unroutable_ctes(&tokens));
    found.extend(inserts_from_tables(&tokens));
    found
}

/// The inserts whose rows come from a select reading a distributed table.
fn inserts_from_tables(tokens: &[String]) -> Vec<Unrouted> {
    let references = references(tokens);
    let mut found = Vec::new();
    for insert in references.iter().filter(|r| r.insert) {
        let end = insert_end(tokens, insert.at);
        if references
            .iter()
            .any(|r| !r.insert && r.at > insert.at && r.at < end)
        {
            found.push(Unrouted::InsertFromTables {
                table: insert.table.to_string(),
            });
        }
    }
    found
}

/// Where the insert whose target is at `at` ends: where the parenthesis it is in
/// closes, or the end.
fn insert_end(tokens: &[String], at: usize) -> usize {
    let mut depth = 0i32;
    for (i, token) in tokens.iter().enumerate().skip(at) {
        match token.as_str() {
            "(" => depth += 1,
            ")" if depth == 0 => return i,
            ")" => depth -= 1,
            _ => {}
        }
    }
    tokens.len()
}

/// The common table expressions (`name as (…)`) a distributed database does not route:
/// those that insert or call a volatile function.
fn unroutable_ctes(tokens: &[String]) -> Vec<Unrouted> {
    let mut found = Vec::new();
    for (name, body) in ctes(tokens) {
        if body.first().is_some_and(|t| t == "insert") {
            found.push(Unrouted::InsertInCte { cte: name.clone() });
        }
        for (at, token) in body.iter().enumerate() {
            if VOLATILE.contains(&token.as_str()) && body.get(at + 1).is_some_and(|t| t == "(") {
                found.push(Unrouted::VolatileInCte {
                    cte: name.clone(),
                    function: token.clone(),
                });
            }
        }
    }
    found
}

/// Each `name as (body)` at the top level, after `with`, a comma, or at the start (a
/// part of a statement, as the append's parts are kept).
fn ctes(tokens: &[String]) -> Vec<(String, &[String])> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    for at in 0..tokens.len() {
        match tokens[at].as_str() {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            _ => {}
        }
        let starts = at == 0 || matches!(tokens[at - 1].as_str(), "with" | ",");
        let shaped = tokens.get(at + 1).is_some_and(|t| t == "as")
            && tokens.get(at + 2).is_some_and(|t| t == "(");
        if depth != 0 || !starts || !shaped {
            continue;
        }
        let open = at + 2;
        let mut inner = 0usize;
        let close = (open..tokens.len()).find(|&i| {
            match tokens[i].as_str() {
                "(" => inner += 1,
                ")" => inner -= 1,
                _ => {}
            }
            inner == 0
        });
        let end = close.unwrap_or(tokens.len());
        found.push((tokens[at].clone(), &tokens[open + 1..end]));
    }
    found
}

/// A table reference: the table, its alias (the table's name when it has none), the
/// token it is at, and whether it is an insert's target.
struct Reference {
    table: &'static str,
    alias: String,
    at: usize,
    insert: bool,
}

/// Words that end a `from` list or cannot be an alias.
const KEYWORDS: &[&str] = &[
    "where",
    "on",
    "join",
    "left",
    "right",
    "inner",
    "full",
    "cross",
    "lateral",
    "group",
    "order",
    "limit",
    "union",
    "returning",
    "set",
    "select",
    "using",
    "for",
    "having",
    "values",
    "window",
    "except",
    "intersect",
    "offset",
    "natural",
    "as",
    "with",
    "and",
    "or",
    "not",
    "into",
    "from",
    "update",
    "delete",
    "insert",
    "default",
    "overriding",
];

/// Where `tokens` name a distributed table.
fn references(tokens: &[String]) -> Vec<Reference> {
    let mut found = Vec::new();
    // Whether each parenthesis depth is inside a `from` list.
    let mut in_from = vec![false];
    for (at, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "(" => in_from.push(false),
            ")" => {
                in_from.pop();
                if in_from.is_empty() {
                    in_from.push(false);
                }
            }
            "from" | "join" | "update" | "into" => set_last(&mut in_from, token != "into"),
            word if KEYWORDS.contains(&word) => set_last(&mut in_from, false),
            _ => {}
        }
        let Some(table) = distributed(token) else {
            continue;
        };
        let before = at.checked_sub(1).map(|i| tokens[i].as_str());
        let after = tokens.get(at + 1).map(String::as_str);
        if after == Some(".") || before == Some(".") || before == Some("::") {
            continue;
        }
        let listed = before == Some(",") && in_from.last() == Some(&true);
        let named = matches!(before, Some("from" | "join" | "update" | "into"));
        if !(named || listed) {
            continue;
        }
        found.push(Reference {
            table: table.name,
            alias: alias(tokens, at).unwrap_or_else(|| table.name.to_string()),
            at,
            insert: before == Some("into"),
        });
    }
    found
}

fn set_last(flags: &mut [bool], value: bool) {
    if let Some(last) = flags.last_mut() {
        *last = value;
    }
}

fn distributed(token: &str) -> Option<&'static Table> {
    DISTRIBUTED.iter().find(|table| table.name == token)
}

/// The alias after a table reference at `at`, if any.
fn alias(tokens: &[String], at: usize) -> Option<String> {
    let mut next = at + 1;
    if tokens.get(next).map(String::as_str) == Some("as") {
        next += 1;
    }
    let word = tokens.get(next)?;
    let is_name = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && word
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    (is_name && !KEYWORDS.contains(&word.as_str())).then(|| word.clone())
}

/// Whether the insert whose target is at `at` lists `tenant_id` among its columns.
fn inserts_tenant(tokens: &[String], at: usize) -> bool {
    let Some(open) = tokens[at..].iter().position(|t| t == "(").map(|i| at + i) else {
        return false;
    };
    tokens[open..]
        .iter()
        .take_while(|t| t.as_str() != ")")
        .any(|t| t == "tenant_id")
}

/// The parameters `alias.tenant_id` is compared with (`= $n` or `= any($n`); an
/// unqualified `tenant_id` counts for every alias.
fn tenant_parameters(tokens: &[String], alias: &str) -> Vec<String> {
    let mut found = Vec::new();
    for at in 0..tokens.len() {
        if tokens[at] != "tenant_id" {
            continue;
        }
        let qualified = at >= 2 && tokens[at - 1] == ".";
        if qualified && tokens[at - 2] != alias {
            continue;
        }
        let rest: Vec<&str> = tokens[at + 1..]
            .iter()
            .take(4)
            .map(String::as_str)
            .collect();
        let parameter = match rest.as_slice() {
            ["=", p, ..] if p.starts_with('$') => Some(*p),
            ["=", "any", "(", p] if p.starts_with('$') => Some(*p),
            _ => None,
        };
        found.extend(parameter.map(str::to_string));
    }
    found
}

/// `sql` as lowercase words, parameters, numbers and symbols, without comments and
/// string literals.
fn tokens(sql: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '-' if chars.peek() == Some(&'-') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                }
            }
            ':' if chars.peek() == Some(&':') => {
                chars.next();
                tokens.push("::".to_string());
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '{' => {
                let mut word = c.to_ascii_lowercase().to_string();
                while let Some(&n) = chars.peek() {
                    if !(n.is_ascii_alphanumeric() || n == '_' || n == '}') {
                        break;
                    }
                    word.push(n.to_ascii_lowercase());
                    chars.next();
                }
                tokens.push(word);
            }
            c if c.is_whitespace() => {}
            c => tokens.push(c.to_string()),
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::{Unrouted, unrouted};

    fn unfiltered(table: &str, alias: &str) -> Unrouted {
        Unrouted::Unfiltered {
            table: table.into(),
            alias: alias.into(),
        }
    }

    #[test]
    fn a_filtered_join_is_routed() {
        let sql = "select m.seq from messages m
            left join message_views v on v.session_id = $1 and v.seq = m.seq
                and v.tenant_id = $4
            where m.session_id = $1 and m.tenant_id = $4";
        assert_eq!(unrouted(sql), []);
    }

    #[test]
    fn each_unfiltered_table_is_named() {
        let sql = "select 1 from messages m, session_lineage l
            join tool_calls t on t.session_id = l.ancestor_id
            where m.tenant_id = $2";
        assert_eq!(
            unrouted(sql),
            [
                unfiltered("session_lineage", "l"),
                unfiltered("tool_calls", "t")
            ]
        );
    }

    #[test]
    fn columns_and_casts_named_like_tables_are_not_references() {
        let sql = "insert into messages (session_id, tool_calls, tenant_id)
            select $1, m.tool_calls, $2 from jsonb_populate_recordset(null::messages, $3) m";
        assert_eq!(unrouted(sql), []);
    }

    #[test]
    fn an_insert_must_name_the_tenant() {
        let sql = "insert into tool_calls (session_id, call_id) values ($1, $2)";
        assert_eq!(
            unrouted(sql),
            [Unrouted::NoTenantColumn {
                table: "tool_calls".into()
            }]
        );
    }

    #[test]
    fn comments_and_strings_are_not_read() {
        let sql = "-- from messages\nselect 'from jobs' from sessions where tenant_id = $1";
        assert_eq!(unrouted(sql), []);
    }

    #[test]
    fn two_tenant_parameters_are_refused() {
        let sql = "update jobs set state = 'x' from sessions s
            where jobs.tenant_id = $1 and s.tenant_id = any($2::bigint[])";
        assert_eq!(
            unrouted(sql),
            [Unrouted::SeveralTenants {
                parameters: vec!["$1".into(), "$2".into()]
            }]
        );
    }

    #[test]
    fn an_inserting_or_volatile_cte_is_not_routed() {
        let sql = "with s as (update sessions set v = 1 where id = $1 and tenant_id = $2
                returning id),
            settings as (select set_config('synchronous_commit', 'off', true)),
            added as (insert into jobs (tenant_id) select $2 from s)
            select * from s";
        assert_eq!(
            unrouted(sql),
            [
                Unrouted::VolatileInCte {
                    cte: "settings".into(),
                    function: "set_config".into()
                },
                Unrouted::InsertInCte {
                    cte: "added".into()
                },
            ]
        );
        let from_table = "insert into compactions (session_id, seqs, tenant_id)
            select $1, array_agg(m.seq), $2 from messages m
            where m.session_id = $1 and m.tenant_id = $2";
        assert_eq!(
            unrouted(from_table),
            [Unrouted::InsertFromTables {
                table: "compactions".into()
            }]
        );
        let part = "answered as (update tool_calls t set x = 1
            where t.session_id = $1 and t.tenant_id = $2)";
        assert_eq!(unrouted(part), []);
    }

    #[test]
    fn delete_and_update_targets_are_references() {
        assert_eq!(
            unrouted("delete from jobs where id = $1"),
            [unfiltered("jobs", "jobs")]
        );
        assert_eq!(
            unrouted("update sessions s set x = 1 where s.id = $1"),
            [unfiltered("sessions", "s")]
        );
    }
}
