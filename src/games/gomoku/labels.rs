//! Threat labels: what a move makes for the side that plays it (a five, an open four, a four, an
//! open or broken three, a double threat) and which of the opponent's threats it blocks, the
//! "why" of a suggested move in the words a gomoku teacher uses.
//!
//! The key idea: the board's own pattern function ([`super::patterns::PatternFn`]) already says
//! what a stone on an empty cell makes along each line, so a label is a pattern level read on a
//! segment of the line, before the move (what it makes) and after it (which of the opponent's
//! completion cells it took away). Only the lines through the move can change, so blocks are
//! found by comparing the opponent's cells on those four lines, before and after. Rule sets
//! come with the pattern function: free-style counts an overline as a five, standard gomoku
//! (exactly five) does not; under renju black is read with the exactly-five function (its
//! overline is no five) and a move on one of its forbidden points gets no labels, only the
//! reason ([`MoveLabels::forbidden`]); a three of black's counts only when a point that turns
//! it into an open four is one black may play. For `k` other than 5 the names keep their
//! meaning relative to `k`: a four is one stone short of `k` in a row, a three two. Boards with
//! `k >= 7` have fives and fours only (the pattern function's own limit, see `patterns`).
//!
//! Nothing here is on a search's hot path: it runs once per answered move, on a copy of the
//! cells.

use super::board::DIRECTIONS;
use super::patterns::{FIVE, FOUR, OPEN_FOUR, OPEN_THREE, PatternFn};
use super::renju::{self, Forbidden};
use super::{Gomoku, Overline};
use crate::engine::{Game, Move, Side, Status};

/// A threat shape, strongest first (the order the labels are listed in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// `k` in a row: the game is won (under exactly-five rules, not an overline).
    Five,
    /// A line with two or more cells that complete it: one block cannot stop it.
    OpenFour,
    /// Fours on two lines at once.
    DoubleFour,
    /// A four and an open three on another line.
    FourThree,
    /// A line with exactly one cell that completes it (blocked at one end, or split).
    Four,
    /// Open threes on two lines at once.
    DoubleThree,
    /// `k - 2` stones in a row that one more stone turns into an open four.
    OpenThree,
    /// An open three with a gap (`.XX.X.`).
    BrokenThree,
}

impl Shape {
    /// Every shape, strongest first.
    pub const ALL: [Shape; 8] = [
        Shape::Five,
        Shape::OpenFour,
        Shape::DoubleFour,
        Shape::FourThree,
        Shape::Four,
        Shape::DoubleThree,
        Shape::OpenThree,
        Shape::BrokenThree,
    ];

    /// Lower-case name, as the API prints it.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Five => "five",
            Shape::OpenFour => "open_four",
            Shape::DoubleFour => "double_four",
            Shape::FourThree => "four_three",
            Shape::Four => "four",
            Shape::DoubleThree => "double_three",
            Shape::OpenThree => "open_three",
            Shape::BrokenThree => "broken_three",
        }
    }

    /// Whether the shape spans two lines (it then has no single [`Line`]).
    pub fn is_double(self) -> bool {
        matches!(
            self,
            Shape::DoubleFour | Shape::FourThree | Shape::DoubleThree
        )
    }
}

/// One of the four lines through a cell, in the board's [`DIRECTIONS`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Line {
    /// Along the row.
    Row,
    /// Along the column.
    Column,
    /// Top-left to bottom-right.
    Diagonal,
    /// Top-right to bottom-left.
    AntiDiagonal,
}

impl Line {
    const ALL: [Line; 4] = [Line::Row, Line::Column, Line::Diagonal, Line::AntiDiagonal];

    /// Lower-case name, as the API prints it.
    pub fn name(self) -> &'static str {
        match self {
            Line::Row => "row",
            Line::Column => "column",
            Line::Diagonal => "diagonal",
            Line::AntiDiagonal => "anti_diagonal",
        }
    }
}

/// A labelled threat: its shape and, for a one-line shape, the line it lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Threat {
    pub shape: Shape,
    /// `None` for a double threat (two lines).
    pub line: Option<Line>,
}

/// What a move makes and blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MoveLabels {
    /// The mover's threats the move makes, strongest first. A five is listed alone (nothing
    /// else matters once the game is won).
    pub makes: Vec<Threat>,
    /// The opponent's threats the move takes away, strongest first: a four (or one end of an
    /// open four) whose completing cell it occupies, an open three it leaves with no open four
    /// to make, and a double threat whose point it occupies (`line` `None`).
    pub blocks: Vec<Threat>,
    /// Under renju, when the mover is black and the move is one of its forbidden points: why.
    /// `makes` and `blocks` are then empty (a forbidden move is not played).
    pub forbidden: Option<Forbidden>,
}

impl MoveLabels {
    /// Whether `makes` holds `shape`.
    pub fn makes_shape(&self, shape: Shape) -> bool {
        self.makes.iter().any(|t| t.shape == shape)
    }

    /// Whether `blocks` holds `shape`.
    pub fn blocks_shape(&self, shape: Shape) -> bool {
        self.blocks.iter().any(|t| t.shape == shape)
    }
}

impl Gomoku {
    /// The labels of the side to move playing `mv`; `None` when `mv` is not an empty cell of
    /// the board or the game is over.
    pub fn threat_labels(&self, mv: Move) -> Option<MoveLabels> {
        let cell = mv.index();
        if !self.is_legal(mv) || self.status() != Status::Ongoing {
            return None;
        }
        let me = self.to_move;
        let mut cells = self.board.cells.clone();
        if self.black_is_restricted(me)
            && let Some(why) = renju::forbidden(&cells, self.rows(), self.cols(), cell)
        {
            return Some(MoveLabels {
                forbidden: Some(why),
                ..MoveLabels::default()
            });
        }
        let makes = self.shapes_at(&mut cells, cell, me);
        let blocks = self.blocked_by(&mut cells, cell, me);
        Some(MoveLabels {
            makes,
            blocks,
            forbidden: None,
        })
    }

    /// The pattern function that judges `side`'s lines: the board's, except for renju's black,
    /// who needs exactly five.
    fn pattern_fn_of(&self, side: Side) -> PatternFn {
        if self.black_is_restricted(side) {
            PatternFn::new(5, Overline::NoWin)
        } else {
            self.board.geo.patterns
        }
    }

    /// The level a stone of `side` on the empty `cell` of `cells` makes along direction `dir`,
    /// by `patterns` (the segment read from the cells, as the board reads it from its masks).
    fn level_on(
        &self,
        cells: &[u8],
        patterns: &PatternFn,
        cell: usize,
        side: Side,
        dir: usize,
    ) -> u8 {
        let geo = &self.board.geo;
        let (line, pos) = geo.line_of[cell][dir];
        let on_line = &geo.line_cells[line as usize];
        let h = patterns.h as i32;
        let own_stone = side.index() as u8 + 1;
        let (mut own, mut blocked) = (0u64, 0u64);
        for step in -h..=h {
            let bit = 1u64 << (step + h);
            let at = pos as i32 + step;
            if step == 0 {
                continue;
            }
            if at < 0 || at >= on_line.len() as i32 {
                blocked |= bit;
                continue;
            }
            match cells[on_line[at as usize] as usize] {
                0 => {}
                stone if stone == own_stone => own |= bit,
                _ => blocked |= bit,
            }
        }
        patterns.level(own, blocked)
    }

    /// The cells of `cells`'s line through `cell` in direction `dir` within `reach` of it.
    fn line_window(&self, cell: usize, dir: usize, reach: u32) -> impl Iterator<Item = usize> {
        let geo = &self.board.geo;
        let (line, pos) = geo.line_of[cell][dir];
        let on_line = &geo.line_cells[line as usize];
        let lo = (pos as usize).saturating_sub(reach as usize);
        let hi = (pos as usize + reach as usize).min(on_line.len() - 1);
        on_line[lo..=hi].iter().map(|&c| c as usize)
    }

    /// Whether `side` may play the empty `cell` of `cells` (renju's black: not a forbidden
    /// point).
    fn may_play(&self, cells: &[u8], cell: usize, side: Side) -> bool {
        !self.black_is_restricted(side)
            || renju::forbidden(cells, self.rows(), self.cols(), cell).is_none()
    }

    /// What a stone of `side` on the empty `cell` of `cells` makes (`cells` is borrowed for
    /// trial stones and left as it was).
    fn shapes_at(&self, cells: &mut [u8], cell: usize, side: Side) -> Vec<Threat> {
        let patterns = self.pattern_fn_of(side);
        let levels: [u8; 4] =
            std::array::from_fn(|d| self.level_on(cells, &patterns, cell, side, d));
        let mut makes = Vec::new();
        if levels.contains(&FIVE) {
            for (d, _) in levels.iter().enumerate().filter(|(_, l)| **l == FIVE) {
                makes.push(Threat {
                    shape: Shape::Five,
                    line: Some(Line::ALL[d]),
                });
            }
            return makes;
        }
        let (mut fours, mut threes, mut open_four) = (0, 0, false);
        for (d, &level) in levels.iter().enumerate() {
            let shape = match level {
                OPEN_FOUR => {
                    fours += 1;
                    open_four = true;
                    Shape::OpenFour
                }
                FOUR => {
                    fours += 1;
                    Shape::Four
                }
                OPEN_THREE if self.real_three(cells, &patterns, cell, side, d) => {
                    threes += 1;
                    if self.solid_run(cells, cell, side, d) {
                        Shape::OpenThree
                    } else {
                        Shape::BrokenThree
                    }
                }
                _ => continue,
            };
            makes.push(Threat {
                shape,
                line: Some(Line::ALL[d]),
            });
        }
        // An open four wins by itself; the double threats are named when they are the point.
        let double = if open_four {
            None
        } else if fours >= 2 {
            Some(Shape::DoubleFour)
        } else if fours == 1 && threes >= 1 {
            Some(Shape::FourThree)
        } else if threes >= 2 {
            Some(Shape::DoubleThree)
        } else {
            None
        };
        if let Some(shape) = double {
            makes.push(Threat { shape, line: None });
        }
        makes.sort();
        makes
    }

    /// Whether the open three `side` makes on `cell` along `dir` is a real one: some cell of
    /// the line then makes an open four and `side` may play it (always, but for renju's black,
    /// whose open-four point may be forbidden).
    fn real_three(
        &self,
        cells: &mut [u8],
        patterns: &PatternFn,
        cell: usize,
        side: Side,
        dir: usize,
    ) -> bool {
        if !self.black_is_restricted(side) {
            return true;
        }
        cells[cell] = side.index() as u8 + 1;
        let real = self.line_window(cell, dir, patterns.h).any(|c| {
            cells[c] == 0
                && self.level_on(cells, patterns, c, side, dir) == OPEN_FOUR
                && self.may_play(cells, c, side)
        });
        cells[cell] = 0;
        real
    }

    /// Whether `side`'s stones through `cell` along `dir`, with a stone on `cell`, are `k - 2`
    /// in a row without a gap (a solid three, not a broken one).
    fn solid_run(&self, cells: &[u8], cell: usize, side: Side, dir: usize) -> bool {
        let (dr, dc) = DIRECTIONS[dir];
        let (row, col) = ((cell / self.cols()) as i32, (cell % self.cols()) as i32);
        let own = side.index() as u8 + 1;
        let mut run = 1;
        for sign in [-1, 1] {
            let (mut r, mut c) = (row + sign * dr, col + sign * dc);
            while r >= 0
                && c >= 0
                && (r as usize) < self.rows()
                && (c as usize) < self.cols()
                && cells[r as usize * self.cols() + c as usize] == own
            {
                run += 1;
                r += sign * dr;
                c += sign * dc;
            }
        }
        run + 2 >= self.rules().win_length
    }

    /// The opponent's threats a stone of `side` on `cell` takes away (`cells` is borrowed for
    /// the stone and left as it was).
    fn blocked_by(&self, cells: &mut [u8], cell: usize, side: Side) -> Vec<Threat> {
        let them = side.other();
        let patterns = self.pattern_fn_of(them);
        let mut blocks = Vec::new();
        // Per line: the opponent's five cells and (playable) open-four cells before ([0]) and
        // after ([1]) the stone is placed. Only cells within `H` of it change, but a threat it
        // touches has stones within `H` and completing cells within `H` of those: counting over
        // `2H` sees all of them (an open three keeps its far end's open four, say).
        let mut counts = [[[0u32; 2]; 2]; 4];
        for stage in 0..2 {
            if stage == 1 {
                cells[cell] = side.index() as u8 + 1;
            }
            for (d, count) in counts.iter_mut().enumerate() {
                for c in self.line_window(cell, d, 2 * patterns.h) {
                    if cells[c] != 0 {
                        continue;
                    }
                    match self.level_on(cells, &patterns, c, them, d) {
                        FIVE => count[0][stage] += 1,
                        OPEN_FOUR if self.may_play(cells, c, them) => count[1][stage] += 1,
                        _ => {}
                    }
                }
            }
        }
        cells[cell] = 0;
        for (d, [fives, open_fours]) in counts.into_iter().enumerate() {
            let shape = if fives[1] < fives[0] {
                if fives[0] >= 2 {
                    Shape::OpenFour
                } else {
                    Shape::Four
                }
            } else if open_fours[0] > 0 && open_fours[1] == 0 {
                Shape::OpenThree
            } else {
                continue;
            };
            blocks.push(Threat {
                shape,
                line: Some(Line::ALL[d]),
            });
        }
        // The opponent's double-threat point, taken.
        if self.may_play(cells, cell, them) {
            blocks.extend(
                self.shapes_at(cells, cell, them)
                    .into_iter()
                    .filter(|t| t.shape.is_double()),
            );
        }
        blocks.sort();
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    /// A `size` x `size` position from rows of `X`, `O`, `.` (missing rows and cells empty),
    /// the side to move from the stone counts.
    fn position(rows: &[&str], size: usize, rules: GomokuRules) -> Gomoku {
        let mut full: Vec<String> = rows
            .iter()
            .map(|r| format!("{r:.<width$}", width = size))
            .collect();
        full.resize(size, ".".repeat(size));
        let grid = Grid::parse(&full, 25).unwrap();
        Gomoku::from_grid(&grid, None, &rules).unwrap()
    }

    fn labels(p: &Gomoku, row: usize, col: usize) -> MoveLabels {
        p.threat_labels(p.move_at(row, col)).unwrap()
    }

    fn one(shape: Shape, line: Line) -> Threat {
        Threat {
            shape,
            line: Some(line),
        }
    }

    fn double(shape: Shape) -> Threat {
        Threat { shape, line: None }
    }

    const FREE: GomokuRules = GomokuRules {
        win_length: 5,
        overline: Overline::Win,
        renju: false,
    };

    #[test]
    fn a_five_is_labelled_alone_and_wins() {
        // X to move; O's stones far away.
        let p = position(&["", ".XXXX", "", "", "", "", "OOO.O"], 15, FREE);
        let l = labels(&p, 1, 5);
        assert_eq!(l.makes, vec![one(Shape::Five, Line::Row)]);
        assert_eq!(l.forbidden, None);
        let mut after = p.clone();
        after.make(p.move_at(1, 5));
        assert_eq!(after.status(), Status::Lost);
    }

    #[test]
    fn open_four_four_open_three_and_broken_three_on_one_row_each() {
        let rows = [
            "",
            "..XXX",
            "",
            "........OXXX",
            "",
            "...XX",
            "",
            "...X.X",
            "",
            "O.....O",
            "",
            "O...O",
            "..........O.O.O",
            "OO",
        ];
        let p = position(&rows, 15, FREE);
        assert_eq!(p.side_to_move(), Side::First);
        assert_eq!(
            labels(&p, 1, 5).makes,
            vec![one(Shape::OpenFour, Line::Row)]
        );
        // Closed by O on the left: one completion only.
        assert_eq!(labels(&p, 3, 12).makes, vec![one(Shape::Four, Line::Row)]);
        assert_eq!(
            labels(&p, 5, 5).makes,
            vec![one(Shape::OpenThree, Line::Row)]
        );
        assert_eq!(
            labels(&p, 7, 4).makes,
            vec![one(Shape::OpenThree, Line::Row)]
        );
        assert_eq!(
            labels(&p, 7, 6).makes,
            vec![one(Shape::BrokenThree, Line::Row)]
        );
        // Nothing at all far from every stone.
        assert_eq!(labels(&p, 14, 7), MoveLabels::default());
    }

    #[test]
    fn the_double_threats_are_named_with_their_lines() {
        // X at (5, 5): a four down column 5 (rows 2-4 held, O above) and a four along row 5.
        let double_four = [
            "", ".....O", ".....X", ".....X", ".....X", ".OXXX.", "", "", "O", "O", "O", "", "O",
        ];
        let p = position(&double_four, 15, FREE);
        assert_eq!(
            labels(&p, 5, 5).makes,
            vec![
                double(Shape::DoubleFour),
                one(Shape::Four, Line::Row),
                one(Shape::Four, Line::Column),
            ]
        );
        // A closed four down the column and an open three along row 5.
        let four_three = [
            "", ".....O", ".....X", ".....X", ".....X", "...XX.", "", "", "O", "O", "O", "", "O",
        ];
        let p = position(&four_three, 15, FREE);
        assert_eq!(
            labels(&p, 5, 5).makes,
            vec![
                double(Shape::FourThree),
                one(Shape::Four, Line::Column),
                one(Shape::OpenThree, Line::Row),
            ]
        );
        let double_three = [
            "", "", "", ".....X", ".....X", "...XX.", "", "", "O", "O", "O", "O",
        ];
        let p = position(&double_three, 15, FREE);
        assert_eq!(
            labels(&p, 5, 5).makes,
            vec![
                double(Shape::DoubleThree),
                one(Shape::OpenThree, Line::Row),
                one(Shape::OpenThree, Line::Column),
            ]
        );
    }

    #[test]
    fn blocks_name_the_opponents_four_open_three_and_double_point() {
        // X to move. O has a closed four on row 1 (completed at (1, 5)), an open three on row
        // 4, and a four-three point at (11, 5): a column four (rows 8-10, closed below by X)
        // and a row three (cols 3-4).
        let rows = [
            "",
            "XOOOO",
            "",
            "",
            "..OOO",
            "",
            "",
            "",
            ".....O",
            ".....O",
            ".....O",
            "...OO",
            ".....X",
            "X.X.X.X.X",
            "",
            "X.X.X.X.X",
        ];
        let p = position(&rows, 16, FREE);
        assert_eq!(p.side_to_move(), Side::First);
        assert_eq!(labels(&p, 1, 5).blocks, vec![one(Shape::Four, Line::Row)]);
        assert_eq!(
            labels(&p, 4, 5).blocks,
            vec![one(Shape::OpenThree, Line::Row)]
        );
        // The other end, one cell off: O keeps a four to make, but no open four.
        assert_eq!(
            labels(&p, 4, 1).blocks,
            vec![one(Shape::OpenThree, Line::Row)]
        );
        // Two cells off: O still makes an open four at (4, 5).
        assert!(labels(&p, 4, 0).blocks.is_empty());
        // The four-three point: the double threat, and the column's three (whose open-four
        // point (7, 5) now makes only a four).
        assert_eq!(
            labels(&p, 11, 5).blocks,
            vec![
                double(Shape::FourThree),
                one(Shape::OpenThree, Line::Column)
            ]
        );
    }

    #[test]
    fn the_second_player_is_labelled_as_the_first() {
        // O to move (X has one stone more): O's open four to make, X's four to block.
        let rows = ["", "..OOO", "", "XXXX.O", "", "", "X"];
        let p = position(&rows, 15, FREE);
        assert_eq!(p.side_to_move(), Side::Second);
        assert_eq!(
            labels(&p, 1, 5).makes,
            vec![one(Shape::OpenFour, Line::Row)]
        );
        let block = labels(&p, 3, 4);
        assert_eq!(block.blocks, vec![one(Shape::Four, Line::Row)]);
        assert!(block.makes.is_empty());
    }

    #[test]
    fn the_board_edge_closes_a_line() {
        // X's three against the left edge: the fourth stone makes a closed four, not an open
        // one; the same along the top row's diagonal from the corner.
        let rows = ["XXX", "", "", "", "", "", "", "", "O.O.O"];
        let p = position(&rows, 9, FREE);
        assert_eq!(labels(&p, 0, 3).makes, vec![one(Shape::Four, Line::Row)]);
        let q = position(&["X", ".X", "..X", "", "", "", "", "", "O.O.O"], 9, FREE);
        assert_eq!(
            labels(&q, 3, 3).makes,
            vec![one(Shape::Four, Line::Diagonal)]
        );
    }

    #[test]
    fn k_other_than_five_keeps_the_names_relative_to_k() {
        let four = GomokuRules::new(4, Overline::Win).unwrap();
        // k = 4: `.XX..` becomes `.XXX.`, two cells complete it: an open four of k = 4.
        let p = position(&["", ".XX", "", "", "", "O...O"], 7, four);
        assert_eq!(
            labels(&p, 1, 3).makes,
            vec![one(Shape::OpenFour, Line::Row)]
        );
        assert_eq!(labels(&p, 1, 0).makes, vec![one(Shape::Four, Line::Row)]);
        let six = GomokuRules::new(6, Overline::Win).unwrap();
        let q = position(&["", "..XXXX", "", "", "", "O.O.O.O"], 12, six);
        assert_eq!(
            labels(&q, 1, 6).makes,
            vec![one(Shape::OpenFour, Line::Row)]
        );
        let r = position(&["", "...XXX", "", "", "", "O.O.O"], 12, six);
        assert_eq!(
            labels(&r, 1, 6).makes,
            vec![one(Shape::OpenThree, Line::Row)]
        );
    }

    #[test]
    fn an_overline_is_a_five_only_in_free_style() {
        let rows = ["", "XXX.XX", "", "", "", "", "OOO.O", "", "O"];
        let free = position(&rows, 15, FREE);
        assert_eq!(labels(&free, 1, 3).makes, vec![one(Shape::Five, Line::Row)]);
        let standard = position(&rows, 15, GomokuRules::new(5, Overline::NoWin).unwrap());
        let l = labels(&standard, 1, 3);
        assert!(!l.makes_shape(Shape::Five), "{l:?}");
        let mut after = standard.clone();
        after.make(standard.move_at(1, 3));
        assert_eq!(after.status(), Status::Ongoing);
    }

    #[test]
    fn renju_black_gets_the_reason_of_a_forbidden_point_and_white_its_overline() {
        let renju = GomokuRules::renju();
        let rows = ["", "XXX.XX", "", "", "", "", "OOO.O", "O"];
        let p = position(&rows, 15, renju);
        assert_eq!(p.side_to_move(), Side::First);
        let l = labels(&p, 1, 3);
        assert_eq!(l.forbidden, Some(Forbidden::Overline));
        assert!(l.makes.is_empty() && l.blocks.is_empty());
        // Black's double three is forbidden too.
        let d3 = [
            "", "", "", ".....X", ".....X", "...XX.", "", "", "O", "O", "O", "O",
        ];
        let p = position(&d3, 15, renju);
        assert_eq!(labels(&p, 5, 5).forbidden, Some(Forbidden::DoubleThree));
        // White's overline wins under renju.
        let w = [
            "", "OOO.OO", "", "", "", "", "XXX.X", "X", "", "", "", "", "", "", "X",
        ];
        let q = position(&w, 15, renju);
        assert_eq!(q.side_to_move(), Side::Second);
        assert_eq!(labels(&q, 1, 3).makes, vec![one(Shape::Five, Line::Row)]);
        // White blocking black's real five: black's overline cell is no five to block.
        let b = ["", "XXXX.X", "", "", "", "", "OO", "O", "O"];
        let r = position(&b, 15, renju);
        assert_eq!(r.side_to_move(), Side::Second);
        assert!(labels(&r, 1, 4).blocks.is_empty());
        assert_eq!(
            labels(&r, 1, 4).makes,
            Vec::<Threat>::new(),
            "white there makes nothing"
        );
    }

    #[test]
    fn an_occupied_cell_or_a_finished_game_has_no_labels() {
        let p = position(&["X", "O"], 9, FREE);
        assert_eq!(p.threat_labels(p.move_at(0, 0)), None);
        assert_eq!(p.threat_labels(Move(81)), None);
    }

    /// Random crowded positions under four rule sets: every label is checked against the
    /// game's own rules (a five wins, an open four leaves two fives, a four one, a blocked four
    /// took the opponent's five cell), and the pattern levels read here agree with the board's
    /// incremental ones. Counts each label so that it cannot pass vacuously.
    #[test]
    fn labels_agree_with_the_games_own_rules_on_random_positions() {
        let rule_sets = [
            FREE,
            GomokuRules::new(5, Overline::NoWin).unwrap(),
            GomokuRules::renju(),
            GomokuRules::new(4, Overline::Win).unwrap(),
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut seen = std::collections::HashMap::<String, u32>::new();
        for round in 0..300 {
            let rules = rule_sets[round % rule_sets.len()];
            let size = if rules.win_length == 4 { 9 } else { 13 };
            let mut p = Gomoku::new(size, size, rules).unwrap();
            // Stones on the inner (size - 4)^2 cells, never more than fit (a 9x9 board has 25).
            let inner = (size as u64 - 4).pow(2);
            let stones = 6 + next(24.min(inner - 6)) as usize;
            let mut placed: Vec<(usize, Side)> = Vec::new();
            while placed.len() < stones {
                let (r, c) = (2 + next(size as u64 - 4), 2 + next(size as u64 - 4));
                let cell = r as usize * size + c as usize;
                if placed.iter().all(|&(x, _)| x != cell) {
                    let side = [Side::First, Side::Second][placed.len() % 2];
                    placed.push((cell, side));
                }
            }
            let to_move = [Side::First, Side::Second][stones % 2];
            p.set_up(placed, to_move);
            if p.board().has_five(0) || p.board().has_five(1) {
                continue;
            }
            let me = to_move;
            let mut their_fives = [0usize; 8];
            let their_five_count = p.five_cells(me.other(), &mut their_fives);
            for cell in 0..size * size {
                let mv = Move(cell as u16);
                if !p.is_legal(mv) || p.board().near[cell] == 0 {
                    continue;
                }
                // The levels read from the cells are the board's own (the renju black side
                // reads exactly-five patterns, which the board does not keep).
                for side in [Side::First, Side::Second] {
                    if !p.black_is_restricted(side) {
                        let pf = p.pattern_fn_of(side);
                        let mine: [u8; 4] = std::array::from_fn(|d| {
                            p.level_on(&p.board().cells, &pf, cell, side, d)
                        });
                        assert_eq!(mine, p.board().levels(cell, side.index()));
                    }
                }
                let l = p.threat_labels(mv).unwrap();
                if l.forbidden.is_some() {
                    *seen.entry("forbidden".into()).or_default() += 1;
                    assert!(p.forbidden(cell).is_some());
                    continue;
                }
                let mut after = p.clone();
                after.make(mv);
                let wins = after.status() == Status::Lost;
                assert_eq!(l.makes_shape(Shape::Five), wins, "{p:?} {cell} {l:?}");
                if wins {
                    *seen.entry("five".into()).or_default() += 1;
                    continue;
                }
                let mut fives = [0usize; 8];
                let my_fives = after.five_cells(me, &mut fives);
                for t in &l.makes {
                    *seen.entry(t.shape.name().into()).or_default() += 1;
                    match t.shape {
                        Shape::OpenFour | Shape::DoubleFour => {
                            assert!(my_fives >= 2, "{p:?} {cell}")
                        }
                        Shape::Four | Shape::FourThree => assert!(my_fives >= 1, "{p:?} {cell}"),
                        _ => {}
                    }
                }
                for t in &l.blocks {
                    *seen
                        .entry(format!("blocks {}", t.shape.name()))
                        .or_default() += 1;
                    if matches!(t.shape, Shape::Four | Shape::OpenFour) {
                        // It took one of the opponent's five cells; the only one leaves none.
                        assert!(their_fives[..their_five_count.min(8)].contains(&cell));
                        let mut left = [0usize; 8];
                        let left = after.five_cells(me.other(), &mut left);
                        assert_eq!(left, their_five_count - 1, "{p:?} {cell}");
                    }
                }
                // Taking the opponent's only five cell is always labelled.
                if their_five_count == 1 && their_fives[0] == cell {
                    assert!(l.blocks_shape(Shape::Four), "{p:?} {cell} {l:?}");
                }
            }
        }
        for name in [
            "five",
            "open_four",
            "four",
            "open_three",
            "broken_three",
            "four_three",
            "double_three",
            "blocks four",
            "blocks open_three",
            "forbidden",
        ] {
            assert!(
                seen.get(name).copied().unwrap_or(0) >= 10,
                "{name}: {seen:?}"
            );
        }
    }
}
