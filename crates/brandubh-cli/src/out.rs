//! Output helpers: stdout that reports a closed pipe as an error instead of panicking.

use std::io::{self, BufWriter, StdoutLock, Write};

/// A buffered, locked stdout. Use `writeln!` and `?`; a closed pipe (`brandubh … | head`)
/// ends the program quietly through [`is_broken_pipe`].
pub fn stdout() -> BufWriter<StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Whether `err` is a write to a closed pipe, which is not worth reporting.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Flushes `w`, turning an error into `anyhow`.
pub fn flush(w: &mut impl Write) -> anyhow::Result<()> {
    w.flush()?;
    Ok(())
}
