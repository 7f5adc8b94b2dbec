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

    /// The parameter's value as a form encodes it (`%XX` escapes, `+` for a space),
    /// decoded; refused when it is over 512 bytes, an escape is broken, or the bytes
    /// are not UTF-8. For what a person types: a search's id and metadata.
    pub(super) fn decoded(&self, name: &str) -> Result<Option<String>> {
        let Some((_, value)) = self.pairs.iter().find(|(key, _)| *key == name) else {
            return Ok(None);
        };
        let refused = || Error::invalid(name, "must be at most 512 bytes of form-encoded UTF-8");
        if value.len() > 512 {
            return Err(refused());
        }
        let mut bytes = Vec::with_capacity(value.len());
        let mut rest = value.as_bytes();
        while let Some((&byte, tail)) = rest.split_first() {
            rest = tail;
            match byte {
                b'+' => bytes.push(b' '),
                b'%' => {
                    let hex = rest.get(..2).ok_or_else(refused)?;
                    let hex = std::str::from_utf8(hex).map_err(|_| refused())?;
                    bytes.push(u8::from_str_radix(hex, 16).map_err(|_| refused())?);
                    rest = &rest[2..];
                }
                other => bytes.push(other),
            }
        }
        String::from_utf8(bytes).map(Some).map_err(|_| refused())
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

#[cfg(test)]
mod tests {
    use super::Query;

    #[test]
    fn a_searched_value_is_decoded_as_a_form_encodes_it() {
        let query = Query::parse("meta=team%3Dblue+one&id=caf%C3%A9&bad=%zz&cut=ab%4&raw=%e9");
        assert_eq!(query.decoded("meta").unwrap().unwrap(), "team=blue one");
        assert_eq!(query.decoded("id").unwrap().unwrap(), "café");
        assert_eq!(query.decoded("none").unwrap(), None);
        for name in ["bad", "cut", "raw"] {
            let refused = query.decoded(name).unwrap_err().to_string();
            assert!(refused.contains(name), "{refused}");
        }
        let long = format!("id={}", "a".repeat(513));
        assert!(Query::parse(&long).decoded("id").is_err());
    }
}
