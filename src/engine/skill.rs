//! Strength levels: a weaker player that still plays only legal moves and tells the truth.
//!
//! Level 10 is the engine at full strength, untouched. Levels 1 to 9 work like Stockfish's
//! skill level, in two ways at once:
//! - the search is shallower (a depth cap per level, [`Skill::max_depth`]) and shorter (a share
//!   of the time budget and of any node limit, [`Skill::budget_share`]), and it scores every
//!   legal root move with a full window (the engine's analysis mode), so each root score is the
//!   exact value of that move at that depth, not a bound. The depth caps tell the levels apart
//!   where a game is cheap to search (tic-tac-toe, Connect-4: every cap is reached at once); the
//!   budget share does where it is not (gomoku, whose analysis search reaches 3 plies in tens of
//!   milliseconds, so caps above 3 would never bind and levels 6-9 would search alike);
//! - the move is then drawn among the scored root moves with a softmax whose temperature grows
//!   as the level drops ([`Skill::temperature`]): a move `t` units of evaluation below the best
//!   is chosen `e^(-t/temperature)` times as often as the best. Near-equal moves are chosen about
//!   equally often at every level (ties are broken by the draw, not by move order);
//! - and with a small probability that also falls with the level ([`Skill::blunder`]) the move
//!   is instead drawn uniformly among the better third of the root moves (at least two): a
//!   plausible-looking mistake. Without it a solved game (tic-tac-toe, a Connect-4 ending) would
//!   be played perfectly by every level deep enough to see its end, and the levels there would
//!   not differ at all.
//!
//! Scores are compared in *units*, a per-game scale handed in by the caller (roughly "a clear
//! positional edge": a two-in-a-row in tic-tac-toe, a good threat in Connect-4), clamped to
//! ±[`CLAMP_UNITS`]; a proven win or loss counts [`DECISIVE_UNITS`] beyond that, so a weak level
//! prefers any heuristic move to a proven loss and any win to a heuristic move, by a margin the
//! temperature can still overcome at the lowest levels (a beginner can throw a win away).
//!
//! The draw uses [`SplitMix64`] seeded by the request's seed, so the same scored moves and seed
//! give the same choice on every machine. The chosen move's own score and proof replace the
//! position's in the report: a weakened answer never claims an outcome its move does not have.

use super::game::Score;
use super::report::{MoveScore, Outcome, SearchReport};

/// The full-strength level (the default).
pub const FULL_STRENGTH: u8 = 10;
/// The weakest level.
pub const WEAKEST: u8 = 1;

/// Heuristic scores count at most this many units either way.
pub const CLAMP_UNITS: f64 = 6.0;
/// A proven result counts this many units beyond the clamp (a win `CLAMP + DECISIVE`).
pub const DECISIVE_UNITS: f64 = 4.0;

/// What levels 1..=9 mean in one game: per level, the deepest iteration, the share of the
/// budget, the softmax temperature in units, and the blunder probability. A game may bring its
/// own (`ServedGame::SKILL_LEVELS`); every table must pass [`levels_in_order`]. Measured, not
/// guessed: `cargo run --release --example levels` plays each level against the next and
/// against full strength (docs/api.md, "Strength levels"; figures in docs/figures.md).
pub type LevelTable = [(u32, f64, f64, f64); 9];

/// The levels of most games. The shares grow by about 1.3x a level up to 5 and 1.7x above,
/// where the depth caps no longer separate the levels in gomoku: about a ply of gomoku search
/// per level or two. The blunder rate falls by about 1.6x a level.
pub const STANDARD_LEVELS: LevelTable = [
    (1, 0.04, 12.0, 0.60),
    (2, 0.05, 3.0, 0.40),
    (2, 0.065, 2.0, 0.27),
    (2, 0.085, 1.2, 0.18),
    (3, 0.11, 0.8, 0.12),
    (3, 0.18, 0.5, 0.075),
    (4, 0.30, 0.3, 0.045),
    (5, 0.55, 0.2, 0.025),
    (6, 1.00, 0.1, 0.012),
];

/// `table` with its depth caps replaced by `caps` (level 1 first), every level's share,
/// temperature and blunder rate kept: for a game whose search is cheap enough that the cap,
/// not the budget, sets a level's depth.
pub const fn with_depth_caps(table: LevelTable, caps: [u32; 9]) -> LevelTable {
    let mut levels = table;
    let mut i = 0;
    while i < levels.len() {
        levels[i].0 = caps[i];
        i += 1;
    }
    levels
}

/// Whether every level of `table` is weaker than the next in every respect: no deeper, a
/// smaller share of the budget (in (0, 1]), a higher temperature and a higher blunder rate.
pub fn levels_in_order(table: &LevelTable) -> bool {
    let valid = |&(_, share, temperature, blunder): &(u32, f64, f64, f64)| {
        share > 0.0 && share <= 1.0 && temperature > 0.0 && (0.0..1.0).contains(&blunder)
    };
    table.iter().all(valid)
        && table.windows(2).all(|w| {
            let ((d0, s0, t0, b0), (d1, s1, t1, b1)) = (w[0], w[1]);
            d0 <= d1 && s0 < s1 && t0 > t1 && b0 > b1
        })
}

/// How a weakened level searches and chooses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skill {
    pub level: u8,
    /// Deepest iteration searched (the request's own `max_depth` applies too, the smaller wins).
    pub max_depth: u32,
    /// Share of the time budget (counted from when the search starts) and of the request's node
    /// limit, if any, that the level searches; in (0, 1]. The depth-1 iteration runs whatever
    /// the share, so even the smallest share yields a scored, legal move.
    pub budget_share: f64,
    /// Softmax temperature, in units of the game's evaluation.
    pub temperature: f64,
    /// Probability of a blunder: a uniform draw among the better third of the moves.
    pub blunder: f64,
}

impl Skill {
    /// The weakened play of `level` in [`STANDARD_LEVELS`], or `None` for full strength (10)
    /// and for levels outside 1..=10 (the caller validates the range first).
    pub fn for_level(level: u8) -> Option<Skill> {
        Skill::in_table(level, &STANDARD_LEVELS)
    }

    /// The weakened play of `level` in a game's own `table`; `None` as for [`Skill::for_level`].
    pub fn in_table(level: u8, table: &LevelTable) -> Option<Skill> {
        if !(WEAKEST..FULL_STRENGTH).contains(&level) {
            return None;
        }
        let (max_depth, budget_share, temperature, blunder) = table[usize::from(level - 1)];
        Some(Skill {
            level,
            max_depth,
            budget_share,
            temperature,
            blunder,
        })
    }

    /// Replaces the report's move with one drawn among its scored root moves (which an
    /// analysis search filled in), and its score, proof and line with that move's own.
    /// `unit` is the game's score unit (> 0). A report without root moves (a search cancelled
    /// before its first iteration, or a finished game) is left as it is.
    pub fn choose(&self, report: &mut SearchReport, unit: Score, rng: &mut SplitMix64) {
        // Two draws always, so a seed's stream does not depend on which branch was taken.
        let (blunder, u) = (rng.next_f64(), rng.next_f64());
        let index = if blunder < self.blunder {
            self.blunder_pick(&report.root_moves, unit, u)
        } else {
            self.pick(&report.root_moves, unit, u)
        };
        let Some(index) = index else {
            return;
        };
        let chosen = report.root_moves[index].clone();
        if report.best_move != Some(chosen.mv) {
            // The search's line starts with its own best move; of the chosen one only the move
            // itself is known.
            report.pv = vec![chosen.mv];
        }
        report.best_move = Some(chosen.mv);
        report.score = chosen.score;
        report.proof = chosen.proof;
    }

    /// The index of the move the draw `u` (uniform in [0, 1)) picks: the inverse of the
    /// softmax's cumulative distribution over `moves` in their order.
    fn pick(&self, moves: &[MoveScore], unit: Score, u: f64) -> Option<usize> {
        let top = moves
            .iter()
            .map(|m| value_units(m, unit))
            .fold(f64::NEG_INFINITY, f64::max);
        if moves.is_empty() || !top.is_finite() {
            return None;
        }
        let weight = |m: &MoveScore| ((value_units(m, unit) - top) / self.temperature).exp();
        let total: f64 = moves.iter().map(weight).sum();
        let mut target = u * total;
        for (i, m) in moves.iter().enumerate() {
            target -= weight(m);
            if target < 0.0 {
                return Some(i);
            }
        }
        // Rounding left a sliver past the last weight: the last move.
        Some(moves.len() - 1)
    }
}

impl Skill {
    /// The index of a move drawn uniformly (by `u`) among the better third of `moves`, at least
    /// two of them (or the one there is). Ties at the cut are all in, so equal moves are treated
    /// alike.
    fn blunder_pick(&self, moves: &[MoveScore], unit: Score, u: f64) -> Option<usize> {
        if moves.is_empty() {
            return None;
        }
        let mut values: Vec<f64> = moves.iter().map(|m| value_units(m, unit)).collect();
        values.sort_by(|a, b| b.total_cmp(a));
        let keep = moves.len().div_ceil(3).max(2).min(moves.len());
        let cut = values[keep - 1];
        let candidates: Vec<usize> = (0..moves.len())
            .filter(|&i| value_units(&moves[i], unit) >= cut)
            .collect();
        let at = ((u * candidates.len() as f64) as usize).min(candidates.len() - 1);
        Some(candidates[at])
    }
}

/// A root move's value in units: proven results beyond every heuristic score (a sooner win
/// and a later loss a little better), heuristic scores clamped.
fn value_units(m: &MoveScore, unit: Score) -> f64 {
    let unit = f64::from(unit.max(1));
    match m.proof.map(|p| p.outcome) {
        Some(Outcome::Win) | Some(Outcome::Loss) => {
            let plies = m.proof.map_or(0, |p| p.plies_to_end) as f64;
            let magnitude = CLAMP_UNITS + DECISIVE_UNITS - (plies / 1000.0).min(1.0);
            if m.proof.is_some_and(|p| p.outcome == Outcome::Win) {
                magnitude
            } else {
                -magnitude
            }
        }
        Some(Outcome::Draw) => 0.0,
        None => (f64::from(m.score) / unit).clamp(-CLAMP_UNITS, CLAMP_UNITS),
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny, fast generator whose whole state is the
/// seed, so a seed names the same stream on every machine and in every build.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Move, Proof};

    fn scored(mv: u16, score: Score, proof: Option<(Outcome, u32)>) -> MoveScore {
        MoveScore {
            mv: Move(mv),
            score,
            proof: proof.map(|(outcome, plies_to_end)| Proof {
                outcome,
                plies_to_end,
            }),
            depth: 1,
        }
    }

    fn report(moves: Vec<MoveScore>) -> SearchReport {
        SearchReport {
            best_move: Some(moves[0].mv),
            score: moves[0].score,
            proof: moves[0].proof,
            depth: 3,
            nodes: 100,
            table: Default::default(),
            elapsed: Default::default(),
            stop_reason: crate::engine::StopReason::Depth,
            pv: vec![moves[0].mv, Move(99)],
            root_moves: moves,
            lines: Vec::new(),
            iterations: Vec::new(),
            threat_proof: None,
        }
    }

    #[test]
    fn full_strength_and_out_of_range_levels_are_not_weakened() {
        assert_eq!(Skill::for_level(10), None);
        assert_eq!(Skill::for_level(0), None);
        assert_eq!(Skill::for_level(11), None);
        assert!((1..=9).all(|l| Skill::for_level(l).is_some()));
    }

    #[test]
    fn lower_levels_search_shallower_and_shorter_and_choose_more_randomly() {
        assert!(levels_in_order(&STANDARD_LEVELS));
        // Each level plays its own row of the table.
        for (level, &row) in (1..=9).zip(STANDARD_LEVELS.iter()) {
            let skill = Skill::for_level(level).unwrap();
            let played = (
                skill.max_depth,
                skill.budget_share,
                skill.temperature,
                skill.blunder,
            );
            assert_eq!(played, row, "level {level}");
        }
    }

    #[test]
    fn a_table_with_a_level_out_of_order_is_refused() {
        let mut table = STANDARD_LEVELS;
        table[4].3 = table[3].3; // level 5 blunders as often as level 4
        assert!(!levels_in_order(&table));
        let mut table = STANDARD_LEVELS;
        table[8].1 = 1.5; // more than the whole budget
        assert!(!levels_in_order(&table));
    }

    #[test]
    fn the_same_seed_draws_the_same_stream_and_another_seed_another() {
        let a: Vec<u64> = {
            let mut r = SplitMix64::new(42);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let mut r = SplitMix64::new(42);
        assert_eq!(a, (0..4).map(|_| r.next_u64()).collect::<Vec<_>>());
        let mut other = SplitMix64::new(43);
        assert_ne!(a[0], other.next_u64());
    }

    #[test]
    fn a_chosen_move_reports_its_own_score_and_proof_not_the_best_moves() {
        let moves = vec![
            scored(0, 999_995, Some((Outcome::Win, 5))),
            scored(1, 0, Some((Outcome::Draw, 8))),
            scored(2, -999_990, Some((Outcome::Loss, 10))),
        ];
        let skill = Skill::for_level(1).unwrap();
        let mut seen = [false; 3];
        for seed in 0..400 {
            let mut r = report(moves.clone());
            skill.choose(&mut r, 10, &mut SplitMix64::new(seed));
            let mv = r.best_move.unwrap();
            let m = &moves[mv.index()];
            seen[mv.index()] = true;
            assert_eq!((r.score, r.proof), (m.score, m.proof));
            if mv != Move(0) {
                assert_eq!(
                    r.pv,
                    vec![mv],
                    "the best move's line is not the chosen move's"
                );
            } else {
                assert_eq!(r.pv, vec![Move(0), Move(99)]);
            }
        }
        assert!(
            seen.iter().all(|&s| s),
            "level 1 sometimes plays each: {seen:?}"
        );
    }

    #[test]
    fn higher_levels_choose_the_best_move_more_often() {
        let moves = vec![
            scored(0, 20, None),
            scored(1, 5, None),
            scored(2, -10, None),
        ];
        let best_share = |level: u8| {
            let skill = Skill::for_level(level).unwrap();
            let mut rng = SplitMix64::new(7);
            (0..2000)
                .filter(|_| skill.pick(&moves, 10, rng.next_f64()) == Some(0))
                .count()
        };
        let shares: Vec<usize> = (1..=9).map(best_share).collect();
        assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
        assert!(
            shares[8] > 1950,
            "level 9 nearly always plays a clearly best move"
        );
        let blunders = |level: u8| {
            let skill = Skill::for_level(level).unwrap();
            let mut rng = SplitMix64::new(7);
            (0..2000)
                .filter(|_| skill.blunder_pick(&moves, 10, rng.next_f64()) != Some(0))
                .count()
        };
        assert!(blunders(9) > 0, "a blunder can miss the best move");
    }

    #[test]
    fn a_win_is_preferred_to_any_heuristic_score_and_a_loss_avoided() {
        let win = scored(0, 999_990, Some((Outcome::Win, 10)));
        let good = scored(1, 1_000_000 - 200, None);
        let loss = scored(2, -999_999, Some((Outcome::Loss, 1)));
        assert!(value_units(&win, 10) > value_units(&good, 10));
        assert!(value_units(&loss, 10) < -CLAMP_UNITS);
    }

    #[test]
    fn a_report_without_scored_moves_is_left_alone() {
        let mut r = report(vec![scored(4, 3, None)]);
        r.root_moves.clear();
        let before = r.clone();
        Skill::for_level(1)
            .unwrap()
            .choose(&mut r, 10, &mut SplitMix64::new(1));
        assert_eq!(r, before);
    }
}
