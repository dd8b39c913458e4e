//! How the shared cache reaches Redis: the URL, the credentials and TLS, turned into a `redis`
//! client, and the address as it may be logged (never with the password).
//!
//! The credentials may be in the URL (`redis://user:password@host:6379/`) or in settings of
//! their own, `KIBITZ_REDIS_USERNAME` and `KIBITZ_REDIS_PASSWORD`, which replace the URL's:
//! a Kubernetes Secret feeds those through `secretKeyRef` while the URL stays in a ConfigMap.
//! `rediss://` is TLS through rustls (the `ring` provider), verified against the Mozilla roots
//! compiled into the binary, or against the PEM certificates of `KIBITZ_REDIS_CA_FILE` only
//! (a private CA), read once at start.

use std::path::{Path, PathBuf};

use redis::{ConnectionAddr, IntoConnectionInfo, TlsCertificates};

use super::SharedCacheError;

/// Where Redis is and who kibitz is to it (from [`crate::config::Config`]).
#[derive(Clone, Default)]
pub struct Endpoint {
    /// `redis://host:port/db` or `rediss://...`, possibly with credentials.
    pub url: String,
    /// The ACL user, replacing the URL's.
    pub username: Option<String>,
    /// The password, replacing the URL's.
    pub password: Option<String>,
    /// PEM certificates to trust for `rediss://` instead of the built-in roots.
    pub ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &"<see display()>")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// A client for `endpoint`, and the address to log: scheme, user, host, port and database,
/// with `***` for a password.
pub fn client(endpoint: &Endpoint) -> Result<(redis::Client, String), SharedCacheError> {
    let mut info = endpoint
        .url
        .as_str()
        .into_connection_info()
        .map_err(SharedCacheError::Url)?;
    let mut settings = info.redis_settings().clone();
    if let Some(username) = &endpoint.username {
        settings = settings.set_username(username);
    }
    if let Some(password) = &endpoint.password {
        settings = settings.set_password(password);
    }
    info = info.set_redis_settings(settings);
    let shown = display(&info);
    let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    let client = match &endpoint.ca_file {
        None => redis::Client::open(info).map_err(SharedCacheError::Url)?,
        Some(path) if tls => {
            let root_cert = read_ca(path)?;
            let certificates = TlsCertificates {
                client_tls: None,
                root_cert: Some(root_cert),
            };
            redis::Client::build_with_tls(info, certificates).map_err(|source| {
                SharedCacheError::CaFile {
                    path: path.clone(),
                    source: Box::new(source),
                }
            })?
        }
        Some(_) => return Err(SharedCacheError::CaWithoutTls),
    };
    Ok((client, shown))
}

fn read_ca(path: &Path) -> Result<Vec<u8>, SharedCacheError> {
    std::fs::read(path).map_err(|source| SharedCacheError::CaFile {
        path: path.to_owned(),
        source: Box::new(source),
    })
}

/// The address without the password.
fn display(info: &redis::ConnectionInfo) -> String {
    let settings = info.redis_settings();
    let user = match (settings.username(), settings.password()) {
        (Some(user), Some(_)) => format!("{user}:***@"),
        (Some(user), None) => format!("{user}@"),
        (None, Some(_)) => ":***@".to_owned(),
        (None, None) => String::new(),
    };
    match info.addr() {
        ConnectionAddr::TcpTls { host, port, .. } => {
            format!("rediss://{user}{host}:{port}/{}", settings.db())
        }
        ConnectionAddr::Unix(path) => format!("redis+unix://{user}{}", path.display()),
        other => format!("redis://{user}{other}/{}", settings.db()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(url: &str) -> Endpoint {
        Endpoint {
            url: url.into(),
            ..Endpoint::default()
        }
    }

    fn shown(endpoint: &Endpoint) -> String {
        client(endpoint).expect("a client").1
    }

    #[test]
    fn the_logged_address_never_shows_the_password() {
        assert_eq!(
            shown(&endpoint("redis://:hunter2@cache:6380/2")),
            "redis://:***@cache:6380/2"
        );
        assert_eq!(
            shown(&endpoint("redis://kibitz:hunter2@cache/")),
            "redis://kibitz:***@cache:6379/0"
        );
        assert_eq!(
            shown(&endpoint("rediss://cache.example:6390/")),
            "rediss://cache.example:6390/0"
        );
        let debug = format!(
            "{:?}",
            Endpoint {
                password: Some("hunter2".into()),
                ..endpoint("redis://:hunter2@cache/")
            }
        );
        assert!(!debug.contains("hunter2"), "{debug}");
    }

    #[test]
    fn separate_credentials_replace_the_urls() {
        let separate = Endpoint {
            username: Some("kibitz".into()),
            password: Some("from-a-secret".into()),
            ..endpoint("redis://old:in-the-url@cache:6379/")
        };
        let (client, text) = client(&separate).expect("a client");
        assert_eq!(text, "redis://kibitz:***@cache:6379/0");
        let settings = client.get_connection_info().redis_settings();
        assert_eq!(settings.username(), Some("kibitz"));
        assert_eq!(settings.password(), Some("from-a-secret"));
    }

    #[test]
    fn a_bad_url_is_refused_without_repeating_it() {
        let error = client(&endpoint("http://:hunter2@cache/")).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("KIBITZ_REDIS_URL"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn a_ca_file_needs_a_tls_url_and_a_readable_file() {
        let plain = Endpoint {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..endpoint("redis://cache/")
        };
        assert!(matches!(
            client(&plain).unwrap_err(),
            SharedCacheError::CaWithoutTls
        ));
        let missing = Endpoint {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..endpoint("rediss://cache/")
        };
        let error = client(&missing).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/ca.pem"), "{error}");
    }
}
