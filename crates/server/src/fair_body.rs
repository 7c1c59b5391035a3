//! Request bodies read a piece at a time, so that a large one does not
//! hold an async worker.
//!
//! A request's body is read in its connection's task, and tokio lets a
//! task read on while data is waiting: an 11 MB upload already in the
//! socket's buffer was read (copied, its pages faulted in) in one go of
//! several milliseconds, and on a 2-core machine 8 such uploads at once
//! took the p99 of `/v1/search` from under a millisecond to 30 ms. Every
//! request's body is therefore wrapped in [`FairBody`], which yields to the
//! other tasks after each piece it hands on (a few hundred KB at most).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use http_body::{Body as HttpBody, Frame, SizeHint};

/// A body that yields to the runtime after each frame.
pub(crate) struct FairBody {
    inner: Body,
    pause: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

/// `req` with its body read fairly (the router's first layer).
pub(crate) async fn fair(req: Request) -> Request {
    req.map(|inner| Body::new(FairBody { inner, pause: None }))
}

impl HttpBody for FairBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Some(pause) = self.pause.as_mut() {
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.pause = None;
        }
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        // Only between frames: a body that has ended (a small request's
        // one frame) pays nothing. tokio's yield_now goes behind the other
        // ready tasks (a plain self-wake would run this one again first).
        if matches!(&frame, Poll::Ready(Some(Ok(_)))) && !self.inner.is_end_stream() {
            self.pause = Some(Box::pin(tokio::task::yield_now()));
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
