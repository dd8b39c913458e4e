//! The JSON words every route shares: the players `X` and `O`, a cell, whole-number fields as
//! JSON Schema reads them, a proven outcome, and milliseconds.
//!
//! `/move`, its event stream and `/review` all speak them, so they live here rather than in
//! any one route's file.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::{Proof, Score, Side};
use crate::games::Cell;
use crate::games::notation::{Name, Notation};

/// `X` or `O`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum Player {
    X,
    O,
}

impl From<Player> for Side {
    fn from(player: Player) -> Side {
        match player {
            Player::X => Side::First,
            Player::O => Side::Second,
        }
    }
}

impl From<Side> for Player {
    fn from(side: Side) -> Player {
        match side {
            Side::First => Player::X,
            Side::Second => Player::O,
        }
    }
}

/// A cell, 0-based from the top-left; in an answer also its name in the game's notation
/// (`h8`, Connect-4 `4`: see `games::notation`) and, for a game whose move is a column
/// (Connect-4), that column (0-based, as a column is written in a JSON move list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CellJson {
    pub row: usize,
    pub col: usize,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "name_text")]
    pub notation: Option<Name>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl From<Cell> for CellJson {
    fn from(cell: Cell) -> Self {
        CellJson {
            row: cell.row,
            col: cell.col,
            notation: None,
            column: None,
        }
    }
}

impl CellJson {
    /// `cell` with its name on a board named by `notation` (none when `None`).
    pub fn named(cell: Cell, notation: Option<&Notation>) -> Self {
        let Some(notation) = notation else {
            return cell.into();
        };
        CellJson {
            row: cell.row,
            col: cell.col,
            notation: Some(notation.name(cell)),
            column: notation.columns.then_some(cell.col),
        }
    }
}

fn name_text<S: serde::Serializer>(name: &Option<Name>, serializer: S) -> Result<S::Ok, S::Error> {
    match name {
        Some(name) => serializer.serialize_str(name.as_str()),
        None => serializer.serialize_none(),
    }
}

/// Whole-number fields as JSON Schema sees them: `5` and `5.0` are the same integer. Values
/// too large for the field saturate, so the range check answers them (422), not the parser.
pub mod whole {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde_json::Number;

    /// 2^64 as a double: every whole double below it is an exact u64.
    pub const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;

    /// How a "too large" error starts. serde errors carry only text, so the JSON extractor
    /// tells this range error (a 422: the number is an integer, as the schema asks) from a
    /// shape error (a 400) by this prefix, which it strips.
    pub const OUT_OF_RANGE: &str = "out of range: ";

    /// A required whole number, read like [`option`] (JSON Schema's `integer` includes `3.0`).
    pub fn required<'de, D, T>(deserializer: D) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<u64>,
    {
        option(deserializer)?.ok_or_else(|| D::Error::custom("expected a whole number, not null"))
    }

    pub fn option<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<u64>,
    {
        let Some(number) = Option::<Number>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let value = match number.as_u64() {
            Some(value) => Some(value),
            None => match number.as_f64() {
                Some(f) if f.fract() == 0.0 => (0.0..TWO_TO_64).contains(&f).then_some(f as u64),
                _ => {
                    return Err(D::Error::custom(format!(
                        "invalid value: {number}, expected a whole number of at least 0"
                    )));
                }
            },
        };
        // Never saturate: an error echoing a clamped value would name a number nobody sent.
        // A whole number outside the field's range (negative, or too large for it) is of the
        // schema's type: a 422 naming the range, as the service's own range checks are.
        match value.and_then(|v| T::try_from(v).ok()) {
            Some(value) => Ok(Some(value)),
            None => Err(D::Error::custom(format!(
                "{OUT_OF_RANGE}{number} is out of range: it must be a whole number from 0 to {}",
                largest::<T>()
            ))),
        }
    }

    /// The largest value of the unsigned type `T` (u8 to u64 and usize).
    pub fn largest<T: TryFrom<u64>>() -> u64 {
        [
            u64::MAX,
            u64::from(u32::MAX),
            u64::from(u16::MAX),
            u64::from(u8::MAX),
        ]
        .into_iter()
        .find(|&max| T::try_from(max).is_ok())
        .unwrap_or(0)
    }
}

/// A proof as the `outcome` and `plies_to_end` fields: both `null` when not proven.
pub fn outcome(proof: Option<Proof>) -> (Option<&'static str>, Option<u32>) {
    match proof {
        Some(p) => (Some(p.outcome.as_str()), Some(p.plies_to_end)),
        None => (None, None),
    }
}

/// `wdl`: `[win, draw, loss]` per mille for the side to move of a position whose search gave
/// `score` and `proof` in the game named `game` (exact when proven, else the game's fitted
/// model: `service::wdl`); `None` only for a name that is no game.
pub fn wdl(game: &str, score: Score, proof: Option<Proof>) -> Option<[u16; 3]> {
    crate::service::games::wdl_model(game)
        .map(|model| crate::service::wdl::wdl(&model, score, proof).as_array())
}

/// `wdl_model`: the version of the model behind the heuristic `wdl`s of an answer in `game`.
pub fn wdl_model(game: &str) -> Option<&'static str> {
    crate::service::games::wdl_model(game).map(|model| model.version)
}

/// Milliseconds with microsecond precision (every `elapsed_ms`).
pub fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}
