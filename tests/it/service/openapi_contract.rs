//! Real responses, successes and errors, validated against the schemas of openapi.yaml: the
//! documented status exists for the route, the media type is the documented one, the body
//! matches its schema, and the documented required headers are there.

use crate::boards::board15;
use crate::service::common::*;
use axum::body::Body;
use axum::http::Request;
use kibitz::api::app;
use kibitz::config::Config;
use serde_json::{Value, json};

/// Follows a local `$ref` (`#/components/...`).
fn resolve(value: &Value) -> &Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            spec()
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling {reference}"))
        }
        None => value,
    }
}

/// Checks a reply against what the spec documents for `method path`.
fn check(method: &str, path: &str, reply: &Reply) {
    let operation = &spec()["paths"][path][method];
    assert!(operation.is_object(), "{method} {path} is not documented");
    let status = reply.status.as_u16().to_string();
    let documented = operation["responses"]
        .get(&status)
        .unwrap_or_else(|| panic!("{method} {path}: status {status} is not documented"));
    let response = resolve(documented);
    if let Some(headers) = response.get("headers").and_then(Value::as_object) {
        for (name, header) in headers {
            if resolve(header)["required"] == true {
                assert!(
                    reply.headers.contains_key(name.as_str()),
                    "{method} {path} {status}: missing header {name}"
                );
            }
        }
    }
    let media = content_type(reply)
        .split(';')
        .next()
        .unwrap()
        .trim()
        .to_owned();
    let content = &response["content"][&media];
    assert!(
        content.is_object(),
        "{method} {path} {status}: media type {media} is not documented"
    );
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": spec()["components"],
        "allOf": [content["schema"]],
    });
    let validator = jsonschema::draft202012::new(&schema).expect("schema compiles");
    // A YAML body is checked as what a client gets once it parses it, as schemathesis does.
    let instance = if media.ends_with("json") {
        reply.body.clone()
    } else if media.ends_with("yaml") {
        serde_norway::from_str(&reply.text).expect("the YAML parses")
    } else {
        Value::String(reply.text.clone())
    };
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} {status}: {errors:#?}\n{}",
        reply.text
    );
}

#[tokio::test]
async fn move_answers_match_the_schema() {
    let state = state();
    for body in [
        json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]}),
        json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]}),
        json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."], "analysis": true}),
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "algorithm": "minimax", "max_depth": 3}),
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "max_nodes": 5, "budget_ms": 1}),
        json!({"game": "connect4", "board": [".......", ".......", ".......", ".......", "...O...", "..XXO.."], "budget_ms": 300}),
        json!({"game": "connect4", "board": ["....", "....", "....", "X.O."], "analysis": true, "budget_ms": 300}),
        json!({"game": "gomoku", "board": board15(&[(7, 7, 'X'), (7, 8, 'O')]), "budget_ms": 100}),
        json!({"game": "gomoku", "board": board15(&[]), "rules": {"win_length": 4, "overline": "no_win"}, "budget_ms": 50}),
        json!({"game": "gomoku", "board": board15(&[(2, 4, 'X'), (3, 4, 'X'), (4, 2, 'X'), (4, 3, 'X'), (0, 14, 'O'), (14, 14, 'O'), (14, 0, 'O'), (0, 10, 'O')]), "rules": {"variant": "renju"}, "analysis": true, "max_depth": 1}),
    ] {
        let reply = post_move(&state, body).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        check("post", "/move", &reply);
    }
}

#[tokio::test]
async fn tree_answers_and_errors_match_the_schema() {
    let state = state();
    for (body, status) in [
        (
            json!({"tree": "[A, [B, (B1,3), (B2,12)], [C, (C1,2), (C2,4)]]", "trace": true}),
            200,
        ),
        (
            json!({"tree": {"name": "A", "children": [{"name": "B", "value": 1.5}]}, "root": "min"}),
            200,
        ),
        (json!({"tree": "[A, (B,1"}), 422),
        (json!({"tree": "[A, (B,1)]", "depth": 3}), 400),
    ] {
        let reply = send(app(state.clone()), post_json_request("/tree", &body)).await;
        assert_eq!(reply.status, status, "{}", reply.text);
        check("post", "/tree", &reply);
    }
}

#[tokio::test]
async fn move_errors_match_the_schema() {
    let state = state();
    for body in [
        json!({"game": "tictactoe"}),
        json!({"game": "tictactoe", "board": ["..."], "extra": 1}),
        json!({"game": "go", "board": ["..."]}),
        json!({"game": "tictactoe", "board": ["XXX", "OO.", "..."]}),
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "budget_ms": 0}),
    ] {
        let reply = post_move(&state, body).await;
        assert!(reply.status.is_client_error());
        check("post", "/move", &reply);
    }
    let wrong_type = Request::post("/move")
        .header("content-type", "text/plain")
        .body(Body::from("hello"))
        .unwrap();
    check("post", "/move", &send(app(state.clone()), wrong_type).await);
    let small = state_with(Config {
        max_body_bytes: 10,
        ..Config::for_tests()
    });
    let too_large = post_json_request("/move", &json!({"game": "tictactoe", "board": []}));
    check("post", "/move", &send(app(small), too_large).await);
}

#[tokio::test]
async fn overload_matches_the_schema() {
    use kibitz::service::latency::JobTimes;
    use std::time::{Duration, Instant};
    let state = state_with(Config {
        workers: 1,
        queue: 0,
        ..Config::for_tests()
    });
    let pool = state.service.pool().clone();
    let busy = tokio::spawn(async move {
        let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(400));
        pool.run(times, || std::thread::sleep(Duration::from_millis(200)))
            .await
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["...", "...", "..."]}),
    )
    .await;
    assert_eq!(reply.status, 503);
    check("post", "/move", &reply);
    busy.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_other_routes_match_the_schema() {
    let state = state();
    for path in ["/games", "/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
        let reply = get(&state, path).await;
        assert_eq!(reply.status, 200, "{path}");
        check("get", path, &reply);
    }
    state
        .ready
        .store(false, std::sync::atomic::Ordering::Relaxed);
    check("get", "/readyz", &get(&state, "/readyz").await);
}

#[test]
fn every_route_served_is_documented_and_every_schema_compiles() {
    let paths = spec()["paths"].as_object().unwrap();
    for route in [
        "/move",
        "/tree",
        "/games",
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.yaml",
    ] {
        assert!(paths.contains_key(route), "{route} undocumented");
    }
    for (name, _) in spec()["components"]["schemas"].as_object().unwrap() {
        let schema = json!({
            "components": spec()["components"],
            "$ref": format!("#/components/schemas/{name}"),
        });
        assert!(jsonschema::draft202012::new(&schema).is_ok(), "{name}");
    }
}
