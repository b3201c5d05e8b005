//! Crash-safe file writes: [`write_atomic`] is the one way the Brandubh Zero crates write
//! files.
//!
//! Every file they write (replay chunks, `metrics.jsonl`, plots, checkpoints, `state.json`,
//! agent files, ladder tables) goes through [`write_atomic`]: the bytes are written to
//! `NAME.tmp` in the same directory, flushed to disk, renamed over `NAME` and the directory
//! entry is flushed too. A reader therefore sees either the old file or the new one, never
//! a partial one, even after `kill -9` or a power loss. A crash can leave a stale `NAME.tmp` behind; [`is_temp_file`] recognises
//! such leftovers (chunk listings skip them) and [`remove_temp_files`] clears them.
//!
//! Two small helpers that every crate writing or checking files needs live here too, the
//! lowest crate they share: [`one_line`] (error text from a library or a damaged file on
//! one line) and the stable hashes [`fnv1a64`] (file checksums, name tags) and
//! [`splitmix64`]/[`mix64`] (seed derivation), and [`cpu_description`], the one name of the
//! machine that benchmarks print and reports record.

mod hash;
mod machine;
mod text;

pub use hash::{GOLDEN_GAMMA, fnv1a64, mix64, splitmix64};
pub use machine::{cpu_description, describe_cpu};
pub use text::{ONE_LINE_MAX_CHARS, error_line, error_line_fault, one_line};

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The suffix of temporary files written by [`write_atomic`].
pub const TEMP_SUFFIX: &str = ".tmp";

/// A file-system operation that failed, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot {action}: {cause}")]
pub struct FsError {
    /// The file or directory concerned.
    pub path: PathBuf,
    /// What was being done, e.g. `"rename temporary file"`.
    pub action: &'static str,
    /// The underlying error (shown in the message, so not also returned by `source()`).
    pub cause: io::Error,
}

impl FsError {
    fn new(path: &Path, action: &'static str, cause: io::Error) -> FsError {
        FsError {
            path: path.to_path_buf(),
            action,
            cause,
        }
    }
}

/// The temporary name [`write_atomic`] uses for `path`: `NAME.tmp` in the same directory.
#[must_use]
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(TEMP_SUFFIX);
    path.with_file_name(name)
}

/// Whether `path` names a temporary file of [`write_atomic`] (its name ends in `.tmp`).
#[must_use]
pub fn is_temp_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(TEMP_SUFFIX))
}

/// Writes `bytes` to `path` atomically: writes `NAME.tmp` in the same directory, fsyncs
/// it, renames it to `NAME` and fsyncs the directory. Creates missing parent directories.
///
/// Readers of `path` see the previous content or the new one, never a mix. Two writers of
/// the same `path` at the same time are not supported (they share the temporary name).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(|e| FsError::new(dir, "create directory", e))?;
    let tmp = temp_path(path);
    let write = || -> io::Result<()> {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()
    };
    if let Err(e) = write() {
        // Best effort: do not leave a partial temporary file behind.
        let _ = fs::remove_file(&tmp);
        return Err(FsError::new(&tmp, "write temporary file", e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(FsError::new(path, "rename temporary file", e));
    }
    sync_dir(dir)
}

/// Flushes a directory's entries (the rename) to disk. Only Unix can open a directory for
/// this; elsewhere the rename is durable once the file system flushes it.
fn sync_dir(dir: &Path) -> Result<(), FsError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| FsError::new(dir, "sync directory", e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Removes the temporary files (`*.tmp`) a crash left in `dir`, returning how many were
/// removed. A missing `dir` has none.
pub fn remove_temp_files(dir: &Path) -> Result<usize, FsError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(FsError::new(dir, "list directory", e)),
    };
    let mut removed = 0;
    for entry in entries {
        let path = entry
            .map_err(|e| FsError::new(dir, "list directory", e))?
            .path();
        if is_temp_file(&path) && path.is_file() {
            fs::remove_file(&path).map_err(|e| FsError::new(&path, "remove", e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_creates_and_replaces_without_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("a.bin");
        write_atomic(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        write_atomic(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        assert!(!temp_path(&path).exists());
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.bin"]);
    }

    #[test]
    fn temp_files_are_recognised_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chunk.brz");
        assert_eq!(temp_path(&path), dir.path().join("chunk.brz.tmp"));
        assert!(is_temp_file(&temp_path(&path)));
        assert!(!is_temp_file(&path));
        fs::write(temp_path(&path), b"partial").unwrap();
        fs::write(&path, b"whole").unwrap();
        assert_eq!(remove_temp_files(dir.path()).unwrap(), 1);
        assert!(path.exists());
        assert_eq!(remove_temp_files(&dir.path().join("missing")).unwrap(), 0);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: the rename fails.
        let path = dir.path().join("taken");
        fs::create_dir_all(path.join("inner")).unwrap();
        let err = write_atomic(&path, b"x").unwrap_err().to_string();
        assert!(err.contains("taken"), "{err}");
        assert!(!err.contains('\n'));
    }
}
