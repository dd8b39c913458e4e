//! Calibrates the strength levels: plays each level against the next one, against full
//! strength (10) and against a uniformly random mover, with paired colours, in tic-tac-toe,
//! Connect-4 and gomoku, and prints a table with 95% Wilson intervals (draws counted).
//!
//! ```text
//! cargo run --release --example levels -- [--games N] [--ms M] [--game NAME]... [--pairing A:B]...
//! ```
//!
//! `--ladder` plays the rating ladder `GET /games` publishes (`src/service/ladder.rs`): level 1
//! against the random mover, then each level against the one below, and prints each level's
//! rating with its interval and the steps as the source writes them.
//!
//! `--pairing 8:7` plays only the named pairings (levels 1..=10, or `random`) instead of the
//! whole table: the way to settle one row with more games.
//!
//! `--games` is per pairing (rounded up to an even number: each opening is played twice, the
//! colours swapped); `--ms` is the budget of a move. The players are exactly what `POST /move`
//! runs (`search_at_level`), each with its own table, cleared between games, and every move
//! is checked against the legal moves (an illegal one aborts the run). Seeds differ per game
//! and per move, so the weakened players' draws differ from game to game.

use std::time::{Duration, Instant};

use clap::Parser;

use kibitz::engine::skill::{FULL_STRENGTH, SplitMix64};
use kibitz::engine::{Move, SearchLimits, SearchOptions, Side, Status, TranspositionTable};
use kibitz::games::Grid;
use kibitz::games::connect4::Connect4;
use kibitz::games::gomoku::Gomoku;
use kibitz::games::tictactoe::TicTacToe;
use kibitz::service::games::ServedGame;
use kibitz::service::ladder::{Step, ladder};
use kibitz::service::levels::{Style, search_at_level};
use kibitz::tools::arena::score_interval;

/// A player: a level (1..=10) or the random mover.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Player {
    Level(u8),
    Random,
}

impl Player {
    fn name(self) -> String {
        match self {
            Player::Level(l) => format!("L{l}"),
            Player::Random => "random".into(),
        }
    }
}

struct Settings {
    games: usize,
    budget: Duration,
    /// Only these pairings; the whole table when empty.
    pairings: Vec<(Player, Player)>,
    /// The rating ladder instead of the table.
    ladder: bool,
}

/// A player as the command line writes it: a level `1`..=`10` or `random`.
fn parse_player(text: &str) -> Result<Player, String> {
    if text == "random" {
        return Ok(Player::Random);
    }
    match text.parse::<u8>() {
        Ok(level) if (1..=FULL_STRENGTH).contains(&level) => Ok(Player::Level(level)),
        _ => Err(format!(
            "a player is a level 1..=10 or `random`, not {text:?}"
        )),
    }
}

/// A pairing as the command line writes it: `A:B`, the first named first.
fn parse_pairing(text: &str) -> Result<(Player, Player), String> {
    let (a, b) = text
        .split_once(':')
        .ok_or_else(|| format!("a pairing is A:B, not {text:?}"))?;
    Ok((parse_player(a)?, parse_player(b)?))
}

#[path = "shared/game_name.rs"]
mod game_name;
use game_name::GameName;

/// `levels`' options.
#[derive(Parser)]
struct Args {
    /// Games a pairing, each opening twice with the colours swapped.
    #[arg(long, default_value_t = 20)]
    games: usize,
    /// Time a move, for every level.
    #[arg(long, default_value_t = 20)]
    ms: u64,
    /// The game (repeat for more); all three when none is given.
    #[arg(long, value_enum)]
    game: Vec<GameName>,
    /// Only this pairing `A:B` (repeat for more), each a level 1..=10 or `random`; the whole
    /// table when none is given.
    #[arg(long, value_parser = parse_pairing)]
    pairing: Vec<(Player, Player)>,
    /// Play the rating ladder instead: 1 against random, then each level against the one below.
    #[arg(long, conflicts_with = "pairing")]
    ladder: bool,
}

/// Plays one game; returns the first player's result: 1 win, 0.5 draw, 0 loss.
fn play_game<G: ServedGame>(
    start: &G,
    players: [Player; 2],
    tables: &[TranspositionTable; 2],
    seed: u64,
    settings: &Settings,
) -> f64 {
    let mut pos = start.clone();
    let mut rng = SplitMix64::new(seed ^ 0xA5A5_5A5A);
    let mut legal = Vec::new();
    for table in tables {
        table.clear();
    }
    let mut ply = 0u64;
    loop {
        match pos.status() {
            Status::Ongoing => {}
            Status::Draw => return 0.5,
            // The side to move lost: the other one made the last move.
            Status::Lost => {
                return if pos.side_to_move() == Side::First {
                    0.0
                } else {
                    1.0
                };
            }
        }
        legal.clear();
        pos.legal_moves(&mut legal);
        if legal.is_empty() {
            return 0.5;
        }
        let mover = pos.side_to_move().index();
        let mv = match players[mover] {
            Player::Random => legal[(rng.next_u64() % legal.len() as u64) as usize],
            Player::Level(level) => {
                let style = Style {
                    level,
                    seed: (level < FULL_STRENGTH).then_some(seed.wrapping_mul(1000) + ply),
                    deterministic: false,
                };
                let limits = SearchLimits::with_budget(settings.budget);
                let report = search_at_level(
                    &pos,
                    &limits,
                    SearchOptions::default(),
                    &tables[mover],
                    &style,
                );
                report.best_move.unwrap_or(Move::NONE)
            }
        };
        assert!(
            legal.contains(&mv),
            "{} played an illegal move {mv:?} at ply {ply}",
            players[mover].name()
        );
        pos.make(mv);
        ply += 1;
    }
}

/// Score of `a` against `b` over `games` games, colours paired: (points, games, wins, draws).
fn pairing<G: ServedGame>(
    start: &G,
    a: Player,
    b: Player,
    settings: &Settings,
    table_mb: usize,
    game_seed: &mut u64,
) -> (f64, usize, usize, usize) {
    let tables = [
        TranspositionTable::with_megabytes(table_mb),
        TranspositionTable::with_megabytes(table_mb),
    ];
    let (mut points, mut wins, mut draws) = (0.0, 0, 0);
    let pairs = settings.games.div_ceil(2);
    for _ in 0..pairs {
        *game_seed += 1;
        for a_first in [true, false] {
            let players = if a_first { [a, b] } else { [b, a] };
            let first = play_game(start, players, &tables, *game_seed, settings);
            let for_a = if a_first { first } else { 1.0 - first };
            points += for_a;
            if for_a == 1.0 {
                wins += 1;
            } else if for_a == 0.5 {
                draws += 1;
            }
        }
    }
    (points, pairs * 2, wins, draws)
}

fn run<G: ServedGame>(label: &str, start: G, table_mb: usize, settings: &Settings) {
    println!(
        "\n### {label}: {} games per pairing, {} ms a move\n",
        settings.games.div_ceil(2) * 2,
        settings.budget.as_millis()
    );
    println!("| pairing | games | W-D-L (first named) | score | 95% Wilson |");
    println!("|---|---|---|---|---|");
    let started = Instant::now();
    let mut seed = 0u64;
    let mut rows: Vec<(Player, Player)> = settings.pairings.clone();
    if settings.ladder {
        rows.push((Player::Level(1), Player::Random));
        for level in 1..FULL_STRENGTH {
            rows.push((Player::Level(level + 1), Player::Level(level)));
        }
    }
    let whole_table = rows.is_empty();
    let mut steps = Vec::new();
    for level in (1..FULL_STRENGTH).filter(|_| whole_table) {
        rows.push((Player::Level(level + 1), Player::Level(level)));
    }
    for level in (1..FULL_STRENGTH).filter(|_| whole_table) {
        rows.push((Player::Level(FULL_STRENGTH), Player::Level(level)));
    }
    for level in (1..=FULL_STRENGTH).filter(|_| whole_table) {
        rows.push((Player::Level(level), Player::Random));
    }
    for (a, b) in rows {
        let (points, games, wins, draws) = pairing(&start, a, b, settings, table_mb, &mut seed);
        let losses = games - wins - draws;
        let (p, lo, hi) = score_interval(wins as u64, draws as u64, losses as u64);
        debug_assert_eq!(p, points / games as f64);
        steps.push(Step {
            wins: wins as u32,
            draws: draws as u32,
            losses: losses as u32,
            score_low: (lo * 1000.0).round() / 1000.0,
            score_high: (hi * 1000.0).round() / 1000.0,
        });
        println!(
            "| {} vs {} | {games} | {wins}-{draws}-{} | {p:.3} | {lo:.3}-{hi:.3} |",
            a.name(),
            b.name(),
            losses
        );
    }
    if settings.ladder {
        println!("\n| level | rating (Elo above the random mover) | 95 % interval |");
        println!("|---|---|---|");
        for level in ladder(&steps) {
            let high = level
                .high
                .map_or("unbounded".to_owned(), |h| format!("{h:.0}"));
            println!(
                "| {} | {:.0} | {:.0} to {high} |",
                level.level, level.rating, level.low
            );
        }
        println!("\nsrc/service/ladder.rs:\n");
        for s in &steps {
            println!(
                "    ({}, {}, {}, {:.3}, {:.3}),",
                s.wins, s.draws, s.losses, s.score_low, s.score_high
            );
        }
    }
    println!("\n({label} took {:.0} s)", started.elapsed().as_secs_f64());
}

fn empty<G: ServedGame>(rows: usize, cols: usize) -> G {
    let text: Vec<String> = (0..rows).map(|_| ".".repeat(cols)).collect();
    let grid = Grid::parse(&text, G::MAX_SIDE).expect("an empty board");
    G::from_grid(&grid, None, &G::Rules::default()).expect("an empty board is a position")
}

fn main() {
    let args = Args::parse();
    let settings = Settings {
        games: args.games,
        budget: Duration::from_millis(args.ms),
        pairings: args.pairing,
        ladder: args.ladder,
    };
    let games = if args.game.is_empty() {
        vec![GameName::Tictactoe, GameName::Connect4, GameName::Gomoku]
    } else {
        args.game
    };
    for game in games {
        match game {
            GameName::Tictactoe => run("tic-tac-toe", empty::<TicTacToe>(3, 3), 1, &settings),
            GameName::Connect4 => run("Connect-4 7x6", empty::<Connect4>(6, 7), 16, &settings),
            GameName::Gomoku => run(
                "gomoku 15x15 free-style",
                empty::<Gomoku>(15, 15),
                16,
                &settings,
            ),
        }
    }
}
