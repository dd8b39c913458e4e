//! The playground: a web page at `GET /` to play every game against kibitz and to watch it
//! think (heat maps, principal variation, minimax against alpha-beta, teaching trees).
//!
//! The key idea is that the page is part of the binary, not a deployment of its own: its few
//! files (plain HTML, CSS and JavaScript, no build step) are compiled in with `include_str!`,
//! and the page talks only to this server's own API. The Content-Security-Policy sent with
//! every file says so to the browser (`'self'` and nothing else), so the page works offline,
//! and a request to any other host is refused by the browser rather than made. Files are sent
//! with `Cache-Control: no-cache` and a strong `ETag` made from their bytes: a browser keeps
//! them and revalidates (a `304` without body), and an upgraded binary is never mixed with a
//! stale script.

use std::net::SocketAddr;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// What the browser may load and from where: this origin only; no inline script or style, no
/// frames, no plugins, no form posts elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// One embedded file of the page.
pub struct Asset {
    /// The URL path it is served at.
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
}

/// Every file of the page, `GET /` first.
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("playground/index.html"),
    },
    Asset {
        path: "/playground/style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("playground/style.css"),
    },
    Asset {
        path: "/playground/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("playground/app.js"),
    },
    Asset {
        path: "/playground/tree.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("playground/tree.js"),
    },
    Asset {
        path: "/playground/icon.svg",
        content_type: "image/svg+xml",
        body: include_str!("playground/icon.svg"),
    },
];

/// The bytes of every file together: the page's weight, as docs/playground.md reports it.
pub fn total_bytes() -> usize {
    ASSETS.iter().map(|a| a.body.len()).sum()
}

/// A strong validator for `body`: 64-bit FNV-1a of its bytes, quoted. Collisions only cost a
/// stale file after an upgrade, and FNV is enough against accidents (nobody forges our own
/// assets).
fn etag(body: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in body.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("\"{hash:016x}\"")
}

/// Serves one asset, or `304` when the browser's copy is current.
fn serve(asset: &'static Asset, request_headers: &HeaderMap) -> Response {
    let tag = etag(asset.body);
    let current = request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    if current {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    (headers, asset.body).into_response()
}

/// `GET /`: the page.
pub async fn page(headers: HeaderMap) -> Response {
    serve(&ASSETS[0], &headers)
}

/// `GET /playground/style.css`.
pub async fn style(headers: HeaderMap) -> Response {
    serve(&ASSETS[1], &headers)
}

/// `GET /playground/app.js`: games, heat map, search report, minimax against alpha-beta.
pub async fn app_script(headers: HeaderMap) -> Response {
    serve(&ASSETS[2], &headers)
}

/// `GET /playground/tree.js`: the teaching-tree view.
pub async fn tree_script(headers: HeaderMap) -> Response {
    serve(&ASSETS[3], &headers)
}

/// `GET /playground/icon.svg`: the tab icon (served, so the browser asks for no `favicon.ico`).
pub async fn icon(headers: HeaderMap) -> Response {
    serve(&ASSETS[4], &headers)
}

/// The page's address for the start-up log: an unspecified listen address (`0.0.0.0`, `::`)
/// is reached locally through loopback.
pub fn page_url(addr: SocketAddr) -> String {
    let host = match addr.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_owned(),
        ip if ip.is_unspecified() => "[::1]".to_owned(),
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    format!("http://{host}:{}/", addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_url_of_an_unspecified_address_is_loopback() {
        let addr: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(page_url(addr), "http://127.0.0.1:8080/");
    }

    #[test]
    fn the_page_url_brackets_an_ipv6_host() {
        let addr: SocketAddr = "[::1]:9000".parse().unwrap();
        assert_eq!(page_url(addr), "http://[::1]:9000/");
    }

    #[test]
    fn the_page_names_no_other_host() {
        for asset in ASSETS {
            for scheme in ["http://", "https://", "//fonts."] {
                let hits: Vec<&str> = asset
                    .body
                    .match_indices(scheme)
                    .map(|(i, _)| &asset.body[i..(i + 40).min(asset.body.len())])
                    // The SVG namespace is a name, not a request.
                    .filter(|s| !s.starts_with("http://www.w3.org/"))
                    .collect();
                assert!(hits.is_empty(), "{}: {hits:?}", asset.path);
            }
        }
    }
}
