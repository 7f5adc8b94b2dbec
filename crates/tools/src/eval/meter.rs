//! Measures one strategy's requests over one recorded session: billed input with
//! caching, cache-stable requests, window use, over-budget requests, orphaned tool
//! pairs and fact retention, each request counted the same way whichever strategy made
//! it.
use std::collections::HashMap;

use ctxd_core::message::{Message, Role};
use ctxd_core::tokenize::ToolDefinition;

use super::cost::{Billed, bill, serialize};
use super::facts::{Checker, Count, SessionFacts, key};
use super::providers::{Caches, PRICES};
use super::strategies::{Build, Setup};

/// One strategy's figures over any number of sessions.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub requests: u64,
    pub billed: Billed,
    /// Billed input in token units: cache reads at a tenth, plus summarizer input.
    pub units: f64,
    pub summarizer_input: i64,
    /// Requests after the first of their session, and those that extended the previous
    /// request (its system prompt and messages, in order, are where this one starts).
    pub followers: u64,
    pub stable: u64,
    pub use_sum: f64,
    pub use_peak: f64,
    pub over_budget: u64,
    pub orphans: u64,
    pub retention: Count,
    /// Retention at the last request of each session (where the most was compacted
    /// away).
    pub last: Count,
    /// Search recall of the facts the last request lost (ctxd only): found, asked.
    pub recall_found: u64,
    pub recall_recovered: u64,
    pub recall_asked: u64,
    /// Billed dollars on each provider ([`super::providers::PROVIDERS`]), summarizer
    /// input at its input price.
    pub provider_dollars: [f64; 3],
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.requests += other.requests;
        self.billed.cached += other.billed.cached;
        self.billed.fresh += other.billed.fresh;
        self.units += other.units;
        self.summarizer_input += other.summarizer_input;
        self.followers += other.followers;
        self.stable += other.stable;
        self.use_sum += other.use_sum;
        self.use_peak = self.use_peak.max(other.use_peak);
        self.over_budget += other.over_budget;
        self.orphans += other.orphans;
        self.retention.add(&other.retention);
        self.last.add(&other.last);
        self.recall_found += other.recall_found;
        self.recall_recovered += other.recall_recovered;
        self.recall_asked += other.recall_asked;
        for (mine, theirs) in self.provider_dollars.iter_mut().zip(other.provider_dollars) {
            *mine += theirs;
        }
    }

    pub fn stable_pct(&self) -> f64 {
        if self.followers == 0 {
            return 100.0;
        }
        self.stable as f64 * 100.0 / self.followers as f64
    }

    pub fn use_mean_pct(&self) -> f64 {
        if self.requests == 0 {
            return 0.0;
        }
        self.use_sum * 100.0 / self.requests as f64
    }
}

/// Tool results that answer no open call of the step before them, and calls left
/// unanswered before the next message that is not a result.
pub fn orphans(messages: &[Message]) -> u64 {
    let mut open = std::collections::HashSet::new();
    let mut orphans = 0;
    for message in messages {
        if message.role == Role::Tool {
            orphans += u64::from(!open.remove(&message.tool_call_id));
            continue;
        }
        orphans += open.len() as u64;
        open.clear();
        open.extend(message.tool_calls.iter().map(|call| call.id.clone()));
    }
    orphans + open.len() as u64
}

/// Measures the requests of one strategy on one session, in order.
pub struct Meter<'a> {
    setup: &'a Setup,
    session: &'a SessionFacts,
    tools: &'a [ToolDefinition],
    original_system: &'a str,
    previous: Option<(String, Vec<u64>)>,
    checker: Checker,
    counts: HashMap<u64, i64>,
    /// The newest request's retention.
    newest: Option<Count>,
    caches: Caches,
    pub totals: Totals,
}

impl<'a> Meter<'a> {
    pub fn new(
        setup: &'a Setup,
        session: &'a SessionFacts,
        tools: &'a [ToolDefinition],
        original_system: &'a str,
    ) -> Meter<'a> {
        Meter {
            setup,
            session,
            tools,
            original_system,
            previous: None,
            checker: Checker::default(),
            counts: HashMap::new(),
            newest: None,
            caches: Caches::default(),
            totals: Totals::default(),
        }
    }

    /// Tokens of the request as every strategy counts them.
    fn tokens(&mut self, build: &Build) -> i64 {
        let counter = self.setup.counter;
        let mut total = self.setup.fixed_tokens;
        if build.system != self.original_system {
            let memo = ctxd_core::tokenize::TextCounts::new(0);
            total += counter.system_prompt(&build.system, &memo)
                - counter.system_prompt(self.original_system, &memo);
        }
        for message in &build.messages {
            total += *self
                .counts
                .entry(key(message))
                .or_insert_with(|| counter.message(message));
        }
        total
    }

    /// Adds the request `build` made after the first `history` recorded messages.
    pub fn add(&mut self, history: usize, build: &Build) {
        let tokens = self.tokens(build);
        let text = serialize(&build.system, &build.messages, self.tools);
        let billed = bill(
            self.previous.as_ref().map(|(text, _)| text.as_str()),
            &text,
            &self.setup.counter,
        );
        let totals = &mut self.totals;
        totals.requests += 1;
        totals.billed.cached += billed.cached;
        totals.billed.fresh += billed.fresh;
        totals.units += billed.units() + build.summarizer_input as f64;
        totals.summarizer_input += build.summarizer_input;
        let mut keys: Vec<u64> = Vec::with_capacity(build.messages.len() + 1);
        keys.push(key(&Message::text(Role::System, build.system.clone())));
        keys.extend(build.messages.iter().map(key));
        if let Some((_, before)) = &self.previous {
            totals.followers += 1;
            totals.stable +=
                u64::from(keys.len() >= before.len() && keys[..before.len()] == before[..]);
        }
        let used = tokens as f64 / self.setup.window as f64;
        totals.use_sum += used;
        totals.use_peak = totals.use_peak.max(used);
        totals.over_budget += u64::from(tokens > self.setup.room);
        totals.orphans += orphans(&build.messages);
        let count = self
            .checker
            .count(self.session, history, &build.system, &build.messages);
        totals.retention.add_build(&count);
        self.bill_providers(tokens, billed.cached, &keys, build);
        self.newest = Some(count);
        self.previous = Some((text, keys));
    }

    /// The request on each provider's bill, and the summarizer input it carried:
    /// `shared` is the prefix the request shares with the previous one (as [`bill`]
    /// counted it), `keys` the content keys of its system prompt and messages.
    fn bill_providers(&mut self, tokens: i64, shared: i64, keys: &[u64], build: &Build) {
        let Some((system, messages)) = keys.split_first() else {
            return;
        };
        let counted = |key: &u64| (*key, self.counts.get(key).copied().unwrap_or(0));
        let messages: Vec<(u64, i64)> = messages.iter().map(counted).collect();
        // The system prompt's block: the request less its messages.
        let rest = tokens - messages.iter().map(|(_, tokens)| tokens).sum::<i64>();
        let blocks: Vec<(u64, i64)> = std::iter::once((*system, rest)).chain(messages).collect();
        let splits = self.caches.bill(shared, &blocks);
        for (index, split) in splits.iter().enumerate() {
            let summarizer = build.summarizer_input as f64 * PRICES[index].1 / 1e6;
            self.totals.provider_dollars[index] += split.dollars(index) + summarizer;
        }
    }

    /// The session's figures, its last request's retention among them.
    pub fn finish(mut self) -> Totals {
        if let Some(last) = self.newest.take() {
            self.totals.last.add_build(&last);
        }
        self.totals
    }
}

/// What the recall measure (`recall::measure`) found of one session: facts found by
/// Search, recovered with the recall tools, asked about.
#[derive(Debug, Default, Clone, Copy)]
pub struct Measured {
    pub found: u64,
    pub recovered: u64,
    pub asked: u64,
}
