//! The `kibitz` binary: parse the configuration, set up logging, build the state, serve.

use anyhow::Context;
use clap::Parser;

use kibitz::config::Config;
use kibitz::server::{build_state, init_tracing, serve, shutdown_signal};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    init_tracing(config.log_format);
    let addr = config.addr;
    let state = build_state(config.clone()).context("starting the search workers")?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tracing::info!(
        addr = %listener.local_addr()?,
        workers = state.service.workers(),
        table_bytes = state.service.table_bytes(),
        "kibitz listening"
    );
    serve(listener, state, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}
