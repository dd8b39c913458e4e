//! A minimal Server-Sent Events client for the tests: a real HTTP request over a socket
//! (reqwest), the body read chunk by chunk as it arrives and cut into events by the SSE rules
//! (`event:` and `data:` fields, `:` comments, a blank line ends an event).
#![allow(dead_code)]

use std::time::{Duration, Instant};

use serde_json::Value;

/// One event as received.
#[derive(Clone, Debug)]
pub struct SseEvent {
    /// The `event:` field (`message` when absent, as browsers do).
    pub name: String,
    /// The `data:` lines joined by newlines, parsed as JSON (`Null` when not JSON).
    pub data: Value,
    pub raw: String,
    /// When the event was complete, since the request was sent.
    pub at: Duration,
}

/// A response read as an event stream.
pub struct EventReader {
    pub response: reqwest::Response,
    buffer: String,
    sent: Instant,
}

/// POSTs `body` to `url` asking for an event stream.
pub async fn post_events(url: &str, body: &Value) -> EventReader {
    events_of(reqwest::Client::new().post(url).json(body)).await
}

/// GETs `url` asking for an event stream.
pub async fn get_events(url: &str) -> EventReader {
    events_of(reqwest::Client::new().get(url)).await
}

/// Sends `request` asking for an event stream.
async fn events_of(request: reqwest::RequestBuilder) -> EventReader {
    let sent = Instant::now();
    let response = request
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("the request is sent");
    EventReader {
        response,
        buffer: String::new(),
        sent,
    }
}

impl EventReader {
    pub fn status(&self) -> u16 {
        self.response.status().as_u16()
    }

    pub fn content_type(&self) -> String {
        self.response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    }

    /// The next event, or `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = self.parse(&block) {
                    return Some(event);
                }
                continue;
            }
            let chunk = self.response.chunk().await.expect("the stream reads")?;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }

    /// All the events up to the end of the stream.
    pub async fn collect(mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        assert!(
            self.buffer.trim().is_empty(),
            "the stream ended inside an event: {:?}",
            self.buffer
        );
        events
    }

    /// The whole body as text (for a response that is not a stream).
    pub async fn text(self) -> String {
        self.response.text().await.expect("the body reads")
    }

    fn parse(&self, block: &str) -> Option<SseEvent> {
        let mut name = None;
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if line.starts_with(':') || line.is_empty() {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => name = Some(value.to_owned()),
                "data" => data.push(value),
                _ => {}
            }
        }
        if name.is_none() && data.is_empty() {
            // A keep-alive comment.
            return None;
        }
        let raw = data.join("\n");
        Some(SseEvent {
            name: name.unwrap_or_else(|| "message".into()),
            data: serde_json::from_str(&raw).unwrap_or(Value::Null),
            raw,
            at: self.sent.elapsed(),
        })
    }
}
