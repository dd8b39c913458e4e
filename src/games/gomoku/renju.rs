//! Renju's forbidden points: where black may not play (double three, double four, overline).
//!
//! The rule set: black wins only with exactly five in a row, white with five or more; black may
//! not play a move that makes an overline (six or more), two fours at once, or two threes at
//! once, unless the same move makes exactly five, which wins. The key idea is the recursive
//! definition of a three: a three counts only if one more black stone can turn it into a
//! straight four (four in a row, open at both ends, each end making exactly five) **on a point
//! that is not itself forbidden** once the three's stone is down. So a double three whose
//! completing points are forbidden is no double three, and the test recurses, one stone deeper
//! each time (so it ends; real positions rarely go two levels down).
//!
//! Everything here works on a plain cell array (`0` empty, `1` black, `2` white, row-major),
//! independent of the incremental [`super::board::Board`], so that the arena's referee and the
//! engine share one exact, readable implementation; the engine only calls it for cells whose
//! cached line patterns say a forbidden shape is possible.

use super::board::DIRECTIONS;

/// Cell value of a black stone in the array the functions here read.
pub const BLACK: u8 = 1;

/// Why a point is forbidden for black.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Forbidden {
    /// Two or more threes made at once.
    DoubleThree,
    /// Two or more fours made at once (also two on one line, as in `X.XXX.X`).
    DoubleFour,
    /// Six or more in a row.
    Overline,
}

impl Forbidden {
    /// Every reason, for reading names back.
    pub const ALL: [Forbidden; 3] = [
        Forbidden::DoubleThree,
        Forbidden::DoubleFour,
        Forbidden::Overline,
    ];

    /// Lower-case name, as the API and the arena's records print it.
    pub fn name(self) -> &'static str {
        match self {
            Forbidden::DoubleThree => "double_three",
            Forbidden::DoubleFour => "double_four",
            Forbidden::Overline => "overline",
        }
    }
}

/// A board as the renju test sees it: the cells and their shape.
#[derive(Debug)]
pub struct Cells<'a> {
    pub cells: &'a mut [u8],
    pub rows: usize,
    pub cols: usize,
}

impl Cells<'_> {
    /// The cell `steps` away from `cell` along direction `dir`, if on the board.
    fn step(&self, cell: usize, dir: usize, steps: i32) -> Option<usize> {
        let (dr, dc) = DIRECTIONS[dir];
        let r = (cell / self.cols) as i32 + dr * steps;
        let c = (cell % self.cols) as i32 + dc * steps;
        (r >= 0 && c >= 0 && (r as usize) < self.rows && (c as usize) < self.cols)
            .then(|| r as usize * self.cols + c as usize)
    }

    fn is(&self, cell: Option<usize>, value: u8) -> bool {
        cell.is_some_and(|c| self.cells[c] == value)
    }

    /// The black run through `cell` (which must hold black) along `dir`: how far it reaches
    /// back and forward.
    fn run(&self, cell: usize, dir: usize) -> (i32, i32) {
        let mut back = 0;
        while self.is(self.step(cell, dir, -(back + 1)), BLACK) {
            back += 1;
        }
        let mut forward = 0;
        while self.is(self.step(cell, dir, forward + 1), BLACK) {
            forward += 1;
        }
        (back, forward)
    }

    /// Length of the black run through `cell` along `dir` (the cell counted as black).
    fn run_length(&self, cell: usize, dir: usize) -> i32 {
        let (back, forward) = self.run(cell, dir);
        back + forward + 1
    }

    /// With black on `cell`: how many points along `dir` within four cells would make exactly
    /// five together with `cell` (the completions of the fours `cell` is part of).
    fn five_completions(&mut self, cell: usize, dir: usize) -> usize {
        let mut completions = 0;
        for k in (-4..=4).filter(|&k| k != 0) {
            let Some(e) = self.step(cell, dir, k) else {
                continue;
            };
            if self.cells[e] != 0 {
                continue;
            }
            self.cells[e] = BLACK;
            let (back, forward) = self.run(e, dir);
            // The five must hold `cell`: a four elsewhere on the line is not this move's.
            if back + forward + 1 == 5 && (-back..=forward).contains(&-k) {
                completions += 1;
            }
            self.cells[e] = 0;
        }
        completions
    }

    /// With black on `cell`: the fours it makes along `dir` (0, 1, or 2 for the one-line double
    /// fours `X.XXX.X`, `XX.XX.XX`, `XXX.X.XXX`). A straight four `.XXXX.` is one four with two
    /// completions.
    fn fours(&mut self, cell: usize, dir: usize) -> usize {
        let completions = self.five_completions(cell, dir);
        if completions == 2 && self.run_length(cell, dir) == 4 {
            1
        } else {
            completions
        }
    }

    /// With black on `cell`: whether it makes a real three along `dir`, i.e. some empty point
    /// within four cells turns the line into a straight four and is not forbidden itself.
    fn is_real_three(&mut self, cell: usize, dir: usize) -> bool {
        for k in (-4..=4).filter(|&k| k != 0) {
            let Some(e) = self.step(cell, dir, k) else {
                continue;
            };
            if self.cells[e] != 0 {
                continue;
            }
            self.cells[e] = BLACK;
            let straight = self.is_straight_four(cell, dir);
            self.cells[e] = 0;
            if straight && self.forbidden(e).is_none() {
                return true;
            }
        }
        false
    }

    /// Whether the black run through `cell` along `dir` is a straight four: exactly four
    /// stones, both ends empty, and each end making exactly five (no black just beyond it).
    fn is_straight_four(&self, cell: usize, dir: usize) -> bool {
        let (back, forward) = self.run(cell, dir);
        if back + forward + 1 != 4 {
            return false;
        }
        let open = |end: i32, beyond: i32| {
            self.is(self.step(cell, dir, end), 0) && !self.is(self.step(cell, dir, beyond), BLACK)
        };
        open(-back - 1, -back - 2) && open(forward + 1, forward + 2)
    }

    /// Whether black playing the empty `cell` is forbidden, and why.
    pub fn forbidden(&mut self, cell: usize) -> Option<Forbidden> {
        if self.cells[cell] != 0 {
            return None;
        }
        self.cells[cell] = BLACK;
        let verdict = self.judge_placed(cell);
        self.cells[cell] = 0;
        verdict
    }

    /// `forbidden` with the stone already on `cell`.
    fn judge_placed(&mut self, cell: usize) -> Option<Forbidden> {
        let lengths: [i32; 4] = std::array::from_fn(|d| self.run_length(cell, d));
        // Exactly five wins, whatever else the move makes.
        if lengths.contains(&5) {
            return None;
        }
        if lengths.iter().any(|&n| n > 5) {
            return Some(Forbidden::Overline);
        }
        let mut fours = 0;
        let mut four_lines = [false; 4];
        for (d, has_four) in four_lines.iter_mut().enumerate() {
            let n = self.fours(cell, d);
            *has_four = n > 0;
            fours += n;
        }
        if fours >= 2 {
            return Some(Forbidden::DoubleFour);
        }
        // A line holding a four is not also a three; threes need two lines of their own.
        let mut threes = 0;
        for d in (0..4).filter(|&d| !four_lines[d]) {
            if self.is_real_three(cell, d) {
                threes += 1;
                if threes >= 2 {
                    return Some(Forbidden::DoubleThree);
                }
            }
        }
        None
    }
}

/// Whether black on the empty `cell` makes exactly five (a renju win for black).
pub fn makes_exact_five(cells: &[u8], rows: usize, cols: usize, cell: usize) -> bool {
    let (row, col) = ((cell / cols) as i32, (cell % cols) as i32);
    DIRECTIONS.iter().any(|&(dr, dc)| {
        let mut length = 1;
        for sign in [-1, 1] {
            let (mut r, mut c) = (row + sign * dr, col + sign * dc);
            while r >= 0
                && c >= 0
                && (r as usize) < rows
                && (c as usize) < cols
                && cells[r as usize * cols + c as usize] == BLACK
            {
                length += 1;
                r += sign * dr;
                c += sign * dc;
            }
        }
        length == 5
    })
}

/// Whether black playing `cell` on `cells` (`rows` x `cols`) is forbidden under renju.
///
/// The test writes trial stones, so it works on a copy of the cells; the copy lives in a
/// per-thread buffer, so the threat searches, which ask this at many nodes, allocate nothing.
pub fn forbidden(cells: &[u8], rows: usize, cols: usize, cell: usize) -> Option<Forbidden> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut copy = scratch.borrow_mut();
        copy.clear();
        copy.extend_from_slice(cells);
        Cells {
            cells: &mut copy,
            rows,
            cols,
        }
        .forbidden(cell)
    })
}

/// Every forbidden point for black on `cells`, in cell order.
pub fn forbidden_points(cells: &[u8], rows: usize, cols: usize) -> Vec<(usize, Forbidden)> {
    let mut copy = cells.to_vec();
    let mut view = Cells {
        cells: &mut copy,
        rows,
        cols,
    };
    (0..rows * cols)
        .filter_map(|cell| view.forbidden(cell).map(|why| (cell, why)))
        .collect()
}
