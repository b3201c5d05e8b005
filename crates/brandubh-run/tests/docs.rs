//! The documentation tells the truth about what it can be checked against: the guide's
//! table of configuration keys (docs/guide/training.md) names every key the code reads and
//! no other, with the code's defaults and range bounds; and every link from a Markdown
//! file of the repository to a local file points at a file that exists (and at one of its
//! headings, when it names one).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use brandubh_run::config::{
    EvaluationConfig, ModelConfig, RunConfig, SelfPlayConfig, TrainingConfig,
};
use brandubh_search::SearchSettings;
use serde::de::DeserializeOwned;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// One row of the guide's key tables: key → (default cell, range cell).
fn guide_rows() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(repo().join("docs/guide/training.md")).unwrap();
    let section = text
        .split_once("## Configuration keys")
        .expect("training.md has a section 'Configuration keys'")
        .1;
    let section = section.split("\n## ").next().unwrap();
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(
            cells.len(),
            4,
            "training.md: not a key row of 4 cells: {line}"
        );
        let key = cells[0].trim_matches('`').to_owned();
        let old = rows.insert(key.clone(), (cells[1].to_owned(), cells[2].to_owned()));
        assert!(old.is_none(), "training.md lists {key} twice");
    }
    rows
}

/// The fields serde accepts for `T`, read from its error for an unknown field (the list
/// serde gives holds every field, those never written to files included).
fn fields<T: DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
    let e = toml::from_str::<T>("no_such_key_here = 1")
        .unwrap_err()
        .to_string();
    let list = e
        .split_once("expected one of")
        .unwrap_or_else(|| panic!("serde's error lists no fields: {e}"))
        .1;
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Every key a configuration file may hold, dotted.
fn code_keys() -> BTreeSet<String> {
    let sections = [
        ("model", fields::<ModelConfig>()),
        ("search", fields::<SearchSettings>()),
        ("selfplay", fields::<SelfPlayConfig>()),
        ("training", fields::<TrainingConfig>()),
        ("evaluation", fields::<EvaluationConfig>()),
    ];
    let mut keys: BTreeSet<String> = ["extends".to_owned()].into();
    for top in fields::<RunConfig>() {
        if let Some((section, fields)) = sections.iter().find(|(s, _)| *s == top) {
            keys.extend(fields.iter().map(|f| format!("{section}.{f}")));
        } else {
            keys.insert(top);
        }
    }
    assert!(keys.len() > 40, "too few keys found: {keys:?}");
    keys
}

#[test]
fn the_guide_lists_every_config_key_and_no_other() {
    let documented: BTreeSet<String> = guide_rows().into_keys().collect();
    let code = code_keys();
    let missing: Vec<_> = code.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&code).collect();
    assert!(
        missing.is_empty(),
        "docs/guide/training.md lacks keys {missing:?}"
    );
    assert!(
        unknown.is_empty(),
        "docs/guide/training.md lists keys the code does not read: {unknown:?}"
    );
}

/// The defaults the code writes, dotted key → TOML value.
fn code_defaults() -> BTreeMap<String, toml::Value> {
    let text = RunConfig::default().to_toml_string().unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let mut out = BTreeMap::new();
    for (key, value) in table {
        match value {
            toml::Value::Table(section) => {
                for (field, value) in section {
                    out.insert(format!("{key}.{field}"), value);
                }
            }
            value => {
                out.insert(key, value);
            }
        }
    }
    out
}

/// Whether the guide's default cell (a TOML value in backticks) is `value`; decimals that
/// the code keeps as `f32` (e.g. 0.3) compare to six places.
fn same_default(cell: &str, value: &toml::Value) -> bool {
    let Some(inner) = cell.strip_prefix('`').and_then(|c| c.strip_suffix('`')) else {
        return false;
    };
    let Ok(table) = toml::from_str::<toml::Table>(&format!("v = {inner}")) else {
        return false;
    };
    match (&table["v"], value) {
        (toml::Value::Float(a), toml::Value::Float(b)) => (a - b).abs() <= 1e-6 * b.abs().max(1.0),
        (a, b) => a == b,
    }
}

#[test]
fn the_guides_defaults_are_the_codes() {
    let rows = guide_rows();
    let defaults = code_defaults();
    assert!(defaults.len() > 30);
    for (key, value) in &defaults {
        let (cell, _) = rows
            .get(key)
            .unwrap_or_else(|| panic!("docs/guide/training.md lacks {key}"));
        assert!(
            same_default(cell, value),
            "docs/guide/training.md: the default of {key} is {value}, not {cell}"
        );
    }
}

/// A range cell the test understands: `a–b` (integers, both included) or `[a, b]`,
/// `(a, b]`, `[a, b)`, `(a, b)` (decimals; a round bracket excludes its bound).
#[derive(Debug)]
enum Range {
    Integers(i128, i128),
    Decimals {
        lo: f64,
        lo_closed: bool,
        hi: f64,
        hi_closed: bool,
    },
}

fn parse_range(cell: &str) -> Option<Range> {
    if let Some((lo, hi)) = cell.split_once('–') {
        let int = |s: &str| s.replace(',', "").parse::<i128>().ok();
        return Some(Range::Integers(int(lo)?, int(hi)?));
    }
    let lo_closed = match cell.chars().next()? {
        '[' => true,
        '(' => false,
        _ => return None,
    };
    let hi_closed = match cell.chars().last()? {
        ']' => true,
        ')' => false,
        _ => return None,
    };
    let (lo, hi) = cell[1..cell.len() - 1].split_once(", ")?;
    let float = |s: &str| s.parse::<f64>().ok();
    Some(Range::Decimals {
        lo: float(lo)?,
        lo_closed,
        hi: float(hi)?,
        hi_closed,
    })
}

/// Whether a configuration setting only `key` to `value` is accepted; an error must name
/// the key.
fn accepted(key: &str, value: &str) -> bool {
    let text = match key.split_once('.') {
        Some((section, field)) => format!("[{section}]\n{field} = {value}\n"),
        None => format!("{key} = {value}\n"),
    };
    match RunConfig::from_toml_str(&text, "t.toml") {
        Ok(_) => true,
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.contains(key),
                "{key} = {value}: the error names another key: {e}"
            );
            false
        }
    }
}

/// `(value, accepted)` pairs that a range's bounds promise.
fn promises(range: &Range) -> Vec<(String, bool)> {
    match *range {
        Range::Integers(lo, hi) => {
            let mut out = vec![
                (lo.to_string(), true),
                (hi.to_string(), true),
                ((lo - 1).to_string(), false),
            ];
            // TOML cannot write an integer above i64's range at all.
            if hi < i128::from(i64::MAX) {
                out.push(((hi + 1).to_string(), false));
            }
            out
        }
        Range::Decimals {
            lo,
            lo_closed,
            hi,
            hi_closed,
        } => {
            let step = |b: f64| b.abs().max(1.0) * 1e-6;
            vec![
                (format!("{lo:?}"), lo_closed),
                (format!("{hi:?}"), hi_closed),
                (format!("{:?}", lo - step(lo)), false),
                (format!("{:?}", hi + step(hi)), false),
            ]
        }
    }
}

#[test]
fn the_guides_ranges_are_the_bounds_the_code_checks() {
    let mut checked = 0;
    for (key, (_, cell)) in guide_rows() {
        let Some(range) = parse_range(&cell) else {
            continue;
        };
        for (value, promised) in promises(&range) {
            assert_eq!(
                accepted(&key, &value),
                promised,
                "{key} = {value}: docs/guide/training.md says {cell}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} ranges could be read");
}

/// Every Markdown file of the repository (not under target/ or hidden directories).
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            markdown_files(&path, out);
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The targets of `[text](target)` links and `![alt](target)` images in `text`, outside
/// code blocks and code spans.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Drop code spans: what is between backticks is not a link.
        let plain: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect();
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            targets.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors of the headings of a Markdown file.
fn anchors(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_local_link_in_the_markdown_files_resolves() {
    let root = repo();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.len() >= 5, "{files:?}");
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let fine = linked.exists()
                && (fragment.is_empty()
                    || !path.is_empty() && !path.ends_with(".md")
                    || anchors(&std::fs::read_to_string(&linked).unwrap()).contains(fragment));
            if !fine {
                broken.push(format!(
                    "{}: {target}",
                    file.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
