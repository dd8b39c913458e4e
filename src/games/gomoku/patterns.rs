//! Line patterns: what a stone placed on an empty cell would make along one direction.
//!
//! The key idea: a cell's pattern in one direction depends only on the `H` cells on each side of
//! it on that line ([`reach`]: `k - 1` in free-style, where every window through the cell lies
//! within them; `k` under the exactly-five rule, which must also see the cell just past a
//! window). So a pattern is a pure function of two small bit masks, own stones and blocked cells
//! (opponent stones or off-board) of that segment. For k <= 5, and six or more in a row, the
//! function is tabulated once per rule set (2^16 bytes for free-style five, which stays in
//! cache; 2^20 for exactly five and for six or more, whose reach is the same; built by dynamic
//! programming over segments with more stones first); exactly six (2^24 entries, too long to
//! build within a request's budget) computes it directly, about sixty times a table's cost a
//! move, and longer lines (k >= 7) only tell fives and fours apart, which keeps a move cheap on
//! 25x25. The board keeps one pattern per
//! (empty cell, side, direction) and refreshes only the cells within `H` of a changed cell,
//! which is what makes the evaluation incremental.

use std::sync::OnceLock;

use super::Overline;

/// Pattern levels, weakest first. Each says what placing a stone on the cell would create in
/// one direction.
pub const NONE: u8 = 0;
/// A two that can still grow into a (closed) three.
pub const TWO: u8 = 1;
/// A two that can grow into an open three.
pub const OPEN_TWO: u8 = 2;
/// A three that can grow into a four (one more stone leaves one completion).
pub const THREE: u8 = 3;
/// A three that can grow into an open four.
pub const OPEN_THREE: u8 = 4;
/// A four: exactly one cell completes it.
pub const FOUR: u8 = 5;
/// An open four (two or more completion cells): unstoppable in this line.
pub const OPEN_FOUR: u8 = 6;
/// A winning line.
pub const FIVE: u8 = 7;
/// Number of levels (array sizes).
pub const LEVELS: usize = 8;

/// Largest win length whose pattern function is tabulated under both overline rules; six or
/// more in a row is tabulated too (see [`table_for`]).
const MAX_TABULATED_K: u32 = 5;
/// Largest win length whose untabulated patterns include threes and twos.
const MAX_FULL_DIRECT_K: u32 = 6;

/// How many cells on each side of a cell its patterns depend on (`H`).
pub const fn reach(k: u32, overline: Overline) -> u32 {
    match overline {
        Overline::Win => k - 1,
        Overline::NoWin => k,
    }
}

/// Classifies one segment: `own` and `free` are `2H + 1`-bit masks with the centre (bit `H`)
/// already holding the placed stone. `sub` gives the level of the segment with one more own
/// stone; the mapping below only needs it to tell fours from threes.
fn level_with(
    own: u64,
    free: u64,
    k: u32,
    overline: Overline,
    mut sub: impl FnMut(u64, u64) -> u8,
) -> u8 {
    let h = reach(k, overline);
    let window = (1u64 << k) - 1;
    let exact = overline == Overline::NoWin;
    let mut completions = 0u64;
    // Windows of k cells containing the centre start at bits h + 1 - k ..= h.
    for start in (h + 1 - k)..=h {
        let mask = window << start;
        // Under the exactly-five rule h = k, so start >= 1 and the bit before the window exists.
        if exact && own & ((1u64 << (start - 1)) | (1u64 << (start + k))) != 0 {
            // A stone of ours just past the window would make it an overline.
            continue;
        }
        let mine = own & mask;
        if mine == mask {
            return FIVE;
        }
        let gap = mask & !mine;
        if gap.count_ones() == 1 && gap & free != 0 {
            completions |= gap;
        }
    }
    match completions.count_ones() {
        0 => {}
        1 => return FOUR,
        _ => return OPEN_FOUR,
    }
    let mut best = NONE;
    let mut empties = free;
    while empties != 0 {
        let e = empties & empties.wrapping_neg();
        empties &= empties - 1;
        let level = match sub(own | e, free & !e) {
            OPEN_FOUR => OPEN_THREE,
            FOUR => THREE,
            OPEN_THREE => OPEN_TWO,
            THREE => TWO,
            _ => NONE,
        };
        best = best.max(level);
        if best == OPEN_THREE {
            break;
        }
    }
    best
}

/// Direct (untabulated) classification; `depth` is how many more stones it may imagine.
fn level_direct(own: u64, free: u64, k: u32, overline: Overline, depth: u32) -> u8 {
    level_with(own, free, k, overline, |o, f| {
        if depth == 0 {
            // Only fives and fours are needed one level down; pretend nothing else exists.
            level_with(o, f, k, overline, |_, _| NONE)
        } else {
            level_direct(o, f, k, overline, depth - 1)
        }
    })
}

/// The pattern function for one rule set: either a table or the direct computation.
#[derive(Clone, Copy, Debug)]
pub struct PatternFn {
    pub k: u32,
    /// Cells on each side of a cell that its patterns depend on ([`reach`]).
    pub h: u32,
    pub overline: Overline,
    table: Option<&'static [u8]>,
}

/// Packs the non-centre cells of a segment: `own` bits, then `blocked` bits (2H bits each).
#[inline]
fn table_index(own: u64, blocked: u64, h: u32) -> usize {
    (squeeze(own, h) | (squeeze(blocked, h) << (2 * h))) as usize
}

/// A segment's mask without its centre bit `h`, the cells above it moved down one.
#[inline]
fn squeeze(m: u64, h: u32) -> u64 {
    let low = (1u64 << h) - 1;
    (m & low) | ((m >> (h + 1)) << h)
}

fn build_table(k: u32, overline: Overline) -> Vec<u8> {
    const UNKNOWN: u8 = u8::MAX;
    let h = reach(k, overline);
    let bits = 2 * h;
    let mut table = vec![UNKNOWN; 1usize << (2 * bits)];
    let seg_mask = (1u64 << (2 * h + 1)) - 1;
    let centre = 1u64 << h;
    // Memoised recursion: a segment's level needs only segments with one more own stone.
    fn fill(
        table: &mut [u8],
        own: u64,
        free: u64,
        k: u32,
        overline: Overline,
        seg_mask: u64,
    ) -> u8 {
        let blocked = seg_mask & !own & !free;
        let index = table_index(own, blocked, reach(k, overline));
        if table[index] != UNKNOWN {
            return table[index];
        }
        let mut children = Vec::new();
        let mut empties = free;
        while empties != 0 {
            let e = empties & empties.wrapping_neg();
            empties &= empties - 1;
            children.push((own | e, free & !e));
        }
        let mut levels = Vec::with_capacity(children.len());
        for &(o, f) in &children {
            levels.push(fill(table, o, f, k, overline, seg_mask));
        }
        let mut next = levels.into_iter();
        let level = level_with(own, free, k, overline, |_, _| next.next().unwrap_or(NONE));
        table[index] = level;
        level
    }
    // Enumerate every segment (each non-centre cell own, free or blocked) in base 3.
    let total = 3u64.pow(bits);
    for code in 0..total {
        let (mut own, mut free, mut c) = (centre, 0u64, code);
        for i in 0..=2 * h {
            if i == h {
                continue;
            }
            match c % 3 {
                0 => free |= 1 << i,
                1 => own |= 1 << i,
                _ => {}
            }
            c /= 3;
        }
        fill(&mut table, own, free, k, overline, seg_mask);
    }
    table
}

/// The table of a rule set, built on first use: `k` from 3 to 5 under either overline rule,
/// and six or more in a row, whose reach (5) and table (2^20 entries) are exactly five's. Its
/// nodes computed the patterns directly and cost about sixty times a tabulated node (the gomoku
/// journal, "Renju's overline points, six in a row's slow nodes").
fn table_for(k: u32, overline: Overline) -> Option<&'static [u8]> {
    static TABLES: [OnceLock<Vec<u8>>; 7] = [const { OnceLock::new() }; 7];
    let slot = match (k, overline) {
        (3..=MAX_TABULATED_K, _) => (k as usize - 3) * 2 + usize::from(overline == Overline::NoWin),
        (6, Overline::Win) => 6,
        _ => return None,
    };
    Some(
        TABLES[slot]
            .get_or_init(|| build_table(k, overline))
            .as_slice(),
    )
}

/// [`PatternFn::levels`] for a tabulated rule set whose reach `H` is a constant, so that every
/// shift and mask is an immediate: `table` is the rule set's table cut to its `2^(4H)` entries
/// (every index is below that, so the compiler drops the bounds checks), and the masks are
/// segments of an empty cell (centre bit clear).
#[inline(always)]
pub fn tabulated_levels<const H: u32>(table: &[u8], x: u64, o: u64, off: u64) -> [u8; 2] {
    let squeeze = |m: u64| (m & ((1u64 << H) - 1)) | ((m >> (H + 1)) << H);
    let (sx, so, soff) = (squeeze(x), squeeze(o), squeeze(off));
    [
        table[(sx | (so | soff) << (2 * H)) as usize],
        table[(so | (sx | soff) << (2 * H)) as usize],
    ]
}

impl PatternFn {
    pub fn new(k: u32, overline: Overline) -> Self {
        PatternFn {
            k,
            h: reach(k, overline),
            overline,
            table: table_for(k, overline),
        }
    }

    /// The pattern table, for the rule sets that have one (`k <= 5`).
    #[inline]
    pub fn table(&self) -> Option<&'static [u8]> {
        self.table
    }

    /// The levels of both sides at an empty centre, from the segment's first player's stones
    /// `x`, second player's stones `o` and off-board cells `off`: one squeeze of each mask
    /// serves both table lookups (squeezing commutes with `|`).
    #[inline]
    pub fn levels(&self, x: u64, o: u64, off: u64) -> [u8; 2] {
        match self.table {
            Some(table) => {
                let h = self.h;
                let (sx, so, soff) = (squeeze(x, h), squeeze(o, h), squeeze(off, h));
                [
                    table[(sx | (so | soff) << (2 * h)) as usize],
                    table[(so | (sx | soff) << (2 * h)) as usize],
                ]
            }
            None => [self.level(x, o | off), self.level(o, x | off)],
        }
    }

    /// Level of the segment around an empty centre: `own` and `blocked` are `2H + 1`-bit masks
    /// (centre bit ignored).
    #[inline]
    pub fn level(&self, own: u64, blocked: u64) -> u8 {
        let h = self.h;
        let centre = 1u64 << h;
        let own = own & !centre;
        let blocked = blocked & !centre;
        match self.table {
            Some(table) => table[table_index(own, blocked, h)],
            None => {
                let seg_mask = (1u64 << (2 * h + 1)) - 1;
                let free = seg_mask & !own & !blocked & !centre;
                if self.k <= MAX_FULL_DIRECT_K {
                    level_direct(own | centre, free, self.k, self.overline, 1)
                } else {
                    // Imagining one and two more stones over segments of up to 51 cells costs
                    // too much per move: long lines get fives and fours only (exact for wins,
                    // blocks and VCF; the evaluation just sees fewer shapes).
                    level_with(own | centre, free, self.k, self.overline, |_, _| NONE)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Level of the centre of a text segment of `2k + 1` cells: `x` own, `o` blocked, `.` free,
    /// the centre must be `.`. Cells beyond the rule's reach are dropped from both ends.
    fn level_of(text: &str, k: u32, overline: Overline) -> u8 {
        let skip = (k - reach(k, overline)) as usize;
        let (mut own, mut blocked) = (0, 0);
        let inner = text.chars().skip(skip).take(text.len() - 2 * skip);
        for (i, ch) in inner.enumerate() {
            match ch {
                'x' => own |= 1 << i,
                'o' => blocked |= 1 << i,
                _ => {}
            }
        }
        PatternFn::new(k, overline).level(own, blocked)
    }

    #[test]
    fn free_style_levels_on_a_five_line() {
        let w = Overline::Win;
        assert_eq!(level_of("..xxx.xxx..", 5, w), FIVE);
        assert_eq!(level_of("...xx.x....", 5, w), OPEN_FOUR);
        assert_eq!(level_of("..oxx.x....", 5, w), FOUR);
        assert_eq!(level_of("....x.x....", 5, w), OPEN_THREE);
        assert_eq!(level_of("...ox.x....", 5, w), THREE);
        assert_eq!(level_of("....x......", 5, w), OPEN_TWO);
        assert_eq!(level_of("...........", 5, w), NONE);
    }

    #[test]
    fn exactly_five_refuses_overlines_in_the_table_and_directly() {
        assert!(level_of("..xxx.xx...", 5, Overline::NoWin) < FOUR);
        assert_eq!(level_of("..xxx.xx...", 5, Overline::Win), FIVE);
        assert_eq!(level_of("...xx.x....", 5, Overline::NoWin), OPEN_FOUR);
        assert_eq!(level_of("...xxx.xx....", 6, Overline::NoWin), FIVE);
        assert_eq!(level_of("..xxxx.xx....", 6, Overline::Win), FIVE);
        assert!(level_of("..xxxx.xx....", 6, Overline::NoWin) < FOUR);
    }

    #[test]
    fn direct_computation_agrees_with_the_table() {
        for (k, overline) in [(5, Overline::Win), (5, Overline::NoWin), (6, Overline::Win)] {
            let table = PatternFn::new(k, overline);
            assert!(table.table().is_some(), "k {k} is tabulated");
            let h = table.h;
            let width = 2 * h + 1;
            let seg_mask = (1u64 << width) - 1;
            for code in (0..3u64.pow(2 * h)).step_by(7) {
                let (mut own, mut blocked, mut c) = (0u64, 0u64, code);
                for i in (0..width).filter(|&i| i != h) {
                    match c % 3 {
                        1 => own |= 1 << i,
                        2 => blocked |= 1 << i,
                        _ => {}
                    }
                    c /= 3;
                }
                let free = seg_mask & !own & !blocked & !(1 << h);
                let direct = level_direct(own | 1 << h, free, k, overline, 1);
                assert_eq!(table.level(own, blocked), direct, "{own:b} {blocked:b}");
            }
        }
    }
}
