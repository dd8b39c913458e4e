//! Running the server: logging set-up, building the state, the connection loop, and the drain
//! on SIGTERM.
//!
//! The connection loop is hyper's HTTP/1.1 server with its timer on, because `axum::serve`
//! sets no timeouts: a client that opens a connection and sends nothing (or one header byte a
//! second) would hold a descriptor for ever. Here every connection must send its headers within
//! `header_timeout_ms` of opening or of its previous answer (hyper's header-read timeout, which
//! also closes idle keep-alive connections), its read buffer is capped (`MAX_BUF_BYTES`, which
//! also caps header size), and at most `max_connections` are open at once: at the limit the
//! loop stops accepting and the kernel's backlog waits, so the process never runs out of
//! descriptors it needs. When `accept` fails for want of descriptors anyway, the loop backs off
//! (5 ms doubling to 1 s) instead of spinning.
//!
//! Shutdown, the Kubernetes way: on SIGTERM `/readyz` turns 503 at once while the server keeps
//! accepting and answering for `drain_ms`, so load balancers see it and stop sending. Then it
//! stops accepting, asks every connection to close once its request is answered (idle ones
//! close at once), and waits up to `shutdown_timeout_ms`; searches still running then are
//! stopped (they answer with their best move so far), and after a last second for those
//! answers to be written the process exits whatever clients do. With the defaults that is at
//! most 5 + 20 + 1 = 26 s after SIGTERM, inside Kubernetes' 30 s grace period. Streams that
//! follow a batch (`GET /analyses/{id}`) would never end by themselves: they end when the
//! drain does, each with an `error` event saying the server is shutting down, as `/move` and
//! `/review` streams end with their answer.

use std::future::Future;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tracing_subscriber::EnvFilter;

use crate::api::analyses::Runner;
use crate::api::{AppState, app};
use crate::config::{Config, LogFormat};
use crate::service::Service;
use crate::service::batch::Batches;
use crate::service::metrics::{GaugeGuard, Metrics};

/// Largest read buffer of a connection, hence also the largest request head (hyper answers
/// 431 beyond it). Honest heads are well under 2 KiB; 16 KiB per connection keeps 4096 open
/// connections within 64 MiB.
const MAX_BUF_BYTES: usize = 16 * 1024;

/// How long answers stopped at the end of the shutdown timeout get to be written.
const LAST_WRITE: Duration = Duration::from_secs(1);

/// Sets up tracing to stderr in the configured format; `RUST_LOG` overrides the level (info).
/// Colours only when stderr is a terminal, so log files stay plain text.
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // A second initialisation (tests) keeps the first subscriber.
    let _ = match format {
        LogFormat::Pretty => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Raises the soft limit on open files to the hard limit (as Go's runtime does at start) and
/// returns the soft limit in force.
pub fn raise_descriptor_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(error) => {
            tracing::warn!(%error, "could not raise the open-file limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
        }
    }
}

/// Builds the service and the state the router needs.
pub fn build_state(config: Config) -> std::io::Result<AppState> {
    let metrics = Arc::new(Metrics::new());
    let batches = Batches::from_config(&config, metrics.batch.clone())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let service = Service::new(&config, metrics)?;
    let identities = crate::api::identity::from_config(&config)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    Ok(AppState::new(service, batches, config).with_identities(identities))
}

/// Serves `state` on `listener` until `shutdown` completes, then drains (see the module doc).
/// `max_connections` bounds the connections open at once.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    max_connections: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let config = Arc::clone(&state.config);
    let ready = Arc::clone(&state.ready);
    let service = state.service.clone();
    let batches = state.batches.clone();
    // Batch items run on this replica's idle workers until the shutdown.
    let consumers = Arc::new(
        state
            .batches
            .start(service.pool().clone(), Runner::new(state.clone())),
    );
    let router = app(state);
    let connections = Arc::new(Semaphore::new(max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(config.header_timeout_ms))
        .max_buf_size(MAX_BUF_BYTES)
        .keep_alive(true);

    // Phase 1: serve until SIGTERM, then on through the drain with `/readyz` at 503.
    let drain_ms = config.drain_ms;
    let taking = Arc::clone(&consumers);
    let stop_accepting = async move {
        shutdown.await;
        ready.store(false, Ordering::Relaxed);
        taking.stop_taking();
        tracing::info!(
            drain_ms,
            "shutdown: /readyz answers 503; still serving during the drain"
        );
        tokio::time::sleep(Duration::from_millis(drain_ms)).await;
    };
    tokio::pin!(stop_accepting);
    let mut backoff = Duration::ZERO;
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut stop_accepting => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    backoff = Duration::ZERO;
                    accepted
                }
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    // Out of descriptors (EMFILE/ENFILE) or memory: wait for some to be
                    // released rather than spin on the same error.
                    backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                    tracing::warn!(%error, backoff_ms = backoff.as_millis() as u64, "accept failed");
                    tokio::time::sleep(backoff).await;
                    continue;
                }
            },
            () = &mut stop_accepting => break,
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        // The peer's address, for the identity of clients without API keys.
        let with_peer = tower::ServiceBuilder::new()
            .map_request(
                move |mut request: axum::http::Request<hyper::body::Incoming>| {
                    request
                        .extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                    request
                },
            )
            .service(router.clone());
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(with_peer));
        let connection = graceful.watch(connection);
        // Counted open for as long as it holds its permit.
        let open = GaugeGuard::hold(&service.metrics().http_connections_open);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop((permit, open));
        });
    }
    drop(listener);

    // Phase 2: no new connections; in-flight requests finish, idle connections close. Batch
    // event streams would never finish by themselves (their batch runs on): each is ended
    // with its last event now, so that its connection closes too.
    batches.close_watches();
    let open = graceful.count();
    tracing::info!(
        open_connections = open,
        timeout_ms = config.shutdown_timeout_ms,
        "shutdown: not accepting; finishing requests in flight"
    );
    let timeout = Duration::from_millis(config.shutdown_timeout_ms);
    // Batch items held finish in the same time as requests, or go back to the queue.
    let finished = futures_util::future::join(
        graceful.shutdown(),
        consumers.drain(timeout.saturating_sub(Duration::from_millis(500))),
    );
    tokio::pin!(finished);
    if tokio::time::timeout(timeout, &mut finished).await.is_err() {
        // Phase 3: stop what still runs; give those answers a moment to be written.
        let stopped = service.cancel_all();
        tracing::warn!(
            searches_stopped = stopped,
            "shutdown timeout: stopping searches still running"
        );
        let _ = tokio::time::timeout(LAST_WRITE, &mut finished).await;
    }
    Ok(())
}

/// Errors of one connection that `accept` reports but that say nothing about the listener.
fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        error.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
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
