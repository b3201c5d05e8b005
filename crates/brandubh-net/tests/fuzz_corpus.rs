//! The fuzz targets `checkpoint_meta` and `checkpoint_weights` as regression tests: every
//! input of their committed corpus (`fuzz/corpus/TARGET`) goes through the same checks the
//! fuzzer runs (`fuzz/src/checkpoint.rs`).

#[path = "../../../fuzz/src/checkpoint.rs"]
mod checkpoint;

use std::path::{Path, PathBuf};

/// Every file of `fuzz/corpus/TARGET`, sorted; at least one.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    files
}

#[test]
fn checkpoint_meta_corpus() {
    for file in corpus("checkpoint_meta") {
        checkpoint::meta(&std::fs::read(&file).expect("read a corpus file"));
    }
}

#[test]
fn checkpoint_weights_corpus() {
    for file in corpus("checkpoint_weights") {
        checkpoint::weights(&std::fs::read(&file).expect("read a corpus file"));
    }
}

/// Found by `checkpoint_weights`: weights with a renamed tensor gave burn's multi-line
/// report (a box of text) as the error.
#[test]
fn weights_with_a_renamed_tensor_are_named_in_one_line() {
    use brandubh_net::Device;
    use brandubh_net::checkpoint::{weights_from_bytes, weights_to_bytes};

    let config = checkpoint::weights_config(1, 1);
    let mut bytes = weights_to_bytes(&config.init(&Device::flex())).expect("serialise");
    let at = bytes
        .windows(11)
        .position(|w| w == b"running_var")
        .expect("a batch-norm variance in the header");
    bytes[at + 10] = b'X';
    let mut input = vec![1, 1];
    input.extend_from_slice(&bytes);
    checkpoint::weights(&input);
    let err = weights_from_bytes(&config, bytes, &Device::flex()).unwrap_err();
    assert!(!err.contains('\n'), "{err}");
    assert!(
        err.contains("missing tensors") && err.contains("running_var"),
        "{err}"
    );
    assert!(
        err.contains("unexpected tensors") && err.contains("running_vaX"),
        "{err}"
    );
}
