use super::*;

#[test]
fn window_follows_output_when_only_one_is_given() {
    let defaults = Policy::default();
    let only_output = PolicyOverrides {
        max_output_tokens: Some(8_000),
        ..Default::default()
    };
    let policy = Policy::resolve(&defaults, only_output).unwrap();
    assert_eq!(policy.context_window_tokens, 32_000);
    let only_window = PolicyOverrides {
        context_window_tokens: Some(16_000),
        ..Default::default()
    };
    let policy = Policy::resolve(&defaults, only_window).unwrap();
    assert_eq!(policy.max_output_tokens, 4_000);
}

#[test]
fn sizes_in_force_are_capped_for_the_window() {
    let small = Policy {
        context_window_tokens: 8_000,
        max_output_tokens: 1_000,
        ..Policy::default()
    };
    let effective = small.effective();
    assert_eq!(
        effective,
        Effective {
            eviction_threshold_tokens: 291,
            fresh_tail_tokens: 1_750,
            tool_output_protect_tokens: 1_750,
            clear_min_savings_tokens: 800,
            leaf_target_tokens: 350,
            condensed_target_tokens: 583,
        }
    );
    let in_force = small.in_force();
    assert_eq!(in_force.eviction_threshold_tokens, 291);
    assert_eq!(in_force.context_window_tokens, 8_000);
    // Even the default 128 000-token window caps three of the defaults.
    let default = Policy::default().effective();
    assert_eq!(default.eviction_threshold_tokens, 4_666);
    assert_eq!(default.tool_output_protect_tokens, 28_000);
    assert_eq!(default.clear_min_savings_tokens, 12_800);
    // A large enough window applies what was asked.
    let large = Policy {
        context_window_tokens: 1_000_000,
        max_output_tokens: 32_000,
        ..Policy::default()
    };
    assert_eq!(large.in_force(), large);
}

#[test]
fn bad_values_name_the_field() {
    let defaults = Policy::default();
    let cases = [
        (
            PolicyOverrides {
                context_window_tokens: Some(1_000),
                max_output_tokens: Some(1_000),
                ..Default::default()
            },
            "policy.max_output_tokens",
        ),
        (
            PolicyOverrides {
                clear_threshold: Some(1.5),
                ..Default::default()
            },
            "policy.clear_threshold",
        ),
        (
            PolicyOverrides {
                summarize_threshold: Some(0.5),
                ..Default::default()
            },
            "policy.summarize_threshold",
        ),
        (
            PolicyOverrides {
                heuristic_chars_per_token: Some(0.0),
                ..Default::default()
            },
            "policy.heuristic_chars_per_token",
        ),
        (
            PolicyOverrides {
                retention_seconds: Some(-1),
                ..Default::default()
            },
            "policy.retention_seconds",
        ),
        (
            PolicyOverrides {
                retention_seconds: Some(MAX_RETENTION_SECONDS + 1),
                ..Default::default()
            },
            "policy.retention_seconds",
        ),
    ];
    for (overrides, field) in cases {
        match Policy::resolve(&defaults, overrides) {
            Err(Error::InvalidArgument { field: got, .. }) => assert_eq!(got, field),
            other => panic!("expected InvalidArgument on {field}, got {other:?}"),
        }
    }
}

/// A valid policy with random window, reserve and threshold fractions (each in
/// (0, 1] in steps of 1/1000, ordered as validation requires).
fn any_policy() -> impl proptest::strategy::Strategy<Value = Policy> {
    use proptest::prelude::*;
    (
        // Small windows too, where rounding bites.
        prop_oneof![1i64..=200, 1i64..=MAX_WINDOW],
        1u32..=1000,
        1u32..=1000,
        1u32..=1000,
        1u32..=1000,
        1u32..=1000,
    )
        .prop_filter_map("invalid policy", |(window, a, b, c, d, reserve)| {
            let mut fractions = [a, b, c, d];
            fractions.sort_unstable();
            let [target, clear, summarize, hard] = fractions.map(|f| f64::from(f) / 1000.0);
            let limit = (hard * window as f64).floor() as i64;
            let policy = Policy {
                context_window_tokens: window,
                // Some share of the limit, so that room is left for the prompt.
                max_output_tokens: (limit * i64::from(reserve) / 1001).max(1),
                clear_target: target,
                clear_threshold: clear,
                summarize_threshold: summarize,
                hard_limit: hard,
                ..Policy::default()
            };
            policy.validate("policy").is_ok().then_some(policy)
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]
    /// Every threshold in tokens is its fraction of the window rounded down, and they
    /// keep the order validation gives the fractions: clear target, clear threshold,
    /// summarize threshold, limit.
    #[test]
    fn token_thresholds_are_floored_fractions_in_order(policy in any_policy()) {
        let window = policy.context_window_tokens as f64;
        let floor = |fraction: f64| (fraction * window).floor() as i64;
        let target = policy.clear_target_tokens();
        let clear = policy.clear_threshold_tokens();
        let summarize = policy.summarize_threshold_tokens();
        let limit = policy.limit_tokens();
        proptest::prop_assert_eq!(target, floor(policy.clear_target));
        proptest::prop_assert_eq!(clear, floor(policy.clear_threshold));
        proptest::prop_assert_eq!(summarize, floor(policy.summarize_threshold));
        proptest::prop_assert_eq!(limit, floor(policy.hard_limit));
        // The truncating casts the engine used before are the same numbers.
        proptest::prop_assert_eq!(target, (policy.clear_target * window) as i64);
        proptest::prop_assert_eq!(clear, (policy.clear_threshold * window) as i64);
        proptest::prop_assert_eq!(summarize, (policy.summarize_threshold * window) as i64);
        proptest::prop_assert!(
            target <= clear && clear <= summarize && summarize <= limit,
            "target {} clear {} summarize {} limit {}", target, clear, summarize, limit
        );
    }

    /// The clear target is strictly below the clear threshold in tokens, as it is in
    /// fractions (the hysteresis clearing relies on): rounding down could merge them
    /// (a window of 7 with clear_target 0.143 and clear_threshold 0.144 gives 1 and 1),
    /// so validation compares the tokens too.
    #[test]
    fn clear_target_tokens_stay_below_the_clear_threshold(policy in any_policy()) {
        proptest::prop_assert!(
            policy.clear_target_tokens() < policy.clear_threshold_tokens(),
            "target {} threshold {}",
            policy.clear_target_tokens(),
            policy.clear_threshold_tokens()
        );
    }
}
