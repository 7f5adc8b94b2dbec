use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use ctxd::admin::{KeyCommand, TenantCommand};
use ctxd::client::ClientTls;
use ctxd::config::{Config, ServeArgs};
use ctxd::server;
use ctxd::store::schema::Assessment;
use ctxd::store::{Migrations, Store};

/// ctxd: context management for LLM agents over gRPC.
#[derive(Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

/// `ctxd events`'s arguments.
#[derive(clap::Args)]
struct EventsArgs {
    /// The session id.
    session_id: String,
    /// Keep printing new events until interrupted.
    #[arg(long)]
    follow: bool,
    /// Resume after this cursor (the first column of an earlier line).
    #[arg(long)]
    after: Option<String>,
    /// The server's address.
    #[arg(long, default_value = "127.0.0.1:50051")]
    addr: String,
    /// API key of the session's tenant (when the server has keys).
    #[arg(long, env = "CTXD_API_KEY")]
    api_key: Option<String>,
    #[command(flatten)]
    tls: ClientTls,
}

impl EventsArgs {
    async fn run(self) -> Result<(), BoxError> {
        let options = ctxd::events_cli::Options {
            addr: &self.addr,
            tls: &self.tls,
            api_key: self.api_key.as_deref(),
            session_id: &self.session_id,
            after: self.after.as_deref(),
            follow: self.follow,
        };
        ctxd::events_cli::run(&options, &mut std::io::stdout()).await
    }
}

/// Where `ctxd session` finds the server.
#[derive(clap::Args)]
struct ServerArgs {
    /// The server's address.
    #[arg(long, env = "CTXD_ADDRESS", default_value = "127.0.0.1:50051")]
    addr: String,
    /// API key of the session's tenant (when the server has keys).
    #[arg(long, env = "CTXD_API_KEY")]
    api_key: Option<String>,
    #[command(flatten)]
    tls: ClientTls,
}

/// `ctxd session`'s commands.
#[derive(Subcommand)]
enum SessionCommand {
    /// Write a session's file (ExportSession: JSON lines, versioned, with a digest) to
    /// standard output.
    Export {
        /// The session id.
        session_id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Create a session from a file ExportSession wrote (`-`: standard input), on this
    /// server or another.
    Import {
        file: std::path::PathBuf,
        /// Import it under this id instead of the file's.
        #[arg(long = "as")]
        as_id: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
}

impl SessionCommand {
    async fn run(self) -> Result<(), BoxError> {
        use ctxd::session_file::{Server, export, import};
        match self {
            SessionCommand::Export { session_id, server } => {
                let server = Server {
                    addr: &server.addr,
                    tls: &server.tls,
                    api_key: server.api_key.as_deref(),
                };
                export(&server, &session_id, &mut std::io::stdout()).await
            }
            SessionCommand::Import {
                file,
                as_id,
                server,
            } => {
                let server = Server {
                    addr: &server.addr,
                    tls: &server.tls,
                    api_key: server.api_key.as_deref(),
                };
                let mut input: Box<dyn std::io::Read> = if file.as_os_str() == "-" {
                    Box::new(std::io::stdin())
                } else {
                    Box::new(
                        std::fs::File::open(&file)
                            .map_err(|error| format!("{}: {error}", file.display()))?,
                    )
                };
                let said =
                    import(&server, as_id.as_deref().unwrap_or_default(), &mut input).await?;
                print!("{said}");
                Ok(())
            }
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve the gRPC API (the default).
    Serve(ServeArgs),
    /// Apply database migrations and exit.
    Migrate {
        /// List the migrations that would be applied (and any the database has that this
        /// ctxd does not know), apply none.
        #[arg(long)]
        dry_run: bool,
        /// Then place the tables on the Citus coordinator the URL names: reference and
        /// distributed by tenant (docs/decisions/0028-citus-distribution.md). Tables
        /// placed already are left as they are.
        #[arg(long, conflicts_with = "dry_run")]
        distribute: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// Ask a running server's gRPC health service; exit 0 when it is SERVING.
    Healthcheck {
        /// The server's address.
        #[arg(long, default_value = "127.0.0.1:50051")]
        addr: String,
        #[command(flatten)]
        tls: ClientTls,
    },
    /// Show a session as ctxd sees it: the window by region against the thresholds,
    /// the summaries with their depth and coverage, what compaction did.
    Inspect {
        /// The session id.
        session_id: String,
        /// One JSON object instead of the text report.
        #[arg(long)]
        json: bool,
        /// The server's address.
        #[arg(long, default_value = "127.0.0.1:50051")]
        addr: String,
        /// API key of the session's tenant (when the server has keys).
        #[arg(long, env = "CTXD_API_KEY")]
        api_key: Option<String>,
        #[command(flatten)]
        tls: ClientTls,
    },
    /// Print a session's events (cursor, time, version, kind, what it says), one line
    /// each: the backlog, then with --follow new ones as they come.
    Events(EventsArgs),
    /// Move a session between servers: export it to a file, import a file.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// Drive recorded sessions (OpenAI chat histories as JSON, gzip or not) through a
    /// running server as an agent would, and report per session: tokens, compactions,
    /// estimate error, cache-stable builds, orphans, over-budget builds, RPC latency.
    Replay {
        /// The recorded sessions.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// The server's address.
        #[arg(long, default_value = "127.0.0.1:50051")]
        addr: String,
        /// The sessions' context window (the output reserve follows the 4:1 rule).
        #[arg(long, default_value_t = 16_000)]
        window: i64,
        /// Report the recorded usage with each assistant message (meaningful only when
        /// the window holds the whole recorded conversation).
        #[arg(long)]
        report_usage: bool,
        /// The sessions' tokenizer: o200k_base, cl100k_base, deepseek_v3 or heuristic
        /// [default: the server's].
        #[arg(long, value_parser = ctxd::policy::TokenizerKind::from_name)]
        tokenizer: Option<ctxd::policy::TokenizerKind>,
        /// API key (when the server has keys).
        #[arg(long, env = "CTXD_API_KEY")]
        api_key: Option<String>,
        /// Keep the sessions the replay creates (by default each is deleted once
        /// replayed); their ids are printed either way.
        #[arg(long)]
        keep: bool,
        #[command(flatten)]
        tls: ClientTls,
    },
    /// Measure compaction against the anchors' strategies (OpenCode, Codex, deepagents,
    /// PicoClaw's seahorse, Anthropic context editing) on recorded sessions: ctxd through
    /// a running server, the others re-implemented in process with ctxd's summarizer;
    /// prints billed input with caching, cache-stable %, window use, over-budget
    /// requests, orphans and retention per strategy and window (Markdown).
    Eval {
        /// The server's address.
        #[arg(long, default_value = "127.0.0.1:50051")]
        addr: String,
        /// Directory of recorded sessions (OpenAI chat histories, JSON, gzip or not); a
        /// set. Repeat it for several sets: each is reported on its own, and each
        /// project (a session's file name up to its issue number) within it.
        #[arg(long, default_value = "tests/data/swe-trajectories")]
        corpus: Vec<std::path::PathBuf>,
        /// How many sessions of each set (the first by file name); 0: all.
        #[arg(long, default_value_t = 0)]
        sessions: usize,
        /// Context windows, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [8_000, 16_000, 32_000],
              value_parser = clap::value_parser!(i64).range(1_000..=10_000_000))]
        windows: Vec<i64>,
        /// Sessions replayed at once.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
        jobs: u16,
        /// Also write compaction-eval.md and compaction-eval.svg into this directory.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// API key (when the server has keys).
        #[arg(long, env = "CTXD_API_KEY")]
        api_key: Option<String>,
        #[command(flatten)]
        tls: ClientTls,
    },
    /// Which policy is best for your own sessions: replays the tenant's most recently
    /// active stored sessions (or those whose metadata matches) under candidate policies
    /// through a running server, into new sessions it deletes after, and prints billed
    /// input against retention per policy with the current one and a recommendation
    /// (Markdown; --out also writes tune.md and tune.svg). The stored sessions are only
    /// read.
    Tune {
        /// The server's address.
        #[arg(long, default_value = "127.0.0.1:50051")]
        addr: String,
        /// How many sessions, most recently active first.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=1000))]
        sessions: u16,
        /// Only sessions whose metadata has KEY=VALUE (repeat for several).
        #[arg(long = "metadata", value_name = "KEY=VALUE")]
        metadata: Vec<String>,
        /// Weight of retention against cost in the recommendation, 0 to 1.
        #[arg(long, default_value_t = 0.5)]
        weight: f64,
        /// Also write tune.md and tune.svg into this directory.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// API key (when the server has keys).
        #[arg(long, env = "CTXD_API_KEY")]
        api_key: Option<String>,
        #[command(flatten)]
        tls: ClientTls,
    },
    /// Manage tenants (also while `ctxd serve` runs on the same data directory).
    Tenant {
        #[command(subcommand)]
        command: TenantCommand,
    },
    /// Manage API keys (also while `ctxd serve` runs on the same data directory).
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
}

fn main() -> ExitCode {
    ctxd::heap::configure();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("ctxd: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("ctxd: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command the line named (`serve` when none).
async fn run(cli: Cli) -> Result<(), BoxError> {
    match cli.command {
        None => serve(cli.serve).await,
        Some(Command::Serve(args)) => serve(args).await,
        Some(Command::Migrate {
            dry_run,
            distribute,
            args,
        }) => migrate(&args, dry_run, distribute).await,
        Some(Command::Healthcheck { addr, tls }) => healthcheck(addr, tls).await,
        Some(Command::Replay {
            files,
            addr,
            window,
            report_usage,
            tokenizer,
            api_key,
            keep,
            tls,
        }) => {
            let options = ctxd::replay::Options {
                addr,
                tls,
                api_key,
                window,
                report_usage,
                tokenizer,
                // Progress lines only for a person watching a terminal.
                progress: std::io::stderr().is_terminal(),
                keep,
            };
            ctxd::replay::run(&files, &options)
                .await
                .map(|table| print!("{table}"))
        }
        Some(Command::Eval {
            addr,
            corpus,
            sessions,
            windows,
            jobs,
            out,
            api_key,
            tls,
        }) => {
            let options = ctxd::eval::Options {
                addr,
                tls,
                api_key,
                corpus,
                sessions,
                windows,
                jobs: usize::from(jobs),
                out,
                progress: std::io::stderr().is_terminal(),
            };
            ctxd::eval::run(&options)
                .await
                .map(|table| print!("{table}"))
        }
        Some(Command::Tune {
            addr,
            sessions,
            metadata,
            weight,
            out,
            api_key,
            tls,
        }) => tune(addr, sessions, metadata, weight, out, api_key, tls).await,
        Some(Command::Inspect {
            session_id,
            json,
            addr,
            api_key,
            tls,
        }) => ctxd::inspect::run(&addr, &tls, api_key.as_deref(), &session_id, json)
            .await
            .map(|report| print!("{report}")),
        Some(Command::Events(args)) => args.run().await,
        Some(Command::Session { command }) => command.run().await,
        Some(Command::Tenant { command }) => {
            let args = command.serve_args().clone();
            with_store(&args, Migrations::Require, |store| async move {
                print!("{}", command.run(&store).await?);
                Ok(())
            })
            .await
        }
        Some(Command::Key { command }) => {
            let args = command.serve_args().clone();
            with_store(&args, Migrations::Require, |store| async move {
                print!("{}", command.run(&store).await?);
                Ok(())
            })
            .await
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn serve(args: ServeArgs) -> Result<(), BoxError> {
    let config = Config::load(&args)?;
    let _telemetry = ctxd::telemetry::init(config.log_format, &config.log_filter)?;
    let shutdown = CancellationToken::new();
    tokio::spawn(stop_on_signal(shutdown.clone()));
    server::run(config, shutdown).await?;
    tracing::info!("ctxd stopped");
    Ok(())
}

/// Applies the pending migrations, or with `dry_run` lists them.
async fn migrate(args: &ServeArgs, dry_run: bool, distribute: bool) -> Result<(), BoxError> {
    if distribute {
        return with_store(args, Migrations::Apply, |store| async move {
            let placed = store.distribute().await?;
            println!("placed {placed} tables on the coordinator's nodes");
            Ok(())
        })
        .await;
    }
    if !dry_run {
        return with_store(args, Migrations::Apply, |_| async { Ok(()) }).await;
    }
    let config = Config::load(args)?;
    let _telemetry = ctxd::telemetry::init(config.log_format, "warn")?;
    let (url, local) = server::database_for_command(&config).await?;
    let result = server::schema(&config, &url).await;
    if let Some(local) = local {
        local.stop().await?;
    }
    print!("{}", describe(&result?));
    Ok(())
}

/// What `ctxd migrate --dry-run` prints.
fn describe(schema: &Assessment) -> String {
    let mut out = if schema.pending.is_empty() {
        "nothing to apply: the schema has every migration this ctxd carries\n".to_string()
    } else {
        format!("would apply: {}\n", schema.pending_list())
    };
    if !schema.newer.is_empty() {
        out.push_str(&format!(
            "the database also has migrations this ctxd does not know (a newer ctxd's): {}\n",
            schema.newer_list()
        ));
    }
    if let Some(refusal) = &schema.refusal {
        out.push_str(&format!("this ctxd would refuse the schema: {refusal}\n"));
    }
    out
}

/// Runs `work` against the configured database, applying migrations or requiring there
/// are none pending (`migrations`). With no URL, the data directory's private
/// PostgreSQL: the one a running `ctxd serve` holds, or one started (and stopped) for
/// the command.
async fn with_store<F, Fut>(
    args: &ServeArgs,
    migrations: Migrations,
    work: F,
) -> Result<(), BoxError>
where
    F: FnOnce(Store) -> Fut,
    Fut: std::future::Future<Output = Result<(), BoxError>>,
{
    let config = Config::load(args)?;
    let _telemetry = ctxd::telemetry::init(config.log_format, "warn")?;
    let (url, local) = server::database_for_command(&config).await?;
    let result = async {
        let store = server::connect(&config, &url, 2, migrations).await?;
        work(store.clone()).await?;
        store.close().await;
        Ok(())
    }
    .await;
    if let Some(local) = local {
        local.stop().await?;
    }
    result
}

async fn healthcheck(addr: String, tls: ClientTls) -> Result<(), BoxError> {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let timeout = std::time::Duration::from_secs(3);
    let channel = ctxd::client::connect(&addr, &tls, timeout, timeout).await?;
    let mut client = HealthClient::new(channel);
    let response = client
        .check(HealthCheckRequest {
            service: "ctxd.v1.ContextService".into(),
        })
        .await
        .map_err(|status| format!("the server at {addr}: {}", ctxd::error::chain(&status)))?
        .into_inner();
    if response.status() == ServingStatus::Serving {
        println!("SERVING");
        return Ok(());
    }
    Err(format!("the server at {addr} is {:?}", response.status()).into())
}

async fn stop_on_signal(shutdown: CancellationToken) {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(error = %error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate => {}
    }
    tracing::info!("shutdown requested");
    shutdown.cancel();
}

/// `ctxd tune`: runs it, prints the table, writes the files.
async fn tune(
    addr: String,
    sessions: u16,
    metadata: Vec<String>,
    weight: f64,
    out: Option<std::path::PathBuf>,
    api_key: Option<String>,
    tls: ClientTls,
) -> Result<(), ctxd::replay::BoxError> {
    let metadata = metadata
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .ok_or_else(|| format!("--metadata {pair:?}: give KEY=VALUE"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let options = ctxd::tune::Options {
        addr,
        tls,
        api_key,
        sessions: usize::from(sessions),
        metadata,
        weight,
        out: out.clone(),
    };
    let outcome = ctxd::tune::run(&options).await?;
    let table = outcome.markdown();
    if let Some(dir) = out {
        for (name, text) in [("tune.md", table.clone()), ("tune.svg", outcome.svg())] {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    print!("{table}");
    Ok(())
}
