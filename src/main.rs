//! The `kibitz` binary: parse the configuration, set up logging, build the state, serve.
//!
//! Two subcommands play gomoku outside HTTP: `kibitz pbrain` speaks the Gomocup piskvork
//! protocol on stdin/stdout, and `kibitz arena ...` plays matches. Started under a file name
//! beginning with `pbrain` (piskvork managers launch engines without arguments), the binary
//! speaks the protocol at once.

use anyhow::Context;
use clap::{Parser, Subcommand};

use kibitz::config::Config;
use kibitz::server::{build_state, init_tracing, raise_descriptor_limit, serve, shutdown_signal};

#[derive(Parser)]
#[command(
    name = "kibitz",
    version,
    about = "Suggests moves in board games over HTTP"
)]
struct Cli {
    #[command(flatten)]
    config: Config,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Play gomoku as a Gomocup piskvork engine over stdin/stdout.
    Pbrain,
    /// Play a gomoku match between two players over a file of openings.
    Arena(kibitz::arena::ArenaArgs),
}

fn main() -> anyhow::Result<()> {
    if launched_as_pbrain() {
        return run_pbrain();
    }
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Pbrain) => run_pbrain(),
        Some(Command::Arena(args)) => kibitz::arena::run_arena(&args),
        None => run_server(cli.config),
    }
}

fn launched_as_pbrain() -> bool {
    std::env::args_os()
        .next()
        .and_then(|arg| {
            std::path::Path::new(&arg)
                .file_name()
                .map(|name| name.to_string_lossy().starts_with("pbrain"))
        })
        .unwrap_or(false)
}

fn run_pbrain() -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    kibitz::games::gomoku::pbrain::run_pbrain(stdin.lock(), std::io::stdout().lock())?;
    Ok(())
}

#[tokio::main]
async fn run_server(config: Config) -> anyhow::Result<()> {
    init_tracing(config.log_format);
    let descriptors = raise_descriptor_limit();
    let max_connections = config.connection_limit(descriptors);
    let addr = config.addr;
    let state = build_state(config.clone()).context("starting the search workers")?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tracing::info!(
        addr = %listener.local_addr()?,
        workers = state.service.workers(),
        table_bytes = state.service.table_bytes(),
        max_connections,
        descriptors,
        cache_mb = state.service.memory_sizing().cache_mb,
        memory_limit_bytes = state.service.memory_sizing().limit_bytes,
        "kibitz listening"
    );
    tracing::info!(url = %kibitz::api::playground::page_url(listener.local_addr()?), "playground page");
    serve(listener, state, max_connections, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}
