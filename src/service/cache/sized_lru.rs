//! An LRU map bounded twice: by its number of entries and by the bytes its values are reckoned
//! to take. Both the answer cache and the answer-body cache (`api::answer_bodies`) are one.
//!
//! The caller gives each value its size (an estimate for an answer, the exact length for a
//! body); storing adds it, and least recently used entries are evicted until the total fits
//! again. A value larger than the whole budget is refused rather than emptying the map for it.

use std::hash::Hash;
use std::num::NonZeroUsize;

use lru::LruCache;

struct Entry<V> {
    value: V,
    bytes: usize,
}

/// See the module documentation. Not synchronised: each cache keeps one behind its mutex.
pub struct SizedLru<K, V> {
    entries: LruCache<K, Entry<V>>,
    /// The sum of the entries' sizes.
    bytes: usize,
    max_bytes: usize,
}

impl<K: Hash + Eq, V> SizedLru<K, V> {
    /// A map of at most `max_entries` entries whose sizes add up to at most `max_bytes`.
    pub fn new(max_entries: NonZeroUsize, max_bytes: usize) -> Self {
        SizedLru {
            entries: LruCache::new(max_entries),
            bytes: 0,
            max_bytes,
        }
    }

    /// The value under `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|entry| &entry.value)
    }

    /// Stores `value`, reckoned at `bytes`, under `key` (replacing what was there), then evicts
    /// the least recently used entries until the sizes fit. A value over the whole budget is
    /// not stored.
    pub fn put(&mut self, key: K, value: V, bytes: usize) {
        if bytes > self.max_bytes {
            return;
        }
        // `push` hands back the replaced entry, or the one evicted for the entry limit.
        if let Some((_, old)) = self.entries.push(key, Entry { value, bytes }) {
            self.bytes -= old.bytes;
        }
        self.bytes += bytes;
        while self.bytes > self.max_bytes {
            match self.entries.pop_lru() {
                Some((_, old)) => self.bytes -= old.bytes,
                None => break,
            }
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The sum of the held entries' sizes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lru(entries: usize, bytes: usize) -> SizedLru<u32, &'static str> {
        SizedLru::new(NonZeroUsize::new(entries).unwrap(), bytes)
    }

    #[test]
    fn the_least_recently_used_entries_go_until_the_bytes_fit() {
        let mut map = lru(10, 100);
        map.put(1, "a", 40);
        map.put(2, "b", 40);
        assert_eq!(map.get(&1).copied(), Some("a")); // 2 is now the least recently used
        map.put(3, "c", 40);
        assert_eq!(
            (map.get(&2).copied(), map.len(), map.bytes()),
            (None, 2, 80)
        );
        assert_eq!(
            (map.get(&1).copied(), map.get(&3).copied()),
            (Some("a"), Some("c"))
        );
    }

    #[test]
    fn the_entry_limit_evicts_too_and_its_bytes_are_given_back() {
        let mut map = lru(2, 100);
        map.put(1, "a", 10);
        map.put(2, "b", 20);
        map.put(3, "c", 30);
        assert_eq!(
            (map.get(&1).copied(), map.len(), map.bytes()),
            (None, 2, 50)
        );
    }

    #[test]
    fn a_replaced_value_counts_its_new_size_only() {
        let mut map = lru(10, 100);
        map.put(1, "a", 60);
        map.put(1, "b", 30);
        assert_eq!(
            (map.get(&1).copied(), map.len(), map.bytes()),
            (Some("b"), 1, 30)
        );
    }

    #[test]
    fn a_value_over_the_whole_budget_is_refused_and_evicts_nothing() {
        let mut map = lru(10, 100);
        map.put(1, "a", 50);
        map.put(2, "b", 101);
        assert_eq!(
            (map.get(&2).copied(), map.get(&1).copied(), map.bytes()),
            (None, Some("a"), 50)
        );
    }
}
