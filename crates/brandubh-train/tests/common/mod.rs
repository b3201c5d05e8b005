//! What the training loop's test binaries share: the tiny configuration and run options.
#![allow(dead_code)]

use std::path::Path;

use brandubh_net::Device;
use brandubh_run::config::RunConfig;
use brandubh_train::run::RunOptions;

/// `configs/tiny.toml` without evaluation matches (the evaluation hook belongs to the
/// binary; the loop alone skips it).
pub fn tiny() -> RunConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/tiny.toml");
    let mut config = RunConfig::from_file(path).unwrap_or_else(|e| panic!("{e}"));
    config.evaluation.matches = 0;
    config
}

/// Options for a run in `dir` on the CPU, at most `max_new` more iterations.
pub fn options(dir: &Path, max_new: Option<u32>) -> RunOptions {
    RunOptions {
        dir: dir.to_path_buf(),
        force_config: false,
        max_new_iterations: max_new,
        device: Device::flex(),
        selfplay_on_device: false,
    }
}
