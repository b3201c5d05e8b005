//! Checks for checkpoint loading: the metadata file, and the weights file behind metadata
//! that vouches for it.
//!
//! Shared by the fuzz targets `checkpoint_meta` and `checkpoint_weights` and by
//! `crates/brandubh-net/tests/fuzz_corpus.rs`, which includes this file with `#[path]`: it
//! may name only `brandubh_net`, its dependencies `brandubh_fs`, `brandubh_rules` and
//! `serde_json`, `tempfile` (a dev-dependency there) and `std`.

use std::collections::BTreeMap;

use brandubh_net::checkpoint::{self, CheckpointMeta, FORMAT, FORMAT_VERSION};
use brandubh_net::encoding::{self, ENCODING_VERSION};
use brandubh_net::{Device, FastNet, NetConfig};
use brandubh_rules::Position;

/// `data` as a checkpoint's metadata file: [`checkpoint::read_meta`] and
/// [`checkpoint::load`] never panic, errors are one line naming a file of the checkpoint,
/// and accepted metadata is within the documented limits.
pub fn meta(data: &[u8]) {
    let dir = tempfile::tempdir().expect("create a scratch directory");
    let stem = dir.path().join("ck");
    let (_, meta_path) = checkpoint::paths(&stem);
    std::fs::write(&meta_path, data).expect("write the metadata file");
    match checkpoint::read_meta(&stem) {
        Ok(meta) => {
            let c = &meta.config;
            assert!(
                c.is_valid() && c.channels <= 1024 && c.blocks <= 256,
                "{c:?}"
            );
            assert!(!meta.weights_file.contains('/'), "{:?}", meta.weights_file);
            assert_eq!(meta.format, FORMAT);
            // The weights file it names does not exist (or is the metadata file itself).
            match checkpoint::load(&stem, &Device::flex(), None) {
                Ok(_) => panic!("a checkpoint without a weights file loaded"),
                Err(e) => assert_one_line(&e.to_string(), &meta.weights_file),
            }
        }
        Err(e) => assert_one_line(&e.to_string(), "ck.json"),
    }
}

/// The network shape of [`weights`]'s input: channels 1-4, blocks 0-2, small heads.
pub fn weights_config(c: u8, b: u8) -> NetConfig {
    NetConfig::new()
        .with_channels(usize::from(c % 4) + 1)
        .with_blocks(usize::from(b % 3))
        .with_policy_channels(1)
        .with_value_channels(1)
        .with_value_hidden(4)
}

/// Bytes 0 and 1 choose a network shape ([`weights_config`]); the rest is its weights
/// file, behind metadata with the right size and hash, so that the safetensors reader sees
/// the fuzzed bytes. Loading never panics; an error is one line naming the weights file; a
/// model that loads runs a forward pass.
pub fn weights(data: &[u8]) {
    let [c, b, bytes @ ..] = data else {
        return;
    };
    let config = weights_config(*c, *b);
    let dir = tempfile::tempdir().expect("create a scratch directory");
    let stem = dir.path().join("w");
    let (weights_path, meta_path) = checkpoint::paths(&stem);
    let meta = CheckpointMeta {
        format: FORMAT.to_owned(),
        format_version: FORMAT_VERSION,
        encoding_version: ENCODING_VERSION,
        config: config.clone(),
        step: 0,
        weights_file: "w.safetensors".to_owned(),
        weights_bytes: bytes.len() as u64,
        weights_fnv1a64: format!("{:016x}", brandubh_fs::fnv1a64(bytes)),
        burn_version: "0.22.1".to_owned(),
        created_unix_s: 0,
        extra: BTreeMap::new(),
        optimizer: None,
        param_ids: Vec::new(),
    };
    let json = serde_json::to_vec(&meta).expect("metadata serialises");
    std::fs::write(&weights_path, bytes).expect("write the weights file");
    std::fs::write(&meta_path, json).expect("write the metadata file");
    match checkpoint::load(&stem, &Device::flex(), Some(&config)) {
        Ok((model, _)) => {
            let input = encoding::encode(&Position::start(), 1);
            let out = FastNet::from_model(&model).forward(&input);
            assert_eq!(out.values.len(), 1);
        }
        Err(e) => assert_one_line(&e.to_string(), "w.safetensors"),
    }
}

fn assert_one_line(message: &str, names: &str) {
    assert!(message.contains(names), "{message:?} does not name {names}");
    assert_eq!(brandubh_fs::error_line_fault(message), None, "{message:?}");
}
