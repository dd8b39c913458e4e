//! The transposition table: a fixed-size, lock-free cache of search results shared by every
//! search and every thread.
//!
//! Each entry is two `AtomicU64`s: the packed data and `key ^ data` (Hyatt and Mann's lockless
//! hashing). A reader recomputes `key` from both words; a write torn between two threads leaves
//! a pair whose XOR does not reproduce any key that probes it, so a torn entry reads as a miss,
//! never as a wrong result. No locks, no `unsafe`.
//!
//! Entries are grouped in buckets of four (one 64-byte cache line). Replacement keeps the most
//! valuable entry: depth minus eight plies a search of age, where age counts searches since the
//! entry was written ([`TranspositionTable::new_search`]). Stale results of old requests therefore
//! go first: this is the table's LRU, and nothing is cleared between requests. Writers count
//! depth in whole plies or in quarter plies (gomoku's search, whose reductions are fractions of
//! a ply): each entry records its [`DepthUnit`], so that both weigh the same against age and
//! against each other in one bucket.
//!
//! Win/loss scores are stored relative to the stored node (not the search root) and converted
//! back on probe ([`score_to_table`], [`score_from_table`]), so distances to the end stay exact
//! when a position is met at another ply or by another request.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use super::game::{MATE_BOUND, Move, Score};

/// Which side of the true score a stored score is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// The true score is exactly the stored one.
    Exact,
    /// The true score is at least the stored one (a fail-high, beta cutoff).
    Lower,
    /// The true score is at most the stored one (a fail-low).
    Upper,
}

impl Bound {
    /// Whether a stored `score` of this bound settles a node searched with the window
    /// (`alpha`, `beta`): exact, or a bound on the side the window cuts.
    #[inline]
    pub fn settles(self, score: Score, alpha: Score, beta: Score) -> bool {
        match self {
            Bound::Exact => true,
            Bound::Lower => score >= beta,
            Bound::Upper => score <= alpha,
        }
    }
}

/// A table entry as read: a copy, never a reference into the table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entry {
    pub score: Score,
    pub best_move: Move,
    /// Remaining depth the score was searched to.
    pub depth: u8,
    pub bound: Bound,
}

impl Entry {
    /// What a node at `ply` with `depth` plies left stores after searching its moves with the
    /// window (`alpha`, `beta`) as it was on entry and finding `best` by `best_move`: the bound
    /// follows from where `best` fell (fail-high, inside, fail-low), the score is made relative
    /// to this node ([`score_to_table`]), and a depth below 0 (a node extended past the
    /// horizon) is stored as 0.
    pub fn of_node(
        best: Score,
        best_move: Move,
        ply: usize,
        depth: i32,
        alpha: Score,
        beta: Score,
    ) -> Entry {
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        Entry {
            score: score_to_table(best, ply),
            best_move,
            depth: depth.clamp(0, u8::MAX as i32) as u8,
            bound,
        }
    }
}

/// What an entry's `depth` counts. One table serves writers of both kinds, so the replacement
/// rule converts each entry's depth to quarter plies before weighing it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DepthUnit {
    /// Whole plies: the generic engine, and Connect-4's solver (empty cells).
    Ply,
    /// Quarter plies: gomoku's main search (`games::gomoku::search::PLY`).
    QuarterPly,
}

impl DepthUnit {
    /// Quarter plies in one unit.
    const fn quarters(self) -> i32 {
        match self {
            DepthUnit::Ply => 4,
            DepthUnit::QuarterPly => 1,
        }
    }
}

/// Replacement: a search of age costs an entry this many plies of depth (Stockfish's 8).
const AGE_PLIES: i32 = 8;
/// A bound of the same position replaces a deeper entry only when that one is at most this many
/// plies deeper.
const SAME_KEY_SLACK_PLIES: i32 = 2;

const BUCKET: usize = 4;
/// Generation bits: 32 searches before the count wraps, as Stockfish's 5 bits.
const GENERATION_BITS: u64 = 5;
const GENERATION_MASK: u8 = (1 << GENERATION_BITS) - 1;
/// The data word's bit that says the entry's depth is in quarter plies.
const QUARTER_PLY_BIT: u64 = 1 << GENERATION_BITS;

/// Four slots on one cache line: a probe costs one memory access, whatever the allocator's
/// alignment of the boxed slice would have been.
#[derive(Default)]
#[repr(align(64))]
struct Bucket([Slot; BUCKET]);

#[derive(Default)]
struct Slot {
    key_xor_data: AtomicU64,
    data: AtomicU64,
}

/// Counters a search keeps about its own use of the table.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct TableStats {
    pub probes: u64,
    pub hits: u64,
}

/// The shared transposition table. Cheap to share (`Arc<TranspositionTable>`); all methods take
/// `&self`.
pub struct TranspositionTable {
    buckets: Box<[Bucket]>,
    /// `buckets.len() - 1`; the bucket count is a power of two.
    bucket_mask: u64,
    /// Bumped once per search; entries remember the generation that wrote them, which ages them.
    generation: AtomicU8,
}

impl TranspositionTable {
    /// Bytes one entry takes.
    pub const ENTRY_BYTES: usize = std::mem::size_of::<Slot>();

    /// A table using at most `megabytes` MiB (at least one bucket), rounded down to a power of
    /// two number of buckets.
    pub fn with_megabytes(megabytes: usize) -> Self {
        let bytes = megabytes
            .saturating_mul(1 << 20)
            .max(BUCKET * Self::ENTRY_BYTES);
        let buckets = (bytes / (BUCKET * Self::ENTRY_BYTES)).max(1);
        let buckets = 1usize << (usize::BITS - 1 - buckets.leading_zeros());
        Self::with_buckets(buckets)
    }

    fn with_buckets(buckets: usize) -> Self {
        let slots = (0..buckets).map(|_| Bucket::default()).collect();
        TranspositionTable {
            buckets: slots,
            bucket_mask: buckets as u64 - 1,
            generation: AtomicU8::new(0),
        }
    }

    /// Number of entries the table holds.
    pub fn capacity(&self) -> usize {
        self.buckets.len() * BUCKET
    }

    /// Bytes the entries take.
    pub fn bytes(&self) -> usize {
        self.capacity() * Self::ENTRY_BYTES
    }

    /// Marks the start of a new search: entries written before it age by one.
    pub fn new_search(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    fn current_generation(&self) -> u8 {
        self.generation.load(Ordering::Relaxed) & GENERATION_MASK
    }

    #[inline]
    fn bucket(&self, key: u64) -> &[Slot] {
        // High bits pick the bucket; the key check uses all 64 bits.
        let index = ((key >> 20) ^ key) & self.bucket_mask;
        &self.buckets[index as usize].0
    }

    /// The entry stored for `key`, if any. Scores come back as stored (node-relative); convert
    /// with [`score_from_table`].
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let key = nonzero_key(key);
        for slot in self.bucket(key) {
            let data = slot.data.load(Ordering::Relaxed);
            let check = slot.key_xor_data.load(Ordering::Relaxed);
            if check ^ data == key {
                return Some(unpack(data).0);
            }
        }
        None
    }

    /// Stores an entry for `key` whose depth is in whole plies, replacing the least valuable
    /// entry of its bucket.
    #[inline]
    pub fn store(&self, key: u64, entry: Entry) {
        self.store_in(key, entry, DepthUnit::Ply);
    }

    /// Stores an entry for `key` whose depth counts `unit`s, replacing the least valuable entry
    /// of its bucket. Probes return the depth as stored: a reader knows its own unit.
    #[inline]
    pub fn store_in(&self, key: u64, entry: Entry, unit: DepthUnit) {
        let key = nonzero_key(key);
        let generation = self.current_generation();
        let bucket = self.bucket(key);
        let mut victim = 0;
        let mut victim_value = i32::MAX;
        for (i, slot) in bucket.iter().enumerate() {
            let data = slot.data.load(Ordering::Relaxed);
            let check = slot.key_xor_data.load(Ordering::Relaxed);
            if check ^ data == key {
                let (old, _, old_unit) = unpack(data);
                // Same position: keep a deeper exact result over a shallower bound, and keep the
                // old best move when the new search found none.
                if entry.bound != Bound::Exact
                    && quarters(old.depth, old_unit)
                        > quarters(entry.depth, unit) + SAME_KEY_SLACK_PLIES * 4
                {
                    return;
                }
                let mut entry = entry;
                if entry.best_move.is_none() {
                    entry.best_move = old.best_move;
                }
                write(slot, key, entry, generation, unit);
                return;
            }
            if data == 0 && check == 0 {
                victim = i;
                victim_value = i32::MIN;
                continue;
            }
            let (old, old_generation, old_unit) = unpack(data);
            let age = (generation.wrapping_sub(old_generation) & GENERATION_MASK) as i32;
            let value = quarters(old.depth, old_unit) - AGE_PLIES * 4 * age;
            if value < victim_value {
                victim = i;
                victim_value = value;
            }
        }
        write(&bucket[victim], key, entry, generation, unit);
    }

    fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.buckets.iter().flat_map(|bucket| bucket.0.iter())
    }

    /// Permille of a sample of entries that hold data of any age.
    pub fn fill_permille(&self) -> u32 {
        let sample = self.capacity().min(4000);
        let used = self
            .slots()
            .take(sample)
            .filter(|slot| slot.data.load(Ordering::Relaxed) != 0)
            .count();
        (used * 1000 / sample) as u32
    }

    /// Empties the table (tests and benchmarks only: the service never clears it).
    pub fn clear(&self) {
        for slot in self.slots() {
            slot.data.store(0, Ordering::Relaxed);
            slot.key_xor_data.store(0, Ordering::Relaxed);
        }
    }
}

/// An entry's depth in quarter plies, whatever unit its writer counted.
#[inline]
fn quarters(depth: u8, unit: DepthUnit) -> i32 {
    depth as i32 * unit.quarters()
}

/// Key 0 would match an empty slot (0 ^ 0); remap it.
#[inline]
fn nonzero_key(key: u64) -> u64 {
    if key == 0 { 0x9E37_79B9_7F4A_7C15 } else { key }
}

#[inline]
fn write(slot: &Slot, key: u64, entry: Entry, generation: u8, unit: DepthUnit) {
    let data = pack(entry, generation, unit);
    slot.data.store(data, Ordering::Relaxed);
    slot.key_xor_data.store(key ^ data, Ordering::Relaxed);
}

// Layout of the data word: score (32 bits) | move (16) | depth (8) | bound (2) | quarter-ply
// depth (1) | generation (5). Bound codes start at 1, so no packed entry is ever 0 (the empty
// slot).
#[inline]
fn pack(entry: Entry, generation: u8, unit: DepthUnit) -> u64 {
    let bound = match entry.bound {
        Bound::Exact => 1u64,
        Bound::Lower => 2,
        Bound::Upper => 3,
    };
    (entry.score as u32 as u64) << 32
        | (entry.best_move.0 as u64) << 16
        | (entry.depth as u64) << 8
        | bound << (GENERATION_BITS + 1)
        | if unit == DepthUnit::QuarterPly {
            QUARTER_PLY_BIT
        } else {
            0
        }
        | (generation & GENERATION_MASK) as u64
}

#[inline]
fn unpack(data: u64) -> (Entry, u8, DepthUnit) {
    let bound = match (data >> (GENERATION_BITS + 1)) & 3 {
        1 => Bound::Exact,
        2 => Bound::Lower,
        _ => Bound::Upper,
    };
    let entry = Entry {
        score: (data >> 32) as u32 as i32,
        best_move: Move((data >> 16) as u16),
        depth: (data >> 8) as u8,
        bound,
    };
    let unit = if data & QUARTER_PLY_BIT != 0 {
        DepthUnit::QuarterPly
    } else {
        DepthUnit::Ply
    };
    (entry, data as u8 & GENERATION_MASK, unit)
}

/// Converts a root-relative win/loss score at `ply` into a node-relative one for storing.
#[inline]
pub fn score_to_table(score: Score, ply: usize) -> Score {
    if score >= MATE_BOUND {
        score + ply as Score
    } else if score <= -MATE_BOUND {
        score - ply as Score
    } else {
        score
    }
}

/// Inverse of [`score_to_table`] for a node met at `ply`.
#[inline]
pub fn score_from_table(score: Score, ply: usize) -> Score {
    if score >= MATE_BOUND {
        score - ply as Score
    } else if score <= -MATE_BOUND {
        score + ply as Score
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::game::WIN;

    fn entry(score: Score, depth: u8) -> Entry {
        Entry {
            score,
            best_move: Move(7),
            depth,
            bound: Bound::Lower,
        }
    }

    #[test]
    fn a_bound_settles_the_windows_on_its_side_and_an_exact_score_every_window() {
        assert!(Bound::Exact.settles(5, 10, 11));
        assert!(Bound::Lower.settles(11, 10, 11));
        assert!(!Bound::Lower.settles(10, 10, 11));
        assert!(Bound::Upper.settles(10, 10, 11));
        assert!(!Bound::Upper.settles(11, 10, 11));
    }

    #[test]
    fn an_entry_takes_sixteen_bytes() {
        assert_eq!(TranspositionTable::ENTRY_BYTES, 16);
    }

    #[test]
    fn stored_entries_read_back_exactly() {
        let table = TranspositionTable::with_megabytes(1);
        for (i, score) in [-WIN + 3, -17, 0, 42, WIN - 9].into_iter().enumerate() {
            let key = 0x1234_5678_9abc_def0 ^ (i as u64) << 40;
            let e = Entry {
                score,
                best_move: Move(i as u16),
                depth: i as u8 * 3,
                bound: Bound::Exact,
            };
            table.store(key, e);
            assert_eq!(table.probe(key), Some(e));
        }
    }

    #[test]
    fn a_missing_key_is_a_miss() {
        let table = TranspositionTable::with_megabytes(1);
        table.store(1, entry(5, 1));
        assert_eq!(table.probe(2), None);
    }

    #[test]
    fn key_zero_is_storable() {
        let table = TranspositionTable::with_megabytes(1);
        table.store(0, entry(5, 1));
        assert_eq!(table.probe(0), Some(entry(5, 1)));
    }

    #[test]
    fn replacement_prefers_fresh_entries_over_stale_deep_ones() {
        let table = TranspositionTable::with_buckets(1);
        for key in 1..=4u64 {
            table.store(key << 32, entry(1, 20));
        }
        for _ in 0..5 {
            table.new_search();
        }
        table.store(5 << 32, entry(1, 1));
        let survivors = (1..=5u64)
            .filter(|k| table.probe(k << 32).is_some())
            .count();
        assert_eq!(survivors, 4);
        assert!(
            table.probe(5 << 32).is_some(),
            "the fresh entry replaced a stale one"
        );
    }

    #[test]
    fn replacement_keeps_deeper_entries_of_the_same_age() {
        let table = TranspositionTable::with_buckets(1);
        for (key, depth) in [(1u64, 9u8), (2, 1), (3, 9), (4, 9)] {
            table.store(key << 32, entry(1, depth));
        }
        table.store(5 << 32, entry(1, 5));
        assert!(
            table.probe(2 << 32).is_none(),
            "the shallowest entry was the victim"
        );
        assert!(table.probe(5 << 32).is_some());
    }

    /// Whether `key` is in the table with the depth it was stored with.
    fn holds(table: &TranspositionTable, key: u64) -> bool {
        table.probe(key << 32).is_some()
    }

    #[test]
    fn replacement_weighs_quarter_ply_depths_as_the_plies_they_are() {
        // Raw, 5 > 8 would make the 5-ply entry the victim; in plies the 2-ply one is.
        let table = TranspositionTable::with_buckets(1);
        table.store_in(1 << 32, entry(1, 5), DepthUnit::Ply);
        table.store_in(2 << 32, entry(1, 8), DepthUnit::QuarterPly);
        table.store_in(3 << 32, entry(1, 9), DepthUnit::Ply);
        table.store_in(4 << 32, entry(1, 40), DepthUnit::QuarterPly);
        table.store_in(5 << 32, entry(1, 12), DepthUnit::QuarterPly);
        assert!(!holds(&table, 2), "the 2-ply entry was the victim");
        assert!(holds(&table, 1) && holds(&table, 3) && holds(&table, 4) && holds(&table, 5));
    }

    #[test]
    fn a_quarter_ply_entry_ages_eight_plies_a_search() {
        // 10 plies two searches ago is worth less than 3 plies now; raw, 40 - 16 would still
        // beat a fresh 3-ply entry, and one of the fresh entries would go instead.
        let table = TranspositionTable::with_buckets(1);
        table.store_in(1 << 32, entry(1, 40), DepthUnit::QuarterPly);
        table.new_search();
        table.new_search();
        for key in 2..=4u64 {
            table.store_in(key << 32, entry(1, 3), DepthUnit::Ply);
        }
        table.store_in(5 << 32, entry(1, 3), DepthUnit::Ply);
        assert!(!holds(&table, 1), "the stale deep entry was the victim");
        assert!((2..=5).all(|key| holds(&table, key)));
    }

    #[test]
    fn a_shallower_bound_of_the_same_position_keeps_an_entry_two_plies_deeper() {
        let table = TranspositionTable::with_buckets(1);
        let key = 7 << 32;
        table.store_in(key, entry(10, 24), DepthUnit::QuarterPly);
        // 6 plies against 3 plus the slack of 2: the deeper entry stays.
        table.store_in(key, entry(20, 12), DepthUnit::QuarterPly);
        assert_eq!(table.probe(key), Some(entry(10, 24)));
        // 6 plies against 4 plus 2: replaced.
        table.store_in(key, entry(30, 16), DepthUnit::QuarterPly);
        assert_eq!(table.probe(key), Some(entry(30, 16)));
    }

    #[test]
    fn the_depth_unit_and_generation_survive_packing() {
        for unit in [DepthUnit::Ply, DepthUnit::QuarterPly] {
            for generation in [0, 1, GENERATION_MASK] {
                let e = Entry {
                    score: -WIN + 5,
                    best_move: Move(u16::MAX - 1),
                    depth: u8::MAX,
                    bound: Bound::Upper,
                };
                assert_eq!(unpack(pack(e, generation, unit)), (e, generation, unit));
            }
        }
    }

    #[test]
    fn mate_scores_round_trip_through_the_table_at_any_ply() {
        let win_in_7 = WIN - 7;
        let stored = score_to_table(win_in_7, 3);
        assert_eq!(
            stored,
            WIN - 4,
            "node-relative: the win is 4 plies from the stored node"
        );
        assert_eq!(score_from_table(stored, 5), WIN - 9);
        assert_eq!(score_from_table(score_to_table(-win_in_7, 3), 3), -win_in_7);
        assert_eq!(score_from_table(score_to_table(123, 3), 9), 123);
    }

    #[test]
    fn a_torn_write_reads_as_a_miss_not_a_wrong_entry() {
        let table = TranspositionTable::with_buckets(1);
        let (key_a, key_b) = (0xAAAA_0000_0000_0001u64, 0xBBBB_0000_0000_0001u64);
        let a = entry(111, 3);
        let b = entry(-222, 4);
        table.store(key_a, a);
        // Simulate a writer for key_b that updated only the data word of key_a's slot.
        let slot = table
            .slots()
            .find(|s| s.data.load(Ordering::Relaxed) != 0)
            .unwrap();
        slot.data
            .store(pack(b, 0, DepthUnit::Ply), Ordering::Relaxed);
        assert_eq!(table.probe(key_a), None);
        assert_eq!(table.probe(key_b), None);
    }

    #[test]
    fn concurrent_writers_never_produce_a_mismatched_entry() {
        use std::sync::Arc;
        let table = Arc::new(TranspositionTable::with_buckets(2));
        // Each key's score is derived from the key, so any entry read back can be verified.
        let score_of = |key: u64| (key % 100_000) as Score;
        let threads: Vec<_> = (0..2u64)
            .map(|t| {
                let table = Arc::clone(&table);
                std::thread::spawn(move || {
                    let mut bad = 0;
                    for i in 0..200_000u64 {
                        let key = (i * 2 + t).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                        table.store(
                            key,
                            Entry {
                                score: score_of(key),
                                best_move: Move(1),
                                depth: 1,
                                bound: Bound::Exact,
                            },
                        );
                        let probe_key = (i * 2 + 1 - t).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                        if let Some(e) = table.probe(probe_key)
                            && e.score != score_of(probe_key)
                        {
                            bad += 1;
                        }
                    }
                    bad
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), 0);
        }
    }
}
