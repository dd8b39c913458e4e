//! The shared cache's Redis wire format: the key of a question and the JSON value of an
//! answer.
//!
//! Keys carry [`FORMAT_VERSION`] and the crate's version, so replicas of two versions during a
//! rolling update never read each other's answers. A value carries only what the key does not
//! say: the game, the side to move and the style are the key's, and `nps` is worked out again
//! from the nodes and the time (one number fewer to trust). Decoding only checks the shape;
//! whether a decoded answer may be served is [`super::trust`]'s question.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::{Outcome, Proof, StopReason, TableStats, ThreatProof};
use crate::games::Cell;
use crate::service::cache::CacheKey;
use crate::service::{Answer, ForbiddenCell, IterationCell, ScoredCell};

/// Bumped whenever the key or value layout changes (3: `nps` is no longer stored; 4: the
/// root's restriction ends the key; 5: `threat_proof`).
pub const FORMAT_VERSION: u32 = 5;

/// The Redis key of a question: format and crate versions first, then every part of
/// [`CacheKey`] (none contains `|`: names, canonical rules and board text, numbers).
pub fn redis_key(key: &CacheKey) -> String {
    let limit = |limit: Option<u64>| limit.map_or_else(|| "-".to_owned(), |n| n.to_string());
    format!(
        "kibitz:v{FORMAT_VERSION}:{}|{}|{}|{}|{}|{}|{}|{}|{}|L{}|{}|{}|{}",
        env!("CARGO_PKG_VERSION"),
        key.game,
        key.rules,
        key.board,
        key.to_move.letter(),
        if key.minimax { "minimax" } else { "alphabeta" },
        if key.analysis { "analysis" } else { "best" },
        limit(key.max_depth.map(u64::from)),
        limit(key.max_nodes),
        key.style.level,
        limit(key.style.seed),
        if key.style.deterministic {
            "deterministic"
        } else {
            "timed"
        },
        key.root,
    )
}

/// A cell as `[row, col]`.
type WireCell = [u32; 2];
/// A proof as `[outcome, plies_to_end]`, outcome 1 win, -1 loss, 0 draw.
type WireProof = (i8, u32);

/// The stored value: an answer. The game, the side to move and the limits asked are the key's.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireEntry {
    best: WireCell,
    score: i32,
    proof: Option<WireProof>,
    depth: u32,
    nodes: u64,
    elapsed_us: u64,
    /// The time the search had (the serving rule reads it).
    window_us: u64,
    stop_reason: String,
    probes: u64,
    hits: u64,
    fill_permille: u32,
    pv: Vec<WireCell>,
    /// `[depth, nodes, score, move]` per completed iteration.
    iterations: Vec<(u32, u64, i32, WireCell)>,
    /// `[cell, score, proof, depth]` per analysed root move.
    analysis: Option<Vec<WireScoredCell>>,
    /// `[cell, reason]` per forbidden point (renju analysis).
    #[serde(default)]
    forbidden: Option<Vec<(WireCell, String)>>,
    /// `VCF` or `VCT` when a threat search proved the win (gomoku). The move's threat labels
    /// are not stored: they follow from the position.
    #[serde(default)]
    threat_proof: Option<String>,
}

/// One analysed root move: `[cell, score, proof, depth]`.
type WireScoredCell = (WireCell, i32, Option<WireProof>, u32);

fn wire_cell(cell: Cell) -> WireCell {
    [cell.row as u32, cell.col as u32]
}

fn cell_of(wire: WireCell) -> Cell {
    Cell {
        row: wire[0] as usize,
        col: wire[1] as usize,
    }
}

fn wire_proof(proof: Proof) -> WireProof {
    let outcome = match proof.outcome {
        Outcome::Win => 1,
        Outcome::Loss => -1,
        Outcome::Draw => 0,
    };
    (outcome, proof.plies_to_end)
}

fn proof_of(wire: WireProof) -> Option<Proof> {
    let outcome = match wire.0 {
        1 => Outcome::Win,
        -1 => Outcome::Loss,
        0 => Outcome::Draw,
        _ => return None,
    };
    Some(Proof {
        outcome,
        plies_to_end: wire.1,
    })
}

fn forbidden_reason_of(name: &str) -> Option<&'static str> {
    crate::games::gomoku::renju::Forbidden::ALL
        .into_iter()
        .map(|reason| reason.name())
        .find(|&known| known == name)
}

fn threat_proof_of(name: &str) -> Option<ThreatProof> {
    ThreatProof::ALL
        .into_iter()
        .find(|kind| kind.as_str() == name)
}

fn stop_reason_of(name: &str) -> Option<StopReason> {
    [
        StopReason::Proven,
        StopReason::Book,
        StopReason::Depth,
        StopReason::Nodes,
        StopReason::Time,
    ]
    .into_iter()
    .find(|reason| reason.as_str() == name)
}

/// Nodes a second, as a search report counts them (0 for an instant search).
fn nodes_per_second(nodes: u64, elapsed: Duration) -> u64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        (nodes as f64 / secs) as u64
    } else {
        0
    }
}

/// The value stored for `answer`.
pub fn encode(answer: &Answer) -> Vec<u8> {
    let entry = WireEntry {
        best: wire_cell(answer.best),
        score: answer.score,
        proof: answer.proof.map(wire_proof),
        depth: answer.depth,
        nodes: answer.nodes,
        elapsed_us: u64::try_from(answer.elapsed.as_micros()).unwrap_or(u64::MAX),
        window_us: u64::try_from(answer.window.as_micros()).unwrap_or(u64::MAX),
        stop_reason: answer.stop_reason.as_str().to_owned(),
        probes: answer.table.probes,
        hits: answer.table.hits,
        fill_permille: answer.fill_permille,
        pv: answer.pv.iter().copied().map(wire_cell).collect(),
        iterations: answer
            .iterations
            .iter()
            .map(|it| (it.depth, it.nodes, it.score, wire_cell(it.best)))
            .collect(),
        analysis: answer.analysis.as_ref().map(|moves| {
            moves
                .iter()
                .map(|m| (wire_cell(m.cell), m.score, m.proof.map(wire_proof), m.depth))
                .collect()
        }),
        forbidden: answer.forbidden.as_ref().map(|points| {
            points
                .iter()
                .map(|p| (wire_cell(p.cell), p.reason.to_owned()))
                .collect()
        }),
        threat_proof: answer.threat_proof.map(|kind| kind.as_str().to_owned()),
    };
    // Serialising plain data into a Vec cannot fail.
    serde_json::to_vec(&entry).unwrap_or_default()
}

/// The answer stored for `key`, or `None` if the value is not shaped as this version writes
/// them.
pub fn decode(key: &CacheKey, value: &[u8]) -> Option<Answer> {
    let entry: WireEntry = serde_json::from_slice(value).ok()?;
    let proof = match entry.proof {
        Some(wire) => Some(proof_of(wire)?),
        None => None,
    };
    let analysis = match entry.analysis {
        Some(moves) => Some(
            moves
                .into_iter()
                .map(|(cell, score, proof, depth)| {
                    Some(ScoredCell {
                        cell: cell_of(cell),
                        score,
                        proof: match proof {
                            Some(wire) => Some(proof_of(wire)?),
                            None => None,
                        },
                        depth,
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        None => None,
    };
    let forbidden = match entry.forbidden {
        Some(points) => Some(
            points
                .into_iter()
                .map(|(cell, reason)| {
                    Some(ForbiddenCell {
                        cell: cell_of(cell),
                        reason: forbidden_reason_of(&reason)?,
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        None => None,
    };
    let threat_proof = match entry.threat_proof {
        Some(name) => Some(threat_proof_of(&name)?),
        None => None,
    };
    let elapsed = Duration::from_micros(entry.elapsed_us);
    let answer = Answer {
        game: key.game,
        to_move: key.to_move,
        best: cell_of(entry.best),
        score: entry.score,
        proof,
        depth: entry.depth,
        nodes: entry.nodes,
        nps: nodes_per_second(entry.nodes, elapsed),
        elapsed,
        window: Duration::from_micros(entry.window_us),
        stop_reason: stop_reason_of(&entry.stop_reason)?,
        table: TableStats {
            probes: entry.probes,
            hits: entry.hits,
        },
        fill_permille: entry.fill_permille,
        pv: entry.pv.into_iter().map(cell_of).collect(),
        iterations: entry
            .iterations
            .into_iter()
            .map(|(depth, nodes, score, best)| IterationCell {
                depth,
                nodes,
                score,
                best: cell_of(best),
            })
            .collect(),
        analysis,
        forbidden,
        // Answers with lines are never stored (see `Service::play_on`).
        lines: None,
        style: key.style,
        threats: None,
        threat_proof,
    };
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Side;

    fn key() -> CacheKey {
        CacheKey {
            analysis: true,
            max_depth: Some(7),
            ..CacheKey::plain("tictactoe", "XX./OO./...", Side::First)
        }
    }

    fn answer() -> Answer {
        let cell = Cell { row: 0, col: 2 };
        Answer {
            game: "tictactoe",
            to_move: Side::First,
            best: cell,
            score: 999_999,
            proof: Some(Proof {
                outcome: Outcome::Win,
                plies_to_end: 1,
            }),
            depth: 1,
            nodes: 6,
            // 6 nodes in 50 µs.
            nps: 120_000,
            elapsed: Duration::from_micros(50),
            window: Duration::from_millis(999),
            stop_reason: StopReason::Proven,
            table: TableStats { probes: 3, hits: 1 },
            fill_permille: 0,
            pv: vec![cell],
            iterations: vec![IterationCell {
                depth: 1,
                nodes: 6,
                score: 999_999,
                best: cell,
            }],
            analysis: Some(vec![ScoredCell {
                cell,
                score: 999_999,
                proof: None,
                depth: 1,
            }]),
            forbidden: Some(vec![ForbiddenCell {
                cell: Cell { row: 1, col: 1 },
                reason: "double_three",
            }]),
            lines: None,
            style: Default::default(),
            threats: None,
            threat_proof: Some(ThreatProof::Vct),
        }
    }

    #[test]
    fn an_encoded_answer_decodes_to_itself() {
        let decoded = decode(&key(), &encode(&answer())).unwrap();
        assert_eq!(decoded, answer());
    }

    #[test]
    fn the_speed_is_worked_out_from_nodes_and_time_not_read() {
        let value = String::from_utf8(encode(&answer())).unwrap();
        assert!(!value.contains("nps"), "{value}");
        let stored_nps = value.replace("\"nodes\":6", "\"nps\":999,\"nodes\":6");
        assert!(decode(&key(), stored_nps.as_bytes()).is_none());
        let instant = Answer {
            elapsed: Duration::ZERO,
            nps: 0,
            ..answer()
        };
        assert_eq!(decode(&key(), &encode(&instant)).unwrap(), instant);
    }

    #[test]
    fn values_that_are_not_entries_do_not_decode() {
        assert!(decode(&key(), b"garbage").is_none());
        assert!(decode(&key(), b"{}").is_none());
        let unknown_reason = String::from_utf8(encode(&answer()))
            .unwrap()
            .replace("\"proven\"", "\"cancelled\"");
        assert!(decode(&key(), unknown_reason.as_bytes()).is_none());
        let unknown_forbidden = String::from_utf8(encode(&answer()))
            .unwrap()
            .replace("\"double_three\"", "\"triple_three\"");
        assert!(decode(&key(), unknown_forbidden.as_bytes()).is_none());
    }

    #[test]
    fn keys_carry_the_format_and_crate_versions_and_the_whole_question() {
        let text = redis_key(&key());
        assert!(text.starts_with(&format!(
            "kibitz:v{FORMAT_VERSION}:{}|",
            env!("CARGO_PKG_VERSION")
        )));
        let mut other = key();
        other.analysis = false;
        assert_ne!(redis_key(&other), text);
        other = key();
        other.to_move = Side::Second;
        assert_ne!(redis_key(&other), text);
        other = key();
        other.max_depth = Some(8);
        assert_ne!(redis_key(&other), text);
        other = key();
        other.max_nodes = Some(7);
        assert_ne!(redis_key(&other), text, "a node limit is not a depth limit");
    }

    #[test]
    fn keys_separate_levels_seeds_and_deterministic_answers() {
        use crate::service::levels::Style;
        let full = redis_key(&key());
        let weak = |level: u8, seed: Option<u64>, deterministic: bool| {
            redis_key(&CacheKey {
                style: Style {
                    level,
                    seed,
                    deterministic,
                },
                ..key()
            })
        };
        assert_eq!(weak(10, None, false), full, "level 10 is the default");
        let all = [
            full.clone(),
            weak(9, Some(1), false),
            weak(9, Some(2), false),
            weak(8, Some(1), false),
            weak(10, None, true),
            weak(9, Some(1), true),
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn a_decoded_answer_takes_its_style_from_the_key() {
        use crate::service::levels::Style;
        let style = Style {
            level: 3,
            seed: Some(77),
            deterministic: true,
        };
        let key = CacheKey { style, ..key() };
        let stored = Answer { style, ..answer() };
        assert_eq!(decode(&key, &encode(&stored)).unwrap(), stored);
    }
}
