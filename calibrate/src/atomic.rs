//! Files written atomically: the profile `calibrate` writes and every CSV,
//! JSON, record file and chart `predict` writes.
//!
//! An [`AtomicFile`] is opened before the work starts, as a temporary file
//! beside its target, so a path that cannot be written fails at once. When
//! the work is done its bytes are written, synced and the file is renamed
//! over the target; dropped without a commit (an error, an interrupt) it is
//! removed and the target stays as it was, or absent.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a target cannot be written.
#[derive(Debug, Error)]
pub enum TargetError {
    #[error("it is a directory")]
    Directory,
    #[error("it names no file")]
    NoFileName,
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl From<TargetError> for io::Error {
    fn from(e: TargetError) -> Self {
        match e {
            TargetError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// A file that appears only complete: see the module docs.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// Opens the temporary file beside `target`, whose directory must exist.
    ///
    /// # Errors
    /// When `target` is a directory, names no file, or its directory is
    /// missing or not writable.
    pub fn create(target: &Path) -> Result<Self, TargetError> {
        Self::open(target, false)
    }

    /// As [`AtomicFile::create`], creating the target's directory (and its
    /// parents) first when it does not exist.
    ///
    /// # Errors
    /// As [`AtomicFile::create`], and when the directory cannot be created.
    pub fn create_all(target: &Path) -> Result<Self, TargetError> {
        Self::open(target, true)
    }

    fn open(target: &Path, make_dirs: bool) -> Result<Self, TargetError> {
        if target.is_dir() {
            return Err(TargetError::Directory);
        }
        let name = target.file_name().ok_or(TargetError::NoFileName)?;
        let dir = parent_dir(target);
        if make_dirs {
            fs::create_dir_all(&dir)?;
        }
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .tempfile_in(&dir)?;
        Ok(Self {
            target: target.to_path_buf(),
            temp,
        })
    }

    /// The target path.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Writes `bytes`, syncs them to disk and renames the file over the
    /// target.
    ///
    /// # Errors
    /// Write, sync or rename failures; the target is then unchanged.
    pub fn commit(mut self, bytes: &[u8]) -> io::Result<()> {
        self.temp.write_all(bytes)?;
        self.temp.flush()?;
        readable(self.temp.as_file())?;
        self.temp.as_file().sync_all()?;
        self.temp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The directory a file path lies in (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Temporary files are created owner-only; a profile, chart or CSV is for
/// sharing.
#[cfg(unix)]
fn readable(f: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    f.set_permissions(fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn readable(_: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_on_commit_or_leaves_alone() {
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
    }

    #[test]
    fn a_new_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        let f = AtomicFile::create(&target).unwrap();
        assert!(!target.exists());
        f.commit(b"a,b\n").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "a,b\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn bad_targets_fail_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("new/dir/out.csv");
        assert!(matches!(
            AtomicFile::create(&missing),
            Err(TargetError::Io(_))
        ));
        // create_all makes the directory.
        assert!(AtomicFile::create_all(&missing).is_ok());
        assert!(matches!(
            AtomicFile::create(dir.path()),
            Err(TargetError::Directory)
        ));
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        assert!(AtomicFile::create_all(&file.join("out.csv")).is_err());
    }
}
