//! The server's connections: at most [`crate::Limits::max_connections`] at once. When a new
//! one comes and all are taken, the oldest connection that is not inside a request (still
//! sending its first header, silent, or idle between requests) is closed to make room, so
//! clients that hold connections without finishing a request cannot keep others out; only
//! when every connection is inside a request does the new one wait for one to end.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::service::TowerToHyperService;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;

/// The open connections and the slots they hold.
#[derive(Debug)]
pub struct Tracker {
    slots: Arc<Semaphore>,
    max: usize,
    open: Mutex<BTreeMap<u64, Entry>>,
    next: Mutex<u64>,
}

#[derive(Debug)]
struct Entry {
    /// Inside a request (its header read, its answer not yet given).
    busy: Arc<AtomicBool>,
    /// Ends the connection's task (closing it); set once the task is spawned.
    abort: Option<AbortHandle>,
}

impl Tracker {
    /// A tracker of at most `max` connections.
    #[must_use]
    pub fn new(max: usize) -> Tracker {
        let max = max.max(1);
        Tracker {
            slots: Arc::new(Semaphore::new(max)),
            max,
            open: Mutex::new(BTreeMap::new()),
            next: Mutex::new(0),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a connection just accepted: a free one, else the one of the oldest
    /// connection outside a request (closed now), else the first to end.
    pub async fn slot(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Some(permit);
        }
        let evicted = {
            let mut open = self.open();
            let oldest = open
                .iter()
                .find(|(_, e)| !e.busy.load(Ordering::SeqCst) && e.abort.is_some())
                .map(|(&id, _)| id);
            oldest.and_then(|id| open.remove(&id))
        };
        if let Some(Entry {
            abort: Some(abort), ..
        }) = evicted
        {
            abort.abort();
        }
        Arc::clone(&self.slots).acquire_owned().await.ok()
    }

    /// Registers a connection; returns its id and the flag its service sets while inside a
    /// request.
    pub fn register(&self) -> (u64, Arc<AtomicBool>) {
        let id = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            *next += 1;
            *next
        };
        let busy = Arc::new(AtomicBool::new(false));
        self.open().insert(
            id,
            Entry {
                busy: Arc::clone(&busy),
                abort: None,
            },
        );
        (id, busy)
    }

    /// Records how to close connection `id` (its task was spawned).
    pub fn spawned(&self, id: u64, abort: AbortHandle) {
        if let Some(e) = self.open().get_mut(&id) {
            e.abort = Some(abort);
        }
    }

    /// Forgets connection `id` (it ended).
    pub fn forget(&self, id: u64) {
        self.open().remove(&id);
    }

    /// Waits (at most `limit`) until every connection has ended.
    pub async fn drain(&self, limit: std::time::Duration) {
        let all = u32::try_from(self.max).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(limit, self.slots.acquire_many(all)).await;
    }
}

/// The app as a hyper service that marks its connection busy while a request is inside.
#[derive(Clone, Debug)]
pub struct Tracked {
    inner: TowerToHyperService<Router>,
    busy: Arc<AtomicBool>,
}

impl Tracked {
    /// `app` for the connection whose flag is `busy`.
    #[must_use]
    pub fn new(app: Router, busy: Arc<AtomicBool>) -> Tracked {
        Tracked {
            inner: TowerToHyperService::new(app),
            busy,
        }
    }
}

/// Clears the busy flag when the request's future ends, answered or dropped.
struct Inside(Arc<AtomicBool>);

impl Drop for Inside {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl hyper::service::Service<Request<Incoming>> for Tracked {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        self.busy.store(true, Ordering::SeqCst);
        let inside = Inside(Arc::clone(&self.busy));
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await;
            drop(inside);
            response
        })
    }
}
