//! The accept loop: HTTP/1.1 connections under a cap, with a header-read
//! timeout that also closes idle keep-alive connections, and a graceful
//! stop. (`axum::serve` sets neither a timeout nor a cap.)

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Limits on connections, before any request is read. Defaults: 10 s to
/// send a request's head, 2,048 connections at once.
#[derive(Clone, Copy, Debug)]
pub struct ConnLimits {
    /// How long a connection may take to send a whole request head,
    /// counted from when it connects or its last response was sent: it
    /// closes half-sent headers and idle keep-alive connections alike.
    pub header_timeout: Duration,
    /// The most connections served at once; one more is answered 503 and
    /// closed at once (keep it below the process's open-file limit).
    pub max_connections: usize,
}

impl Default for ConnLimits {
    fn default() -> ConnLimits {
        ConnLimits { header_timeout: Duration::from_secs(10), max_connections: 2048 }
    }
}

/// What a connection over the cap gets before it is closed.
const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
connection: close\r\ncontent-length: 98\r\n\r\n{\"error\":{\"code\":\"too_many_connections\",\
\"message\":\"the server is at its connection limit; retry\"}}";

/// Serves `app` on `listener` until `shutdown` resolves; then stops
/// accepting, lets requests in flight (writes included) finish, closes
/// idle connections, and returns.
pub async fn serve_with(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    limits: ConnLimits,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file handles (or a connection reset before
                    // accept): wait, then go on; never spin or stop.
                    if !matches!(e.kind(), std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset) {
                        eprintln!("neardup: accept failed ({e}); retrying in 1 s");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = stream;
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            refuse(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(with_peer(&app, peer)));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// `app`, its requests told the connection's peer (as
/// `ConnectInfo<SocketAddr>`: logins are limited per client).
fn with_peer(
    app: &Router,
    peer: std::net::SocketAddr,
) -> impl tower::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone {
    tower::ServiceExt::map_request(app.clone(), move |mut req: hyper::Request<hyper::body::Incoming>| {
        req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        req
    })
}

/// Answers a connection over the cap with [`BUSY`] and closes it, never
/// blocking the accept loop. The stream leaves the reactor first: a stream
/// just accepted has no write readiness yet, so tokio's `try_write` refused
/// about a quarter of them and those clients saw a bare close. A fresh
/// socket's send buffer takes the whole answer. What the client already
/// sent is read off before the close, so the kernel sends FIN, not a reset
/// that could discard the answer.
fn refuse(stream: tokio::net::TcpStream) {
    use std::io::{Read, Write};
    let Ok(mut socket) = stream.into_std() else { return };
    let _ = socket.write_all(BUSY);
    let _ = socket.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match socket.read(&mut sink) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_busy_answer_is_well_formed() {
        let text = std::str::from_utf8(super::BUSY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "too_many_connections");
    }
}
