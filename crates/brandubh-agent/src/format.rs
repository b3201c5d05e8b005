//! The byte layout of an agent file, version 1 (all integers little-endian):
//!
//! ```text
//! offset  size  field
//!      0     8  magic, the ASCII bytes "BZ-AGENT"
//!      8     4  format version, u32 (1)
//!     12     4  M = length of the metadata block, u32 (at most 1 MiB)
//!     16     8  W = length of the weights block, u64
//!     24     4  CRC-32 of the payload (bytes 32 .. 32+M+W), u32
//!     28     4  CRC-32 of the header bytes 0 .. 28, u32
//!     32     M  metadata: UTF-8 JSON (AgentMeta)
//!   32+M     W  weights: a safetensors image of the network (brandubh-net's checkpoint
//!               weights file, batch-norm statistics included)
//! ```
//!
//! The file is exactly `32 + M + W` bytes. Reading checks, in order: the magic, the version
//! (another version is refused before anything else is read: a later version may lay out
//! the rest differently), the header's CRC, the length, the payload's CRC; only then is the
//! metadata parsed. CRC-32 detects every change of up to four consecutive bytes, so any
//! flipped byte and any truncation is reported, never parsed.

use std::path::Path;

use crate::error::AgentError;

/// The first 8 bytes of every agent file.
pub const MAGIC: [u8; 8] = *b"BZ-AGENT";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the fixed header.
pub const HEADER_LEN: usize = 32;
/// Largest metadata block accepted.
pub const MAX_META_LEN: u32 = 1 << 20;
/// Largest weights block accepted (1 GiB: far beyond any network of this project).
pub const MAX_WEIGHTS_LEN: u64 = 1 << 30;

/// The two blocks of a file, checked.
#[derive(Debug)]
pub(crate) struct Blocks<'a> {
    pub(crate) meta: &'a [u8],
    pub(crate) weights: &'a [u8],
}

/// The bytes of a file holding the metadata block `meta` (JSON) and the weights block
/// `weights`, header and checksums computed. Nothing is checked: [`crate::Agent::to_bytes`]
/// is the way to write a loadable file; this is for tools and tests that need other ones.
///
/// # Panics
/// If `meta` is longer than `u32::MAX` bytes.
#[must_use]
#[expect(
    clippy::expect_used,
    reason = "the metadata block is the JSON of an `AgentMeta`, a few kilobytes; 4 GiB of \
              JSON cannot come from a command line (documented under # Panics)"
)]
pub fn encode(meta: &[u8], weights: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + meta.len() + weights.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let meta_len = u32::try_from(meta.len()).expect("metadata block under 4 GiB");
    out.extend_from_slice(&meta_len.to_le_bytes());
    out.extend_from_slice(&(weights.len() as u64).to_le_bytes());
    let mut payload = crc32fast::Hasher::new();
    payload.update(meta);
    payload.update(weights);
    out.extend_from_slice(&payload.finalize().to_le_bytes());
    let header_crc = crc32fast::hash(&out[..28]);
    out.extend_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(meta);
    out.extend_from_slice(weights);
    out
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Splits and checks the bytes of a file; `path` names it in errors.
pub(crate) fn decode<'a>(bytes: &'a [u8], path: &Path) -> Result<Blocks<'a>, AgentError> {
    let len = bytes.len() as u64;
    let short = |expected: usize| AgentError::Length {
        path: path.to_path_buf(),
        len,
        expected: expected as u64,
    };
    let damaged = |what: String| AgentError::Damaged {
        path: path.to_path_buf(),
        what,
    };
    // A prefix of the magic is a cut-short agent file; anything else is not one.
    let n = bytes.len().min(MAGIC.len());
    if bytes[..n] != MAGIC[..n] {
        return Err(AgentError::NotAnAgent {
            path: path.to_path_buf(),
            magic: "BZ-AGENT",
        });
    }
    if bytes.len() < 12 {
        return Err(short(HEADER_LEN));
    }
    let version = u32_at(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(AgentError::Version {
            path: path.to_path_buf(),
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(short(HEADER_LEN));
    }
    let header_crc = u32_at(bytes, 28);
    let actual = crc32fast::hash(&bytes[..28]);
    if actual != header_crc {
        return Err(damaged(format!(
            "header checksum {actual:08x}, stored {header_crc:08x}"
        )));
    }
    let meta_len = u32_at(bytes, 12);
    let weights_len = u64_at(bytes, 16);
    if meta_len > MAX_META_LEN || weights_len > MAX_WEIGHTS_LEN {
        return Err(damaged(format!(
            "implausible block sizes: metadata {meta_len} bytes, weights {weights_len} bytes"
        )));
    }
    let expected = HEADER_LEN as u64 + u64::from(meta_len) + weights_len;
    if len != expected {
        return Err(AgentError::Length {
            path: path.to_path_buf(),
            len,
            expected,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let stored = u32_at(bytes, 24);
    let actual = crc32fast::hash(payload);
    if actual != stored {
        return Err(damaged(format!(
            "payload checksum {actual:08x}, stored {stored:08x}"
        )));
    }
    let (meta, weights) = payload.split_at(meta_len as usize);
    Ok(Blocks { meta, weights })
}

/// Writes `bytes` to `path` with [`brandubh_fs::write_atomic`] (temporary sibling, `fsync`,
/// rename), so `path` holds either its old content or all of `bytes`.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AgentError> {
    brandubh_fs::write_atomic(path, bytes).map_err(|e| AgentError::Io {
        path: e.path,
        cause: e.cause,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_truncation() {
        let file = encode(b"{\"a\":1}", &[7; 100]);
        assert_eq!(file.len(), HEADER_LEN + 7 + 100);
        assert_eq!(&file[..8], b"BZ-AGENT");
        let p = Path::new("x.agent");
        let blocks = decode(&file, p).unwrap();
        assert_eq!(blocks.meta, b"{\"a\":1}");
        assert_eq!(blocks.weights, &[7; 100][..]);
        for len in 0..file.len() {
            let e = decode(&file[..len], p).unwrap_err();
            assert!(matches!(e, AgentError::Length { .. }), "{len}: {e}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert!(matches!(
            decode(&longer, p).unwrap_err(),
            AgentError::Length { .. }
        ));
    }

    #[test]
    fn every_single_byte_change_is_caught() {
        let file = encode(b"{\"a\":1}", &[7; 100]);
        let p = Path::new("x.agent");
        for at in 0..file.len() {
            for bit in 0..8 {
                let mut bad = file.clone();
                bad[at] ^= 1 << bit;
                assert!(decode(&bad, p).is_err(), "byte {at} bit {bit}");
            }
        }
    }

    #[test]
    fn other_versions_are_named() {
        let mut file = encode(b"{}", b"");
        file[8..12].copy_from_slice(&2u32.to_le_bytes());
        let e = decode(&file, Path::new("m/x.agent"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "m/x.agent: agent file format version 2, this build reads version 1"
        );
        let e = decode(b"PK\x03\x04zip", Path::new("y.agent"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "y.agent: not a brandubh agent file (the first 8 bytes are not \"BZ-AGENT\")"
        );
    }
}
