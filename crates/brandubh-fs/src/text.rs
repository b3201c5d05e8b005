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

/// `error` and its causes (`source()`) on one line, outermost first, joined with `: `, each
/// cause once (a cause whose text an earlier part already holds is left out), line breaks
/// inside a message (a library's multi-line report) made `; `. Not cut: pass the result to
/// [`one_line`] where its length matters.
#[must_use]
pub fn error_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = error.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts
        .join(": ")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// What is wrong with `message` as an error line, if anything: `more than one line`, or
/// `no problem named` (it ends with `:`). Every error the crates show meets this; the fuzz
/// targets and the tests check it.
#[must_use]
pub fn error_line_fault(message: &str) -> Option<&'static str> {
    if message.contains(['\n', '\r']) {
        Some("more than one line")
    } else if message.trim_end().ends_with(':') {
        Some("no problem named")
    } else {
        None
    }
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

    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);

    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    #[test]
    fn an_error_chain_is_one_line_each_cause_once() {
        let inner = Chain("disk full\n  (errno 28)", None);
        let middle = Chain("write x: disk full\n  (errno 28)", Some(Box::new(inner)));
        let outer = Chain("saving the run", Some(Box::new(middle)));
        assert_eq!(
            error_line(&outer),
            "saving the run: write x: disk full; (errno 28)"
        );
        assert_eq!(error_line(&Chain("alone", None)), "alone");
    }

    #[test]
    fn error_line_faults_are_named() {
        assert_eq!(error_line_fault("x.toml: bad key"), None);
        assert_eq!(error_line_fault("a\nb"), Some("more than one line"));
        assert_eq!(error_line_fault("x.toml: "), Some("no problem named"));
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
