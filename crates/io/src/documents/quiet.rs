//! Panics of third-party readers, caught without a word on stderr.
//!
//! The default panic hook prints the message and a backtrace hint before
//! `catch_unwind` sees the panic: a server reading a hostile PDF would
//! print a library's assertion for every such upload. This hook, installed
//! once, stays silent on a thread that is reading a document (and keeps
//! the message, which becomes part of the "damaged" error) and hands every
//! other panic to the hook that was there before.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// `Some` while this thread reads a document: the last panic's message.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `read`, turning a panic into its message, printed nowhere.
pub(super) fn catch<T>(read: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let before = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let kept = CAUGHT.with(|c| match c.borrow_mut().as_mut() {
                Some(slot) => {
                    *slot = message(info.payload());
                    true
                }
                None => false,
            });
            if !kept {
                before(info);
            }
        }));
    });
    let outer = CAUGHT.with(|c| c.borrow_mut().replace(String::new()));
    let result = panic::catch_unwind(AssertUnwindSafe(read));
    let said = CAUGHT.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    result.map_err(|payload| match said {
        Some(s) if !s.is_empty() => s,
        _ => message(&*payload),
    })
}

/// A panic's message, when it is a string.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the reader failed".to_owned());
    // One line, and not a library's essay.
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_its_message_and_the_thread_goes_on() {
        assert_eq!(catch(|| 7), Ok(7));
        let e = catch(|| -> u32 { panic!("index out of range\nmore") }).unwrap_err();
        assert_eq!(e, "index out of range");
        // Nested: the inner catch does not swallow the outer's state.
        let outer = catch(|| catch(|| -> u32 { panic!("inner") }).unwrap_err());
        assert_eq!(outer.as_deref(), Ok("inner"));
    }
}
