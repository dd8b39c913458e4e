//! A game's moves in a request (`moves` of `POST /move`, `POST /review` and batch items): a
//! JSON list of cells, Connect-4 column numbers or move names, or one string in the game's
//! notation (`"h8 h9 i8"`, `"h8h9i8"`, Connect-4 `"4455"` or `"d d e e"`). The names are read
//! by the service, which knows the board (see `games::notation`).

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use super::vocabulary::{CellJson, whole};
use crate::games::Cell;
use crate::service::replay::{MoveList, PlayedMove};

/// `moves`: a JSON list, or one notation string.
#[derive(Clone, Debug)]
pub enum MoveListJson {
    Listed(Vec<MoveJson>),
    Text(String),
}

impl<'de> Deserialize<'de> for MoveListJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = MoveListJson;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(
            "the moves: a list of moves, or one string in the game's notation (\"h8 h9 i8\", \
             Connect-4 \"4455\")",
        )
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<MoveListJson, E> {
        Ok(MoveListJson::Text(text.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MoveListJson, A::Error> {
        let mut moves = Vec::new();
        while let Some(mv) = seq.next_element::<MoveJson>()? {
            moves.push(mv);
        }
        Ok(MoveListJson::Listed(moves))
    }
}

impl From<MoveListJson> for MoveList {
    fn from(list: MoveListJson) -> MoveList {
        match list {
            MoveListJson::Text(text) => MoveList::Text(text),
            MoveListJson::Listed(moves) => MoveList::Listed(
                moves
                    .into_iter()
                    .map(|m| match m {
                        MoveJson::Column(col) => PlayedMove::Column(col),
                        MoveJson::Cell(cell) => PlayedMove::Cell {
                            row: cell.row,
                            col: cell.col,
                        },
                        MoveJson::Named(name) => PlayedMove::Named(name),
                    })
                    .collect(),
            ),
        }
    }
}

/// A move in a JSON list: a cell `{"row", "col"}`, a Connect-4 column number, or the move's
/// name in the game's notation (`"h8"`, `"4"`).
#[derive(Clone, Debug)]
pub enum MoveJson {
    Column(usize),
    Cell(CellJson),
    Named(String),
}

/// By hand, not `untagged`: every wrong move gets a message naming what is expected (and,
/// through the path tracker, the field: `/moves/3/row`), never a Rust type's name; a cell
/// takes exactly `row` and `col`.
impl<'de> Deserialize<'de> for MoveJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MoveVisitor)
    }
}

struct MoveVisitor;

/// A cell coordinate: a whole number of at least 0 (as `/move`'s limits are read).
struct Coordinate(usize);

impl<'de> Deserialize<'de> for Coordinate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A negative coordinate names no cell at all (a 400, as a negative column does),
        // where a number too large is a cell off the board (a 422, as row 99 is).
        let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
            return Err(de::Error::custom("expected a whole number, not null"));
        };
        if number.as_f64().is_some_and(|f| f < 0.0) {
            return Err(de::Error::custom(format!(
                "invalid value: {number}, expected a whole number of at least 0"
            )));
        }
        whole::required(serde_json::Value::Number(number))
            .map(Coordinate)
            .map_err(de::Error::custom)
    }
}

impl<'de> Visitor<'de> for MoveVisitor {
    type Value = MoveJson;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(
            "a move: a cell {\"row\": R, \"col\": C} with whole numbers from 0, a Connect-4 \
             column number from 0, or the move's name (\"h8\", Connect-4 \"4\")",
        )
    }

    fn visit_u64<E: de::Error>(self, column: u64) -> Result<MoveJson, E> {
        usize::try_from(column)
            .map(MoveJson::Column)
            .map_err(|_| E::custom(format!("column {column} is too large")))
    }

    fn visit_i64<E: de::Error>(self, column: i64) -> Result<MoveJson, E> {
        match u64::try_from(column) {
            Ok(column) => self.visit_u64(column),
            Err(_) => Err(E::custom(format!(
                "invalid move {column}: a column is a whole number from 0"
            ))),
        }
    }

    fn visit_f64<E: de::Error>(self, column: f64) -> Result<MoveJson, E> {
        // JSON Schema's `integer` includes `3.0`.
        if column >= 0.0 && column.fract() == 0.0 && column < whole::TWO_TO_64 {
            self.visit_u64(column as u64)
        } else if column >= whole::TWO_TO_64 && column.fract() == 0.0 {
            Err(E::custom(format!(
                "{}column {column} is larger than any board",
                whole::OUT_OF_RANGE
            )))
        } else {
            Err(E::custom(format!(
                "invalid move {column}: a column is a whole number from 0"
            )))
        }
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<MoveJson, E> {
        // A name is a few characters; a long one is refused here rather than echoed later.
        // Counted in characters (code points), as the schema's `maxLength` counts them.
        if name.chars().count() > 16 {
            return Err(E::custom(
                "a move's name is at most 16 characters (\"h8\", \"4\")",
            ));
        }
        Ok(MoveJson::Named(name.to_owned()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MoveJson, A::Error> {
        let (mut row, mut col) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            let slot = match key.as_str() {
                "row" => &mut row,
                "col" => &mut col,
                other => {
                    return Err(de::Error::custom(format!(
                        "unknown field \"{}\" in a move: a cell has exactly \"row\" and \"col\"",
                        other.chars().take(40).collect::<String>()
                    )));
                }
            };
            if slot.is_some() {
                return Err(de::Error::custom(format!(
                    "duplicate field \"{key}\" in a move"
                )));
            }
            *slot = Some(map.next_value::<Coordinate>()?.0);
        }
        match (row, col) {
            (Some(row), Some(col)) => Ok(MoveJson::Cell(CellJson::from(Cell { row, col }))),
            (None, _) => Err(de::Error::custom("a move's cell lacks \"row\"")),
            (_, None) => Err(de::Error::custom("a move's cell lacks \"col\"")),
        }
    }
}
