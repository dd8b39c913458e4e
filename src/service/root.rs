//! What a move request asks of the root beyond its position: which moves it may choose among
//! (`searchmoves`: only these; `exclude`: not these, as UCI's `searchmoves` and the "another
//! move, please" of analysis boards).
//!
//! The restriction is read like a move list (JSON cells, Connect-4 columns, move names, or one
//! notation string, [`super::replay`]) and resolved once, on the asked position, into the set
//! of legal moves left: a move that does not read or is not legal here, or a set with no legal
//! move left, is refused naming the field. The search gets the set as a
//! [`RootFilter`], checked at the root only. The set is part of the question, so it goes into
//! the answer cache's key ([`RootPlan::key`]).

use super::ServiceError;
use super::games::ServedGame;
use super::replay::{self, MoveList};
use crate::engine::{Move, RootFilter};
use crate::games::notation::Spot;
use crate::games::{Cell, Grid};

/// The request's root options, as the client wrote them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootQuery {
    /// Only these moves may be chosen.
    pub searchmoves: Option<MoveList>,
    /// These moves may not be chosen.
    pub exclude: Option<MoveList>,
}

/// The root options resolved on the asked position.
#[derive(Clone, Debug, Default)]
pub struct RootPlan {
    /// The moves the root may choose among; `None` when every legal move may be chosen.
    pub filter: Option<RootFilter>,
    /// Their cells, in cell order (for the cache key).
    pub cells: Vec<Cell>,
}

impl RootPlan {
    /// The part of the answer cache's key these options make: empty for a plain question
    /// (every move), else the allowed cells (`r.c` in cell order). No `|` (the Redis key's
    /// separator).
    pub fn key(&self) -> String {
        let mut key = String::new();
        if self.filter.is_some() {
            key.push_str("only:");
            let cells: Vec<String> = self
                .cells
                .iter()
                .map(|c| format!("{}.{}", c.row, c.col))
                .collect();
            key.push_str(&cells.join(","));
        }
        key
    }
}

/// Resolves `query` on `position` (an ongoing game on `grid`): the legal moves left after
/// `searchmoves` and `exclude`, refusing a move that does not read or is not legal here, and a
/// restriction that leaves no legal move.
pub fn resolve<G: ServedGame>(
    query: &RootQuery,
    position: &G,
    grid: &Grid,
) -> Result<RootPlan, ServiceError> {
    if query.searchmoves.is_none() && query.exclude.is_none() {
        return Ok(RootPlan {
            filter: None,
            cells: Vec::new(),
        });
    }
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    let mut allowed = match &query.searchmoves {
        Some(list) => named_moves(list, "/searchmoves", position, grid, &legal)?,
        None => legal.clone(),
    };
    if let Some(list) = &query.exclude {
        let excluded = named_moves(list, "/exclude", position, grid, &legal)?;
        allowed.retain(|mv| !excluded.contains(mv));
    }
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.is_empty() {
        let pointer = if query.exclude.is_some() {
            "/exclude"
        } else {
            "/searchmoves"
        };
        return Err(ServiceError::RootMove {
            pointer: pointer.into(),
            reason: "no legal move is left to choose from: searchmoves and exclude leave none"
                .into(),
        });
    }
    let mut cells: Vec<Cell> = allowed.iter().map(|&mv| position.cell_of(mv)).collect();
    cells.sort_by_key(|c| (c.row, c.col));
    Ok(RootPlan {
        filter: Some(RootFilter::new(&allowed)),
        cells,
    })
}

/// The legal moves `list` (written at `field`) names, refusing the first that does not read
/// or is not legal in `position`.
fn named_moves<G: ServedGame>(
    list: &MoveList,
    field: &'static str,
    position: &G,
    grid: &Grid,
    legal: &[Move],
) -> Result<Vec<Move>, ServiceError> {
    let notation = replay::notation_of::<G>(grid);
    let spots = replay::read_field::<G>(list, &notation, field).map_err(|error| match error {
        ServiceError::IllegalMove {
            index,
            pointer,
            reason,
        } => ServiceError::RootMove {
            pointer,
            reason: format!("move {} of {}: {reason}", index + 1, &field[1..]),
        },
        other => other,
    })?;
    spots
        .into_iter()
        .enumerate()
        .map(|(index, (spot, pointer))| {
            legal
                .iter()
                .copied()
                .find(|&mv| {
                    let cell = position.cell_of(mv);
                    match spot {
                        Spot::Column(col) => cell.col == col,
                        Spot::Cell(wanted) => cell == wanted,
                    }
                })
                .ok_or_else(|| ServiceError::RootMove {
                    pointer,
                    reason: format!(
                        "move {} of {}: {}",
                        index + 1,
                        &field[1..],
                        replay::why_illegal(position, grid, spot, index)
                    ),
                })
        })
        .collect()
}
