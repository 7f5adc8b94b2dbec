//! The compaction ladder's decisions (`ladder.rs`), over random policies, loads and
//! climbs: layers cheapest first, none asked while the request is within its threshold
//! and the limit, every layer asked while the request is over the limit, and the failure
//! count a climb leaves.
use ctxd_core::ladder::{Clear, Climb, LADDER, Layer, LayerKind, Load, Summarize, failures_after};
use ctxd_core::policy::Policy;
use proptest::prelude::*;

fn policy() -> impl Strategy<Value = Policy> {
    (
        1_000i64..400_000,
        0.05f64..0.5,
        0.0f64..0.4,
        0.0f64..0.4,
        0.6f64..1.0,
    )
        .prop_map(
            |(window, target, clear_above, summarize_above, hard_limit)| {
                let clear_threshold = (target + clear_above).min(hard_limit);
                Policy {
                    context_window_tokens: window,
                    clear_target: target,
                    clear_threshold,
                    summarize_threshold: (clear_threshold + summarize_above).min(hard_limit),
                    hard_limit,
                    ..Policy::default()
                }
            },
        )
}

/// A load over the limit, or within it.
fn load(policy: &Policy, over: bool) -> impl Strategy<Value = Load> + use<> {
    let limit = policy.limit_tokens();
    let weights = if over {
        limit + 1..limit * 2
    } else {
        0..limit + 1
    };
    (weights, 0..limit / 4 + 1).prop_map(move |(with_ledger, ledger)| Load {
        total: with_ledger - ledger.min(with_ledger),
        with_ledger,
        limit,
    })
}

fn climb() -> impl Strategy<Value = Climb> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(inline, due, progress)| Climb {
        inline,
        due,
        progress,
    })
}

fn case(over: bool) -> impl Strategy<Value = (Policy, Load, Climb)> {
    policy().prop_flat_map(move |policy| {
        let load = load(&policy, over);
        (Just(policy), load, climb())
    })
}

#[test]
fn the_ladder_is_cheapest_first_and_names_each_layer_once() {
    let costs: Vec<u8> = LADDER.iter().map(|layer| layer.cost()).collect();
    assert!(costs.windows(2).all(|pair| pair[0] < pair[1]), "{costs:?}");
    for kind in [LayerKind::Clear, LayerKind::Summarize] {
        assert_eq!(LADDER.iter().filter(|l| l.kind() == kind).count(), 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Over the limit the request cannot go out as it is: every layer is asked, for at
    /// least what brings it under the limit, and any saving counts.
    #[test]
    fn over_the_limit_every_layer_is_asked((policy, load, climb) in case(true)) {
        prop_assert!(load.over());
        for layer in LADDER {
            let ask = layer.ask(&policy, &load, &climb);
            prop_assert!(ask.is_some(), "{:?} not asked at {load:?}", layer.kind());
            let ask = ask.unwrap();
            prop_assert_eq!(ask.min_savings, 0);
            if layer.kind() == LayerKind::Clear {
                prop_assert!(ask.wanted >= load.with_ledger - load.limit);
            }
        }
    }

    /// Within the limit, clearing waits for the clear threshold; summarizing for the
    /// summarize threshold (inline), for a climb that already made progress (inline), or
    /// for a climb where it was due — and never below the low-water mark.
    #[test]
    fn within_the_limit_a_layer_waits_for_its_threshold((policy, load, climb) in case(false)) {
        prop_assert!(!load.over());
        let clear = Clear.ask(&policy, &load, &climb);
        prop_assert_eq!(clear.is_some(), load.total > policy.clear_threshold_tokens());
        if let Some(ask) = clear {
            prop_assert_eq!(ask.wanted, load.total - policy.clear_target_tokens());
            prop_assert_eq!(ask.min_savings, ctxd_core::compaction::clear_min_savings(&policy));
        }
        let summarize = Summarize.ask(&policy, &load, &climb);
        let above = load.total > policy.summarize_threshold_tokens() && climb.inline;
        let carried = climb.due || (climb.progress && climb.inline);
        let room = load.total > policy.clear_target_tokens();
        prop_assert_eq!(summarize.is_some(), (above || carried) && room);
        if let Some(ask) = summarize {
            prop_assert!(ask.wanted > 0);
        }
    }

    /// A model-backed session is summarized by its job: within the limit, a build asks
    /// for a summary only when the climb carries it.
    #[test]
    fn a_model_backed_session_summarizes_in_a_build_only_when_it_must(
        (policy, load, climb) in any::<bool>().prop_flat_map(case)
    ) {
        let climb = Climb { inline: false, due: false, ..climb };
        prop_assert_eq!(Summarize.ask(&policy, &load, &climb).is_some(), load.over());
    }

    /// Progress resets the failure count; a due layer that took nothing off adds one;
    /// otherwise the count stays.
    #[test]
    fn the_failure_count_follows_the_climb(current in 0i32..i32::MAX, climb in climb()) {
        let after = failures_after(current, &climb);
        if climb.progress {
            prop_assert_eq!(after, 0);
        } else if climb.due {
            prop_assert_eq!(after, current + 1);
        } else {
            prop_assert_eq!(after, current);
        }
    }
}

#[test]
fn the_failure_count_saturates() {
    let climb = Climb {
        due: true,
        ..Climb::default()
    };
    assert_eq!(failures_after(i32::MAX, &climb), i32::MAX);
}
