//! Error text on one line.

/// The most characters [`one_line`] keeps.
pub const ONE_LINE_MAX_CHARS: usize = 300;

/// `text` as one line for an error message, whatever it holds (a library's multi-line
/// report, text from a damaged file): each line trimmed of white space and box-drawing
/// characters, empty lines dropped, the rest joined with `; `, other control characters
/// replaced by spaces, and cut after [`ONE_LINE_MAX_CHARS`] characters with `…`.
#[must_use]
pub fn one_line(text: &str) -> String {
    let frame = |c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c);
    let line = text
        .lines()
        .map(|l| l.trim_matches(frame))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let mut out: String = line
        .chars()
        .take(ONE_LINE_MAX_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.chars().nth(ONE_LINE_MAX_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_joined_and_frames_dropped() {
        assert_eq!(one_line("  plain  "), "plain");
        assert_eq!(one_line("a\n\n  b \r\nc"), "a; b; c");
        assert_eq!(
            one_line("┌──────┐\n│ missing tensors: x │\n└──────┘\n"),
            "missing tensors: x"
        );
        assert_eq!(
            one_line("tab\there\u{7}bell\u{1b}[31m"),
            "tab here bell [31m"
        );
        assert_eq!(one_line(""), "");
        assert_eq!(one_line("\n \n"), "");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        let exact = "é".repeat(ONE_LINE_MAX_CHARS);
        assert_eq!(one_line(&exact), exact);
        let long = one_line(&"x".repeat(ONE_LINE_MAX_CHARS + 1));
        assert_eq!(long.chars().count(), ONE_LINE_MAX_CHARS + 1);
        assert!(long.ends_with("x…"));
        assert!(!one_line(&"line\n".repeat(200)).contains('\n'));
    }
}
