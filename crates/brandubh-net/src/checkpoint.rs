//! Checkpoints: the weights in safetensors plus a small JSON metadata file.
//!
//! A checkpoint named by a *stem* `dir/ckpt-000120` is two files:
//! - `dir/ckpt-000120.safetensors`: every tensor of the model (burn's
//!   `SafetensorsStore`), batch-norm running statistics included;
//! - `dir/ckpt-000120.json`: [`CheckpointMeta`] — format, encoding version, model config,
//!   training step, size and FNV-1a 64 hash of the weights file, free-form extras;
//! - with [`save_training`] also `dir/ckpt-000120.optim.bpk`: the optimizer state, so that
//!   [`load_training`] resumes a [`Trainer`] exactly.
//!
//! Each file is written atomically (temporary sibling, `fsync`, rename), the weights first and the
//! metadata last: a checkpoint is complete exactly when its metadata file exists, and a crash
//! never leaves a half-written file under either name. Loading checks the format, the
//! encoding version, the expected config (if given), the size and hash of the weights and
//! every tensor's shape, and reports any failure as a [`CheckpointError`] naming the file.
//!
//! ```
//! use brandubh_net::checkpoint::{self, SaveOptions};
//! use brandubh_net::NetConfig;
//! use burn::tensor::Device;
//!
//! let dir = std::env::temp_dir().join(format!("brandubh-net-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let config = NetConfig::new().with_channels(8).with_blocks(1);
//! let model = config.init(&Device::flex());
//! checkpoint::save(dir.join("ckpt-1"), &model, &SaveOptions::at_step(1))?;
//! let (loaded, meta) = checkpoint::load(dir.join("ckpt-1"), &Device::flex(), Some(&config))?;
//! assert_eq!(meta.step, 1);
//! assert_eq!(loaded.config(), config);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::store::{ModuleSnapshot, SafetensorsStore};
use burn::tensor::{Bytes, Device, Tensor, TensorData};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::encoding::ENCODING_VERSION;
use crate::folded::FoldedNet;
use crate::model::{NetConfig, PolicyValueNet};
use crate::optimize::{OptimizerConfig, Trainer};

/// The `format` field of every metadata file.
pub const FORMAT: &str = "brandubh-net-checkpoint";
/// Version of the checkpoint layout (files and metadata fields).
pub const FORMAT_VERSION: u32 = 1;
/// Extension of the weights file.
pub const WEIGHTS_EXTENSION: &str = "safetensors";
/// Extension of the metadata file.
pub const META_EXTENSION: &str = "json";

/// What went wrong with a checkpoint.
#[derive(Debug, Error)]
pub enum CheckpointError {
    /// Reading or writing a file failed.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// No metadata file: the checkpoint does not exist or was never completed.
    #[error("{}: no such checkpoint (its metadata file is missing or the save never completed)", path.display())]
    Missing {
        /// The metadata file looked for.
        path: PathBuf,
    },
    /// The metadata file is not valid checkpoint JSON.
    #[error("{}: invalid checkpoint metadata: {reason}", path.display())]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The checkpoint was written with another input/policy encoding.
    #[error("{}: encoding version {found}, this build uses {expected}", path.display())]
    EncodingMismatch {
        /// The metadata file.
        path: PathBuf,
        /// Version in the file.
        found: u32,
        /// Version of this build ([`ENCODING_VERSION`]).
        expected: u32,
    },
    /// The checkpoint's model config is not the one expected.
    #[error("{}: model config mismatch: {details}", path.display())]
    ConfigMismatch {
        /// The metadata file.
        path: PathBuf,
        /// The differing fields, `name: found X, expected Y`.
        details: String,
    },
    /// The weights file does not match its metadata (truncated, corrupted, replaced).
    #[error("{}: corrupt weights file: {reason}", path.display())]
    Corrupt {
        /// The weights file.
        path: PathBuf,
        /// What does not match.
        reason: String,
    },
    /// The optimizer state could not be written or read back.
    #[error("{}: optimizer state: {reason}", path.display())]
    Optimizer {
        /// The optimizer state file.
        path: PathBuf,
        /// burn's report.
        reason: String,
    },
    /// The weights file does not fit the model its metadata describes.
    #[error("{}: weights do not fit the model: {reason}", path.display())]
    Weights {
        /// The weights file.
        path: PathBuf,
        /// burn's report.
        reason: String,
    },
}

/// The metadata file of a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// [`ENCODING_VERSION`] of the writer.
    pub encoding_version: u32,
    /// The model's shape.
    pub config: NetConfig,
    /// Training steps (optimizer updates) behind these weights.
    pub step: u64,
    /// Name of the weights file, in the metadata file's directory.
    pub weights_file: String,
    /// Size of the weights file in bytes.
    pub weights_bytes: u64,
    /// FNV-1a 64 hash of the weights file, 16 hex digits.
    pub weights_fnv1a64: String,
    /// Version of burn that wrote the weights.
    pub burn_version: String,
    /// Seconds since the Unix epoch when written.
    pub created_unix_s: u64,
    /// Anything else the trainer wants to keep (learning rate, games played, …).
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The optimizer state file, when written by [`save_training`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<OptimizerMeta>,
    /// Ids of the model's tensors in visiting order, when written by [`save_training`]: the
    /// optimizer state is keyed by them, so a resumed model gets them back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub param_ids: Vec<u64>,
}

/// The optimizer state file of a checkpoint (burn's burnpack format).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptimizerMeta {
    /// Name of the file, in the metadata file's directory.
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
    /// FNV-1a 64 hash, 16 hex digits.
    pub fnv1a64: String,
    /// The trainer's settings; the state is restored only into the same kind of optimizer.
    pub train_config: OptimizerConfig,
}

/// What [`save`] records besides the weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SaveOptions {
    /// Training step.
    pub step: u64,
    /// Free-form extras stored in [`CheckpointMeta::extra`].
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl SaveOptions {
    /// Options with only the training step.
    #[must_use]
    pub fn at_step(step: u64) -> SaveOptions {
        SaveOptions {
            step,
            extra: BTreeMap::new(),
        }
    }
}

/// The two files of the checkpoint named by `path`: a stem (`dir/ckpt-12`) or either file
/// (`dir/ckpt-12.json`, `dir/ckpt-12.safetensors`).
#[must_use]
pub fn paths(path: impl AsRef<Path>) -> (PathBuf, PathBuf) {
    let path = path.as_ref();
    let stem = match path.extension().and_then(|e| e.to_str()) {
        Some(WEIGHTS_EXTENSION | META_EXTENSION) => path.with_extension(""),
        _ => path.to_path_buf(),
    };
    let with = |ext: &str| {
        let mut s = stem.clone().into_os_string();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    };
    (with(WEIGHTS_EXTENSION), with(META_EXTENSION))
}

/// The optimizer state file of checkpoint `path` (`dir/ckpt-12.optim.bpk`), written by
/// [`save_training`].
#[must_use]
pub fn optimizer_path(path: impl AsRef<Path>) -> PathBuf {
    let (weights, _) = paths(path);
    weights.with_extension(OPTIMIZER_EXTENSION)
}

/// Extension of the optimizer state file.
pub const OPTIMIZER_EXTENSION: &str = "optim.bpk";

/// Saves `model` as the checkpoint `path` (a stem or either file name; see [`paths`]),
/// replacing any checkpoint of that name. Returns the metadata written.
pub fn save(
    path: impl AsRef<Path>,
    model: &PolicyValueNet,
    options: &SaveOptions,
) -> Result<CheckpointMeta, CheckpointError> {
    save_impl(path.as_ref(), model, options, None)
}

/// Saves a [`Trainer`]: its model as [`save`] does, plus the optimizer state (a third file,
/// [`optimizer_path`]) and the ids that key it, so that [`load_training`] resumes exactly.
/// [`SaveOptions::step`] is recorded as given (usually `trainer.steps()`).
pub fn save_training(
    path: impl AsRef<Path>,
    trainer: &Trainer,
    options: &SaveOptions,
) -> Result<CheckpointMeta, CheckpointError> {
    save_impl(path.as_ref(), trainer.model(), options, Some(trainer))
}

fn save_impl(
    path: &Path,
    model: &PolicyValueNet,
    options: &SaveOptions,
    trainer: Option<&Trainer>,
) -> Result<CheckpointMeta, CheckpointError> {
    let (weights_path, meta_path) = paths(path);
    let bytes = weights_to_bytes(model).map_err(|reason| CheckpointError::Weights {
        path: weights_path.clone(),
        reason,
    })?;
    let optimizer = match trainer {
        Some(t) => {
            let opt_path = optimizer_path(path);
            let opt_bytes = t
                .optimizer()
                .into_bytes()
                .map_err(|e| CheckpointError::Optimizer {
                    path: opt_path.clone(),
                    reason: format!("{e:?}"),
                })?
                .to_vec();
            Some((opt_path, opt_bytes, *t.config()))
        }
        None => None,
    };
    let weights_file = file_name(&weights_path);
    let meta = CheckpointMeta {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        encoding_version: ENCODING_VERSION,
        config: model.config(),
        step: options.step,
        weights_file,
        weights_bytes: bytes.len() as u64,
        weights_fnv1a64: format!("{:016x}", brandubh_fs::fnv1a64(&bytes)),
        burn_version: BURN_VERSION.to_string(),
        created_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        extra: options.extra.clone(),
        optimizer: optimizer.as_ref().map(|(p, b, config)| OptimizerMeta {
            file: file_name(p),
            bytes: b.len() as u64,
            fnv1a64: format!("{:016x}", brandubh_fs::fnv1a64(b)),
            train_config: *config,
        }),
        param_ids: if trainer.is_some() {
            param_ids(model)
        } else {
            Vec::new()
        },
    };
    let json = serde_json::to_vec_pretty(&meta).map_err(|e| CheckpointError::Metadata {
        path: meta_path.clone(),
        reason: e.to_string(),
    })?;
    // A stale metadata file must not vouch for the new weights while they are replaced.
    match fs::remove_file(&meta_path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(CheckpointError::Io {
                path: meta_path,
                cause: source,
            });
        }
    }
    write_atomic(&weights_path, &bytes)?;
    if let Some((opt_path, opt_bytes, _)) = &optimizer {
        write_atomic(opt_path, opt_bytes)?;
    }
    write_atomic(&meta_path, &json)?;
    Ok(meta)
}

/// The first key (dotted path) of the JSON object `found` that `known`, the same metadata as
/// this build writes it, does not have (null and empty values aside); the free-form `extra`
/// map is not checked.
fn unknown_key(found: &serde_json::Value, known: &serde_json::Value, at: &str) -> Option<String> {
    let (serde_json::Value::Object(found), serde_json::Value::Object(known)) = (found, known)
    else {
        return None;
    };
    for (key, value) in found {
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        match known.get(key) {
            // A field written as null or [] may be one this build skips when empty.
            None if value.is_null() || value.as_array().is_some_and(Vec::is_empty) => {}
            None => return Some(path),
            Some(_) if path == "extra" => {}
            Some(k) => {
                if let Some(bad) = unknown_key(value, k, &path) {
                    return Some(bad);
                }
            }
        }
    }
    None
}

/// Reads and checks the metadata of checkpoint `path` without loading the weights.
pub fn read_meta(path: impl AsRef<Path>) -> Result<CheckpointMeta, CheckpointError> {
    let (_, meta_path) = paths(path);
    let text = match fs::read(&meta_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CheckpointError::Missing { path: meta_path });
        }
        Err(source) => {
            return Err(CheckpointError::Io {
                path: meta_path,
                cause: source,
            });
        }
    };
    let bad = |reason: String| CheckpointError::Metadata {
        path: meta_path.clone(),
        reason,
    };
    let value: serde_json::Value = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    let meta: CheckpointMeta =
        serde_json::from_value(value.clone()).map_err(|e| bad(e.to_string()))?;
    // serde skips keys it does not know, and optional fields read as absent: a damaged key
    // name (a flipped byte) would silently drop a setting. Every key of the file must be
    // one this build writes (`extra` is free-form).
    let known = serde_json::to_value(&meta).map_err(|e| bad(e.to_string()))?;
    if let Some(key) = unknown_key(&value, &known, "") {
        return Err(bad(format!("unknown key {key:?}")));
    }
    if meta.format != FORMAT {
        return Err(bad(format!(
            "format {:?}, expected {FORMAT:?}",
            meta.format
        )));
    }
    if meta.format_version != FORMAT_VERSION {
        return Err(bad(format!(
            "format version {}, this build reads {FORMAT_VERSION}",
            meta.format_version
        )));
    }
    if meta.encoding_version != ENCODING_VERSION {
        return Err(CheckpointError::EncodingMismatch {
            path: meta_path,
            found: meta.encoding_version,
            expected: ENCODING_VERSION,
        });
    }
    meta.config.check_limits().map_err(bad)?;
    if !is_plain_file_name(&meta.weights_file) {
        return Err(bad(format!(
            "weights file {:?} is not a plain file name",
            meta.weights_file
        )));
    }
    if let Some(opt) = &meta.optimizer
        && !is_plain_file_name(&opt.file)
    {
        return Err(bad(format!(
            "optimizer file {:?} is not a plain file name",
            opt.file
        )));
    }
    Ok(meta)
}

/// Loads checkpoint `path` onto `device` (plain or autodiff: a model trained on
/// `Device::flex().autodiff()` loads on `Device::flex()` for inference). With `expected`,
/// a checkpoint of another config is an error.
pub fn load(
    path: impl AsRef<Path>,
    device: &Device,
    expected: Option<&NetConfig>,
) -> Result<(PolicyValueNet, CheckpointMeta), CheckpointError> {
    let (bytes, meta, weights_path) = read_checked_weights(path.as_ref(), expected)?;
    let model = weights_from_bytes(&meta.config, bytes, device).map_err(|reason| {
        CheckpointError::Weights {
            path: weights_path,
            reason,
        }
    })?;
    Ok((model, meta))
}

/// Loads checkpoint `path` for inference as a [`FoldedNet`] (batch norm folded), on the
/// CPU: what [`crate::FastNet::load`] and the ONNX export start from. With `expected`, a
/// checkpoint of another config is an error.
pub fn load_folded(
    path: impl AsRef<Path>,
    expected: Option<&NetConfig>,
) -> Result<(FoldedNet, CheckpointMeta), CheckpointError> {
    let (bytes, meta, weights_path) = read_checked_weights(path.as_ref(), expected)?;
    let folded =
        folded_from_bytes(&meta.config, bytes).map_err(|reason| CheckpointError::Weights {
            path: weights_path,
            reason,
        })?;
    Ok((folded, meta))
}

/// The weights file of checkpoint `path` as checked bytes (size and hash as the metadata
/// says, the metadata checked as [`read_meta`] does), with the metadata. With `expected`,
/// a checkpoint of another config is an error.
pub fn read_weights(
    path: impl AsRef<Path>,
    expected: Option<&NetConfig>,
) -> Result<(Vec<u8>, CheckpointMeta), CheckpointError> {
    let (bytes, meta, _) = read_checked_weights(path.as_ref(), expected)?;
    Ok((bytes, meta))
}

/// [`read_weights`], and the path of the weights file.
fn read_checked_weights(
    path: &Path,
    expected: Option<&NetConfig>,
) -> Result<(Vec<u8>, CheckpointMeta, PathBuf), CheckpointError> {
    let (_, meta_path) = paths(path);
    let meta = read_meta(&meta_path)?;
    if let Some(expected) = expected {
        let details = config_diff(&meta.config, expected);
        if !details.is_empty() {
            return Err(CheckpointError::ConfigMismatch {
                path: meta_path,
                details,
            });
        }
    }
    let weights_path = meta_path
        .parent()
        .unwrap_or(Path::new(""))
        .join(&meta.weights_file);
    let bytes = fs::read(&weights_path).map_err(|source| CheckpointError::Io {
        path: weights_path.clone(),
        cause: source,
    })?;
    check_file(
        &weights_path,
        &bytes,
        meta.weights_bytes,
        &meta.weights_fnv1a64,
    )?;
    Ok((bytes, meta, weights_path))
}

/// Resumes training from checkpoint `path`: the model on `device` (an autodiff device,
/// e.g. `Device::flex().autodiff()`), a [`Trainer`] with `config` whose step count starts
/// at the checkpoint's step, and, when the checkpoint was written by [`save_training`] with
/// the same kind of optimizer, the optimizer state (Adam moments, momentum buffers);
/// otherwise a fresh optimizer.
pub fn load_training(
    path: impl AsRef<Path>,
    device: &Device,
    expected: Option<&NetConfig>,
    config: OptimizerConfig,
) -> Result<(Trainer, CheckpointMeta), CheckpointError> {
    let (_, meta_path) = paths(path.as_ref());
    let (mut model, meta) = load(&meta_path, device, expected)?;
    let mut optimizer = config.optimizer();
    if let Some(opt) = &meta.optimizer
        && opt.train_config.optimizer == config.optimizer
    {
        let bad_meta = |reason: String| CheckpointError::Metadata {
            path: meta_path.clone(),
            reason,
        };
        let expected_ids = param_ids(&model).len();
        if meta.param_ids.len() != expected_ids {
            return Err(bad_meta(format!(
                "{} parameter ids for a model with {expected_ids} tensors",
                meta.param_ids.len()
            )));
        }
        model = model.map(&mut SetParamIds {
            ids: &meta.param_ids,
            next: 0,
        });
        let opt_path = meta_path.parent().unwrap_or(Path::new("")).join(&opt.file);
        let bytes = fs::read(&opt_path).map_err(|source| CheckpointError::Io {
            path: opt_path.clone(),
            cause: source,
        })?;
        check_file(&opt_path, &bytes, opt.bytes, &opt.fnv1a64)?;
        optimizer = optimizer
            .from_bytes(Bytes::from_bytes_vec(bytes))
            .map_err(|e| CheckpointError::Optimizer {
                path: opt_path,
                reason: format!("{e:?}"),
            })?;
    }
    let trainer = Trainer::from_parts(model, optimizer, config, meta.step);
    Ok((trainer, meta))
}

/// Ids of every tensor of `model` (parameters and running statistics), in visiting order.
fn param_ids(model: &PolicyValueNet) -> Vec<u64> {
    struct Ids(Vec<u64>);
    impl ModuleVisitor for Ids {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push(param.id.val());
        }
    }
    let mut ids = Ids(Vec::new());
    model.visit(&mut ids);
    ids.0
}

/// Gives the tensors of a module the ids `ids`, in visiting order.
struct SetParamIds<'a> {
    ids: &'a [u64],
    next: usize,
}

impl ModuleMapper for SetParamIds<'_> {
    fn map_float<const D: usize>(&mut self, mut param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        if let Some(&id) = self.ids.get(self.next) {
            param.id = ParamId::from(id);
        }
        self.next += 1;
        param
    }
}

/// Whether `name` is a non-empty file name without directories.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty() && Path::new(name).file_name() == Some(name.as_ref())
}

/// The file name of `path`, or an empty string.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Checks a file's size and hash against its metadata.
fn check_file(path: &Path, bytes: &[u8], size: u64, hash: &str) -> Result<(), CheckpointError> {
    let corrupt = |reason: String| CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    if bytes.len() as u64 != size {
        return Err(corrupt(format!(
            "{} bytes, metadata says {size}",
            bytes.len()
        )));
    }
    let actual = format!("{:016x}", brandubh_fs::fnv1a64(bytes));
    if actual != hash {
        return Err(corrupt(format!(
            "FNV-1a 64 hash {actual}, metadata says {hash}"
        )));
    }
    Ok(())
}

/// The version of burn this crate is built against (pinned in the workspace).
const BURN_VERSION: &str = "0.22.1";

/// `name: found X, expected Y` for each differing field; empty when equal.
fn config_diff(found: &NetConfig, expected: &NetConfig) -> String {
    let fields = [
        ("channels", found.channels, expected.channels),
        ("blocks", found.blocks, expected.blocks),
        (
            "policy_channels",
            found.policy_channels,
            expected.policy_channels,
        ),
        (
            "value_channels",
            found.value_channels,
            expected.value_channels,
        ),
        ("value_hidden", found.value_hidden, expected.value_hidden),
        ("input planes", found.planes(), expected.planes()),
    ];
    let show = |m: Option<usize>| m.map_or("none".to_owned(), |m| m.to_string());
    let moves_left = (found.moves_left_hidden != expected.moves_left_hidden).then(|| {
        format!(
            "moves_left_hidden: found {}, expected {}",
            show(found.moves_left_hidden),
            show(expected.moves_left_hidden)
        )
    });
    fields
        .iter()
        .filter(|(_, f, e)| f != e)
        .map(|(name, f, e)| format!("{name}: found {f}, expected {e}"))
        .chain(moves_left)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The model's tensors as a safetensors file image (what [`save`] writes to the weights
/// file), for formats that embed the weights in a file of their own. The error is burn's
/// report.
pub fn weights_to_bytes(model: &PolicyValueNet) -> Result<Vec<u8>, String> {
    // `valid()` folds pending batch-norm running-statistics updates in; saving the training
    // model directly would store them one update late.
    let model = model.valid();
    let mut store = SafetensorsStore::from_bytes(None);
    model.save_into(&mut store).map_err(|e| e.to_string())?;
    let bytes = store.get_bytes().map_err(|e| e.to_string())?;
    canonical_safetensors(bytes)
}

/// `bytes` (a safetensors image) with the header's `__metadata__` entries in name order.
/// burn writes them from a hash map, in an order that changes from call to call, so equal
/// weights would make files (and agent-file hashes) that differ; the tensors themselves
/// are already in name order. The data section is kept as it is.
fn canonical_safetensors(bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    let bad = |why: &str| format!("burn wrote a safetensors image that {why}");
    let len = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .ok_or_else(|| bad("is shorter than its header length"))?;
    let end = usize::try_from(len)
        .ok()
        .and_then(|n| n.checked_add(8))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| bad("has a header longer than itself"))?;
    let mut header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..end])
            .map_err(|e| bad(&format!("has a bad header: {e}")))?;
    if let Some(serde_json::Value::Object(meta)) = header.get_mut("__metadata__") {
        let mut entries: Vec<_> = std::mem::take(meta).into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        meta.extend(entries);
    }
    let mut text = serde_json::to_vec(&header).map_err(|e| bad(&e.to_string()))?;
    // The data section starts 8-byte aligned, as safetensors writers pad it.
    text.resize(text.len().next_multiple_of(8), b' ');
    let mut out = Vec::with_capacity(8 + text.len() + bytes.len() - end);
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(&bytes[end..]);
    Ok(out)
}

/// A model of `config` on `device` with the tensors of a safetensors file image (the inverse
/// of [`weights_to_bytes`]). Every tensor must be present with its shape, and nothing else;
/// the error is burn's report. The bytes are not checked against a hash: callers check
/// their own.
pub fn weights_from_bytes(
    config: &NetConfig,
    bytes: Vec<u8>,
    device: &Device,
) -> Result<PolicyValueNet, String> {
    let mut model = config.init(device);
    // Partial and unvalidated, so that every problem comes back in the result, which says
    // it on one line; burn's own report is a multi-line box.
    let mut store = SafetensorsStore::from_bytes(Some(bytes))
        .validate(false)
        .allow_partial(true);
    let result = model
        .load_from(&mut store)
        .map_err(|e| brandubh_fs::one_line(&e.to_string()))?;
    let mut problems: Vec<String> = result.errors.iter().map(ToString::to_string).collect();
    if !result.missing.is_empty() {
        let names = result.missing.iter().map(|(path, _)| path.as_str());
        problems.push(format!("missing tensors {}", list(names)));
    }
    if !result.unused.is_empty() {
        let names = result.unused.iter().map(String::as_str);
        problems.push(format!("unexpected tensors {}", list(names)));
    }
    if !problems.is_empty() {
        return Err(brandubh_fs::one_line(&problems.join("; ")));
    }
    Ok(model)
}

/// The element-wise mean of models of `config`, each given as a safetensors file image
/// (what [`weights_to_bytes`] writes), as one such image: every tensor, the batch norms'
/// running statistics included. The mean of a run's last checkpoints (stochastic weight
/// averaging, as KataGo releases its networks) smooths out the noise of the last updates.
/// Each image is checked as [`weights_from_bytes`] checks it; the error names it by its
/// place in `images` (from 1), on one line.
pub fn average_weights(config: &NetConfig, images: Vec<Vec<u8>>) -> Result<Vec<u8>, String> {
    let count = images.len();
    let device = Device::flex();
    let mut first: Option<PolicyValueNet> = None;
    let mut sums: Vec<(String, Vec<f64>)> = Vec::new();
    for (i, bytes) in images.into_iter().enumerate() {
        let place = i + 1;
        let model = weights_from_bytes(config, bytes, &device)
            .map_err(|e| format!("weights {place} of {count}: {e}"))?;
        let tensors = model.collect(None, None, false);
        if sums.is_empty() {
            sums = tensors
                .iter()
                .map(|t| (t.name.clone(), vec![0.0; t.shape.num_elements()]))
                .collect();
        }
        if tensors.len() != sums.len() {
            return Err(format!(
                "weights {place} of {count}: another set of tensors"
            ));
        }
        for ((name, sum), tensor) in sums.iter_mut().zip(&tensors) {
            let values = burn::store::bridge::to_data(tensor)
                .map_err(|e| e.to_string())
                .and_then(|d| d.try_to_vec::<f32>().map_err(|e| format!("{e:?}")))
                .map_err(|e| format!("weights {place} of {count}: {}: {e}", tensor.name))?;
            if tensor.name != *name || values.len() != sum.len() {
                return Err(format!(
                    "weights {place} of {count}: {} is not {name} with its shape",
                    tensor.name
                ));
            }
            for (s, v) in sum.iter_mut().zip(values) {
                *s += f64::from(v);
            }
        }
        first.get_or_insert(model);
    }
    let Some(mut model) = first else {
        return Err("no weights to average".to_owned());
    };
    let mean = model
        .collect(None, None, false)
        .into_iter()
        .zip(sums)
        .map(|(tensor, (_, sum))| {
            #[allow(clippy::cast_possible_truncation, reason = "the mean of f32 values")]
            let values: Vec<f32> = sum.iter().map(|s| (s / count as f64) as f32).collect();
            let data = TensorData::new(values, tensor.shape.clone());
            burn::store::bridge::from_data(data, tensor.name, tensor.param_id)
        })
        .collect();
    let result = model.apply(mean, None, None, false);
    if !result.errors.is_empty() || !result.missing.is_empty() {
        let mut problems: Vec<String> = result.errors.iter().map(ToString::to_string).collect();
        problems.extend(
            result
                .missing
                .iter()
                .map(|(path, _)| format!("{path} not set")),
        );
        return Err(brandubh_fs::one_line(&problems.join("; ")));
    }
    weights_to_bytes(&model)
}

/// The folded inference weights of a model of `config` from a safetensors file image
/// (what [`weights_to_bytes`] writes), on the CPU; checked as [`weights_from_bytes`] checks.
pub fn folded_from_bytes(config: &NetConfig, bytes: Vec<u8>) -> Result<FoldedNet, String> {
    config.check_limits()?;
    Ok(weights_from_bytes(config, bytes, &Device::flex())?.fold_batch_norm())
}

/// The first few of `names`, and how many more.
fn list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let n = names.len();
    let shown: Vec<&str> = names.take(3).collect();
    if n > shown.len() {
        format!("{} and {} more", shown.join(", "), n - shown.len())
    } else {
        shown.join(", ")
    }
}

/// Writes `bytes` to `path` with [`brandubh_fs::write_atomic`] (temporary sibling, `fsync`,
/// rename), so `path` holds either its old content or all of `bytes`.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    brandubh_fs::write_atomic(path, bytes).map_err(|e| CheckpointError::Io {
        path: e.path,
        cause: e.cause,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_weights_give_equal_bytes() {
        let device = Device::flex();
        let config = NetConfig::new().with_channels(4).with_blocks(1);
        let model = config.init(&device);
        let first = weights_to_bytes(&model).expect("serialise");
        // burn's metadata map comes out in a new order on most calls.
        for _ in 0..8 {
            assert_eq!(weights_to_bytes(&model).expect("serialise"), first);
        }
        let len = u64::from_le_bytes(first[..8].try_into().unwrap()) as usize;
        assert_eq!(len % 8, 0, "the data section starts aligned");
        let header = std::str::from_utf8(&first[8..8 + len]).unwrap();
        assert!(
            header.starts_with(r#"{"__metadata__":{"format":"safetensors","producer":"burn","#),
            "{header}"
        );
        let back = weights_from_bytes(&config, first, &device).expect("load");
        assert_eq!(tensors(&back), tensors(&model));
    }

    /// A flipped byte in a key name of the metadata would make serde drop that setting (the
    /// optimizer's moves-left weight, the model's input planes) and read its default: it is
    /// refused, naming the key. Keys written as null or [] by older builds still read.
    #[test]
    fn a_damaged_key_name_in_the_metadata_is_refused() {
        let dir = std::env::temp_dir().join(format!("brandubh-ckpt-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = NetConfig::new().with_channels(4).with_blocks(1);
        let model = config.with_planes(12).init(&Device::flex());
        save(dir.join("c"), &model, &SaveOptions::at_step(1)).unwrap();
        let json = dir.join("c.json");
        let text = std::fs::read_to_string(&json).unwrap();
        assert!(read_meta(dir.join("c")).is_ok());
        std::fs::write(
            &json,
            text.replacen("\"input_planes\"", "\"input_plan<s\"", 1),
        )
        .unwrap();
        let err = read_meta(dir.join("c")).unwrap_err().to_string();
        assert!(err.contains("unknown key \"config.input_plan<s\""), "{err}");
        let old = text.replacen("{", "{\n  \"param_ids\": [],\n  \"optimizer\": null,", 1);
        std::fs::write(&json, old).unwrap();
        assert!(read_meta(dir.join("c")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The hash check stops corrupt files before burn parses them; this checks that the
    /// parser behind it fails cleanly too, should a corrupt file ever get that far.
    #[test]
    fn corrupt_safetensors_bytes_give_errors_not_panics() {
        let config = NetConfig::new().with_channels(4).with_blocks(1);
        let device = Device::flex();
        let good = weights_to_bytes(&config.init(&device)).expect("serialise");
        assert!(weights_from_bytes(&config, good.clone(), &device).is_ok());
        for len in [0, 4, 8, 9, 64, good.len() / 2, good.len() - 1] {
            let result = weights_from_bytes(&config, good[..len].to_vec(), &device);
            assert!(result.is_err(), "truncated to {len} bytes");
        }
        // Flips in the length prefix and the JSON header.
        for at in [0, 1, 7, 8, 9, 20, 40, 100] {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            let _ = weights_from_bytes(&config, bad, &device);
        }
        // Another config's weights.
        let other = NetConfig::new().with_channels(6).with_blocks(1);
        assert!(weights_from_bytes(&other, good, &device).is_err());
    }

    /// The public in-memory pair round-trips to the same network outputs (not necessarily
    /// the same bytes: burn may lay a re-saved file out differently).
    #[test]
    fn weights_bytes_round_trip() {
        let config = NetConfig::new().with_channels(4).with_blocks(1);
        let device = Device::flex();
        let model = config.init(&device);
        let bytes = weights_to_bytes(&model).expect("serialise");
        let loaded = weights_from_bytes(&config, bytes, &device).expect("parse");
        let input = crate::encoding::encode(&brandubh_rules::Position::start(), 1);
        let a = crate::FastNet::from_model(&model).forward(&input);
        let b = crate::FastNet::from_model(&loaded).forward(&input);
        assert_eq!(a.values, b.values);
        assert_eq!(a.policy_logits, b.policy_logits);
    }

    #[test]
    fn paths_accept_a_stem_or_either_file() {
        let want = (
            PathBuf::from("d/ckpt-1.5.safetensors"),
            PathBuf::from("d/ckpt-1.5.json"),
        );
        // A stem containing a dot keeps it.
        assert_eq!(paths("d/ckpt-1.5"), want);
        assert_eq!(paths("d/ckpt-1.5.json"), want);
        assert_eq!(paths("d/ckpt-1.5.safetensors"), want);
    }

    /// Every tensor's values, by name.
    fn tensors(model: &PolicyValueNet) -> BTreeMap<String, Vec<f32>> {
        model
            .collect(None, None, false)
            .iter()
            .map(|t| {
                let data = burn::store::bridge::to_data(t).unwrap();
                (t.name.clone(), data.try_to_vec::<f32>().unwrap())
            })
            .collect()
    }

    /// The mean of three models is their element-wise mean in every tensor, batch-norm
    /// statistics included (which training moved away from their initial 0 and 1); models
    /// of another shape, damaged bytes and an empty list are one-line errors.
    #[test]
    fn average_weights_is_the_element_wise_mean() {
        let device = Device::flex();
        let config = NetConfig::new().with_channels(4).with_blocks(1);
        let mut models = Vec::new();
        for seed in 1..=3 {
            device.seed(seed);
            models.push(config.init(&device));
        }
        // One training step moves the third model's running statistics off their initial
        // 0 and 1.
        let autodiff = Device::flex().autodiff();
        let mut trainer = Trainer::new(config.init(&autodiff), OptimizerConfig::default());
        let position = brandubh_rules::Position::start();
        let moves = position.legal_moves();
        let policy = vec![1.0 / moves.len() as f32; moves.len()];
        let mut batch = crate::optimize::BatchBuilder::new();
        batch
            .push_position(
                &position,
                1,
                &moves,
                &policy,
                0.5,
                brandubh_rules::Symmetry::Identity,
            )
            .unwrap();
        trainer.step(&batch.build(trainer.device()), 1e-2);
        models[2] = trainer.inference_model();
        let images: Vec<Vec<u8>> = models
            .iter()
            .map(|m| weights_to_bytes(m).unwrap())
            .collect();
        let mean = average_weights(&config, images.clone()).unwrap();
        let got = tensors(&weights_from_bytes(&config, mean, &device).unwrap());
        let each: Vec<_> = models.iter().map(|m| tensors(&m.valid())).collect();
        assert!(got.keys().any(|k| k.ends_with("running_var")));
        assert_ne!(
            each[0]["stem.bn.running_mean"],
            each[2]["stem.bn.running_mean"]
        );
        for (name, values) in &got {
            for (i, v) in values.iter().enumerate() {
                let want = each.iter().map(|t| t[name][i]).sum::<f32>() / 3.0;
                assert!((v - want).abs() < 1e-6, "{name}[{i}]: {v} vs {want}");
            }
        }

        let other = NetConfig::new()
            .with_channels(8)
            .with_blocks(1)
            .init(&device);
        let mixed = vec![images[0].clone(), weights_to_bytes(&other).unwrap()];
        let e = average_weights(&config, mixed).unwrap_err();
        assert!(e.starts_with("weights 2 of 2: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = average_weights(&config, vec![images[0].clone(), vec![1, 2, 3]]).unwrap_err();
        assert!(
            e.starts_with("weights 2 of 2: ") && !e.contains('\n'),
            "{e}"
        );
        assert_eq!(
            average_weights(&config, Vec::new()).unwrap_err(),
            "no weights to average"
        );
    }
}
