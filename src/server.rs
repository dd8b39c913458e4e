//! Running the server: logging set-up, building the state, serving with graceful shutdown.
//!
//! Shutdown on SIGTERM or Ctrl-C: `/readyz` turns 503 at once, the listener stops accepting,
//! and requests in flight finish (each within its own budget) before the process exits.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use crate::api::{AppState, app};
use crate::config::{Config, LogFormat};
use crate::service::Service;
use crate::service::metrics::Metrics;

/// Sets up tracing to stderr in the configured format; `RUST_LOG` overrides the level (info).
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests) keeps the first subscriber.
    let _ = match format {
        LogFormat::Pretty => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Builds the service and the state the router needs.
pub fn build_state(config: Config) -> std::io::Result<AppState> {
    let metrics = Arc::new(Metrics::new());
    let service = Service::new(&config, metrics)?;
    Ok(AppState::new(service, config))
}

/// Serves `state` on `listener` until `shutdown` completes, then drains in-flight requests.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let ready = Arc::clone(&state.ready);
    let router = app(state);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            ready.store(false, Ordering::Relaxed);
            tracing::info!("shutting down: finishing requests in flight");
        })
        .await
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
