//! The playground page as HTTP sees it: `GET /` and the files the page names, their
//! content types, the Content-Security-Policy that keeps the page on this server, revalidation
//! with `ETag`, and the openapi.yaml entries of these routes. What the page does in a browser
//! is tested by `tests/browser/` (run by `.ci/browser`).

use axum::body::Body;
use axum::http::Request;
use kibitz::api::app;
use kibitz::api::playground::{ASSETS, CONTENT_SECURITY_POLICY};
use serde_json::Value;

use crate::service::common::*;

/// Follows a local `$ref` (`#/components/...`); a dangling one fails the test.
fn resolve(value: &Value) -> &Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => spec()
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling {reference}")),
        None => value,
    }
}

/// The local paths an HTML text loads with `src="/..."` or `href="/..."`.
fn local_references(html: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for attribute in ["src=\"", "href=\""] {
        for (at, _) in html.match_indices(attribute) {
            let rest = &html[at + attribute.len()..];
            let end = rest.find('"').expect("closed attribute");
            if rest.starts_with('/') {
                paths.push(rest[..end].to_owned());
            }
        }
    }
    paths
}

#[tokio::test]
async fn the_page_is_served_at_the_root_as_html() {
    let reply = get(&state(), "/").await;
    assert_eq!(reply.status, 200);
    assert_eq!(content_type(&reply), "text/html; charset=utf-8");
    assert!(reply.text.starts_with("<!doctype html>"));
    assert!(reply.text.contains(r#"data-game="tree""#));
}

#[tokio::test]
async fn every_file_the_page_loads_is_served_with_its_content_type() {
    let state = state();
    let page = get(&state, "/").await;
    let references = local_references(&page.text);
    assert!(references.len() >= 4, "{references:?}");
    for path in references {
        let reply = get(&state, &path).await;
        assert_eq!(reply.status, 200, "{path}");
        let expected = match path.rsplit('.').next() {
            Some("css") => "text/css; charset=utf-8",
            Some("js") => "text/javascript; charset=utf-8",
            Some("svg") => "image/svg+xml",
            Some("yaml") => "application/yaml",
            _ => "application/json",
        };
        assert_eq!(content_type(&reply), expected, "{path}");
    }
}

#[tokio::test]
async fn every_file_carries_the_content_security_policy_and_cache_headers() {
    let state = state();
    for asset in ASSETS {
        let reply = get(&state, asset.path).await;
        let header = |name: &str| {
            reply
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(
            header("content-security-policy"),
            CONTENT_SECURITY_POLICY,
            "{}",
            asset.path
        );
        assert_eq!(header("cache-control"), "no-cache", "{}", asset.path);
        assert_eq!(
            header("x-content-type-options"),
            "nosniff",
            "{}",
            asset.path
        );
        assert!(header("etag").starts_with('"'), "{}", asset.path);
    }
}

#[test]
fn the_content_security_policy_allows_no_other_host() {
    for directive in CONTENT_SECURITY_POLICY.split(';') {
        let mut words = directive.split_whitespace();
        let name = words.next().expect("a directive name");
        for source in words {
            assert!(
                source == "'self'" || source == "'none'",
                "{name} allows {source}"
            );
        }
    }
    assert!(CONTENT_SECURITY_POLICY.contains("default-src 'none'"));
}

#[tokio::test]
async fn a_file_the_browser_already_has_is_answered_304_without_body() {
    let state = state();
    let first = get(&state, "/playground/app.js").await;
    let tag = first.headers["etag"].to_str().unwrap().to_owned();
    let request = Request::get("/playground/app.js")
        .header("if-none-match", &tag)
        .body(Body::empty())
        .unwrap();
    let again = send(app(state.clone()), request).await;
    assert_eq!(again.status, 304);
    assert!(again.text.is_empty());
    assert_eq!(again.headers["etag"].to_str().unwrap(), tag);
}

#[tokio::test]
async fn every_file_is_sent_with_a_strong_etag_of_its_own_that_stays_the_same() {
    // The tags the server sends, not ones computed beside it: files that shared a tag would
    // keep a browser on a stale copy of one of them.
    let state = state();
    let mut tags = Vec::new();
    for asset in ASSETS {
        let first = get(&state, asset.path).await;
        let tag = first.headers["etag"].to_str().unwrap().to_owned();
        assert!(
            tag.len() > 2 && tag.starts_with('"') && tag.ends_with('"'),
            "{}: {tag} is not a strong validator",
            asset.path
        );
        let again = get(&state, asset.path).await;
        assert_eq!(
            again.headers["etag"].to_str().unwrap(),
            tag,
            "{}",
            asset.path
        );
        tags.push(tag);
    }
    let distinct: std::collections::HashSet<&String> = tags.iter().collect();
    assert_eq!(distinct.len(), ASSETS.len(), "{tags:?}");
}

#[tokio::test]
async fn a_stale_copy_is_sent_again() {
    let request = Request::get("/playground/style.css")
        .header("if-none-match", "\"0000000000000000\"")
        .body(Body::empty())
        .unwrap();
    let reply = send(app(state()), request).await;
    assert_eq!(reply.status, 200);
    assert!(!reply.text.is_empty());
}

#[tokio::test]
async fn posting_to_the_page_is_a_405_problem() {
    let reply = post_move_to(&state(), "/").await;
    assert_eq!(reply.status, 405);
    assert_eq!(content_type(&reply), "application/problem+json");
    let allow = reply.headers["allow"].to_str().unwrap();
    assert!(allow.contains("GET"), "{allow}");
}

async fn post_move_to(state: &kibitz::api::AppState, path: &str) -> Reply {
    send(
        app(state.clone()),
        post_json_request(path, &serde_json::json!({})),
    )
    .await
}

#[tokio::test]
async fn an_unknown_playground_file_is_a_404_problem() {
    let reply = get(&state(), "/playground/missing.js").await;
    assert_eq!(reply.status, 404);
    assert_eq!(content_type(&reply), "application/problem+json");
}

#[tokio::test]
async fn openapi_documents_every_playground_file_with_its_media_type_and_headers() {
    let state = state();
    for asset in ASSETS {
        let operation = &spec()["paths"][asset.path]["get"];
        assert!(operation.is_object(), "GET {} undocumented", asset.path);
        let ok = &operation["responses"]["200"];
        let media = asset.content_type.split(';').next().unwrap();
        assert!(
            ok["content"][media].is_object(),
            "{}: {media} undocumented",
            asset.path
        );
        let not_modified = resolve(&operation["responses"]["304"]);
        assert!(not_modified["description"].is_string(), "{}", asset.path);
        let reply = get(&state, asset.path).await;
        for (name, header) in ok["headers"].as_object().expect("headers") {
            assert!(
                resolve(header)["schema"].is_object(),
                "{}: {name}",
                asset.path
            );
            assert!(
                reply.headers.contains_key(name.as_str()),
                "{}: documented header {name} missing",
                asset.path
            );
        }
    }
}
