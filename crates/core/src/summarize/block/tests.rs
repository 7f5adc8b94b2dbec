use proptest::prelude::*;

use super::*;
use crate::message::Message;
use crate::tokenize::{TextCounts, Tokenizer};

fn tokenizer() -> impl Strategy<Value = Tokenizer> {
    prop_oneof![
        Just(Tokenizer::O200kBase),
        Just(Tokenizer::Cl100kBase),
        Just(Tokenizer::DeepseekV3),
        (0.5f64..8.0).prop_map(|chars_per_token| Tokenizer::Heuristic { chars_per_token }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// What the block of summaries adds to a request — after a system prompt, as the
    /// system prompt, or as the leading user message — is never more than
    /// `block_tokens` counts for it.
    #[test]
    fn the_block_costs_at_most_what_is_counted(
        tokenizer in tokenizer(),
        system in prop_oneof![Just(String::new()), "[ -~\n]{1,80}"],
        summaries in prop::collection::vec("[ -~\n]{0,120}", 1..5),
    ) {
        let counter = Counter::new(tokenizer, 0);
        let memo = TextCounts::new(0);
        let block = block(summaries.iter().map(String::as_str)).unwrap();
        let counted = block_tokens(summaries.iter().map(|s| counter.text(s)), &counter);
        let joined = if system.is_empty() { block.clone() } else { format!("{system}\n\n{block}") };
        let added = counter.system_prompt(&joined, &memo) - counter.system_prompt(&system, &memo);
        prop_assert!(added <= counted, "system: {added} > {counted}");
        let leading = counter.message(&Message::text(crate::message::Role::User, block));
        prop_assert!(leading <= counted, "user: {leading} > {counted}");
    }
}
