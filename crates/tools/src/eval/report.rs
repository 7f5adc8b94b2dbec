//! The eval's report: a Markdown table, one row per strategy and window, and a picture
//! of cost against retention (an SVG, one point per strategy and window).
use super::cost::{PRICE_LIST, dollars};
use super::facts::ACTED;
use super::meter::Totals;
use super::providers::{PRICES, PROVIDERS};
use super::{Results, STRATEGIES};

fn pct(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}"))
}

/// One strategy's row of the main table.
fn row(name: &str, window: i64, t: &Totals) -> String {
    let kinds: Vec<String> = [0, ACTED, 1, 2, 3]
        .into_iter()
        .map(|kind| pct(t.retention.mean_pct(Some(kind))))
        .collect();
    let last: Vec<String> = [0, ACTED]
        .into_iter()
        .map(|kind| pct(t.last.mean_pct(Some(kind))))
        .collect();
    let summarizer = format!("{:.3}", t.summarizer_input as f64 / 1e6);
    format!(
        "| {name} | {window} | {} | {:.3} | {summarizer} | {:.2} | {:.1} | {:.1} / {:.1} | {} | {} | {} | {} | {} |\n",
        t.requests,
        t.units / 1e6,
        dollars(t.units),
        t.stable_pct(),
        t.use_mean_pct(),
        t.use_peak * 100.0,
        t.over_budget,
        t.orphans,
        pct(t.retention.mean_pct(None)),
        kinds.join(" | "),
        last.join(" | "),
    )
}

/// Billed input on each provider's terms, per strategy and window; the cheapest of each
/// window and provider in bold.
fn by_provider(results: &Results) -> String {
    let mut out = String::from(
        "\nBilled input as each provider bills it with its prompt cache (docs/compaction-eval.md, \"Billing\"): ",
    );
    let lists: Vec<&str> = PRICES.iter().map(|(list, ..)| *list).collect();
    out.push_str(&lists.join("; "));
    out.push_str(
        ".\n\n| strategy | window | OpenAI $ | Anthropic $ | Gemini $ |\n|---|---|---|---|---|\n",
    );
    for &window in &results.windows {
        let cheapest: Vec<f64> = (0..PROVIDERS.len())
            .map(|p| {
                (0..STRATEGIES.len())
                    .filter_map(|s| results.totals.get(&(s, window)))
                    .map(|t| t.provider_dollars[p])
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        for (index, name) in STRATEGIES.iter().enumerate() {
            let Some(t) = results.totals.get(&(index, window)) else {
                continue;
            };
            let cells: Vec<String> = (0..PROVIDERS.len())
                .map(|p| match t.provider_dollars[p] {
                    d if d <= cheapest[p] => format!("**{d:.2}**"),
                    d => format!("{d:.2}"),
                })
                .collect();
            out.push_str(&format!("| {name} | {window} | {} |\n", cells.join(" | ")));
        }
    }
    out
}

/// Each set, every strategy; each project, ctxd and the cheapest other strategy at that
/// window: billed dollars, cache-stable requests, commands and acted-on paths over all
/// requests and at the last.
fn groups(results: &Results) -> String {
    let mut out = String::from(
        "\n| set or project | strategy | window | sessions' requests | billed $ | cache-stable % | commands % all / last | acted-on paths % all / last | over budget | orphans |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let names: std::collections::BTreeSet<&String> =
        results.groups.keys().map(|(group, _, _)| group).collect();
    for group in names {
        for &window in &results.windows {
            let of = |index: usize| results.groups.get(&(group.clone(), index, window));
            let cheapest = (1..STRATEGIES.len())
                .filter_map(|index| of(index).map(|t| (index, t.units)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(index, _)| index);
            for (index, name) in STRATEGIES.iter().enumerate() {
                let shown = group.starts_with("set ") || index == 0 || Some(index) == cheapest;
                if let (true, Some(t)) = (shown, of(index)) {
                    out.push_str(&format!(
                        "| {group} | {name} | {window} | {} | {:.2} | {:.1} | {} / {} | {} / {} | {} | {} |\n",
                        t.requests,
                        dollars(t.units),
                        t.stable_pct(),
                        pct(t.retention.mean_pct(Some(0))),
                        pct(t.last.mean_pct(Some(0))),
                        pct(t.retention.mean_pct(Some(ACTED))),
                        pct(t.last.mean_pct(Some(ACTED))),
                        t.over_budget,
                        t.orphans,
                    ));
                }
            }
        }
    }
    out
}

pub fn markdown(results: &Results) -> String {
    let mut out = format!(
        "{} recorded sessions, windows {}; prices: {PRICE_LIST}.\n\n",
        results.sessions,
        results
            .windows
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str(
        "| strategy | window | requests | billed input (M token units) | of which summarizer input (M) | billed $ | cache-stable % | window use mean / peak % | over budget | orphans | retention % | commands | acted-on paths | all paths | identifiers | errors | last request: commands | acted-on paths |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for &window in &results.windows {
        for (index, name) in STRATEGIES.iter().enumerate() {
            if let Some(t) = results.totals.get(&(index, window)) {
                out.push_str(&row(name, window, t));
            }
        }
    }
    out.push_str(&by_provider(results));
    out.push_str(&groups(results));
    for &window in &results.windows {
        if let Some(t) = results.totals.get(&(0, window))
            && t.recall_asked > 0
        {
            out.push_str(&format!(
                "\nSearch recall, window {window}: of {} facts ctxd's last request of a session no longer showed (at most {} per session, spread evenly), Search (the fact's words, top 5) found the source message of {} ({:.1} %); recovered with recall (the model's ctxd_recall_search with the fact's words, then ctxd_recall_expand of a source it named, going on at most {} times, each answer within a tenth of the window): {} ({:.1} %).",
                t.recall_asked,
                super::recall::SAMPLE,
                t.recall_found,
                t.recall_found as f64 * 100.0 / t.recall_asked as f64,
                super::recall::CONTINUATIONS,
                t.recall_recovered,
                t.recall_recovered as f64 * 100.0 / t.recall_asked as f64
            ));
        }
    }
    out.push('\n');
    out.push_str(&format!(
        "\nctxd wrote {} summaries; for the {} its requests showed, the summarizer input is what ctxd reports they replaced (`source_tokens`), and for the {} written and condensed between two requests what Search reports they replaced (its hits' `source_tokens`). Run time {:.0} s.\n",
        results.summaries_written,
        results.summaries_seen,
        results.summaries_written - results.summaries_seen,
        results.elapsed.as_secs_f64()
    ));
    out
}

const COLOURS: [&str; 6] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Billed dollars (x) against retention (y), one point per strategy and window; the
/// windows get marker sizes, the strategies colours.
pub fn svg(results: &Results) -> String {
    let (width, height, left, right, top, bottom) = (760.0, 480.0, 70.0, 180.0, 30.0, 50.0);
    let points: Vec<(usize, i64, f64, f64)> = results
        .totals
        .iter()
        .filter_map(|(&(index, window), t)| {
            t.retention
                .mean_pct(None)
                .map(|retention| (index, window, dollars(t.units), retention))
        })
        .collect();
    let max_x = points.iter().map(|p| p.2).fold(0.0_f64, f64::max) * 1.1;
    let max_x = if max_x > 0.0 { max_x } else { 1.0 };
    let min_y = points.iter().map(|p| p.3).fold(100.0_f64, f64::min);
    let min_y = ((min_y - 5.0) / 10.0).floor().clamp(0.0, 9.0) * 10.0;
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let x = |v: f64| left + v / max_x * plot_w;
    let y = |v: f64| top + (100.0 - v) / (100.0 - min_y) * plot_h;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    out.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>\n",
        top + plot_h,
        left + plot_w,
        top + plot_h,
        top + plot_h
    ));
    for step in 0..=5 {
        let value = max_x * step as f64 / 5.0;
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{value:.2}</text>\n",
            x(value),
            top + plot_h + 16.0
        ));
        let value = min_y + (100.0 - min_y) * step as f64 / 5.0;
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{value:.0}</text>\n",
            left - 6.0,
            y(value) + 4.0
        ));
    }
    out.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">billed input, $ ({} sessions)</text>\n<text x=\"16\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {:.1})\">retention of what is no longer verbatim, %</text>\n",
        left + plot_w / 2.0,
        height - 10.0,
        results.sessions,
        top + plot_h / 2.0,
        top + plot_h / 2.0
    ));
    for &(index, window, cost, retention) in &points {
        let position = results
            .windows
            .iter()
            .position(|w| *w == window)
            .unwrap_or(0);
        let radius = 3.5 + 2.5 * position as f64;
        out.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{radius:.1}\" fill=\"{}\" fill-opacity=\"0.75\"><title>{} {window}: ${cost:.2}, {retention:.1} %</title></circle>\n",
            x(cost),
            y(retention),
            COLOURS[index % COLOURS.len()],
            escape(STRATEGIES[index]),
        ));
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"{}\">{}k</text>\n",
            x(cost) + radius + 2.0,
            y(retention) + 3.0,
            COLOURS[index % COLOURS.len()],
            window / 1000
        ));
    }
    let legend_x = left + plot_w + 20.0;
    for (index, name) in STRATEGIES.iter().enumerate() {
        let ly = top + 10.0 + index as f64 * 20.0;
        out.push_str(&format!(
            "<circle cx=\"{legend_x}\" cy=\"{ly}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
            COLOURS[index],
            legend_x + 12.0,
            ly + 4.0,
            escape(name)
        ));
    }
    for (position, window) in results.windows.iter().enumerate() {
        let ly = top + 150.0 + position as f64 * 24.0;
        out.push_str(&format!(
            "<circle cx=\"{legend_x}\" cy=\"{ly}\" r=\"{:.1}\" fill=\"none\" stroke=\"black\"/><text x=\"{}\" y=\"{}\">window {window}</text>\n",
            3.5 + 2.5 * position as f64,
            legend_x + 14.0,
            ly + 4.0
        ));
    }
    out.push_str("</svg>\n");
    out
}
