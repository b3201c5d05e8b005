//! Checks for run configuration parsing.
//!
//! Shared by the fuzz target `config` and `crates/brandubh-run/tests/fuzz_corpus.rs`,
//! which includes this file with `#[path]`: it may name only `brandubh_run`,
//! its dependency `brandubh_fs` and `std`.

use brandubh_run::config::RunConfig;

/// The file name errors must start with.
const FILE: &str = "fuzz.toml";

/// `data` as a TOML run configuration: parsing never panics; an error is one line
/// starting with the file name and naming a problem; an accepted configuration is valid and writes out as TOML
/// that reads back to the same configuration.
pub fn parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match RunConfig::from_toml_str(text, FILE) {
        Ok(config) => {
            assert_eq!(config.validate(), Ok(()));
            let written = config
                .to_toml_string()
                .unwrap_or_else(|e| panic!("a valid configuration does not write: {e}"));
            let back = RunConfig::from_toml_str(&written, "again.toml")
                .unwrap_or_else(|e| panic!("written configuration does not read: {e}"));
            assert_eq!(back, config);
            assert!(config.changed_keys(&back).is_empty());
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with(&format!("{FILE}: ")), "{message:?}");
            assert_eq!(brandubh_fs::error_line_fault(&message), None, "{message:?}");
        }
    }
}
