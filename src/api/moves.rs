//! `POST /move`: the request body and the handler. The answer's body is
//! [`super::move_response`]'s, a streamed answer [`super::stream`]'s.
//!
//! Implements `POST /move` of docs/api.md, "Asking for a move"; openapi.yaml's `MoveRequest` is the
//! contract the request type must stay in step with.

use std::future::Future;
use std::time::Instant;

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::error::{ApiError, ApiResult, status_of};
use super::json::ApiJson;
use super::move_list::MoveListJson;
use super::sse::WantsEventStream;
use super::vocabulary::{Player, whole};
use super::{AppState, Arrival};
use crate::engine::{Algorithm, Side};
use crate::service::caller::{Caller, ClientId};
use crate::service::games::notation_for;
use crate::service::metrics::{self, RequestKind, RequestRecord};
use crate::service::{MoveQuery, Served, progress};

/// Which search algorithm to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlgorithmName {
    #[default]
    Alphabeta,
    Minimax,
}

/// By hand so that every wrong value, `null` included, gets a message naming the choices.
impl<'de> Deserialize<'de> for AlgorithmName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        const CHOICES: &str = "\"alphabeta\" or \"minimax\"";
        match Option::<String>::deserialize(deserializer)?.as_deref() {
            Some("alphabeta") => Ok(AlgorithmName::Alphabeta),
            Some("minimax") => Ok(AlgorithmName::Minimax),
            Some(other) => Err(D::Error::custom(format!(
                "unknown algorithm \"{}\", expected {CHOICES}",
                other.chars().take(40).collect::<String>()
            ))),
            None => Err(D::Error::custom(format!(
                "algorithm may not be null: expected {CHOICES}, or leave it out for alphabeta"
            ))),
        }
    }
}

/// The `POST /move` body.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    pub game: String,
    /// Rows top to bottom; optional when `moves` are given (they start from the game's empty
    /// default board then). Absent, not null: `null` is refused as a wrong type, as the
    /// published schema has it.
    #[serde(default, deserialize_with = "rows_not_null")]
    pub board: Option<Vec<String>>,
    /// The moves played from `board` (or the empty board) to the position asked about.
    #[serde(default)]
    pub moves: Option<MoveListJson>,
    pub to_move: Option<Player>,
    #[serde(default, deserialize_with = "whole::option")]
    pub budget_ms: Option<u64>,
    #[serde(default, deserialize_with = "whole::option")]
    pub max_depth: Option<u32>,
    #[serde(default, deserialize_with = "whole::option")]
    pub max_nodes: Option<u64>,
    #[serde(default)]
    pub algorithm: AlgorithmName,
    #[serde(default)]
    pub analysis: bool,
    #[serde(default, deserialize_with = "unique_keys::option")]
    pub rules: Option<serde_json::Value>,
    /// 1 (weakest) to 10 (full strength, the default); the range is checked by the service.
    #[serde(default, deserialize_with = "whole::option")]
    pub level: Option<u64>,
    #[serde(default, deserialize_with = "seed::option")]
    pub seed: Option<u64>,
    #[serde(default)]
    pub deterministic: bool,
    /// Only these moves may be chosen (UCI's `searchmoves`): cells, Connect-4 columns, move
    /// names, or one notation string, as `moves` is written.
    #[serde(default)]
    pub searchmoves: Option<MoveListJson>,
    /// These moves may not be chosen.
    #[serde(default)]
    pub exclude: Option<MoveListJson>,
    /// The k best moves, each with its own line (`lines`); the range is checked by the service.
    #[serde(default, deserialize_with = "whole::option")]
    pub multipv: Option<u64>,
}

impl MoveRequest {
    /// The service's query for this body, arriving at `arrival`.
    pub fn into_query(self, arrival: Instant) -> MoveQuery {
        MoveQuery {
            game: self.game,
            board: self.board.unwrap_or_default(),
            moves: self.moves.map(Into::into),
            to_move: self.to_move.map(Side::from),
            budget_ms: self.budget_ms,
            max_depth: self.max_depth,
            max_nodes: self.max_nodes,
            algorithm: match self.algorithm {
                AlgorithmName::Alphabeta => Algorithm::AlphaBeta,
                AlgorithmName::Minimax => Algorithm::Minimax,
            },
            analysis: self.analysis,
            rules: self.rules,
            style: crate::service::levels::PlayStyle {
                level: self.level,
                seed: self.seed,
                deterministic: self.deterministic,
            },
            arrival,
            progress: None,
            caller: Default::default(),
            root: crate::service::root::RootQuery {
                searchmoves: self.searchmoves.map(Into::into),
                exclude: self.exclude.map(Into::into),
            },
            multipv: self.multipv,
        }
    }
}

/// `board` when present: rows, never `null` (an absent board is `None` through `default`).
fn rows_not_null<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<String>>, D::Error> {
    <Vec<String> as Deserialize>::deserialize(deserializer).map(Some)
}

/// `seed`: any whole number from 0 to 2^64 - 1, exactly (a seed that saturated would silently
/// name another stream), or null. A number written with a zero fraction (`7.0`, `1e3`) is the
/// whole number it equals, as JSON Schema's `integer` has it.
mod seed {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde_json::Number;

    pub fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
        let Some(number) = Option::<Number>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let whole_double = number
            .as_f64()
            .filter(|f| (0.0..super::whole::TWO_TO_64).contains(f) && f.fract() == 0.0)
            .map(|f| f as u64);
        let negative_or_too_large = number.as_f64().is_some_and(|f| f.fract() == 0.0);
        number.as_u64().or(whole_double).map(Some).ok_or_else(|| {
            // A whole number out of range is a 422 as any other range error (the prefix
            // tells the extractor); anything else (a fraction) is no seed at all: a 400.
            let prefix = if negative_or_too_large {
                super::whole::OUT_OF_RANGE
            } else {
                ""
            };
            D::Error::custom(format!(
                "{prefix}invalid seed {number}: expected a whole number from 0 to {}",
                u64::MAX
            ))
        })
    }
}

/// `rules` as JSON, refusing an object that names a key twice: serde_json's own `Value` keeps
/// the last, so `{"win_length": 4, "win_length": 5}` would silently play k = 5.
mod unique_keys {
    use std::fmt;

    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};

    pub fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
        Ok(Option::<Unique>::deserialize(deserializer)?.map(|unique| unique.0))
    }

    struct Unique(Value);

    impl<'de> Deserialize<'de> for Unique {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(UniqueVisitor)
        }
    }

    struct UniqueVisitor;

    impl<'de> Visitor<'de> for UniqueVisitor {
        type Value = Unique;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_unit<E: Error>(self) -> Result<Unique, E> {
            Ok(Unique(Value::Null))
        }

        fn visit_bool<E: Error>(self, v: bool) -> Result<Unique, E> {
            Ok(Unique(Value::Bool(v)))
        }

        fn visit_i64<E: Error>(self, v: i64) -> Result<Unique, E> {
            Ok(Unique(Value::Number(v.into())))
        }

        fn visit_u64<E: Error>(self, v: u64) -> Result<Unique, E> {
            Ok(Unique(Value::Number(v.into())))
        }

        fn visit_f64<E: Error>(self, v: f64) -> Result<Unique, E> {
            Ok(Unique(
                Number::from_f64(v).map_or(Value::Null, Value::Number),
            ))
        }

        fn visit_str<E: Error>(self, v: &str) -> Result<Unique, E> {
            Ok(Unique(Value::String(v.to_owned())))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
            let mut items = Vec::new();
            while let Some(Unique(item)) = seq.next_element()? {
                items.push(item);
            }
            Ok(Unique(Value::Array(items)))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
            let mut object = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let Unique(value) = map.next_value()?;
                if object.contains_key(&key) {
                    return Err(A::Error::custom(format!(
                        "duplicate key \"{}\"",
                        key.chars().take(40).collect::<String>()
                    )));
                }
                object.insert(key, value);
            }
            Ok(Unique(Value::Object(object)))
        }
    }
}

/// `POST /move`: suggests a move within the request's budget; streamed as Server-Sent Events
/// when the client accepts `text/event-stream` (see [`super::stream`]).
pub async fn suggest_move(
    State(state): State<AppState>,
    arrival: Option<axum::Extension<Arrival>>,
    client: Option<axum::Extension<ClientId>>,
    WantsEventStream(streamed): WantsEventStream,
    ApiJson(request): ApiJson<MoveRequest>,
) -> ApiResult<Response> {
    let arrival = arrival.map_or_else(Instant::now, |a| a.0.0);
    if request.board.is_none() && request.moves.is_none() {
        return Err(ApiError::bad_request(
            "/board",
            "missing field `board`: give `board`, `moves` or both",
        ));
    }
    let game_label = metrics::game_label(&request.game);
    let wdl_model = crate::service::games::wdl_model(&request.game);
    let mut query = request.into_query(arrival);
    query.caller = Caller::interactive(super::identity::client_of(client));
    // Where admission writes the client's standing (for the `RateLimit` headers).
    let caller = query.caller.clone();
    let notation = notation_for(&query.game, &query.board);
    let events = streamed.then(|| {
        let (sender, events) = progress::channel();
        query.progress = Some(sender);
        events
    });
    let answer = counted(&state, query, game_label, arrival);
    if let Some(events) = events {
        let stream =
            super::stream::move_events(&state, &caller, answer, events, notation, wdl_model);
        return Ok(stream.await);
    }
    let Served {
        answer,
        cached_from,
        ..
    } = answer.await?;
    let response = state
        .answer_bodies
        .response(&answer, cached_from, notation.as_ref());
    let standing = super::identity::standing_of(&state, &caller);
    Ok(super::identity::with_standing(response, standing))
}

/// The move request answered, and counted in the `/move` metrics whether it is streamed or
/// not: from now, with the status it is answered with, or as abandoned (499) if the client goes
/// away first (the future is then dropped unfinished). `game` is the metrics label.
fn counted(
    state: &AppState,
    query: MoveQuery,
    game: &'static str,
    arrival: Instant,
) -> impl Future<Output = ApiResult<Served>> + Send + 'static {
    let service = state.service.clone();
    let record = RequestRecord::start(service.metrics(), RequestKind::Move, game, arrival);
    async move {
        let result = service.dispatch(query).await.map_err(ApiError::from);
        record.finish(status_of(&result));
        result
    }
}
