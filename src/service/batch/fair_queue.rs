//! A queue served round-robin between clients: each client's items keep their order, and the
//! clients take turns, one item a turn. The in-process store keeps one per priority, so a
//! client's thousand-item batch queued first delays another client's batch by at most one item
//! a turn instead of the whole thousand.
//!
//! A client is in the rotation while it has queued items; one that runs out leaves it and,
//! when it queues again, joins at the back (it cannot save turns up while idle).

use std::collections::{HashMap, VecDeque};

/// Items of type `T` queued per client, served round-robin (see the module doc).
#[derive(Debug)]
pub struct FairQueue<T> {
    /// Clients with queued items, the next to be served first.
    turns: VecDeque<String>,
    /// Each client's items in their order; never an empty queue.
    items: HashMap<String, VecDeque<T>>,
}

impl<T> Default for FairQueue<T> {
    fn default() -> Self {
        FairQueue {
            turns: VecDeque::new(),
            items: HashMap::new(),
        }
    }
}

impl<T> FairQueue<T> {
    /// Queues `item` behind `client`'s others.
    pub fn push_back(&mut self, client: &str, item: T) {
        self.queue_of(client).push_back(item);
    }

    /// Queues `item` before `client`'s others (an item given back unrun keeps its place in its
    /// client's order; its client's turn is not moved forward).
    pub fn push_front(&mut self, client: &str, item: T) {
        self.queue_of(client).push_front(item);
    }

    fn queue_of(&mut self, client: &str) -> &mut VecDeque<T> {
        if !self.items.contains_key(client) {
            self.turns.push_back(client.to_owned());
        }
        self.items.entry(client.to_owned()).or_default()
    }

    /// The first item of the client whose turn it is; that client's turn goes to the back.
    pub fn pop(&mut self) -> Option<T> {
        let client = self.turns.pop_front()?;
        let queue = self.items.get_mut(&client)?;
        let item = queue.pop_front();
        if queue.is_empty() {
            self.items.remove(&client);
        } else {
            self.turns.push_back(client);
        }
        item
    }

    /// Keeps only the items `keep` says to keep; clients left with none leave the rotation.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.items.retain(|_, queue| {
            queue.retain(&mut keep);
            !queue.is_empty()
        });
        let items = &self.items;
        self.turns.retain(|client| items.contains_key(client));
    }

    /// Items queued, every client's.
    pub fn len(&self) -> usize {
        self.items.values().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(queue: &mut FairQueue<(char, u32)>) -> Vec<(char, u32)> {
        std::iter::from_fn(|| queue.pop()).collect()
    }

    #[test]
    fn clients_take_turns_whatever_order_they_queued_in() {
        let mut queue = FairQueue::default();
        for i in 0..5 {
            queue.push_back("flood", ('f', i));
        }
        queue.push_back("polite", ('p', 0));
        queue.push_back("polite", ('p', 1));
        assert_eq!(queue.len(), 7);
        // In queue order (first come, first served) the polite client would come 6th and 7th.
        assert_eq!(
            drain(&mut queue),
            [
                ('f', 0),
                ('p', 0),
                ('f', 1),
                ('p', 1),
                ('f', 2),
                ('f', 3),
                ('f', 4)
            ]
        );
        assert!(queue.is_empty());
    }

    #[test]
    fn a_client_that_joins_late_waits_one_round_at_most() {
        let mut queue = FairQueue::default();
        for i in 0..4 {
            queue.push_back("a", ('a', i));
            queue.push_back("b", ('b', i));
        }
        assert_eq!(queue.pop(), Some(('a', 0)));
        queue.push_back("c", ('c', 0));
        // c joins the rotation at its back: one item of each client before it, not all of a's
        // and b's.
        assert_eq!(queue.pop(), Some(('b', 0)));
        assert_eq!(queue.pop(), Some(('a', 1)));
        assert_eq!(queue.pop(), Some(('c', 0)));
        assert_eq!(queue.pop(), Some(('b', 1)));
    }

    #[test]
    fn an_item_given_back_runs_before_its_client_s_others_but_takes_no_extra_turn() {
        let mut queue = FairQueue::default();
        queue.push_back("a", ('a', 0));
        queue.push_back("a", ('a', 1));
        queue.push_back("b", ('b', 0));
        let taken = queue.pop();
        assert_eq!(taken, Some(('a', 0)));
        queue.push_front("a", ('a', 0));
        assert_eq!(drain(&mut queue), [('b', 0), ('a', 0), ('a', 1)]);
    }

    #[test]
    fn retain_drops_items_and_clients_left_with_none() {
        let mut queue = FairQueue::default();
        queue.push_back("a", ('a', 0));
        queue.push_back("b", ('b', 0));
        queue.push_back("b", ('b', 1));
        queue.push_back("c", ('c', 0));
        queue.retain(|&(client, _)| client != 'b');
        assert_eq!(queue.len(), 2);
        assert_eq!(drain(&mut queue), [('a', 0), ('c', 0)]);
        // A client whose items were all dropped joins at the back when it queues again.
        queue.push_back("a", ('a', 1));
        queue.push_back("b", ('b', 2));
        queue.retain(|&(_, i)| i != 1);
        assert_eq!(drain(&mut queue), [('b', 2)]);
    }
}
