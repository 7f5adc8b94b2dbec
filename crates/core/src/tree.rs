//! Session trees: a subagent's session links to the session that spawned it (its parent)
//! and to the parent's tool call it answers. A link is made when the child is created and
//! never changes, so trees are decided here from what creation finds of the parent: the
//! child's ancestors (root first, parent last), or why it may not be linked.
//!
//! No cycle can form: a child is always a new session, its id larger than every id
//! before it, and it takes its parent's ancestors plus the parent, all older than itself.
//! So the ancestors of every session are strictly increasing ids below its own, and no
//! session is ever its own ancestor. Depth is bounded by [`MAX_DEPTH`].
use crate::error::{Error, Result, quoted};

/// How many levels below its tree's root a session may be. Subagents that spawn
/// subagents rarely go past two or three levels; the bound keeps a session's ancestors
/// (stored whole with its link) and every tree query small.
pub const MAX_DEPTH: usize = 8;

/// Longest tool call id a child may name.
pub const MAX_TOOL_CALL_ID_CHARS: usize = 512;

/// What creating a child found of its parent (read under a lock that keeps the parent
/// from being deleted meanwhile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentFound {
    /// sessions.id of the parent.
    pub id: i64,
    pub external_id: String,
    /// The parent's own ancestors, root first (empty for a root).
    pub ancestors: Vec<i64>,
    /// Whether the parent was finished.
    pub finished: bool,
    /// The named tool call in the parent: None when the parent made no such call, else
    /// whether it was answered already.
    pub call_answered: Option<bool>,
}

/// A child's link as requested: its parent's id and the parent's tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentRequest {
    pub parent_session_id: String,
    pub parent_tool_call_id: String,
}

/// A session's place in its tree, as GetSession reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Place {
    /// Its link to its parent; None for a root.
    pub link: Option<Link>,
    /// Its children (direct descendants that exist), oldest first, at most
    /// [`MAX_CHILDREN_LISTED`].
    pub children: Vec<Child>,
    /// How many children it has in all.
    pub children_total: i64,
    /// Sums over the session and every descendant that exists.
    pub subtree: Rollup,
}

/// Children GetSession lists at most.
pub const MAX_CHILDREN_LISTED: i64 = 1000;

/// A child session's link, as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The parent's id; None once the parent was deleted.
    pub parent_session_id: Option<String>,
    pub parent_tool_call_id: String,
    /// Levels below the tree's root (1 for a root's child).
    pub depth: i64,
}

/// A child in its parent's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    pub session_id: String,
    pub parent_tool_call_id: String,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// Sums over a subtree (saturating): its sessions, the tokens of their logs and the
/// provider usage reported on them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rollup {
    pub sessions: i64,
    pub log_tokens: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cached_input_tokens: i64,
}

/// Checks what can be checked of a CreateSession's parent fields without the database:
/// both or neither, each well formed, and not the new session itself. `None` when the
/// session is a root.
pub fn parent_request(
    session_id: &str,
    parent_session_id: &str,
    parent_tool_call_id: &str,
) -> Result<Option<ParentRequest>> {
    match (parent_session_id.is_empty(), parent_tool_call_id.is_empty()) {
        (true, true) => return Ok(None),
        (true, false) => {
            return Err(Error::invalid(
                "parent_session_id",
                "is required with parent_tool_call_id: name the session whose tool call spawned this one",
            ));
        }
        (false, true) => {
            return Err(Error::invalid(
                "parent_tool_call_id",
                "is required with parent_session_id: name the parent's tool call this session answers",
            ));
        }
        (false, false) => {}
    }
    crate::validate::validate_session_id(parent_session_id).map_err(|error| match error {
        Error::InvalidArgument { reason, .. } => Error::invalid("parent_session_id", reason),
        other => other,
    })?;
    if parent_session_id == session_id {
        return Err(Error::invalid(
            "parent_session_id",
            "names the session being created: a session cannot be its own parent",
        ));
    }
    if parent_tool_call_id.chars().count() > MAX_TOOL_CALL_ID_CHARS {
        return Err(Error::invalid(
            "parent_tool_call_id",
            format!("must be at most {MAX_TOOL_CALL_ID_CHARS} characters"),
        ));
    }
    if parent_tool_call_id.contains('\0') {
        return Err(Error::invalid(
            "parent_tool_call_id",
            crate::validate::NUL_REASON,
        ));
    }
    Ok(Some(ParentRequest {
        parent_session_id: parent_session_id.to_string(),
        parent_tool_call_id: parent_tool_call_id.to_string(),
    }))
}

/// The ancestors of a new child of `parent` (root first, the parent last), or why it may
/// not be linked: the parent is finished or already [`MAX_DEPTH`] levels deep, or its
/// tool call is unknown or answered.
pub fn child_ancestors(parent: &ParentFound, tool_call_id: &str) -> Result<Vec<i64>> {
    if parent.finished {
        return Err(Error::precondition(
            "parent_session_id",
            format!(
                "session {} is finished: it takes no more appends, so no child's answer could reach it",
                quoted(&parent.external_id)
            ),
        ));
    }
    if parent.ancestors.len() >= MAX_DEPTH {
        return Err(Error::precondition(
            "parent_session_id",
            format!(
                "session {} is {} levels below its tree's root, the deepest a session may be ({MAX_DEPTH}): it cannot have children",
                quoted(&parent.external_id),
                parent.ancestors.len()
            ),
        ));
    }
    match parent.call_answered {
        None => Err(Error::invalid(
            "parent_tool_call_id",
            format!(
                "no tool call {} was made in session {}",
                quoted(tool_call_id),
                quoted(&parent.external_id)
            ),
        )),
        Some(true) => Err(Error::invalid(
            "parent_tool_call_id",
            format!(
                "tool call {} of session {} was already answered",
                quoted(tool_call_id),
                quoted(&parent.external_id)
            ),
        )),
        Some(false) => {
            let mut ancestors = parent.ancestors.clone();
            ancestors.push(parent.id);
            Ok(ancestors)
        }
    }
}

/// Whether the session with `ancestors` (its link's, empty for a root) and id `session`
/// is in the tree of `root`: the session itself or one of its descendants.
pub fn in_tree(root: i64, session: i64, ancestors: &[i64]) -> bool {
    session == root || ancestors.contains(&root)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    fn parent(id: i64, ancestors: Vec<i64>) -> ParentFound {
        ParentFound {
            id,
            external_id: format!("s{id}"),
            ancestors,
            finished: false,
            call_answered: Some(false),
        }
    }

    #[test]
    fn parent_fields_come_together_and_never_name_the_new_session() {
        assert_eq!(parent_request("a", "", "").unwrap(), None);
        let field = |result: Result<Option<ParentRequest>>| match result {
            Err(Error::InvalidArgument { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(parent_request("a", "p", "")), "parent_tool_call_id");
        assert_eq!(field(parent_request("a", "", "c")), "parent_session_id");
        assert_eq!(field(parent_request("a", "a", "c")), "parent_session_id");
        assert_eq!(
            field(parent_request("a", "no spaces", "c")),
            "parent_session_id"
        );
        assert_eq!(
            field(parent_request(
                "a",
                "p",
                &"c".repeat(MAX_TOOL_CALL_ID_CHARS + 1)
            )),
            "parent_tool_call_id"
        );
        assert_eq!(
            field(parent_request("a", "p", "c\0")),
            "parent_tool_call_id"
        );
        assert!(parent_request("a", "p", &"c".repeat(MAX_TOOL_CALL_ID_CHARS)).is_ok());
    }

    #[test]
    fn a_finished_parent_a_deep_one_and_a_bad_call_are_refused_naming_the_field() {
        let refused = |found: ParentFound| match child_ancestors(&found, "c1") {
            Err(Error::InvalidArgument { field, .. } | Error::Precondition { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let finished = ParentFound {
            finished: true,
            ..parent(3, vec![])
        };
        assert_eq!(refused(finished), "parent_session_id");
        assert_eq!(
            refused(parent(20, (1..=MAX_DEPTH as i64).collect())),
            "parent_session_id"
        );
        let unknown = ParentFound {
            call_answered: None,
            ..parent(3, vec![])
        };
        assert_eq!(refused(unknown), "parent_tool_call_id");
        let answered = ParentFound {
            call_answered: Some(true),
            ..parent(3, vec![])
        };
        assert_eq!(refused(answered), "parent_tool_call_id");
        let deepest = (1..MAX_DEPTH as i64).collect::<Vec<_>>();
        let mut expected = deepest.clone();
        expected.push(20);
        assert_eq!(
            child_ancestors(&parent(20, deepest), "c1").unwrap(),
            expected
        );
    }

    proptest! {
        /// Random forests grown by creation alone (each new session a root or the child of
        /// any earlier one): every session's ancestors are strictly increasing ids below
        /// its own (so none is its own ancestor: no cycle), at most MAX_DEPTH of them; a
        /// child is refused exactly when its parent is MAX_DEPTH deep; and `in_tree` agrees
        /// with walking the parent links.
        #[test]
        fn trees_grown_by_creation_have_no_cycle_and_bounded_depth(
            choices in prop::collection::vec(prop::option::of(any::<prop::sample::Index>()), 1..120)
        ) {
            let mut ancestors: HashMap<i64, Vec<i64>> = HashMap::new();
            let mut parents: HashMap<i64, i64> = HashMap::new();
            for (at, choice) in choices.iter().enumerate() {
                let id = at as i64 + 1;
                let existing: Vec<i64> = (1..id).filter(|s| ancestors.contains_key(s)).collect();
                match choice.as_ref().filter(|_| !existing.is_empty()) {
                    None => {
                        ancestors.insert(id, Vec::new());
                    }
                    Some(index) => {
                        let parent_id = existing[index.index(existing.len())];
                        let found = parent(parent_id, ancestors[&parent_id].clone());
                        match child_ancestors(&found, "c") {
                            Ok(chain) => {
                                prop_assert!(ancestors[&parent_id].len() < MAX_DEPTH);
                                parents.insert(id, parent_id);
                                ancestors.insert(id, chain);
                            }
                            Err(_) => prop_assert_eq!(ancestors[&parent_id].len(), MAX_DEPTH),
                        }
                    }
                }
            }
            for (&id, chain) in &ancestors {
                prop_assert!(chain.len() <= MAX_DEPTH);
                prop_assert!(chain.windows(2).all(|pair| pair[0] < pair[1]));
                prop_assert!(chain.iter().all(|&a| a < id));
                prop_assert!(!chain.contains(&id));
                for &root in ancestors.keys() {
                    let mut walk = Some(id);
                    let mut reached = false;
                    while let Some(at) = walk {
                        if at == root {
                            reached = true;
                        }
                        walk = parents.get(&at).copied();
                    }
                    prop_assert_eq!(in_tree(root, id, chain), reached);
                }
            }
        }
    }
}
