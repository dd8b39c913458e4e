//! The `kibitz` binary: parse the configuration, set up logging, build the state, serve.
//!
//! A subcommand runs a tool instead of the server (`kibitz arena`, `kibitz pbrain`,
//! `kibitz connect4-book`; see `kibitz::tools`). Started under a file name beginning with
//! `pbrain` (piskvork managers launch engines without arguments), the binary speaks the
//! piskvork protocol at once.

use anyhow::Context;
use clap::Parser;

use kibitz::config::Config;
use kibitz::server::{build_state, init_tracing, raise_descriptor_limit, serve, shutdown_signal};
use kibitz::tools;

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
    command: Option<tools::Command>,
}

fn main() -> anyhow::Result<()> {
    if tools::launched_as_pbrain() {
        return tools::run_pbrain(1, None);
    }
    let cli = Cli::parse();
    match &cli.command {
        Some(command) => tools::run(command),
        None => run_server(cli.config),
    }
}

#[tokio::main]
async fn run_server(config: Config) -> anyhow::Result<()> {
    init_tracing(config.log_format);
    let descriptors = raise_descriptor_limit();
    let max_connections = config.connection_limit(descriptors);
    let addr = config.addr;
    if let Some((workers, cores)) = config.oversubscribed_workers() {
        tracing::warn!(
            workers,
            cores,
            "KIBITZ_WORKERS is above the cores this process may use: searches share cores, \
             answers arrive after their budget; set it to at most the cores (or 0, one per core)"
        );
    }
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
