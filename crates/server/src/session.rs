//! The page's logins: random session ids kept on the server with an
//! expiry (the token itself never travels in a cookie; logging out
//! revokes the id), and a per-client limit on wrong tokens.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a login lasts.
pub(crate) const LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// The most sessions kept at once: past it, the oldest goes (memory does
/// not grow with the logins made).
const MAX_SESSIONS: usize = 10_000;

/// Wrong tokens a client may try in [`WINDOW`] before it waits.
pub(crate) const MAX_FAILURES: u32 = 10;

/// The window wrong tokens are counted in.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);

/// The most clients whose failures are remembered at once.
const MAX_CLIENTS: usize = 100_000;

/// Sessions and login attempts.
#[derive(Default)]
pub(crate) struct Sessions {
    /// Session id (hex) → when it expires.
    live: Mutex<HashMap<String, Instant>>,
    /// Client → (wrong tokens, since when).
    failures: Mutex<HashMap<Client, (u32, Instant)>>,
}

/// Who is logging in: the peer's address (`None`: not known, as in tests
/// that call the router directly; they share one allowance).
pub(crate) type Client = Option<IpAddr>;

/// A new session id: 32 random bytes from the operating system, as hex.
fn new_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Sessions {
    /// How long `client` must wait before it may try a token again
    /// (`None`: it may now).
    pub(crate) fn wait_for(&self, client: Client) -> Option<Duration> {
        let failures = lock(&self.failures);
        let &(n, since) = failures.get(&client)?;
        let left = WINDOW.saturating_sub(since.elapsed());
        (n >= MAX_FAILURES && !left.is_zero()).then_some(left)
    }

    /// Counts a wrong token from `client`.
    pub(crate) fn failed(&self, client: Client) {
        let mut failures = lock(&self.failures);
        if failures.len() >= MAX_CLIENTS {
            failures.retain(|_, (_, since)| since.elapsed() < WINDOW);
        }
        let entry = failures.entry(client).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }

    /// A new session for `client`, who gave the right token (its failures
    /// are forgotten).
    ///
    /// # Errors
    ///
    /// The operating system gives no random bytes.
    pub(crate) fn start(&self, client: Client) -> std::io::Result<String> {
        lock(&self.failures).remove(&client);
        let id = new_id()?;
        let mut live = lock(&self.live);
        if live.len() >= MAX_SESSIONS {
            live.retain(|_, expires| *expires > Instant::now());
        }
        if live.len() >= MAX_SESSIONS {
            if let Some(oldest) = live.iter().min_by_key(|(_, e)| **e).map(|(id, _)| id.clone()) {
                live.remove(&oldest);
            }
        }
        live.insert(id.clone(), Instant::now() + LIFETIME);
        Ok(id)
    }

    /// Whether `id` is a live session (an expired one is dropped).
    pub(crate) fn valid(&self, id: &str) -> bool {
        let mut live = lock(&self.live);
        match live.get(id) {
            Some(expires) if *expires > Instant::now() => true,
            Some(_) => {
                live.remove(id);
                false
            }
            None => false,
        }
    }

    /// Ends session `id`: the cookie is worthless from now on.
    pub(crate) fn end(&self, id: &str) {
        lock(&self.live).remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_random_revocable_and_bounded() {
        let s = Sessions::default();
        let a = s.start(None).unwrap();
        let b = s.start(None).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(s.valid(&a) && s.valid(&b) && !s.valid("00"));
        s.end(&a);
        assert!(!s.valid(&a) && s.valid(&b));
        // Expired sessions are refused and dropped.
        lock(&s.live).insert("old".into(), Instant::now() - Duration::from_secs(1));
        assert!(!s.valid("old"));
        assert!(!lock(&s.live).contains_key("old"));
        for _ in 0..MAX_SESSIONS + 5 {
            s.start(None).unwrap();
        }
        assert!(lock(&s.live).len() <= MAX_SESSIONS);
    }

    #[test]
    fn wrong_tokens_are_limited_per_client() {
        let s = Sessions::default();
        let (one, two): (Client, Client) = (Some([10, 0, 0, 1].into()), Some([10, 0, 0, 2].into()));
        for _ in 0..MAX_FAILURES {
            assert_eq!(s.wait_for(one), None);
            s.failed(one);
        }
        let wait = s.wait_for(one).unwrap();
        assert!(wait > WINDOW - Duration::from_secs(5) && wait <= WINDOW, "{wait:?}");
        assert_eq!(s.wait_for(two), None, "another client is not held back");
        // After the window, the count starts again.
        lock(&s.failures).insert(one, (MAX_FAILURES, Instant::now() - WINDOW));
        assert_eq!(s.wait_for(one), None);
        s.failed(one);
        assert_eq!(lock(&s.failures)[&one].0, 1);
    }
}
