//! Crash-safe file writes, re-exported from [`brandubh_fs`]: [`write_atomic`] is the one
//! place this crate writes files.

pub use brandubh_fs::{
    FsError, TEMP_SUFFIX, is_temp_file, remove_temp_files, temp_path, write_atomic,
};

#[cfg(test)]
pub(crate) mod test_dir {
    //! A scratch directory for tests, removed on drop.

    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    static COUNTER: AtomicUsize = AtomicUsize::new(0);

    /// A fresh empty directory under the system temp dir.
    #[derive(Debug)]
    pub struct TestDir(PathBuf);

    impl TestDir {
        pub fn new(tag: &str) -> TestDir {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("brandubh-run-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).expect("create test dir");
            TestDir(path)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TestDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
