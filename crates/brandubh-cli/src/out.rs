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

/// A progress bar counting `len` matches, with a message (`match`, `ladder`).
pub fn matches_bar(len: u64) -> anyhow::Result<indicatif::ProgressBar> {
    let bar = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} matches  {msg}  eta {eta}",
    )
    .map_err(|e| anyhow::anyhow!("progress bar template: {e}"))?;
    bar.set_style(style);
    Ok(bar)
}

/// Prints `value` as one line of JSON with `json` (`--json`), else as `text` writes it for
/// people; flushes.
pub fn print<T: serde::Serialize>(
    json: bool,
    value: &T,
    text: impl FnOnce(&mut BufWriter<StdoutLock<'static>>, &T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut w = stdout();
    if json {
        serde_json::to_writer(&mut w, value)?;
        writeln!(w)?;
    } else {
        text(&mut w, value)?;
    }
    flush(&mut w)
}

/// Flushes `w`, turning an error into `anyhow`.
pub fn flush(w: &mut impl Write) -> anyhow::Result<()> {
    w.flush()?;
    Ok(())
}
