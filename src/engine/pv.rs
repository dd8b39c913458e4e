//! The triangular principal-variation table: `line(ply)` is the best line found from `ply`,
//! rebuilt bottom-up as scores back up (a move that raises alpha at `ply` becomes the head of
//! its child's line). Allocated once per search; nothing per node.

use super::game::{MAX_PLY, Move};

pub struct PvTable {
    lines: Vec<[Move; MAX_PLY]>,
    len: [usize; MAX_PLY + 1],
}

impl Default for PvTable {
    fn default() -> Self {
        PvTable {
            lines: vec![[Move::NONE; MAX_PLY]; MAX_PLY + 1],
            len: [0; MAX_PLY + 1],
        }
    }
}

impl PvTable {
    /// A node at `ply` starts with no line.
    #[inline]
    pub fn clear(&mut self, ply: usize) {
        self.len[ply] = 0;
    }

    /// `mv` is the best move at `ply`: its line is `mv` then the child's line.
    #[inline]
    pub fn update(&mut self, ply: usize, mv: Move) {
        let child_len = self.len[ply + 1].min(MAX_PLY - 1);
        let (head, tail) = self.lines.split_at_mut(ply + 1);
        head[ply][0] = mv;
        head[ply][1..=child_len].copy_from_slice(&tail[0][..child_len]);
        self.len[ply] = child_len + 1;
    }

    /// The line at `ply` is the single move `mv` (a win played at once).
    #[inline]
    pub fn set_single(&mut self, ply: usize, mv: Move) {
        self.lines[ply][0] = mv;
        self.len[ply] = 1;
    }

    /// The best line from `ply`.
    pub fn line(&self, ply: usize) -> &[Move] {
        &self.lines[ply][..self.len[ply]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_its_move_then_the_childs_line() {
        let mut pv = PvTable::default();
        pv.clear(3);
        pv.set_single(2, Move(7));
        pv.update(1, Move(5));
        pv.update(0, Move(1));
        assert_eq!(pv.line(0), &[Move(1), Move(5), Move(7)]);
        pv.clear(1);
        pv.update(0, Move(2));
        assert_eq!(pv.line(0), &[Move(2)]);
    }
}
