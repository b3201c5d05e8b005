//! The fuzz targets `checkpoint_meta` and `checkpoint_weights` as regression tests: every
//! input of their committed corpus (`fuzz/corpus/TARGET`) goes through the same checks the
//! fuzzer runs (`fuzz/src/checkpoint.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

#[path = "../../../fuzz/src/checkpoint.rs"]
mod checkpoint;
#[path = "../../../fuzz/src/corpus.rs"]
mod corpus;

#[test]
fn checkpoint_meta_corpus() {
    corpus::replay("checkpoint_meta", checkpoint::meta);
}

#[test]
fn checkpoint_weights_corpus() {
    corpus::replay("checkpoint_weights", checkpoint::weights);
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
