//! A console request's query parameters, bounded and read as they came.
use crate::error::{Error, Result};

/// A request's query parameters (`a=1&b=2`), read as they came: the console's own
/// values (numbers, ids, page tokens) need no percent-decoding, and one that has it is
/// refused where it is read.
pub(super) struct Query<'a> {
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Query<'a> {
    pub(super) fn parse(query: &'a str) -> Query<'a> {
        let pairs = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .take(16)
            .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
            .collect();
        Query { pairs }
    }

    /// The parameter's value, if given; refused when it is over 512 bytes or
    /// percent-encoded.
    pub(super) fn text(&self, name: &str) -> Result<Option<&'a str>> {
        let Some((_, value)) = self.pairs.iter().find(|(key, _)| *key == name) else {
            return Ok(None);
        };
        if value.len() > 512 || value.contains('%') {
            return Err(Error::invalid(
                name,
                "must be at most 512 characters, without percent-encoding",
            ));
        }
        Ok(Some(value))
    }

    /// A whole number in `range`, or `default` when not given.
    pub(super) fn number(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<i64>,
        default: i64,
    ) -> Result<i64> {
        match self.text(name)? {
            None => Ok(default),
            Some(value) => value
                .parse::<i64>()
                .ok()
                .filter(|number| range.contains(number))
                .ok_or_else(|| {
                    Error::invalid(
                        name,
                        format!(
                            "must be a whole number from {} to {}",
                            range.start(),
                            range.end()
                        ),
                    )
                }),
        }
    }
}
