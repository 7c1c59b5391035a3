//! `neardup serve`: the HTTP service over DATA/store.redb.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use neardup::near::Near;
use neardup_server::{AppState, Settings};
use neardup_store::passages::Passages;
use neardup_store::RedbStore;

use crate::args::ServeArgs;
use crate::datadir::DataDir;
use crate::UsageError;

/// Tokens shorter than this are warned about.
const MIN_TOKEN_BYTES: usize = 16;

pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let token = read_token(&args)?;
    if token.is_none() && !args.listen.ip().is_loopback() && !args.allow_unauthenticated {
        return Err(UsageError(format!(
            "--listen {} serves other machines, but there is no --token-file: anyone who reaches it could \
             insert and delete documents. Give --token-file FILE, or --allow-unauthenticated if a firewall \
             or proxy guards it",
            args.listen
        ))
        .into());
    }
    // A new data directory gets the method -k (SimHash) or --threshold
    // (MinHash) implies, else the default one.
    let asked = Near::of(args.k, args.threshold).map_err(|e| UsageError(e.to_string()))?;
    let implied = asked.method();
    let data = DataDir::open_within(&args.data, &args.pipeline, args.k, implied, args.memory.map(|m| m.0))?;
    let settings = Settings {
        default_k: args.k,
        default_threshold: args.threshold,
        max_k: args.max_k,
        max_body_bytes: usize::try_from(args.max_body.0).unwrap_or(usize::MAX),
        max_batch: args.max_batch,
        timeout: Duration::from_secs(args.timeout.max(1)),
        token,
        max_upload_bytes: usize::try_from(args.max_upload.0).unwrap_or(usize::MAX),
        parse_timeout: Duration::from_secs(args.parse_timeout.max(1)),
        secure_cookies: args.secure_cookies,
        trusted_proxies: args.trusted_proxy.clone(),
        max_bodies_bytes: args.max_bodies.0,
        ..Settings::default()
    };
    // The passages the data directory keeps (index build --passages -o DIR),
    // open to write (POST /v1/passages). Checked whole first, as `neardup
    // report --against` does: damage is an error naming the file, not a
    // report that is silently wrong.
    let passages =
        Passages::open_writable(&args.data, !args.no_verify)?.map(|p| p.named("this server's passages"));
    let state = Arc::new(
        AppState::new(data.engine.clone(), settings)
            .map_err(|e| UsageError(format!("{}: {e}", args.data.display())))?
            .with_passages(passages),
    );
    let rule = match asked {
        Near::Within(k) => format!("k = {k}"),
        near => data.engine.rule_of(near),
    };
    serve_until_stopped(&args, &data, state.clone(), &rule)?;
    state
        .close()
        .with_context(|| format!("{}: cannot write the passage library out", args.data.display()))?;
    // The last holder of the engine but `data`, which closes it cleanly.
    drop(state);
    note!("neardup: stopped; every acknowledged write is on disk");
    data.close();
    Ok(ExitCode::SUCCESS)
}

/// The bearer token of `--token-file`, trimmed; an empty file is a usage
/// error, a short token is warned about.
fn read_token(args: &ServeArgs) -> Result<Option<String>> {
    Ok(match &args.token_file {
        Some(path) => {
            let t = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the token", path.display()))?;
            let t = t.trim().to_owned();
            if t.is_empty() {
                return Err(UsageError(format!("{}: the token file is empty", path.display())).into());
            }
            if t.len() < MIN_TOKEN_BYTES {
                note!(
                    "neardup: warning: {}: the token is {} bytes; use {MIN_TOKEN_BYTES} or more random bytes \
                     (for example `head -c 32 /dev/urandom | base64 > {}`)",
                    path.display(),
                    t.len(),
                    path.display()
                );
            }
            Some(t)
        }
        None => None,
    })
}

/// Binds, says it is up (with the data directory, the method and the
/// rule), and serves until SIGTERM or Ctrl-C.
fn serve_until_stopped(
    args: &ServeArgs,
    data: &DataDir,
    state: Arc<AppState<RedbStore>>,
    rule: &str,
) -> Result<()> {
    let n = data.engine.len();
    let app = neardup_server::router(state);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start tokio")?;
    runtime.block_on(async {
        let listener = neardup_server::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        // Signals are ours before the line below says we are up.
        let stop = neardup_server::shutdown_signal().context("cannot install the SIGTERM/SIGINT handlers")?;
        note!(
            "neardup: serving {n} documents from {} on http://{addr} (opened in {:.2} s, {}; near duplicates by \
             {}, {}; Ctrl-C or SIGTERM stops)",
            data.dir.display(),
            data.opened_in.as_secs_f64(),
            data.source,
            data.engine.config().method.title(),
            rule,
        );
        let limits = neardup_server::ConnLimits {
            header_timeout: Duration::from_secs(args.header_timeout.max(1)),
            max_connections: args.max_connections.max(1),
        };
        neardup_server::serve_with(listener, app, stop, limits).await.context("server")?;
        anyhow::Ok(())
    })?;
    Ok(())
}
