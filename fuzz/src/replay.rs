//! Checks for replay chunk decoding.
//!
//! Shared by the fuzz target `chunk` and `crates/brandubh-run/tests/fuzz_corpus.rs`,
//! which includes this file with `#[path]`: it may name only `brandubh_run`,
//! `brandubh_fs` and `crc32fast` (dependencies of brandubh-run) and `std`.

use std::path::Path;

use brandubh_run::replay::{self, ENCODING_VERSION, FORMAT_VERSION, HEADER_LEN, MAGIC};

/// The file name errors must mention.
const FILE: &str = "fuzz/chunk-000001-000000.brz";

/// Decodes `data` twice: as a whole chunk file (header checks), and as a chunk *body*
/// behind a valid header with the right length and checksum (so that the bincode decoder
/// and the game replay see the fuzzed bytes). Never panics; an error is one line naming
/// the file; a chunk that decodes re-encodes, decodes to the same chunk again, and its
/// games give their training samples.
pub fn decode(data: &[u8]) {
    check(data);
    check(&frame(data));
}

/// `body` behind a valid header.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + body.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&ENCODING_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    bytes.extend_from_slice(body);
    bytes
}

fn check(bytes: &[u8]) {
    let file = Path::new(FILE);
    match replay::decode_chunk(bytes, file) {
        Ok(chunk) => {
            for (i, game) in chunk.games.iter().enumerate() {
                let samples = game
                    .samples()
                    .unwrap_or_else(|e| panic!("game {i} decoded but does not replay: {e}"));
                assert_eq!(samples.len(), game.positions.len());
            }
            let again = replay::encode_chunk(&chunk)
                .unwrap_or_else(|e| panic!("a decoded chunk does not encode: {e}"));
            let back = replay::decode_chunk(&again, file)
                .unwrap_or_else(|e| panic!("a re-encoded chunk does not decode: {e}"));
            assert_eq!(back, chunk);
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with(FILE), "{message:?}");
            assert_eq!(brandubh_fs::error_line_fault(&message), None, "{message:?}");
        }
    }
}
