//! The `kibitz` binary: parse the configuration, set up logging, build the state, serve.
//!
//! Two subcommands play gomoku outside HTTP: `kibitz pbrain` speaks the Gomocup piskvork
//! protocol on stdin/stdout, and `kibitz arena ...` plays matches; `kibitz connect4-book`
//! derives the Connect-4 book's shallow layer. Started under a file name
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
    /// Derive the Connect-4 opening book's shallow layer from its 12-disc layer.
    Connect4Book(Connect4BookArgs),
}

#[derive(clap::Args)]
struct Connect4BookArgs {
    /// Where to write the layer (the shipped one is
    /// `src/games/connect4/book/book_8ply_distances.dat`).
    #[arg(long, required_unless_present = "check")]
    out: Option<std::path::PathBuf>,
    /// Positions with at most this many discs.
    #[arg(long, default_value_t = kibitz::games::connect4::book::SHALLOW_PLIES)]
    max_discs: u32,
    /// Derive the layer again and check the binary's own copy is identical.
    #[arg(long)]
    check: bool,
}

fn main() -> anyhow::Result<()> {
    if launched_as_pbrain() {
        return run_pbrain();
    }
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Pbrain) => run_pbrain(),
        Some(Command::Arena(args)) => kibitz::arena::run_arena(&args),
        Some(Command::Connect4Book(args)) => run_connect4_book(&args),
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

fn run_connect4_book(args: &Connect4BookArgs) -> anyhow::Result<()> {
    use kibitz::games::connect4::book::derive;
    let started = std::time::Instant::now();
    let bytes = derive::derive_shallow_layer(args.max_discs)?;
    eprintln!(
        "derived {} positions of at most {} discs in {:.1} s",
        bytes.len() / 5,
        args.max_discs,
        started.elapsed().as_secs_f64()
    );
    if let Some(out) = &args.out {
        std::fs::write(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    }
    if args.check {
        anyhow::ensure!(
            derive::matches_shipped_layer(&bytes),
            "the derived layer differs from the one built into this binary"
        );
        eprintln!("identical to the layer built into this binary");
    }
    Ok(())
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
