//! Object storage for distributed runs: one small, blocking API over Apache Arrow's
//! `object_store` (a local directory, memory, S3 and S3-compatible servers, GCS, Azure).
//!
//! The training loop is synchronous (rayon threads), so [`Store`] owns a private tokio
//! runtime and blocks on it; nothing else in the workspace sees tokio-for-storage or
//! `object_store`. Keys are relative to the run's root (`config.toml`, `chunks/A/000001.brz`;
//! the layout itself is `brandubh_run::layout`). Every put is whole: a local directory
//! writes a temporary name and renames it, an object store puts atomically.
//!
//! Besides plain puts, two conditional writes: [`Store::put_new`] writes only where no
//! object is (`PutMode::Create`: S3's `If-None-Match: *`, a hard link on a directory), and
//! [`Store::put_if`] replaces an object only if it is still the version that was read
//! (`PutMode::Update` with its ETag: S3's `If-Match`; on a directory, under an exclusive
//! `flock` of the store's root, which every `put_if` on that directory takes). Reads are
//! bounded: [`Store::get_bounded`] refuses an object larger than its caller accepts before
//! reading it, and stops a body that grows past that while streamed.
//!
//! Store errors that can pass (connection refused, timeouts, server errors) are retried
//! with backoff, each retry announced on one line (`store s3://b/run unreachable (…),
//! retrying in 2 s`); the others (not found, permission denied, a bad key) return at once.
//! Credentials come from the environment of each store (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, …; `GOOGLE_*`;
//! `AZURE_*`) and are never printed: errors and `Debug` show the location's URL only.
//!
//! ```
//! use brandubh_store::Store;
//!
//! let store = Store::open("memory://")?;
//! store.put("chunks/a/000000.brz", b"bytes")?;
//! assert_eq!(store.get("chunks/a/000000.brz")?.as_deref(), Some(&b"bytes"[..]));
//! assert_eq!(store.list("chunks")?.len(), 1);
//! assert_eq!(store.get("missing")?, None);
//! # Ok::<(), brandubh_store::StoreError>(())
//! ```
#![warn(missing_docs)]

mod location;
mod retry;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

pub use location::{Location, LocationError, redact};
pub use retry::Retry;

/// A run's store: a directory or an object store, under the run's prefix.
pub struct Store {
    location: Location,
    inner: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
    retry: Retry,
    /// The largest object [`Store::get`] reads.
    max_object_bytes: u64,
}

/// The largest object [`Store::get`] reads (1 GiB): far above any checkpoint this program
/// writes, and a bound on what a stranger's object can make it allocate.
pub const MAX_OBJECT_BYTES: u64 = 1 << 30;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.location)
    }
}

/// An object found by [`Store::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its key, relative to the run's root.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: SystemTime,
    /// Its version as the store names it (an ETag), if the store gives one.
    pub e_tag: Option<String>,
}

/// The version of an object read with [`Store::get_versioned`], for [`Store::put_if`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(Option<String>);

impl Version {
    /// The store's name for it (an ETag), if it gave one.
    #[must_use]
    pub fn e_tag(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// An object's bytes and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its version.
    pub version: Version,
}

/// What a bounded read found.
enum Fetched {
    Missing,
    TooLarge(u64),
    Got(Vec<u8>, Option<String>),
}

/// The SHA-256 of `bytes` in lower-case hex: the content hash of chunks and network files.
#[must_use]
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A store operation that failed; one line naming the store and the key.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The location could not be parsed.
    #[error(transparent)]
    Location(#[from] LocationError),
    /// The store could not be opened (configuration, credentials).
    #[error("store {location}: {reason}")]
    Open {
        /// The location.
        location: String,
        /// What is wrong.
        reason: String,
    },
    /// An object is larger than its reader accepts; nothing more of it was read.
    #[error("store {location}: {key}: {size} bytes, more than the {max} accepted")]
    TooLarge {
        /// The location.
        location: String,
        /// The key.
        key: String,
        /// Its size (or the bytes seen before the read stopped).
        size: u64,
        /// The most accepted.
        max: u64,
    },
    /// A key is not one this program writes.
    #[error("store {location}: bad key {key:?}")]
    BadKey {
        /// The location.
        location: String,
        /// The key.
        key: String,
    },
    /// An operation failed (after retries, if it could pass).
    #[error("store {location}: {op} {key}: {cause}")]
    Op {
        /// The location.
        location: String,
        /// The operation (`get`, `put`, `list`, `delete`, `rename`).
        op: &'static str,
        /// The key or prefix.
        key: String,
        /// The store's error, on one line.
        cause: String,
    },
}

impl Store {
    /// Opens the store at `location` (see [`Location::parse`]) with the default
    /// [`Retry`]. A local directory is created if missing. Fails with one line on a bad
    /// location, missing credentials or a store that cannot be configured; nothing is
    /// contacted yet.
    pub fn open(location: &str) -> Result<Store, StoreError> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        Store::open_with(Location::parse(location)?, Retry::default(), &env)
    }

    /// Opens `location` with `retry`, reading the store's settings from `env` (name,
    /// value pairs: the process environment for [`Store::open`]).
    pub fn open_with(
        location: Location,
        retry: Retry,
        env: &[(String, String)],
    ) -> Result<Store, StoreError> {
        let open_err = |reason: String| StoreError::Open {
            location: location.to_string(),
            reason,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("brandubh-store")
            .enable_all()
            .build()
            .map_err(|e| open_err(format!("cannot start its runtime: {e}")))?;
        let inner = cloud::build(&location, env).map_err(open_err)?;
        Ok(Store {
            location,
            inner,
            runtime,
            retry,
            max_object_bytes: MAX_OBJECT_BYTES,
        })
    }

    /// The location, as a URL or a directory (never with credentials).
    #[must_use]
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The object at `key`; `None` if there is none. Objects over [`MAX_OBJECT_BYTES`] are
    /// refused ([`StoreError::TooLarge`]).
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_bounded(key, self.max_object_bytes)
    }

    /// The object at `key` if it holds at most `max` bytes; `None` if there is none. A
    /// larger one is [`StoreError::TooLarge`]: refused from its size before its body is
    /// read, or as soon as a streamed body passes `max`.
    pub fn get_bounded(&self, key: &str, max: u64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.get_versioned(key, max)?.map(|v| v.bytes))
    }

    /// [`Store::get_bounded`], with the object's version for [`Store::put_if`].
    pub fn get_versioned(&self, key: &str, max: u64) -> Result<Option<Versioned>, StoreError> {
        match self.fetch(key, max)? {
            Fetched::Missing => Ok(None),
            Fetched::TooLarge(size) => Err(StoreError::TooLarge {
                location: self.location.to_string(),
                key: key.to_owned(),
                size,
                max,
            }),
            Fetched::Got(bytes, e_tag) => Ok(Some(Versioned {
                bytes,
                version: Version(e_tag),
            })),
        }
    }

    fn fetch(&self, key: &str, max: u64) -> Result<Fetched, StoreError> {
        let path = self.read_path(key)?;
        self.retrying("get", key, || {
            let path = path.clone();
            async move {
                let got = match self.inner.get(&path).await {
                    Ok(got) => got,
                    Err(object_store::Error::NotFound { .. }) => return Ok(Fetched::Missing),
                    Err(e) => return Err(e),
                };
                let (size, e_tag) = (got.meta.size, got.meta.e_tag.clone());
                if size > max {
                    return Ok(Fetched::TooLarge(size));
                }
                let mut bytes =
                    Vec::with_capacity(usize::try_from(size.min(64 << 20)).unwrap_or(0));
                let mut stream = got.into_stream();
                while let Some(part) = stream.try_next().await? {
                    let seen = (bytes.len() + part.len()) as u64;
                    if seen > max {
                        return Ok(Fetched::TooLarge(seen));
                    }
                    bytes.extend_from_slice(&part);
                }
                Ok(Fetched::Got(bytes, e_tag))
            }
        })
    }

    /// The size, time and version of the object at `key`, without its body.
    pub fn head(&self, key: &str) -> Result<Option<Entry>, StoreError> {
        let path = self.read_path(key)?;
        self.retrying("head", key, || {
            let path = path.clone();
            async move {
                match self.inner.head(&path).await {
                    Ok(meta) => Ok(Some(entry(meta))),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            }
        })
    }

    /// Writes `bytes` at `key`, whole (replacing what was there).
    pub fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.put_mode(key, bytes, "put", || PutMode::Overwrite)
            .map(|_| ())
            .map_err(StoreError::from)
    }

    /// Writes `bytes` at `key` only if no object is there: `true` if the object now holds
    /// them (written by this call, or by an earlier try of it whose answer was lost), `false`
    /// if another object was there first (left as it was). A store that cannot write
    /// create-only (an S3 server with conditional puts disabled) is an error, never a
    /// silent overwrite.
    pub fn put_new(&self, key: &str, bytes: &[u8]) -> Result<bool, StoreError> {
        match self.put_mode(key, bytes, "put-new", || PutMode::Create) {
            Ok(_) => Ok(true),
            Err(Conditional::Failed) => self.holds(key, bytes),
            Err(Conditional::Store(e)) => Err(e),
        }
    }

    /// Replaces the object at `key` with `bytes` only if it is still `expected` (read by
    /// [`Store::get_versioned`]): its new version, or `None` if it changed or is gone
    /// since (nothing written).
    pub fn put_if(
        &self,
        key: &str,
        bytes: &[u8],
        expected: &Version,
    ) -> Result<Option<Version>, StoreError> {
        if let Location::Local(dir) = &self.location {
            return self.put_if_locked(dir, key, bytes, expected);
        }
        let update = || {
            PutMode::Update(UpdateVersion {
                e_tag: expected.0.clone(),
                version: None,
            })
        };
        match self.put_mode(key, bytes, "put-if", update) {
            Ok(e_tag) => Ok(Some(Version(e_tag))),
            Err(Conditional::Failed) => self.version_if_holds(key, bytes),
            Err(Conditional::Store(e)) => Err(e),
        }
    }

    /// A directory cannot compare and swap: `put_if` holds an exclusive lock on the root
    /// directory while it compares the version and renames the new file in place.
    fn put_if_locked(
        &self,
        dir: &std::path::Path,
        key: &str,
        bytes: &[u8],
        expected: &Version,
    ) -> Result<Option<Version>, StoreError> {
        let op_err = |cause: String| StoreError::Op {
            location: self.location.to_string(),
            op: "put-if",
            key: key.to_owned(),
            cause,
        };
        let root = std::fs::File::open(dir)
            .map_err(|e| op_err(format!("cannot open the directory: {e}")))?;
        root.lock()
            .map_err(|e| op_err(format!("cannot lock the directory: {e}")))?;
        let current = self.head(key)?.map(|e| e.e_tag);
        if current != Some(expected.0.clone()) {
            return Ok(None);
        }
        let e_tag = self
            .put_mode(key, bytes, "put-if", || PutMode::Overwrite)
            .map_err(|e| match e {
                Conditional::Store(e) => e,
                Conditional::Failed => op_err("overwritten".into()),
            })?;
        drop(root);
        Ok(Some(Version(e_tag)))
    }

    /// Whether the object at `key` holds exactly `bytes` (after a conditional write failed:
    /// an earlier try of the same write may have landed).
    fn holds(&self, key: &str, bytes: &[u8]) -> Result<bool, StoreError> {
        Ok(self.version_if_holds(key, bytes)?.is_some())
    }

    fn version_if_holds(&self, key: &str, bytes: &[u8]) -> Result<Option<Version>, StoreError> {
        let max = bytes.len() as u64;
        match self.fetch(key, max)? {
            Fetched::Got(found, e_tag) if found == bytes => Ok(Some(Version(e_tag))),
            _ => Ok(None),
        }
    }

    /// A put with `mode`; a failed precondition is [`Conditional::Failed`].
    fn put_mode(
        &self,
        key: &str,
        bytes: &[u8],
        op: &'static str,
        mode: impl Fn() -> PutMode,
    ) -> Result<Option<String>, Conditional> {
        let path = self.path(key)?;
        let payload = bytes::Bytes::copy_from_slice(bytes);
        let put = self.retrying(op, key, || {
            let (path, payload) = (path.clone(), PutPayload::from_bytes(payload.clone()));
            let options = PutOptions::from(mode());
            async move {
                match self.inner.put_opts(&path, payload, options).await {
                    Ok(done) => Ok(Ok(done.e_tag)),
                    Err(
                        object_store::Error::AlreadyExists { .. }
                        | object_store::Error::Precondition { .. },
                    ) => Ok(Err(())),
                    Err(e) => Err(e),
                }
            }
        })?;
        put.map_err(|()| Conditional::Failed)
    }

    /// Every object under `prefix` (a key or a key's leading segments; `""`: all),
    /// sorted by key, strangers' objects included (they may be read, moved and deleted,
    /// never written). A local store's temporary files are left out.
    pub fn list(&self, prefix: &str) -> Result<Vec<Entry>, StoreError> {
        let path = if prefix.is_empty() {
            None
        } else {
            Some(self.path(prefix)?)
        };
        let mut entries: Vec<Entry> = self.retrying("list", prefix, || {
            let path = path.clone();
            async move {
                let metas: Vec<object_store::ObjectMeta> =
                    self.inner.list(path.as_ref()).try_collect().await?;
                Ok(metas
                    .into_iter()
                    .filter(|m| listable(m.location.as_ref()))
                    .map(entry)
                    .collect())
            }
        })?;
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(entries)
    }

    /// Deletes the object at `key` (nothing if there is none).
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.read_path(key)?;
        self.retrying("delete", key, || {
            let path = path.clone();
            async move {
                match self.inner.delete(&path).await {
                    Err(object_store::Error::NotFound { .. }) => Ok(()),
                    other => other,
                }
            }
        })
    }

    /// Moves the object at `from` to `to` (copy, then delete where the store cannot
    /// rename).
    pub fn rename(&self, from: &str, to: &str) -> Result<(), StoreError> {
        let (src, dst) = (self.read_path(from)?, self.path(to)?);
        self.retrying("rename", from, || {
            let (src, dst) = (src.clone(), dst.clone());
            async move { self.inner.rename(&src, &dst).await }
        })
    }

    /// The path of a key this program writes ([`valid_key`]).
    fn path(&self, key: &str) -> Result<ObjectPath, StoreError> {
        if !valid_key(key) {
            return Err(self.bad_key(key));
        }
        ObjectPath::parse(key).map_err(|_| self.bad_key(key))
    }

    /// The path of a key to read, move or delete: one this program writes, or a stranger's
    /// that [`Store::list`] found.
    fn read_path(&self, key: &str) -> Result<ObjectPath, StoreError> {
        if !listable(key) {
            return Err(self.bad_key(key));
        }
        ObjectPath::parse(key).map_err(|_| self.bad_key(key))
    }

    fn bad_key(&self, key: &str) -> StoreError {
        StoreError::BadKey {
            location: self.location.to_string(),
            key: redact(key),
        }
    }

    /// Runs the operation `make()` builds until it succeeds, fails for good, or the
    /// retry policy gives up.
    fn retrying<T, F, Fut>(&self, op: &'static str, key: &str, make: F) -> Result<T, StoreError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = object_store::Result<T>>,
    {
        let mut attempt = 0u32;
        let started = std::time::Instant::now();
        loop {
            let error = match self.runtime.block_on(make()) {
                Ok(value) => {
                    if attempt > 0 {
                        tracing::info!("store {} reachable again", self.location);
                    }
                    return Ok(value);
                }
                Err(e) => e,
            };
            let cause = match &error {
                object_store::Error::NotImplemented { .. } => format!(
                    "{}: the store cannot write conditionally (S3: a server that honours If-None-Match and If-Match, with AWS_CONDITIONAL_PUT unset or \"etag\")",
                    one_line(&error)
                ),
                _ => one_line(&error),
            };
            let wait = self.retry.delay(attempt);
            if !retry::transient(&error) || started.elapsed() + wait > self.retry.give_up_after {
                return Err(StoreError::Op {
                    location: self.location.to_string(),
                    op,
                    key: key.to_owned(),
                    cause,
                });
            }
            tracing::warn!(
                "store {} unreachable ({op} {key}: {cause}), retrying in {} s",
                self.location,
                wait.as_secs_f64()
            );
            std::thread::sleep(wait);
            attempt += 1;
        }
    }
}

/// Why a conditional put did not write.
enum Conditional {
    /// The object was there (create-only) or had changed (update).
    Failed,
    /// The store failed.
    Store(StoreError),
}

impl From<StoreError> for Conditional {
    fn from(e: StoreError) -> Conditional {
        Conditional::Store(e)
    }
}

impl From<Conditional> for StoreError {
    fn from(c: Conditional) -> StoreError {
        match c {
            Conditional::Store(e) => e,
            Conditional::Failed => StoreError::Op {
                location: String::new(),
                op: "put",
                key: String::new(),
                cause: "a plain put reported a failed precondition".into(),
            },
        }
    }
}

fn entry(m: object_store::ObjectMeta) -> Entry {
    Entry {
        key: m.location.to_string(),
        size: m.size,
        modified: m.last_modified.into(),
        e_tag: m.e_tag,
    }
}

/// Keys that may be read, moved or deleted: at most 1,024 bytes, no control characters,
/// not a local store's temporary file (`NAME#N`); `object_store`'s own parsing refuses
/// `.` and `..` segments after this.
fn listable(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 1024
        && !key.chars().any(char::is_control)
        && !key.split('/').next_back().is_some_and(is_temp_name)
}

/// `NAME#DIGITS`: a temporary file of `LocalFileSystem`'s puts.
fn is_temp_name(name: &str) -> bool {
    name.rsplit_once('#')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The keys this program writes: ASCII letters, digits, `.`, `_`, `-` in `/`-separated
/// segments, none empty or starting with `.` or `#` (temporary files).
fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 512
        && key.split('/').all(|s| {
            !s.is_empty()
                && !s.starts_with('.')
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        })
}

/// An error and its causes on one line, each cause once, URLs redacted, cut after
/// [`brandubh_fs::ONE_LINE_MAX_CHARS`] characters.
fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    brandubh_fs::one_line(&redact(&brandubh_fs::error_line(error)))
}

mod cloud {
    //! Building the `object_store` of a location, with its environment.

    use super::*;
    use object_store::{aws, azure, gcp};

    /// Request timeouts: a dead server is noticed in seconds and retried by
    /// [`Store`]'s own loop (object_store's silent retries are off). Set before the
    /// environment's keys, which may change them (`AWS_ALLOW_HTTP`).
    fn client_options() -> object_store::ClientOptions {
        object_store::ClientOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_timeout(Duration::from_secs(120))
    }

    fn no_retries() -> object_store::RetryConfig {
        object_store::RetryConfig {
            max_retries: 0,
            ..object_store::RetryConfig::default()
        }
    }

    /// The values of `env` whose names start with `prefix`, as the store's config keys
    /// (lower case, as object_store's `from_env` does).
    fn configs<'e, K: std::str::FromStr>(
        env: &'e [(String, String)],
        prefix: &'e str,
    ) -> impl Iterator<Item = (K, &'e str)> + 'e {
        env.iter().filter_map(move |(name, value)| {
            let key = name
                .starts_with(prefix)
                .then(|| name.to_ascii_lowercase())?;
            Some((key.parse().ok()?, value.as_str()))
        })
    }

    /// A cloud store from its builder: our timeouts, then the environment's keys (which
    /// may change them), the bucket, no silent retries, under the run's prefix.
    macro_rules! cloud {
        ($builder:path, $env:expr, $env_prefix:literal, $bucket:ident($name:expr), $prefix:expr) => {{
            install_tls_provider();
            let store = configs($env, $env_prefix)
                .fold(
                    <$builder>::new().with_client_options(client_options()),
                    |b, (k, v)| b.with_config(k, v),
                )
                .$bucket($name)
                .with_retry(no_retries())
                .build()
                .map_err(|e| one_line(&e))?;
            prefixed(store, $prefix)
        }};
    }

    pub(super) fn build(
        location: &Location,
        env: &[(String, String)],
    ) -> Result<Arc<dyn ObjectStore>, String> {
        let one = |e: object_store::Error| one_line(&e);
        Ok(match location {
            Location::Local(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create the directory: {e}"))?;
                Arc::new(
                    object_store::local::LocalFileSystem::new_with_prefix(dir)
                        .map_err(one)?
                        .with_automatic_cleanup(true),
                )
            }
            Location::Memory => Arc::new(object_store::memory::InMemory::new()),
            Location::S3 { bucket, prefix } => {
                check_aws_credentials(env)?;
                cloud!(
                    aws::AmazonS3Builder,
                    env,
                    "AWS_",
                    with_bucket_name(bucket),
                    prefix
                )
            }
            Location::Gcs { bucket, prefix } => {
                cloud!(
                    gcp::GoogleCloudStorageBuilder,
                    env,
                    "GOOGLE_",
                    with_bucket_name(bucket),
                    prefix
                )
            }
            Location::Azure { container, prefix } => {
                cloud!(
                    azure::MicrosoftAzureBuilder,
                    env,
                    "AZURE_",
                    with_container_name(container),
                    prefix
                )
            }
        })
    }

    fn prefixed<T: ObjectStore>(store: T, prefix: &str) -> Arc<dyn ObjectStore> {
        if prefix.is_empty() {
            Arc::new(store)
        } else {
            Arc::new(object_store::prefix::PrefixStore::new(store, prefix))
        }
    }

    /// Without keys object_store would ask the cloud's instance metadata service, which
    /// off the cloud means a hang; say what is missing instead.
    fn check_aws_credentials(env: &[(String, String)]) -> Result<(), String> {
        let get = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let set = |name: &str| get(name).is_some_and(|v| !v.is_empty());
        let keys = set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY");
        let other = [
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        ]
        .iter()
        .any(|n| set(n));
        let unsigned = get("AWS_SKIP_SIGNATURE").is_some_and(|v| v == "true" || v == "1");
        let metadata = get("AWS_IMDS").is_some_and(|v| v == "1");
        if keys || other || unsigned || metadata {
            Ok(())
        } else {
            Err("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_WEB_IDENTITY_TOKEN_FILE, AWS_CONTAINER_CREDENTIALS_*, AWS_SKIP_SIGNATURE=true, or AWS_IMDS=1 on EC2)".to_owned())
        }
    }

    /// rustls is built without a default crypto provider (no aws-lc-rs, which needs
    /// cmake); use ring, already in the tree. Installing twice is harmless.
    fn install_tls_provider() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys `s` lists under `prefix`.
    fn keys(s: &Store, prefix: &str) -> Vec<String> {
        s.list(prefix).unwrap().into_iter().map(|e| e.key).collect()
    }

    #[test]
    fn memory_round_trip_and_listing() {
        let s = Store::open("memory://").unwrap();
        s.put("chunks/b/000001.brz", b"1").unwrap();
        s.put("chunks/a/000000.brz", b"0").unwrap();
        s.put("config.toml", b"c").unwrap();
        let keys = keys(&s, "chunks");
        assert_eq!(keys, ["chunks/a/000000.brz", "chunks/b/000001.brz"]);
        assert_eq!(s.list("").unwrap().len(), 3);
        s.rename("chunks/a/000000.brz", "rejected/a/000000.brz")
            .unwrap();
        assert_eq!(s.get("chunks/a/000000.brz").unwrap(), None);
        assert_eq!(s.get("rejected/a/000000.brz").unwrap().unwrap(), b"0");
        s.delete("config.toml").unwrap();
        s.delete("config.toml").unwrap();
        assert_eq!(s.get("config.toml").unwrap(), None);
    }

    #[test]
    fn a_directory_store_writes_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run");
        let s = Store::open(root.to_str().unwrap()).unwrap();
        s.put("checkpoints/iter-000001.json", b"{}").unwrap();
        assert_eq!(
            std::fs::read(root.join("checkpoints/iter-000001.json")).unwrap(),
            b"{}"
        );
        // A leftover temporary file of an interrupted write is not an object of the run.
        std::fs::write(root.join("checkpoints/iter-000002.json#1"), b"x").unwrap();
        let keys = keys(&s, "checkpoints");
        assert_eq!(keys, ["checkpoints/iter-000001.json"]);
        let url = format!("file://{}", root.display());
        assert_eq!(
            Store::open(&url)
                .unwrap()
                .get("checkpoints/iter-000001.json")
                .unwrap()
                .unwrap(),
            b"{}"
        );
    }

    /// Create-only and compare-and-swap writes, on a store of each kind that has them.
    fn conditional_writes(s: &Store) {
        assert!(s.put_new("learner/iter-000001.json", b"one").unwrap());
        // The same bytes again: an earlier try of the same write landed.
        assert!(s.put_new("learner/iter-000001.json", b"one").unwrap());
        assert!(!s.put_new("learner/iter-000001.json", b"two").unwrap());
        assert_eq!(s.get("learner/iter-000001.json").unwrap().unwrap(), b"one");
        s.put("latest", b"v1").unwrap();
        let v1 = s.get_versioned("latest", 100).unwrap().unwrap();
        let v2 = s.put_if("latest", b"v2", &v1.version).unwrap().unwrap();
        // A writer still holding v1 lost: nothing written.
        assert_eq!(s.put_if("latest", b"v3", &v1.version).unwrap(), None);
        assert_eq!(s.get("latest").unwrap().unwrap(), b"v2");
        assert!(s.put_if("latest", b"v4", &v2).unwrap().is_some());
        s.delete("latest").unwrap();
        assert_eq!(s.put_if("latest", b"v5", &v2).unwrap(), None);
        assert_eq!(s.get("latest").unwrap(), None);
    }

    #[test]
    fn conditional_writes_in_memory_and_in_a_directory() {
        conditional_writes(&Store::open("memory://").unwrap());
        let dir = tempfile::tempdir().unwrap();
        conditional_writes(&Store::open(dir.path().to_str().unwrap()).unwrap());
    }

    #[test]
    fn reads_are_bounded_before_and_while_streaming() {
        let dir = tempfile::tempdir().unwrap();
        for s in [
            Store::open("memory://").unwrap(),
            Store::open(dir.path().to_str().unwrap()).unwrap(),
        ] {
            s.put("chunks/a/big", &vec![7u8; 100_000]).unwrap();
            let e = s
                .get_bounded("chunks/a/big", 99_999)
                .unwrap_err()
                .to_string();
            assert!(
                e.ends_with("chunks/a/big: 100000 bytes, more than the 99999 accepted"),
                "{e}"
            );
            assert_eq!(
                s.get_bounded("chunks/a/big", 100_000)
                    .unwrap()
                    .unwrap()
                    .len(),
                100_000
            );
            assert_eq!(s.head("chunks/a/big").unwrap().unwrap().size, 100_000);
            assert_eq!(s.head("chunks/a/none").unwrap(), None);
        }
        assert_eq!(
            content_hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn strangers_keys_are_listed_read_and_moved_but_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path().to_str().unwrap()).unwrap();
        std::fs::create_dir_all(dir.path().join("chunks/a b")).unwrap();
        std::fs::write(dir.path().join("chunks/a b/x y.brz"), b"junk").unwrap();
        let keys = keys(&s, "chunks");
        assert_eq!(keys, ["chunks/a b/x y.brz"]);
        assert_eq!(s.get("chunks/a b/x y.brz").unwrap().unwrap(), b"junk");
        s.rename("chunks/a b/x y.brz", "quarantine/objects/x")
            .unwrap();
        assert!(
            s.put("chunks/a b/z", b"z")
                .unwrap_err()
                .to_string()
                .contains("bad key")
        );
    }

    #[test]
    fn bad_keys_are_refused() {
        let s = Store::open("memory://").unwrap();
        for key in [
            "", "../x", "a//b", "/abs", ".hidden", "a/#tmp", "a b", "a/../b",
        ] {
            let e = s.put(key, b"x").unwrap_err().to_string();
            assert!(e.contains("bad key"), "{key}: {e}");
        }
    }

    fn env(vars: &[(&str, &str)]) -> Vec<(String, String)> {
        vars.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn missing_s3_credentials_are_one_line() {
        let location = Location::parse("s3://bucket/run").unwrap();
        let e = Store::open_with(
            location,
            Retry::default(),
            &env(&[("AWS_ENDPOINT_URL", "http://127.0.0.1:9")]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("store s3://bucket/run: no credentials"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn an_unreachable_server_is_retried_then_reported_without_secrets() {
        // Nothing listens on port 9 of loopback: connection refused at once.
        let retry = Retry {
            first: Duration::from_millis(10),
            max: Duration::from_millis(20),
            give_up_after: Duration::from_millis(300),
        };
        let location = Location::parse("s3://b/run").unwrap();
        let vars = env(&[
            ("AWS_ENDPOINT_URL", "http://user:ENDPOINTPASS@127.0.0.1:9"),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_ACCESS_KEY_ID", "AKIDVALUE"),
            ("AWS_SECRET_ACCESS_KEY", "SECRETVALUE"),
            ("AWS_REGION", "us-east-1"),
        ]);
        let store = Store::open_with(location, retry, &vars).unwrap();
        let e = store.get("config.toml").unwrap_err().to_string();
        assert!(e.starts_with("store s3://b/run: get config.toml: "), "{e}");
        assert!(!e.contains("SECRETVALUE") && !e.contains('\n'), "{e}");
        assert!(!e.contains("ENDPOINTPASS"), "{e}");
        assert!(!format!("{store:?}").contains("SECRETVALUE"));
    }

    #[test]
    fn a_refusal_before_sending_is_not_retried() {
        // http:// without AWS_ALLOW_HTTP: refused by the client, answered at once even
        // though the policy would wait for an hour.
        let retry = Retry {
            give_up_after: Duration::from_secs(3600),
            ..Retry::default()
        };
        let vars = env(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
            ("AWS_ACCESS_KEY_ID", "k"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
        ]);
        let store = Store::open_with(Location::parse("s3://b").unwrap(), retry, &vars).unwrap();
        let t0 = std::time::Instant::now();
        let e = store.put("x", b"1").unwrap_err().to_string();
        assert!(t0.elapsed() < Duration::from_secs(5), "{e}");
        assert!(e.starts_with("store s3://b: put x: "), "{e}");
    }
}
