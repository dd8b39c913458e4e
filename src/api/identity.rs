//! Who a request is from: the one place that turns a request into the service's plain
//! [`ClientId`], which the admission's fair share and the per-client batch limit count by.
//!
//! - With API keys configured (`KIBITZ_API_KEYS_FILE`), every request to a route that does
//!   work or reads a batch must carry `Authorization: Bearer <key>` with one of them: the
//!   identity is the key's name and its class; a request without a valid key is refused `401`
//!   with `WWW-Authenticate: Bearer`. The probes, `/metrics`, `/games`, `/openapi.yaml` and the
//!   playground's files stay open ([`open_path`]): a kubelet or a Prometheus has no key, and
//!   none of them does work for a client.
//! - Without keys, the identity is the peer's address (an IPv6 address by its /64, the block
//!   one host is usually given); from a trusted proxy (`KIBITZ_TRUSTED_PROXIES`, CIDRs), the
//!   address that proxy forwarded (`Forwarded: for=`, else `X-Forwarded-For`), read from the
//!   right and skipping the trusted proxies in the chain, since only the part written by a
//!   proxy we trust can be believed.
//!
//! No header chosen by the client names its identity otherwise: `X-Client-Id` is not read.
//! Keys are compared as SHA-256 digests, in constant time, over every key, so neither the
//! comparison nor which key matched shows in the time of an answer; the raw key is never
//! kept, logged or used as a metric label (the class is the label).

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ipnet::IpNet;
use subtle::ConstantTimeEq;

use super::{ApiError, AppState};
use crate::service::caller::{Caller, ClientId};
use crate::service::pool::Standing;

/// The shortest and longest key accepted in the keys file.
pub const KEY_CHARS: std::ops::RangeInclusive<usize> = 16..=256;
/// The most keys a file may hold (each request compares against every one).
pub const MAX_KEYS: usize = 10_000;
/// The class of clients known by their address (no keys configured).
pub const ADDRESS_CLASS: &str = "address";

/// One configured key, kept as its digest.
struct Key {
    digest: [u8; 32],
    client: ClientId,
}

/// The configured API keys (none: identity by address).
#[derive(Default)]
pub struct ApiKeys {
    keys: Vec<Key>,
}

impl ApiKeys {
    /// Reads the keys file: one key a line, `<key> [<name> [<class>]]` separated by white
    /// space; blank lines and lines starting with `#` are skipped. A key is 16 to 256
    /// characters of `A-Z a-z 0-9 - . _ ~ + / =` (RFC 6750's token characters); a name and a
    /// class 1 to 64 of `A-Z a-z 0-9 - . _`. A key's name defaults to
    /// `key-` and the first 8 hex digits of its digest, its class to `default`.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("KIBITZ_API_KEYS_FILE {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("KIBITZ_API_KEYS_FILE {}: {e}", path.display()))
    }

    /// Parses a keys file's text (see [`ApiKeys::load`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut keys: Vec<Key> = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = number + 1;
            let mut words = line.split_whitespace();
            let key = words.next().unwrap_or_default();
            if !KEY_CHARS.contains(&key.chars().count()) || !key.bytes().all(is_token_byte) {
                return Err(format!(
                    "line {at}: a key must be {} to {} characters of A-Z a-z 0-9 - . _ ~ + / =",
                    KEY_CHARS.start(),
                    KEY_CHARS.end()
                ));
            }
            let digest = sha256(key.as_bytes());
            let default_name = format!("key-{}", hex8(&digest));
            let name = words.next().unwrap_or(&default_name);
            let class = words.next().unwrap_or("default");
            for (what, word) in [("name", name), ("class", class)] {
                if !is_label(word) {
                    return Err(format!(
                        "line {at}: a key's {what} must be 1 to 64 of A-Z a-z 0-9 - . _"
                    ));
                }
            }
            if words.next().is_some() {
                return Err(format!(
                    "line {at}: expected `<key> [<name> [<class>]]`, found more words"
                ));
            }
            if keys.iter().any(|k| k.digest == digest) {
                return Err(format!("line {at}: this key is given twice"));
            }
            if keys.iter().any(|k| &*k.client.name == name) {
                return Err(format!("line {at}: the name {name} is given to two keys"));
            }
            keys.push(Key {
                digest,
                client: ClientId::new(name, class),
            });
            if keys.len() > MAX_KEYS {
                return Err(format!("more than {MAX_KEYS} keys"));
            }
        }
        if keys.is_empty() {
            return Err("no key in the file (an empty file would turn every request away)".into());
        }
        Ok(ApiKeys { keys })
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The client whose key `presented` is, compared with every key in constant time.
    fn find(&self, presented: &str) -> Option<&ClientId> {
        let digest = sha256(presented.as_bytes());
        let mut found = None;
        for key in &self.keys {
            if bool::from(key.digest.ct_eq(&digest)) {
                found = Some(&key.client);
            }
        }
        found
    }
}

/// How this server tells who a request is from (see the module doc). Read-only after start.
#[derive(Default)]
pub struct Identities {
    pub keys: ApiKeys,
    /// Proxies whose forwarded address is believed.
    pub trusted_proxies: Vec<IpNet>,
}

impl Identities {
    /// The identity of a request from `peer` with `headers`, or why it is refused.
    pub fn identify(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Result<ClientId, Refusal> {
        if !self.keys.is_empty() {
            let Some(value) = headers.get(header::AUTHORIZATION) else {
                return Err(Refusal::NoKey);
            };
            let token = value
                .to_str()
                .ok()
                .and_then(|v| v.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token.trim());
            return token
                .and_then(|token| self.keys.find(token))
                .cloned()
                .ok_or(Refusal::BadKey);
        }
        let address = peer.map(|peer| self.forwarded_for(peer, headers));
        Ok(ClientId::new(
            address.map_or_else(|| "unknown".to_owned(), client_name),
            ADDRESS_CLASS,
        ))
    }

    fn trusted(&self, address: IpAddr) -> bool {
        self.trusted_proxies
            .iter()
            .any(|net| net.contains(&address))
    }

    /// The client's address: `peer`, or, when `peer` is a trusted proxy, the rightmost address
    /// of the forwarded chain that is not itself a trusted proxy (a chain that does not parse
    /// leaves `peer`: the proxy, which then answers for what it sent).
    fn forwarded_for(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusted(peer) {
            return peer;
        }
        let chain = forwarded_chain(headers);
        let Some(chain) = chain else { return peer };
        let mut client = peer;
        for address in chain.iter().rev() {
            client = *address;
            if !self.trusted(*address) {
                break;
            }
        }
        client
    }
}

/// Why a request has no identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    NoKey,
    BadKey,
}

/// The addresses a proxy forwarded, left (first client) to right (last proxy): from
/// `Forwarded` (RFC 7239) if present, else `X-Forwarded-For`; `None` if neither is there or
/// an element is not an address (an obfuscated or `unknown` node included).
fn forwarded_chain(headers: &HeaderMap) -> Option<Vec<IpAddr>> {
    let forwarded: Vec<&str> = headers
        .get_all(header::FORWARDED)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if !forwarded.is_empty() {
        let mut chain = Vec::new();
        for element in forwarded.iter().flat_map(|v| v.split(',')) {
            let node = element.split(';').find_map(|pair| {
                let (name, value) = pair.trim().split_once('=')?;
                name.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| value.trim())
            })?;
            chain.push(parse_node(node.trim_matches('"'))?);
        }
        return (!chain.is_empty()).then_some(chain);
    }
    let listed: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if listed.is_empty() {
        return None;
    }
    listed
        .iter()
        .flat_map(|v| v.split(','))
        .map(|node| parse_node(node.trim()))
        .collect()
}

/// An address as a proxy writes it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1` or
/// `[2001:db8::1]:4711`.
fn parse_node(node: &str) -> Option<IpAddr> {
    if let Ok(address) = node.parse::<IpAddr>() {
        return Some(address);
    }
    if let Ok(socket) = node.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    let inner = node.strip_prefix('[')?.split(']').next()?;
    inner.parse().ok()
}

/// The identity's name for an address: IPv4 as it is, IPv6 by its /64.
fn client_name(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let segments = v6.segments();
                let prefix = std::net::Ipv6Addr::new(
                    segments[0],
                    segments[1],
                    segments[2],
                    segments[3],
                    0,
                    0,
                    0,
                    0,
                );
                format!("{prefix}/64")
            }
        },
    }
}

/// Paths open without a key: probes, metrics, the API's description and the playground's
/// files (its calls to the API need a key like any other client's).
pub fn open_path(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/readyz" | "/metrics" | "/openapi.yaml" | "/games" | "/"
    ) || path.starts_with("/playground/")
}

/// The layer that identifies every request (see the module doc): the [`ClientId`] goes into
/// the request's extensions for the handlers, or the request is answered 401.
pub async fn identify(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    match state.identities.identify(peer, request.headers()) {
        Ok(client) => {
            request.extensions_mut().insert(client);
            next.run(request).await
        }
        // A CORS preflight carries no credentials (browsers never send them on it).
        Err(_) if open_path(request.uri().path()) || request.method() == Method::OPTIONS => {
            next.run(request).await
        }
        Err(refusal) => ApiError::Unauthorized {
            detail: match refusal {
                Refusal::NoKey => {
                    "this server needs an API key: send `Authorization: Bearer <key>`".into()
                }
                Refusal::BadKey => "the API key sent is not one of this server's".into(),
            },
            invalid_token: refusal == Refusal::BadKey,
        }
        .into_response(),
    }
}

/// The client's standing against its fair share of the search workers, for an answer's
/// `RateLimit` headers: the one admission computed when it admitted the answer's search (the
/// search counted, so `remaining` is what was left beside it), or, when no search was admitted
/// for it (an answer from this replica's cache or the shared one; a review whose first plies
/// came from a cache), the client's standing now, nothing consumed.
pub fn standing_of(state: &AppState, caller: &Caller) -> Standing {
    caller
        .standing
        .get()
        .copied()
        .unwrap_or_else(|| state.service.pool().standing(&caller.client.name))
}

/// `response` with the `RateLimit-Policy` and `RateLimit` headers of `standing`, the client's
/// fair share of the search workers (policy `searches`, quota and remaining in concurrent
/// searches).
pub fn with_standing(mut response: Response, standing: Standing) -> Response {
    let limit = super::error::RateLimit {
        policy: "searches",
        quota: standing.quota as u64,
        remaining: standing.remaining as u64,
    };
    // A unit comes back when one of the client's searches ends: within its budget, so within
    // a second for most. A client holding none has nothing coming back: no `t`.
    let reset = (standing.remaining < standing.quota).then_some(std::time::Duration::from_secs(1));
    response.headers_mut().extend(limit.headers(reset));
    response
}

/// The client a handler's request is from (set by [`identify`]; a request that did not pass
/// it, such as a test's handler called directly, counts as one unknown client).
pub fn client_of(extension: Option<axum::Extension<ClientId>>) -> ClientId {
    extension.map_or_else(
        || ClientId::new("unknown", ADDRESS_CLASS),
        |client| client.0,
    )
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

fn is_label(word: &str) -> bool {
    (1..=64).contains(&word.len())
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

fn hex8(digest: &[u8; 32]) -> String {
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// The keys of the file at `path`, when one is configured (an error names the line).
pub fn keys_from(path: Option<&Path>) -> Result<ApiKeys, String> {
    path.map_or_else(|| Ok(ApiKeys::default()), ApiKeys::load)
}

/// The identities as configured (the keys read from their file).
pub fn from_config(config: &crate::config::Config) -> Result<Arc<Identities>, String> {
    Ok(Arc::new(Identities {
        keys: keys_from(config.api_keys_file.as_deref())?,
        trusted_proxies: config.trusted_proxies.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    const KEYS: &str = "# team keys\n\
                        0123456789abcdef0123 alice partner\n\
                        \n\
                        fedcba9876543210fedc\n";

    #[test]
    fn a_key_names_its_client_and_class_and_anything_else_is_refused() {
        let ids = Identities {
            keys: ApiKeys::parse(KEYS).unwrap(),
            trusted_proxies: Vec::new(),
        };
        let alice = ids
            .identify(
                None,
                &with(&[("authorization", "Bearer 0123456789abcdef0123")]),
            )
            .unwrap();
        assert_eq!((&*alice.name, &*alice.class), ("alice", "partner"));
        let other = ids
            .identify(
                None,
                &with(&[("authorization", "bearer fedcba9876543210fedc")]),
            )
            .unwrap();
        assert!(
            other.name.starts_with("key-") && other.name.len() == 12,
            "{other:?}"
        );
        assert_eq!(&*other.class, "default");
        assert_eq!(ids.identify(None, &with(&[])), Err(Refusal::NoKey));
        for wrong in [
            "Bearer 0123456789abcdef012",
            "Bearer 0123456789abcdef01234",
            "Basic 0123456789abcdef0123",
            "Bearer",
        ] {
            assert_eq!(
                ids.identify(Some(ip("192.0.2.1")), &with(&[("authorization", wrong)])),
                Err(Refusal::BadKey),
                "{wrong}"
            );
        }
        // With keys, the client-chosen header names nobody.
        assert_eq!(
            ids.identify(None, &with(&[("x-client-id", "alice")])),
            Err(Refusal::NoKey)
        );
    }

    #[test]
    fn a_bad_keys_file_is_refused_naming_the_line() {
        for (text, says) in [
            ("short", "line 1: a key must be 16 to 256"),
            ("0123456789abcdef0123 al!ce", "line 1: a key's name"),
            ("0123456789abcdef0123 a b c", "found more words"),
            (
                "0123456789abcdef0123 a\n0123456789abcdef0123 b",
                "line 2: this key is given twice",
            ),
            (
                "0123456789abcdef0123 a\nfedcba9876543210fedc a",
                "line 2: the name a",
            ),
            ("# nothing\n", "no key"),
        ] {
            let error = ApiKeys::parse(text).err().unwrap_or_default();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn without_keys_the_peer_is_the_client_and_a_forwarded_address_counts_only_from_a_trusted_proxy()
     {
        let ids = Identities {
            keys: ApiKeys::default(),
            trusted_proxies: vec!["10.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()],
        };
        let name = |peer: &str, headers: &[(&str, &str)]| {
            ids.identify(Some(ip(peer)), &with(headers))
                .unwrap()
                .name
                .to_string()
        };
        let forged = [("x-forwarded-for", "203.0.113.9"), ("x-client-id", "other")];
        assert_eq!(name("198.51.100.7", &forged), "198.51.100.7");
        assert_eq!(name("10.1.2.3", &forged), "203.0.113.9");
        // The chain is read from the right: what the client itself wrote on the left is not
        // believed past the first address a trusted proxy added.
        let chain = [("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.9.9.9")];
        assert_eq!(name("10.1.2.3", &chain), "203.0.113.9");
        let forwarded = [("forwarded", "for=\"[2001:db8:1:2::17]:4711\";proto=https")];
        assert_eq!(name("::1", &forwarded), "2001:db8:1:2::/64");
        assert_eq!(
            name("10.0.0.1", &[("forwarded", "for=_hidden")]),
            "10.0.0.1"
        );
        assert_eq!(name("::ffff:192.0.2.4", &[]), "192.0.2.4");
        let class = ids
            .identify(Some(ip("192.0.2.4")), &with(&[]))
            .unwrap()
            .class;
        assert_eq!(&*class, ADDRESS_CLASS);
    }
}
