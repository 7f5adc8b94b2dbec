//! What a tune found: a row per candidate, a picture of cost against retention, and the
//! recommended policy — of the candidates at least as good as the current one on both
//! axes, the best for the weight given (the current one when none is).
use super::Candidate;
use crate::eval::cost::{PRICE_LIST, dollars};
use crate::eval::facts::ACTED;
use crate::eval::meter::Totals;

/// The candidates, their figures, and the one recommended.
pub struct Outcome {
    pub sessions: usize,
    pub weight: f64,
    pub rows: Vec<(Candidate, Totals)>,
    pub recommended: usize,
}

fn retention(t: &Totals) -> f64 {
    t.retention.mean_pct(None).unwrap_or(0.0)
}

/// Picks the recommendation: of the candidates that cost no more and keep no less than
/// the current policy, the highest `weight` × retention − (1 − `weight`) × relative
/// cost.
pub fn recommend(
    sessions: usize,
    candidates: Vec<Candidate>,
    totals: Vec<Totals>,
    weight: f64,
) -> Outcome {
    let rows: Vec<(Candidate, Totals)> = candidates.into_iter().zip(totals).collect();
    let current = rows.iter().position(|(c, _)| c.is_current()).unwrap_or(0);
    let (base_cost, base_kept) = (rows[current].1.units.max(1.0), retention(&rows[current].1));
    let score = |t: &Totals| weight * retention(t) / 100.0 - (1.0 - weight) * t.units / base_cost;
    let recommended = (0..rows.len())
        .filter(|&i| rows[i].1.units <= base_cost && retention(&rows[i].1) >= base_kept)
        .max_by(|&a, &b| score(&rows[a].1).total_cmp(&score(&rows[b].1)))
        .unwrap_or(current);
    Outcome {
        sessions,
        weight,
        rows,
        recommended,
    }
}

fn pct(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".into(), |v| format!("{v:.1}"))
}

impl Outcome {
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "{} stored sessions replayed under {} policies; prices: {PRICE_LIST}.\n\n| policy | billed input (M token units) | billed $ | cache-stable % | retention % | at the last request | commands at the last | acted-on paths at the last | over budget | |\n|---|---|---|---|---|---|---|---|---|---|\n",
            self.sessions,
            self.rows.len()
        );
        for (index, (candidate, t)) in self.rows.iter().enumerate() {
            let mark = match (candidate.is_current(), index == self.recommended) {
                (true, true) => "current, recommended",
                (true, false) => "current",
                (false, true) => "recommended",
                (false, false) => "",
            };
            out.push_str(&format!(
                "| {} | {:.3} | {:.2} | {:.1} | {} | {} | {} | {} | {} | {mark} |\n",
                candidate.name,
                t.units / 1e6,
                dollars(t.units),
                t.stable_pct(),
                pct(t.retention.mean_pct(None)),
                pct(t.last.mean_pct(None)),
                pct(t.last.mean_pct(Some(0))),
                pct(t.last.mean_pct(Some(ACTED))),
                t.over_budget,
            ));
        }
        let (chosen, _) = &self.rows[self.recommended];
        out.push_str(&format!(
            "\nRecommended (weight {:.2} on retention): **{}** — of the policies that cost no more and keep no less than the current one, the best for that weight.\n",
            self.weight, chosen.name
        ));
        out
    }

    /// Billed dollars (x) against retention (y), one point per policy; the current one
    /// black, the recommended one red.
    pub fn svg(&self) -> String {
        let (width, height, left, top, plot_w, plot_h) = (720.0, 420.0, 70.0, 20.0, 600.0, 340.0);
        let points: Vec<(f64, f64)> = (self.rows.iter())
            .map(|(_, t)| (dollars(t.units), retention(t)))
            .collect();
        let (min_x, max_x) = bounds(points.iter().map(|p| p.0));
        let (min_y, max_y) = bounds(points.iter().map(|p| p.1));
        let x = |v: f64| left + (v - min_x) / (max_x - min_x) * plot_w;
        let y = |v: f64| top + (max_y - v) / (max_y - min_y) * plot_h;
        let mut out = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<line x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"black\"/>\n<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{0}\" stroke=\"black\"/>\n<text x=\"{2}\" y=\"{3}\" text-anchor=\"middle\">billed input, $ (x: {min_x:.2} to {max_x:.2})</text>\n<text x=\"14\" y=\"{4}\" transform=\"rotate(-90 14 {4})\" text-anchor=\"middle\">retention, % ({min_y:.1} to {max_y:.1})</text>\n",
            top + plot_h,
            left + plot_w,
            left + plot_w / 2.0,
            height - 12.0,
            top + plot_h / 2.0,
        );
        for (index, ((candidate, _), (cost, kept))) in self.rows.iter().zip(&points).enumerate() {
            let colour = match (index == self.recommended, candidate.is_current()) {
                (true, _) => "#d62728",
                (false, true) => "black",
                _ => "#1f77b4",
            };
            out.push_str(&format!(
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"{colour}\">{}</text>\n",
                x(*cost),
                y(*kept),
                x(*cost) + 8.0,
                y(*kept) + 3.0,
                escape(&candidate.name),
            ));
        }
        out.push_str("</svg>\n");
        out
    }
}

/// A range around the values, never empty.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !low.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((high - low) * 0.1).max(0.01);
    (low - pad, high + pad)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::candidates;

    /// Figures with `units` billed and `kept` of 100 facts retained in one build.
    fn figures(units: f64, kept: u64) -> Totals {
        let mut count = crate::eval::facts::Count::default();
        count.due[0] = 100;
        count.kept[0] = kept;
        let mut totals = Totals {
            units,
            ..Totals::default()
        };
        totals.retention.add_build(&count);
        totals
    }

    #[test]
    fn the_recommendation_is_never_worse_than_the_current_policy() {
        let all = candidates();
        // Index 1 is cheaper and keeps more; 2 keeps much more but costs more; 3 is
        // cheaper but keeps less.
        let mut totals = vec![figures(100.0, 50); all.len()];
        totals[1] = figures(90.0, 55);
        totals[2] = figures(150.0, 90);
        totals[3] = figures(50.0, 40);
        let outcome = recommend(1, all.clone(), totals.clone(), 0.5);
        assert_eq!(outcome.recommended, 1);
        // Retention weighs all: still only what is no worse on cost.
        assert_eq!(recommend(1, all.clone(), totals, 1.0).recommended, 1);
        // Nothing better: the current policy.
        let worse = vec![figures(100.0, 50), figures(120.0, 50), figures(100.0, 40)];
        assert_eq!(recommend(1, all[..3].to_vec(), worse, 0.5).recommended, 0);
    }
}
