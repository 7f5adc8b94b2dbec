//! What recording one build's metrics costs on its own: the calls a BuildMessages makes
//! (its RPC duration, the view cache lookup, the build's regions, window use and kind)
//! with the metrics pipeline `ctxd serve --metrics-listen` installs, from one thread and
//! from sixteen (the build part's clients) contending for the instruments' locks.
use std::time::{Duration, Instant};

use ctxd::metrics::{BuildFigures, BuildKind, MetricsPipeline, ViewLookup, metrics};

pub struct MetricsScale {
    /// Builds' worth of recording, in all, per thread count.
    pub builds: usize,
}

pub const FULL: MetricsScale = MetricsScale { builds: 2_000_000 };
pub const SMOKE: MetricsScale = MetricsScale { builds: 1_000 };

/// One build's recording, as the server does it.
fn record_one_build(n: usize) {
    let figures = BuildFigures {
        system_tokens: 40,
        tool_tokens: 90,
        summary_tokens: 1_200 + (n % 7) as i64,
        history_tokens: 9_000 + (n % 13) as i64,
        estimate_tokens: 10_330,
        window_tokens: 16_000,
    };
    let recorder = metrics();
    recorder.view_cache_lookup(ViewLookup::Hit);
    recorder.build_finished(&figures, BuildKind::Repeats);
    recorder.rpc_finished(
        "BuildMessages",
        tonic::Code::Ok,
        Duration::from_micros(4_000 + (n % 1_000) as u64),
    );
}

pub fn run(scale: &MetricsScale) {
    // The pipeline CTXD_BENCH_METRICS=1 installed, or one of this part's own.
    let own = MetricsPipeline::new(false, true)
        .expect("metrics pipeline")
        .expect("a pull pipeline");
    let _kept = ctxd::metrics::install(&own.meter()).then_some(own);
    println!("## Recording a build's metrics (no I/O)");
    println!();
    println!("threads | builds | wall ms | builds/s | ns per build (wall × cores used / builds)");
    println!("---|---|---|---|---");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for threads in [1usize, 16] {
        let each = scale.builds / threads;
        let started = Instant::now();
        std::thread::scope(|scope| {
            for t in 0..threads {
                scope.spawn(move || {
                    for n in 0..each {
                        record_one_build(t * each + n);
                    }
                });
            }
        });
        let wall = started.elapsed();
        let builds = each * threads;
        let used = threads.min(cores) as f64;
        println!(
            "{threads} | {builds} | {:.1} | {:.0} | {:.0}",
            wall.as_secs_f64() * 1e3,
            builds as f64 / wall.as_secs_f64(),
            wall.as_secs_f64() * 1e9 * used / builds as f64,
        );
    }
    println!();
}
