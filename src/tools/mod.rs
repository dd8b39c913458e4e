//! The tools: the `kibitz` binary's subcommands that are not the service.
//!
//! `kibitz arena` plays gomoku matches ([`arena`]), `kibitz pbrain` speaks the Gomocup piskvork
//! protocol on stdin/stdout ([`pbrain`]), and `kibitz connect4-book` derives the Connect-4
//! book's shallow layer ([`connect4_book`]). They are research and maintenance instruments: nothing that serves
//! a request (`api`, `service`, `server`) imports this module, and `tests/it/docs/layering.rs`
//! checks that it stays so. The tools reach the games and the engine as any caller would, through their public API.
//! They stay in the library (not a second binary or crate) because the integration tests, the
//! benches and the examples drive the arena's parts directly, and in the one binary because the
//! docs, the tests and piskvork managers start them as `kibitz <command>`.

pub mod arena;
pub mod connect4_book;
pub mod pbrain;

use clap::Subcommand;

/// The tools, as subcommands of the `kibitz` binary.
#[derive(Subcommand)]
pub enum Command {
    /// Play gomoku as a Gomocup piskvork engine over stdin/stdout.
    Pbrain(PbrainArgs),
    /// Play a gomoku match between two players over a file of openings.
    Arena(arena::ArenaArgs),
    /// Derive the Connect-4 opening book's shallow layer from its 12-disc layer.
    Connect4Book(connect4_book::Connect4BookArgs),
}

/// Runs one tool to its end.
pub fn run(command: &Command) -> anyhow::Result<()> {
    match command {
        Command::Pbrain(args) => run_pbrain(args.threads, args.nodes),
        Command::Arena(args) => arena::run_arena(args),
        Command::Connect4Book(args) => connect4_book::run(args),
    }
}

/// Whether the binary was started under a file name beginning with `pbrain`: piskvork managers
/// launch engines without arguments, so such a binary speaks the protocol at once.
pub fn launched_as_pbrain() -> bool {
    std::env::args_os()
        .next()
        .and_then(|arg| {
            std::path::Path::new(&arg)
                .file_name()
                .map(|name| name.to_string_lossy().starts_with("pbrain"))
        })
        .unwrap_or(false)
}

/// Options of `kibitz pbrain`.
#[derive(clap::Args, Debug, Clone)]
pub struct PbrainArgs {
    /// Search threads until the manager sends `INFO thread_num` (at most 8): the threat search
    /// runs one less helper thread. The arena sends no `thread_num`, so this is how a match
    /// gives kibitz a second core and its opponent one.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=pbrain::MAX_THREADS as i64))]
    pub threads: u8,
    /// A node budget a move instead of the manager's time control (`timeout_turn` and the
    /// match time are then ignored, save a 60 s cap a move). With one thread the same game
    /// gets the same moves on any machine, however loaded: paired self-play between two
    /// builds, `kibitz arena external:"OLD pbrain --nodes 200000" external:"NEW pbrain
    /// --nodes 200000"`, then differs only by their searches.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
}

/// `kibitz pbrain`: the piskvork protocol over this process' stdin and stdout.
pub fn run_pbrain(threads: u8, max_nodes: Option<u64>) -> anyhow::Result<()> {
    // Logs go to stderr only when asked for (`RUST_LOG`): stdout is the protocol's, and a
    // manager reads nothing else.
    if std::env::var_os("RUST_LOG").is_some() {
        crate::server::init_tracing(crate::config::LogFormat::Pretty);
    }
    let stdin = std::io::stdin();
    pbrain::run_pbrain_with(
        stdin.lock(),
        std::io::stdout().lock(),
        threads.into(),
        max_nodes,
    )?;
    Ok(())
}
