//! What the examples share: reading their numeric arguments.

/// Argument `i` of `args` parsed as a number, or `default` when it is missing; the error
/// names the argument (`name`) and the text.
pub fn arg<T: std::str::FromStr>(
    args: &[String],
    i: usize,
    name: &str,
    default: T,
) -> Result<T, String> {
    match args.get(i) {
        None => Ok(default),
        Some(text) => text
            .parse()
            .map_err(|_| format!("{name} {text:?}: not a valid number")),
    }
}
