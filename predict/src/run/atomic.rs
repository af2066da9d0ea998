//! Files written atomically: an interrupted run leaves the old file (or
//! none), never a half-written one.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file written atomically: a temporary file beside the target is
/// created at once (so a bad path fails before any work), filled, synced
/// and renamed over the target on [`AtomicFile::commit`]. Dropped without
/// a commit, it removes the temporary file and leaves the target as it was.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    file: Option<fs::File>,
}

impl AtomicFile {
    /// Creates the temporary file for `target`.
    ///
    /// The directory is created if it does not exist.
    ///
    /// # Errors
    /// When the directory cannot be created or is not writable.
    pub fn create(target: &Path) -> io::Result<Self> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let temp = dir.join(format!(
            ".{}.tmp{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        fs::create_dir_all(&dir)?;
        let file = fs::File::create(&temp)?;
        Ok(Self {
            target: target.to_path_buf(),
            temp,
            file: Some(file),
        })
    }

    /// Writes `contents` and moves the file into place.
    ///
    /// # Errors
    /// Write, sync or rename failures (the target is then unchanged).
    pub fn commit(mut self, contents: &[u8]) -> io::Result<()> {
        let mut file = self.file.take().expect("committed once");
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&self.temp, &self.target)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.is_some() || self.temp.exists() {
            self.file = None;
            let _ = fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_file_replaces_or_leaves_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        fs::write(&path, "old").unwrap();
        // Dropped without a commit: the target is untouched, no temp left.
        drop(AtomicFile::create(&path).unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        AtomicFile::create(&path).unwrap().commit(b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // A missing directory is created; a path under a file fails at once.
        assert!(AtomicFile::create(&dir.path().join("new/dir/out.csv")).is_ok());
        assert!(AtomicFile::create(&path.join("out.csv")).is_err());
    }
}
