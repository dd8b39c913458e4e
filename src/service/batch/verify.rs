//! What the batch store reads back from Redis is checked before it is used, as the answer
//! cache checks its answers: anyone who can write to that Redis (a leaked password, another
//! program sharing it) could otherwise make kibitz serve a forged result, count a batch done
//! whose items never ran, or run a forged item in a victim batch's place.
//!
//! Two layers. The *shape*, always: a result's index is a canonical decimal below its batch's
//! total, its value a JSON object whose `index` is that index, with a numeric or `"failed"`
//! `status`, an `answer`, a `replica` and `attempts`; a queue entry's index is below its
//! total, and its total is its batch's. And *authenticity*, when `KIBITZ_BATCH_ENTRY_KEY` is
//! set: each entry and each result carries an HMAC-SHA256 over its batch, its index and its
//! content under that key (a Secret shared by the replicas), so nothing written without the key
//! passes. A refused entry or result is counted (`kibitz_batch_forged_total{reason}`), logged,
//! and left out: a result as if never stored (its item is run again), an entry dropped unrun.

use ring::hmac;

use crate::config::Config;

/// Why something read back was refused (the metric's label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No valid HMAC, with a key configured.
    Signature,
    /// Not what kibitz writes: not JSON, fields missing, an index that does not match.
    Shape,
    /// An index outside its batch, or one written in a non-canonical form (`00` for `0`).
    Index,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Signature => "signature",
            Refusal::Shape => "shape",
            Refusal::Index => "index",
        }
    }
}

/// Signs and checks what the store writes and reads (see the module doc). Cheap to clone.
#[derive(Clone, Debug)]
pub struct Seal {
    key: Option<hmac::Key>,
}

impl Seal {
    pub fn from_config(config: &Config) -> Self {
        Seal::new(
            config
                .batch_entry_key
                .as_ref()
                .map(|k| k.expose().as_bytes()),
        )
    }

    pub fn new(key: Option<&[u8]>) -> Self {
        Seal {
            key: key.map(|k| hmac::Key::new(hmac::HMAC_SHA256, k)),
        }
    }

    /// The HMAC of `parts` (each length-prefixed, so that no two lists sign alike) in hex, or
    /// `None` without a key.
    pub fn sign(&self, parts: &[&str]) -> Option<String> {
        let key = self.key.as_ref()?;
        let mut context = hmac::Context::with_key(key);
        for part in parts {
            context.update(&(part.len() as u64).to_le_bytes());
            context.update(part.as_bytes());
        }
        Some(hex(context.sign().as_ref()))
    }

    /// Whether `mac` signs `parts` (always, without a key).
    pub fn verify(&self, parts: &[&str], mac: Option<&str>) -> bool {
        let Some(key) = &self.key else {
            return true;
        };
        let Some(tag) = mac.and_then(unhex) else {
            return false;
        };
        let mut message = Vec::new();
        for part in parts {
            message.extend_from_slice(&(part.len() as u64).to_le_bytes());
            message.extend_from_slice(part.as_bytes());
        }
        hmac::verify(key, &message, &tag).is_ok()
    }

    /// A result as stored: its HMAC, a `.`, and its JSON (the JSON alone without a key).
    pub fn seal_result(&self, batch: &str, index: usize, json: &str) -> String {
        match self.sign(&[batch, &index.to_string(), json]) {
            Some(mac) => format!("{mac}.{json}"),
            None => json.to_owned(),
        }
    }

    /// A stored result of batch `batch` (`total` items) under field `field`, checked: its
    /// index and its JSON.
    pub fn open_result<'a>(
        &self,
        batch: &str,
        total: usize,
        field: &str,
        stored: &'a str,
    ) -> Result<(usize, &'a str), Refusal> {
        let index = canonical_index(field, total)?;
        let json = match &self.key {
            Some(_) => {
                let (mac, json) = stored.split_once('.').ok_or(Refusal::Signature)?;
                if !self.verify(&[batch, field, json], Some(mac)) {
                    return Err(Refusal::Signature);
                }
                json
            }
            None => stored,
        };
        check_result_shape(index, json)?;
        Ok((index, json))
    }
}

/// `field` as an index below `total`, written as kibitz writes it (no sign, no leading zero).
pub fn canonical_index(field: &str, total: usize) -> Result<usize, Refusal> {
    let index: usize = field.parse().map_err(|_| Refusal::Index)?;
    if index.to_string() != field || index >= total {
        return Err(Refusal::Index);
    }
    Ok(index)
}

/// Whether `json` is a result as kibitz writes one for item `index`.
fn check_result_shape(index: usize, json: &str) -> Result<(), Refusal> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|_| Refusal::Shape)?;
    let fields = value.as_object().ok_or(Refusal::Shape)?;
    let status_ok = match fields.get("status") {
        Some(serde_json::Value::Number(n)) => n.as_u64().is_some_and(|s| (100..600).contains(&s)),
        Some(serde_json::Value::String(s)) => s == "failed",
        _ => false,
    };
    let ok = fields.get("index").and_then(serde_json::Value::as_u64) == Some(index as u64)
        && status_ok
        && fields
            .get("answer")
            .is_some_and(serde_json::Value::is_object)
        && fields
            .get("replica")
            .is_some_and(serde_json::Value::is_string)
        && fields
            .get("attempts")
            .is_some_and(serde_json::Value::is_u64);
    if ok { Ok(()) } else { Err(Refusal::Shape) }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(index: usize) -> String {
        serde_json::json!({"index": index, "status": 200, "answer": {"move": {}},
            "replica": "r", "attempts": 1})
        .to_string()
    }

    #[test]
    fn a_sealed_result_opens_and_any_change_to_it_is_refused() {
        let seal = Seal::new(Some(b"0123456789abcdef"));
        let stored = seal.seal_result("b", 3, &result(3));
        assert_eq!(
            seal.open_result("b", 5, "3", &stored),
            Ok((3, result(3).as_str()))
        );
        assert_eq!(
            seal.open_result("c", 5, "3", &stored),
            Err(Refusal::Signature)
        );
        assert_eq!(
            seal.open_result("b", 5, "3", &result(3)),
            Err(Refusal::Signature)
        );
        let other = Seal::new(Some(b"another key, 16+"));
        assert_eq!(
            other.open_result("b", 5, "3", &stored),
            Err(Refusal::Signature)
        );
    }

    #[test]
    fn without_a_key_results_are_checked_for_shape_and_index() {
        let seal = Seal::new(None);
        assert!(seal.open_result("b", 5, "3", &result(3)).is_ok());
        assert_eq!(
            seal.open_result("b", 5, "03", &result(3)),
            Err(Refusal::Index)
        );
        assert_eq!(
            seal.open_result("b", 3, "3", &result(3)),
            Err(Refusal::Index)
        );
        assert_eq!(
            seal.open_result("b", 5, "-1", &result(3)),
            Err(Refusal::Index)
        );
        assert_eq!(
            seal.open_result("b", 5, "2", &result(3)),
            Err(Refusal::Shape)
        );
        assert_eq!(seal.open_result("b", 5, "3", "pwned"), Err(Refusal::Shape));
        let no_answer =
            r#"{"index": 3, "status": 200, "answer": "pwned", "replica": "r", "attempts": 1}"#;
        assert_eq!(
            seal.open_result("b", 5, "3", no_answer),
            Err(Refusal::Shape)
        );
    }
}
