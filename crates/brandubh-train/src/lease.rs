//! The learner's lease (`learner/lease.json`): one learner per run, enforced by the store.
//!
//! A learner takes the lease before it writes anything: with a create-only put where there
//! is none, or with a compare-and-swap put ([`Store::put_if`]) over one that has expired,
//! raising the fencing counter by one. It renews the lease (compare-and-swap again) every
//! third of its time to live from a thread of its own, and before every write to the store
//! it checks that the lease is still its own ([`Lease::ensure`]): a learner whose lease was
//! taken over stops before writing. A second learner finds the lease held and refuses with
//! one line naming the holder and the expiry; a killed learner's lease runs out after its
//! time to live. Renewing with compare-and-swap also after an expiry is safe: it succeeds
//! only if no other learner has written the lease since.
//!
//! A learner asked to stop (SIGTERM, Ctrl-C: [`Lease::keep`]'s `terminate`) gives the
//! lease up at once, so that its successor need not wait out the time to live: it waits
//! for the writes in flight ([`Lease::ensure`]'s permits), marks the lease expired
//! (compare-and-swap) and refuses every later write.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard};
use std::time::Duration;

use brandubh_run::RunLayout;
use brandubh_store::{Store, Version};
use serde::{Deserialize, Serialize};

use crate::remote::{self, MAX_JSON_BYTES, now_unix_ms, utc};
use crate::run::RunError;

/// The lease object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRecord {
    /// The learner holding it (`HOST-PID-RANDOM`).
    pub owner: String,
    /// Raised by one by every learner that takes the lease.
    pub fencing: u64,
    /// When its owner took it, milliseconds since the Unix epoch.
    pub acquired_unix_ms: u64,
    /// Until when it holds, milliseconds since the Unix epoch.
    pub expires_unix_ms: u64,
}

/// A lease held by this process.
#[derive(Debug)]
pub struct Lease<'s> {
    store: &'s Store,
    ttl: Duration,
    held: Mutex<Held>,
    /// Set once the lease is known to be someone else's (or could not be renewed, or was
    /// given up).
    lost: AtomicBool,
    /// Held shared by each write ([`WritePermit`]), exclusively by [`Lease::release`].
    writes: RwLock<()>,
}

/// Leave to write to the store under the lease, until dropped: [`Lease::release`] waits
/// for it. Never ask for a second one while holding one: behind a release that waits, the
/// second would wait for the first.
#[must_use = "the write must happen while the permit is held"]
#[derive(Debug)]
pub struct WritePermit<'a> {
    _writing: RwLockReadGuard<'a, ()>,
}

/// How [`Lease::keep`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepEnd {
    /// `stop` was set: the learner finished or failed.
    Stopped,
    /// The lease was lost (taken over, or not renewed in time).
    Lost,
    /// `terminate` named this signal, and the lease was given up (or was already lost).
    Terminated(usize),
}

#[derive(Debug)]
struct Held {
    record: LeaseRecord,
    version: Version,
}

/// A new owner id: host name, process id and random bits.
#[must_use]
pub fn new_owner() -> String {
    let host = remote::host_name();
    let host = if host.is_empty() {
        "learner".to_owned()
    } else {
        host
    };
    format!(
        "{host}-{}-{:08x}",
        std::process::id(),
        remote::random_u64() as u32
    )
}

impl<'s> Lease<'s> {
    /// Takes the lease of the run in `store` for `ttl`, as `owner`. A lease held by
    /// another learner and not expired is [`RunError::LeaseHeld`].
    pub fn acquire(store: &'s Store, owner: &str, ttl: Duration) -> Result<Lease<'s>, RunError> {
        let name = store.location().name_of(RunLayout::LEASE);
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        for _ in 0..5 {
            let now = now_unix_ms();
            let current = store.get_versioned(RunLayout::LEASE, MAX_JSON_BYTES)?;
            let previous = match &current {
                Some(v) => Some(
                    serde_json::from_slice::<LeaseRecord>(&v.bytes).map_err(|e| {
                        RunError::Remote(format!(
                            "{name}: damaged: {e}; delete it if no learner runs"
                        ))
                    })?,
                ),
                None => None,
            };
            if let Some(p) = &previous
                && p.expires_unix_ms > now
                && p.owner != owner
            {
                return Err(RunError::LeaseHeld(format!(
                    "{name}: the run is held by learner {} until {} ({} s from now, fencing {}): one learner per run; this one stops without writing (a killed learner's lease runs out by itself)",
                    p.owner,
                    utc(p.expires_unix_ms),
                    (p.expires_unix_ms - now).div_ceil(1000),
                    p.fencing
                )));
            }
            let record = LeaseRecord {
                owner: owner.to_owned(),
                fencing: previous.as_ref().map_or(0, |p| p.fencing) + 1,
                acquired_unix_ms: now,
                expires_unix_ms: now.saturating_add(ttl_ms),
            };
            let bytes = remote::json_bytes(store, RunLayout::LEASE, &record)?;
            let version = match &current {
                None => {
                    if !store.put_new(RunLayout::LEASE, &bytes)? {
                        continue;
                    }
                    match store.get_versioned(RunLayout::LEASE, MAX_JSON_BYTES)? {
                        Some(v) if v.bytes == bytes => v.version,
                        _ => continue,
                    }
                }
                Some(v) => match store.put_if(RunLayout::LEASE, &bytes, &v.version)? {
                    Some(version) => version,
                    None => continue,
                },
            };
            if let Some(p) = previous {
                tracing::info!(
                    "took the lease {name} (fencing {}) from {}, expired at {}",
                    record.fencing,
                    p.owner,
                    utc(p.expires_unix_ms)
                );
            } else {
                tracing::info!("took the lease {name} (fencing {})", record.fencing);
            }
            return Ok(Lease {
                store,
                ttl,
                held: Mutex::new(Held { record, version }),
                lost: AtomicBool::new(false),
                writes: RwLock::new(()),
            });
        }
        Err(RunError::LeaseHeld(format!(
            "{name}: another learner keeps taking the lease; this one stops without writing"
        )))
    }

    /// The fencing counter of the lease held.
    #[must_use]
    pub fn fencing(&self) -> u64 {
        self.lock().record.fencing
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks, before a write, that the lease is still this learner's: at once while more
    /// than a third of its time to live is left, else by renewing it. The write happens
    /// while the permit returned is held.
    pub fn ensure(&self) -> Result<WritePermit<'_>, RunError> {
        let permit = WritePermit {
            _writing: self
                .writes
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        };
        let held = self.lock();
        self.check_lost()?;
        let margin = u64::try_from(self.ttl.as_millis() / 3).unwrap_or(u64::MAX);
        if now_unix_ms().saturating_add(margin) >= held.record.expires_unix_ms {
            self.renew_locked(held)?;
        }
        Ok(permit)
    }

    /// Extends the lease by its time to live.
    pub fn renew(&self) -> Result<(), RunError> {
        let held = self.lock();
        self.check_lost()?;
        self.renew_locked(held)
    }

    fn check_lost(&self) -> Result<(), RunError> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(self.lost_error("it was lost earlier"));
        }
        Ok(())
    }

    fn renew_locked(&self, mut held: std::sync::MutexGuard<'_, Held>) -> Result<(), RunError> {
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let record = LeaseRecord {
            expires_unix_ms: now_unix_ms().saturating_add(ttl_ms),
            ..held.record.clone()
        };
        let bytes = remote::json_bytes(self.store, RunLayout::LEASE, &record)?;
        let renewed = self.store.put_if(RunLayout::LEASE, &bytes, &held.version);
        match renewed {
            Ok(Some(version)) => {
                *held = Held { record, version };
                Ok(())
            }
            Ok(None) => {
                self.lost.store(true, Ordering::SeqCst);
                let now: Option<LeaseRecord> = remote::get_json(self.store, RunLayout::LEASE)
                    .ok()
                    .flatten();
                Err(self.lost_error(&match now {
                    Some(r) => format!("learner {} took it (fencing {})", r.owner, r.fencing),
                    None => "it is gone from the store".to_owned(),
                }))
            }
            Err(e) => {
                self.lost.store(true, Ordering::SeqCst);
                Err(self.lost_error(&format!("it could not be renewed: {e}")))
            }
        }
    }

    fn lost_error(&self, why: &str) -> RunError {
        RunError::Remote(format!(
            "{}: this learner lost the lease ({why}); it stops before writing anything more",
            self.store.location().name_of(RunLayout::LEASE)
        ))
    }

    /// Renews the lease every third of its time to live until `stop` is set, touching
    /// `heartbeat_dir/heartbeat` after each renewal; returns when the lease is lost, or
    /// once it is given up after `terminate` names a signal (checked every 50 ms).
    pub fn keep(
        &self,
        stop: &AtomicBool,
        terminate: Option<&AtomicUsize>,
        heartbeat_dir: &std::path::Path,
    ) -> KeepEnd {
        let step = Duration::from_millis(50);
        let every = self.ttl / 3;
        loop {
            let mut waited = Duration::ZERO;
            while waited < every {
                if stop.load(Ordering::SeqCst) {
                    return KeepEnd::Stopped;
                }
                let signal = terminate.map_or(0, |t| t.load(Ordering::SeqCst));
                if signal != 0 {
                    match self.release() {
                        Ok(()) => tracing::info!(
                            "signal {signal}: gave the lease up; the next learner takes over at once"
                        ),
                        Err(e) => {
                            tracing::warn!("signal {signal}: could not give the lease up: {e}")
                        }
                    }
                    return KeepEnd::Terminated(signal);
                }
                std::thread::sleep(step);
                waited += step;
            }
            if let Err(e) = self.renew() {
                tracing::warn!("{e}");
                return KeepEnd::Lost;
            }
            remote::heartbeat(heartbeat_dir);
        }
    }

    /// Gives the lease up (it expires now), so that the next learner need not wait: after
    /// the writes in flight, and refusing every later one.
    pub fn release(&self) -> Result<(), RunError> {
        let _no_writes = self
            .writes
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = self.lock();
        if self.lost.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let record = LeaseRecord {
            expires_unix_ms: now_unix_ms(),
            ..held.record.clone()
        };
        let bytes = remote::json_bytes(self.store, RunLayout::LEASE, &record)?;
        self.store.put_if(RunLayout::LEASE, &bytes, &held.version)?;
        Ok(())
    }
}
