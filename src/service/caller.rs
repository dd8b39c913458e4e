//! Who a piece of work is for, as the API established it, and how it is admitted: the plain
//! values the service's admission reads (the client's identity for its fair share of the
//! workers, and whether the work yields its worker to interactive requests). The API derives
//! the identity; the service never sees a header.

use std::sync::{Arc, OnceLock};

use super::pool::{Claim, Standing, Yielding};

/// The identity of a client: what fair share and per-client limits count by. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientId {
    /// Unique per client: an API key's name, or the client's address. Never a raw key.
    pub name: Arc<str>,
    /// A small, fixed set of classes (an API key's class, `address` without keys), the only
    /// label metrics carry: never the name, whose values are unbounded.
    pub class: Arc<str>,
}

impl ClientId {
    pub fn new(name: impl Into<Arc<str>>, class: impl Into<Arc<str>>) -> Self {
        ClientId {
            name: name.into(),
            class: class.into(),
        }
    }
}

impl Default for ClientId {
    /// The client of work the server starts itself and of tests that name none.
    fn default() -> Self {
        ClientId::new("local", "local")
    }
}

/// Who asked, and how the work is admitted.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    pub client: ClientId,
    /// Set for background work (a batch item): it gives its worker back when an interactive
    /// request needs it ([`Yielding`]), and is run again later.
    pub yielding: Option<Arc<Yielding>>,
    /// The client's standing against its fair share, written by admission when it admits
    /// this caller's interactive work (for the answer's `RateLimit` headers).
    pub standing: Arc<OnceLock<Standing>>,
}

impl Caller {
    /// An interactive request from `client`.
    pub fn interactive(client: ClientId) -> Self {
        Caller {
            client,
            yielding: None,
            standing: Arc::default(),
        }
    }

    /// How the pool admits this caller's work: background work yields through its own
    /// [`Yielding`]; an interactive request gets a fresh one, used only if the pool admits it
    /// beyond its client's fair share.
    pub fn claim(&self) -> Claim {
        match &self.yielding {
            Some(yielding) => Claim {
                client: Some(std::sync::Arc::clone(&self.client.name)),
                class: Some(std::sync::Arc::clone(&self.client.class)),
                yielding: Some(std::sync::Arc::clone(yielding)),
                background: true,
                standing: None,
            },
            None => Claim {
                client: Some(std::sync::Arc::clone(&self.client.name)),
                class: Some(std::sync::Arc::clone(&self.client.class)),
                yielding: Some(Yielding::interactive()),
                background: false,
                standing: Some(Arc::clone(&self.standing)),
            },
        }
    }

    /// Background work for `client`, with a fresh [`Yielding`].
    pub fn background(client: ClientId) -> Self {
        Caller {
            client,
            yielding: Some(Yielding::new()),
            standing: Arc::default(),
        }
    }
}
