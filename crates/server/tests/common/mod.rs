//! What every server test binary shares: a real server on a loopback
//! port over a store, with the `default` pipeline at k = 3.

use std::net::SocketAddr;
use std::sync::Arc;

use neardup::{Fingerprinter, Radius};
use neardup_server::{router, AppState, ConnLimits, Settings};
use neardup_store::{Engine, Store};

/// Starts a server over `store` on 127.0.0.1:0 with `settings` and
/// connection `limits`; returns its address. It runs until the test's
/// runtime ends.
pub async fn start<S: Store + 'static>(store: S, settings: Settings, limits: ConnLimits) -> SocketAddr {
    let fingerprinter = Fingerprinter::preset("default").unwrap();
    let engine = Arc::new(Engine::open(store, fingerprinter.config().clone(), Radius::fixed(3)).unwrap());
    let app = router(Arc::new(AppState::new(engine, settings).unwrap()));
    let listener = neardup_server::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(neardup_server::serve_with(listener, app, std::future::pending(), limits));
    addr
}
