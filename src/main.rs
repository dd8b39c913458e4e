//! The kibitz binary. In this branch only the gomoku subcommands live here (`pbrain`, `arena`);
//! they are kept in one small block for the lead to merge into the service's CLI.
//!
//! Started under a file name beginning with `pbrain` (as piskvork managers launch engines,
//! without arguments), it speaks the piskvork protocol at once.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "kibitz", about = "Suggests moves in board games")]
struct Cli {
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

fn run_pbrain() -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    kibitz::games::gomoku::pbrain::run_pbrain(stdin.lock(), std::io::stdout().lock())?;
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let launched_as_pbrain = std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().starts_with("pbrain"))
        })
        .unwrap_or(false);
    if launched_as_pbrain {
        return run_pbrain();
    }
    match Cli::parse().command {
        Some(Command::Pbrain) => run_pbrain(),
        Some(Command::Arena(args)) => kibitz::arena::run_arena(&args),
        None => Ok(()),
    }
}
