//! Keeps docs/unwrap-audit.md honest: every `.unwrap()` and `.expect(` left in the
//! non-test code of `crates/*/src` has a row there, and every row names one that exists.
//! Counted per file, so moving code within a file does not break the test; adding or
//! removing a call does, with a message that lists what was found.
//!
//! Test code is left out: items under `#[cfg(test)]` (skipped by matching braces) and
//! comments (doc examples are doctests).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const AUDIT: &str = "docs/unwrap-audit.md";

#[test]
fn every_unwrap_and_expect_in_library_code_is_audited() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut files = Vec::new();
    for krate in sorted_dir(&root.join("crates")) {
        rust_files(&krate.join("src"), &mut files);
    }
    assert!(
        files.len() > 20,
        "found only {} source files under crates/*/src",
        files.len()
    );
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(file).expect("read a source file");
        for (line_no, line) in library_lines(&text) {
            for _ in 0..calls_in(line) {
                found
                    .entry(rel.clone())
                    .or_default()
                    .push(format!("{rel}:{line_no}: {}", line.trim()));
            }
        }
    }

    let audit = fs::read_to_string(root.join(AUDIT)).expect("read docs/unwrap-audit.md");
    let mut audited: BTreeMap<String, usize> = BTreeMap::new();
    for line in audit.lines() {
        // Table rows: `| crates/x/src/y.rs:123 | ... |`.
        let Some(cell) = line.strip_prefix("| ").and_then(|l| l.split(" |").next()) else {
            continue;
        };
        let cell = cell.trim().trim_matches('`');
        if let Some((file, line_no)) = cell.rsplit_once(':')
            && file.starts_with("crates/")
            && line_no.parse::<u32>().is_ok()
        {
            *audited.entry(file.to_string()).or_default() += 1;
        }
    }

    let mut problems = Vec::new();
    let files: BTreeSet<&String> = found.keys().chain(audited.keys()).collect();
    for file in files {
        let lines = found.get(file).map_or(&[][..], Vec::as_slice);
        let rows = audited.get(file).copied().unwrap_or(0);
        if lines.len() != rows {
            problems.push(format!(
                "{file}: {} call(s) in library code, {rows} row(s) in {AUDIT}\n    {}",
                lines.len(),
                lines.join("\n    ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "unwrap/expect in library code differs from {AUDIT}. Handle errors that user input \
         can reach (positions, moves, arguments, configs, files); for a call that cannot fail, \
         add a row with its justification (or remove the row of a call that is gone):\n{}",
        problems.join("\n")
    );
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    entries
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if !dir.is_dir() {
        return;
    }
    for path in sorted_dir(dir) {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines (1-based numbers) that are neither comments nor inside a `#[cfg(test)]` item.
fn library_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            i = end_of_item(&lines, i + 1) + 1;
            continue;
        }
        if !trimmed.starts_with("//") {
            out.push((i + 1, lines[i]));
        }
        i += 1;
    }
    out
}

/// The last line of the item starting at `start` (after its attribute): where its braces
/// balance again, or its `;` if it has no body.
fn end_of_item(lines: &[&str], start: usize) -> usize {
    let mut depth = 0i64;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(start) {
        let code = strip_literals(line);
        if code.trim_start().starts_with("//") {
            continue;
        }
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
            return i;
        }
    }
    lines.len()
}

/// The line without string contents, `'{'`/`'}'` character literals and trailing comments,
/// so that braces in them are not counted.
fn strip_literals(line: &str) -> String {
    let line = line.replace("'{'", "").replace("'}'", "");
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut prev = ' ';
    for c in line.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                out.push(c);
            }
            continue;
        }
        if c == '/' && prev == '/' {
            out.pop();
            break;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// How many `.unwrap()` and `.expect(` calls a line of code holds (not in strings or
/// comments).
fn calls_in(line: &str) -> usize {
    let code = strip_literals(line);
    code.matches(".unwrap()").count() + code.matches(".expect(").count()
}

#[test]
fn the_scanner_skips_tests_comments_and_strings() {
    let text = "fn a() { x.unwrap(); }\n\
                // y.unwrap()\n\
                /// z.expect(\"doc\")\n\
                fn b() { let s = \".unwrap()\"; w.expect(\"{\"); } // v.unwrap()\n\
                #[cfg(test)]\n\
                mod tests {\n\
                    fn c() { let _ = '{'; q.unwrap(); }\n\
                }\n\
                #[cfg(test)]\n\
                use foo::bar;\n\
                fn d() { r.expect(\"}\"); }\n";
    let counts: Vec<(usize, usize)> = library_lines(text)
        .into_iter()
        .map(|(n, l)| (n, calls_in(l)))
        .filter(|&(_, c)| c > 0)
        .collect();
    assert_eq!(counts, vec![(1, 1), (4, 1), (11, 1)]);
}
