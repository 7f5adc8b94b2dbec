//! Search recall: of the facts ctxd's last request of a session no longer shows, how
//! many Search finds the source of — the words of the fact, as a query over the
//! session's messages, have a message containing the fact among the top 5 hits.
use super::facts::{Checker, SessionFacts, collapse};
use super::server::Client;
use super::strategies::Build;
use crate::client::with_key;
use crate::replay::BoxError;
use ctxd_server::pb;

/// Lost facts asked about per session and window, spread evenly over the lost ones.
pub const SAMPLE: usize = 30;

/// The words of `fact` as a Search query: letters and digits only (punctuation would be
/// syntax: `-` excludes, quotes make phrases), without the `or` operator, 12 at most.
pub fn query(fact: &str) -> String {
    let words: String = fact
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    collapse(&words)
        .split(' ')
        .filter(|word| !word.eq_ignore_ascii_case("or"))
        .take(12)
        .collect::<Vec<_>>()
        .join(" ")
}

/// (found, asked) for the facts the last request (`history` recorded messages before
/// it) lost: each found when a top-5 hit is a recorded message containing it (seq =
/// index + 1: every recorded message was appended in order).
pub async fn measure(
    client: &mut Client,
    api_key: Option<&str>,
    session_id: &str,
    facts: &SessionFacts,
    history: usize,
    last: &Build,
) -> Result<(u64, u64), BoxError> {
    let lost = Checker::default().lost(facts, history, &last.system, &last.messages);
    let step = lost.len().div_ceil(SAMPLE).max(1);
    let (mut found, mut asked) = (0, 0);
    for &fact in lost.iter().step_by(step) {
        let query = query(&facts.facts[fact as usize].1);
        if query.is_empty() {
            continue;
        }
        let search = pb::SearchRequest {
            session_id: session_id.to_string(),
            query,
            scope: pb::SearchScope::Messages as i32,
            limit: 5,
            ..Default::default()
        };
        let hits = client
            .search(with_key(search, api_key)?)
            .await?
            .into_inner()
            .hits;
        let sources = &facts.found_in[fact as usize];
        asked += 1;
        found += u64::from(
            hits.iter()
                .any(|hit| sources.iter().any(|&i| i64::from(i) + 1 == hit.seq)),
        );
    }
    Ok((found, asked))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_is_the_facts_words() {
        assert_eq!(
            super::query("grep -n \"or\" django/db/models/query.py"),
            "grep n django db models query py"
        );
        assert_eq!(super::query("--"), "");
    }
}
