//! The games the service plays, and everything it needs to know about each beyond its rules:
//! how its `rules` object reads from JSON, how `GET /games` describes it (board sizes, the
//! default board), how a review marks a lost score, its strength levels and table size.
//!
//! Dispatch is generic: the service's code for a request (a move, a review) is written once
//! for any [`ServedGame`] as a [`GameTask`], and [`with_game`], generated from the
//! `served_games!` list, turns the request's game name into the right monomorphised call.
//! Nothing else in the service names a game. Adding a game takes two steps in this file (after
//! the game itself in `games`; `docs/adding-a-game.md` has the whole list):
//! 1. `impl ServedGame for NewGame` (its rules parser, its description, its review thresholds);
//! 2. its type in the `served_games!(...)` line at the bottom.

use std::future::Future;

use serde::Serialize;
use serde_json::Value;

use crate::engine::skill::{LevelTable, STANDARD_LEVELS, with_depth_caps};
use crate::games::BoardGame;
use crate::games::connect4::Connect4;
use crate::games::gomoku::{self, Gomoku, GomokuRules, Overline};
use crate::games::notation::Notation;
use crate::games::tictactoe::TicTacToe;

use super::ladder::{self, Step};
use super::wdl::{self, WdlModel};

/// A game the service can play: the rules (from `games`) plus how requests talk about them.
pub trait ServedGame: BoardGame {
    /// Largest transposition table worth giving this game, in MiB (the configured size is used
    /// when smaller).
    const TABLE_MB_CAP: usize = usize::MAX;

    /// What a weakened level counts as one unit of evaluation: about a clear positional edge on
    /// this game's scale (see [`crate::engine::skill`]).
    const SKILL_UNIT: crate::engine::Score = 20;

    /// What levels 1..=9 mean in this game (see [`crate::engine::skill`]).
    const SKILL_LEVELS: LevelTable = STANDARD_LEVELS;

    /// Nodes per millisecond of `budget_ms` a deterministic search gets when no `max_nodes` is
    /// given: a fixed rate (the same on every replica), a fraction of what this machine
    /// searches, so the node limit rather than the clock ends the search (docs/api.md,
    /// "Deterministic answers").
    const DETERMINISTIC_NODES_PER_MS: u64 = 100;

    /// How a review marks a played move's heuristic score loss (a proven loss is marked by
    /// the proof): on this game's evaluation scale.
    const REVIEW_THRESHOLDS: Thresholds;

    /// Stones in a row that win under `rules` (a finished board's winning line is looked for
    /// with it); by default none, and no line is reported.
    fn win_length(_rules: &Self::Rules) -> usize {
        usize::MAX
    }

    /// This position's exact result when a table knows it without a search (Connect-4's
    /// opening book); an answer read back from Redis is checked against it. None by default.
    fn known_result(&self) -> Option<crate::engine::Proof> {
        None
    }

    /// Reads the request's `rules` object (`None` when absent or null).
    fn parse_rules(rules: Option<&Value>) -> Result<Self::Rules, RulesError>;

    /// Canonical text of the rules, part of the answer cache key: equal rules, equal text.
    fn rules_key(rules: &Self::Rules) -> String;

    /// How `GET /games` describes this game.
    fn info() -> GameInfo;

    /// How this game's heuristic scores read as win/draw/loss chances (see [`super::wdl`]).
    const WDL_MODEL: WdlModel;

    /// The measured rating ladder of its levels (see [`super::ladder`]); none by default.
    const LADDER: &'static [Step] = &[];
}

/// Heuristic score losses (engine units) up to which a move is `good`, an `inaccuracy`, a
/// `mistake`; beyond the last, a `blunder`. Scaled to each game's evaluation: a Connect-4
/// threat is worth 16 to 40, a gomoku open three about 50 to 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub good: crate::engine::Score,
    pub inaccuracy: crate::engine::Score,
    pub mistake: crate::engine::Score,
}

/// Work to do with one served game's type, chosen by the game's name at run time: what
/// [`with_game`] runs. The task's [`run`](GameTask::run) is the service's generic code for a
/// request, written once for every [`ServedGame`].
pub trait GameTask {
    type Output;

    /// The game the task is for, as the request names it.
    fn game(&self) -> &str;

    /// The task for `G`, the served game [`GameTask::game`] names.
    fn run<G: ServedGame>(self) -> impl Future<Output = Self::Output> + Send;

    /// The answer when no served game has that name.
    fn unknown(self) -> Self::Output;
}

/// A `rules` object that cannot be used, naming the field at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RulesError {
    /// JSON pointer into the request, e.g. `/rules/win_length`.
    pub pointer: String,
    pub message: String,
}

/// How `GET /games` describes a game.
#[derive(Clone, Debug, Serialize)]
pub struct GameInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub board: BoardInfo,
    pub rules: Vec<RuleInfo>,
}

/// The board a game accepts.
#[derive(Clone, Debug, Serialize)]
pub struct BoardInfo {
    pub min_rows: usize,
    pub max_rows: usize,
    pub min_cols: usize,
    pub max_cols: usize,
    pub default_rows: usize,
    pub default_cols: usize,
    /// How the cells are written.
    pub format: &'static str,
    /// Whether stones fall to the lowest empty cell of their column (Connect-4).
    pub gravity: bool,
    /// When the column limit depends on the row count (Connect-4's 64-bit boards): for each
    /// allowed row count, the most columns (keys are row counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cols_for_rows: Option<std::collections::BTreeMap<String, usize>>,
}

/// One option of a game's `rules` object.
#[derive(Clone, Debug, Serialize)]
pub struct RuleInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub default: Value,
    /// The allowed values, when they are a short list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Value>>,
}

/// The board text format all games share.
pub const BOARD_FORMAT: &str =
    "rows top to bottom, one string per row; '.' empty, 'X'/'x' first player, 'O'/'o' second";

/// Rules parser for games without options: absent, null or `{}`.
pub fn no_rules(game: &str, rules: Option<&Value>) -> Result<(), RulesError> {
    match rules {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(map)) => match map.keys().next() {
            None => Ok(()),
            Some(key) => Err(RulesError {
                pointer: format!("/rules/{key}"),
                message: format!("{game} has no rule named '{key}'; it takes no rules"),
            }),
        },
        Some(_) => Err(RulesError {
            pointer: "/rules".into(),
            message: "rules must be an object".into(),
        }),
    }
}

/// Parses gomoku's `rules` (absent or null: the defaults), naming the field at fault.
pub fn parse_gomoku_rules(
    rules: Option<&Value>,
    max_side: usize,
) -> Result<GomokuRules, RulesError> {
    let mut options = GomokuRules::default();
    let map = match rules {
        None | Some(Value::Null) => return Ok(options),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(RulesError {
                pointer: "/rules".into(),
                message: "rules must be an object".into(),
            });
        }
    };
    for (key, value) in map {
        let pointer = format!("/rules/{key}");
        match key.as_str() {
            "win_length" => {
                let length = value
                    .as_u64()
                    .filter(|n| (3..=max_side as u64).contains(n))
                    .ok_or_else(|| RulesError {
                        pointer: pointer.clone(),
                        message: format!("win_length must be a whole number from 3 to {max_side}"),
                    })?;
                options.win_length = length as u32;
            }
            "overline" => {
                options.overline = match value.as_str() {
                    Some("win") => Overline::Win,
                    Some("no_win") => Overline::NoWin,
                    _ => {
                        return Err(RulesError {
                            pointer,
                            message: "overline must be \"win\" or \"no_win\"".into(),
                        });
                    }
                }
            }
            "variant" => {
                options.renju = match value.as_str() {
                    Some("gomoku") => false,
                    Some("renju") => true,
                    _ => {
                        return Err(RulesError {
                            pointer,
                            message: "variant must be \"gomoku\" or \"renju\"".into(),
                        });
                    }
                }
            }
            _ => {
                return Err(RulesError {
                    pointer,
                    message: format!(
                        "gomoku has no rule named '{key}'; its rules are win_length, overline and variant"
                    ),
                });
            }
        }
    }
    // Renju fixes the line (five) and the overline rule (black: exactly five; white: more wins).
    if options.renju && (options.win_length != 5 || options.overline != Overline::Win) {
        return Err(RulesError {
            pointer: "/rules/variant".into(),
            message: "renju is played with five in a row and its own overline rule: \
                      leave out win_length and overline, or give 5 and \"win\""
                .into(),
        });
    }
    Ok(options)
}

/// How `GET /games` describes gomoku's rules.
pub fn gomoku_rule_info() -> Vec<RuleInfo> {
    vec![
        RuleInfo {
            name: "win_length",
            description: "stones in a row that win (3 up to the board's longer side)",
            default: Value::from(5),
            values: None,
        },
        RuleInfo {
            name: "overline",
            description: "\"win\": five or more wins (free-style); \"no_win\": exactly five (standard)",
            default: Value::from("win"),
            values: Some(vec![Value::from("win"), Value::from("no_win")]),
        },
        RuleInfo {
            name: "variant",
            description: "\"gomoku\": win_length and overline decide; \"renju\": five in a row, \
                          black may not play a double three, double four or overline and wins \
                          only with exactly five, white wins with five or more",
            default: Value::from("gomoku"),
            values: Some(vec![Value::from("gomoku"), Value::from("renju")]),
        },
    ]
}

impl ServedGame for TicTacToe {
    /// 5,478 positions: far less than one MiB of entries.
    const TABLE_MB_CAP: usize = 1;
    /// A two-in-a-row with the third cell free.
    const SKILL_UNIT: crate::engine::Score = 10;
    const DETERMINISTIC_NODES_PER_MS: u64 = 1_000;
    /// Always proven, so a review never reads these; they are for completeness.
    const WDL_MODEL: WdlModel = wdl::TICTACTOE;
    const LADDER: &'static [Step] = ladder::TICTACTOE;
    const REVIEW_THRESHOLDS: Thresholds = Thresholds {
        good: 2,
        inaccuracy: 5,
        mistake: 10,
    };

    fn win_length(_rules: &()) -> usize {
        3
    }

    fn parse_rules(rules: Option<&Value>) -> Result<(), RulesError> {
        no_rules(Self::NAME, rules)
    }

    fn rules_key(_rules: &()) -> String {
        String::new()
    }

    fn info() -> GameInfo {
        GameInfo {
            name: Self::NAME,
            description: "Tic-tac-toe on 3x3; solved exactly in a few thousand nodes.",
            board: BoardInfo {
                min_rows: 3,
                max_rows: 3,
                min_cols: 3,
                max_cols: 3,
                default_rows: 3,
                default_cols: 3,
                format: BOARD_FORMAT,
                gravity: false,
                max_cols_for_rows: None,
            },
            rules: Vec::new(),
        }
    }
}

/// Lists the served games, in `GET /games` order, and generates from the list:
/// [`GAME_NAMES`], [`catalog`], [`deterministic_rate`], [`skill_levels`], [`wdl_model`],
/// [`level_ladder`], [`table_caps`] and the
/// name-to-type dispatch [`with_game`] that `/move` and `/review` go through.
macro_rules! served_games {
    ($($game:ty),+ $(,)?) => {
        /// Names of the served games, as clients write them.
        pub const GAME_NAMES: &[&str] = &[$(<$game as BoardGame>::NAME),+];

        /// How `GET /games` describes every served game.
        pub fn catalog() -> Vec<GameInfo> {
            vec![$(<$game as ServedGame>::info()),+]
        }

        /// The node rate of a deterministic search of the game named `name` (0 for no game).
        pub fn deterministic_rate(name: &str) -> u64 {
            $(
                if name == <$game as BoardGame>::NAME {
                    return <$game as ServedGame>::DETERMINISTIC_NODES_PER_MS;
                }
            )+
            0
        }

        /// What levels 1..=9 mean in the game named `name` (its level table and the score
        /// points one unit of its softmax counts), or `None` for no game.
        pub fn skill_levels(name: &str) -> Option<(LevelTable, crate::engine::Score)> {
            $(
                if name == <$game as BoardGame>::NAME {
                    return Some((
                        <$game as ServedGame>::SKILL_LEVELS,
                        <$game as ServedGame>::SKILL_UNIT,
                    ));
                }
            )+
            None
        }

        /// How moves are named on `board` (rows top to bottom; the game's default board when
        /// empty) in the game named `name`; `None` for no game or an empty row.
        pub fn notation_for(name: &str, board: &[String]) -> Option<Notation> {
            $(
                if name == <$game as BoardGame>::NAME {
                    let info = <$game as ServedGame>::info().board;
                    let (rows, cols) = match board.first() {
                        None => (info.default_rows, info.default_cols),
                        Some(row) => (board.len(), row.chars().count()),
                    };
                    return (cols > 0).then_some(Notation {
                        rows,
                        cols,
                        columns: info.gravity,
                    });
                }
            )+
            None
        }

        /// The win/draw/loss model of the game named `name` ([`ServedGame::WDL_MODEL`]), or
        /// `None` for no game: with [`wdl::wdl`], the chances of any score an answer gives.
        pub fn wdl_model(name: &str) -> Option<WdlModel> {
            $(
                if name == <$game as BoardGame>::NAME {
                    return Some(<$game as ServedGame>::WDL_MODEL);
                }
            )+
            None
        }

        /// The measured rating ladder of the game named `name` ([`ServedGame::LADDER`]);
        /// empty for no game.
        pub fn level_ladder(name: &str) -> &'static [Step] {
            $(
                if name == <$game as BoardGame>::NAME {
                    return <$game as ServedGame>::LADDER;
                }
            )+
            &[]
        }

        /// Each served game's name and the largest table worth giving it (MiB).
        pub fn table_caps() -> Vec<(&'static str, usize)> {
            vec![$((<$game as BoardGame>::NAME, <$game as ServedGame>::TABLE_MB_CAP)),+]
        }

        /// Runs `task` for the served game it names, or answers [`GameTask::unknown`].
        pub async fn with_game<T: GameTask>(task: T) -> T::Output {
            $(
                if task.game() == <$game as BoardGame>::NAME {
                    return task.run::<$game>().await;
                }
            )+
            task.unknown()
        }
    };
}

impl ServedGame for Connect4 {
    /// Between a threat (16) and a threat on a claimable row (40).
    const SKILL_UNIT: crate::engine::Score = 20;
    /// The standard table with a ply more per level: a Connect-4 search is cheap, so the cap,
    /// not the budget, sets a level's depth, and two levels with the same cap were hardly apart
    /// (2 against 2 plies: 0.52 over 400 games; 3 against 3: 0.53).
    const SKILL_LEVELS: LevelTable = with_depth_caps(STANDARD_LEVELS, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const DETERMINISTIC_NODES_PER_MS: u64 = 300;
    const WDL_MODEL: WdlModel = wdl::CONNECT4;
    const LADDER: &'static [Step] = ladder::CONNECT4;
    const REVIEW_THRESHOLDS: Thresholds = Thresholds {
        good: 10,
        inaccuracy: 30,
        mistake: 80,
    };

    fn win_length(_rules: &()) -> usize {
        4
    }

    fn known_result(&self) -> Option<crate::engine::Proof> {
        self.book_proof()
    }

    fn parse_rules(rules: Option<&Value>) -> Result<(), RulesError> {
        no_rules(Self::NAME, rules)
    }

    fn rules_key(_rules: &()) -> String {
        String::new()
    }

    fn info() -> GameInfo {
        GameInfo {
            name: Self::NAME,
            description: "Connect-4, 7 wide x 6 high by default (any size with width x (height + 1) \
                          <= 64, at least 4 a side); solved exactly whenever the budget allows, \
                          otherwise a heuristic search. Moves name the landing cell.",
            board: BoardInfo {
                min_rows: 4,
                max_rows: 15,
                min_cols: 4,
                max_cols: 12,
                default_rows: 6,
                default_cols: 7,
                format: BOARD_FORMAT,
                gravity: true,
                // columns x (rows + 1) <= 64, at most 12 columns.
                max_cols_for_rows: Some(
                    (4..=15usize)
                        .map(|rows| (rows.to_string(), (64 / (rows + 1)).min(12)))
                        .collect(),
                ),
            },
            rules: Vec::new(),
        }
    }
}

impl ServedGame for Gomoku {
    /// Chosen when the evaluation's tempo term (the value of having the move) was 39; the refit
    /// made it 119 / 16, about 7, and the gomoku levels were calibrated before the refit, so 40
    /// is kept as calibrated (docs/journal/search.md, "Strength levels"), not as a tempo.
    const SKILL_UNIT: crate::engine::Score = 40;
    const DETERMINISTIC_NODES_PER_MS: u64 = 80;
    const WDL_MODEL: WdlModel = wdl::GOMOKU;
    const LADDER: &'static [Step] = ladder::GOMOKU;
    const REVIEW_THRESHOLDS: Thresholds = Thresholds {
        good: 15,
        inaccuracy: 50,
        mistake: 150,
    };

    fn win_length(rules: &GomokuRules) -> usize {
        rules.win_length as usize
    }

    fn parse_rules(rules: Option<&Value>) -> Result<GomokuRules, RulesError> {
        parse_gomoku_rules(rules, gomoku::MAX_SIDE)
    }

    fn rules_key(rules: &GomokuRules) -> String {
        format!(
            "k{}:{:?}{}",
            rules.win_length,
            rules.overline,
            if rules.renju { ":renju" } else { "" }
        )
    }

    fn info() -> GameInfo {
        GameInfo {
            name: Self::NAME,
            description: "Gomoku (any m,n,k-game): 5 to 25 rows and columns, 15x15 by default; \
                          threat searches (VCF, VCT) then alpha-beta under the budget.",
            board: BoardInfo {
                min_rows: gomoku::MIN_SIDE,
                max_rows: gomoku::MAX_SIDE,
                min_cols: gomoku::MIN_SIDE,
                max_cols: gomoku::MAX_SIDE,
                default_rows: 15,
                default_cols: 15,
                format: BOARD_FORMAT,
                gravity: false,
                max_cols_for_rows: None,
            },
            rules: gomoku_rule_info(),
        }
    }
}

served_games!(TicTacToe, Connect4, Gomoku);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::skill::levels_in_order;

    /// Answers the name of the game it ran for.
    struct NameOf(&'static str);

    impl GameTask for NameOf {
        type Output = Option<&'static str>;

        fn game(&self) -> &str {
            self.0
        }

        async fn run<G: ServedGame>(self) -> Option<&'static str> {
            Some(G::NAME)
        }

        fn unknown(self) -> Option<&'static str> {
            None
        }
    }

    #[tokio::test]
    async fn with_game_runs_the_task_for_the_game_named_and_for_no_other() {
        for &name in GAME_NAMES {
            assert_eq!(with_game(NameOf(name)).await, Some(name));
        }
        assert_eq!(with_game(NameOf("chess")).await, None);
        assert_eq!(with_game(NameOf("Gomoku")).await, None, "names are exact");
    }

    #[test]
    fn every_games_levels_are_weaker_than_the_next_in_every_respect() {
        assert!(levels_in_order(&TicTacToe::SKILL_LEVELS), "tic-tac-toe");
        assert!(levels_in_order(&Connect4::SKILL_LEVELS), "Connect-4");
        assert!(levels_in_order(&Gomoku::SKILL_LEVELS), "gomoku");
    }
}
