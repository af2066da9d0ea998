//! Files written atomically: the profile `calibrate` writes and every CSV,
//! JSON, record file and chart `predict` writes.
//!
//! An [`AtomicFile`] is opened before the work starts, as a temporary file
//! beside its target, so a path that cannot be written fails at once. When
//! the work is done its bytes are written, synced and the file is renamed
//! over the target; dropped without a commit (an error) it is removed and
//! the target stays as it was, or absent. An interrupt (SIGINT, SIGTERM,
//! SIGHUP) ends the process without running destructors, so
//! [`remove_on_interrupt`] removes the temporary files still open then.
//!
//! A symbolic link is followed: the file it names is replaced and the link
//! stays a link. A target that exists and is no regular file (`/dev/stdout`,
//! a pipe) cannot be replaced by a rename; it is opened at once and written
//! in place at the commit, whose errors (a full device) are reported.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use thiserror::Error;

/// Why a target cannot be written.
#[derive(Debug, Error)]
pub enum TargetError {
    #[error("it is a directory")]
    Directory,
    #[error("it names no file")]
    NoFileName,
    #[error("{} is a file, not a folder", .0.display())]
    UnderFile(PathBuf),
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
    sink: Sink,
    /// Keeps the temporary file on the list an interrupt removes.
    _listed: Option<Listed>,
}

/// The temporary files of the open [`AtomicFile`]s.
static OPEN_TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary file's place on [`OPEN_TEMPORARIES`], left when dropped (at
/// the commit, or with its file).
#[derive(Debug)]
struct Listed(PathBuf);

impl Listed {
    fn new(path: &Path) -> Self {
        lock_open().push(path.to_path_buf());
        Self(path.to_path_buf())
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        let mut open = lock_open();
        if let Some(i) = open.iter().position(|p| *p == self.0) {
            open.swap_remove(i);
        }
    }
}

fn lock_open() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    OPEN_TEMPORARIES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Makes an interrupt (SIGINT, SIGTERM, SIGHUP) remove the temporary files
/// of the [`AtomicFile`]s still open, then end the process with status 130,
/// as a shell reports an interrupted command. Their targets stay as they
/// were. Call it once, at the start of `main`.
pub fn remove_on_interrupt() {
    // A second call (or another handler) keeps the first: not an error
    // worth stopping for.
    let _ = ctrlc::set_handler(|| {
        for path in lock_open().iter() {
            let _ = fs::remove_file(path);
        }
        // SAFETY: _exit has no preconditions. It skips the exit handlers,
        // which an interrupted MPI library may block in.
        unsafe { libc::_exit(130) }
    });
}

/// Where the bytes go.
#[derive(Debug)]
enum Sink {
    /// A temporary file beside `to`, renamed over it at the commit.
    Temp {
        temp: tempfile::NamedTempFile,
        to: PathBuf,
    },
    /// A target that is no regular file, written in place.
    InPlace(File),
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
        let to = resolve_links(target)?;
        if fs::metadata(&to).is_ok_and(|m| !m.is_file()) {
            let file = fs::OpenOptions::new().write(true).open(&to)?;
            return Ok(Self {
                target: target.to_path_buf(),
                sink: Sink::InPlace(file),
                _listed: None,
            });
        }
        let name = to.file_name().ok_or(TargetError::NoFileName)?;
        let dir = parent_dir(&to);
        if let Some(file) = dir.ancestors().find(|a| a.exists()).filter(|a| !a.is_dir()) {
            return Err(TargetError::UnderFile(file.to_path_buf()));
        }
        if make_dirs {
            fs::create_dir_all(&dir)?;
        }
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(without_temp_name)?;
        Ok(Self {
            target: target.to_path_buf(),
            _listed: Some(Listed::new(temp.path())),
            sink: Sink::Temp { temp, to },
        })
    }

    /// The target path.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Writes `bytes`, syncs them to disk and renames the file over the
    /// target (or writes them in place, for a target that is no regular
    /// file).
    ///
    /// # Errors
    /// Write, sync or rename failures; a regular target is then unchanged.
    pub fn commit(self, bytes: &[u8]) -> io::Result<()> {
        match self.sink {
            Sink::Temp { mut temp, to } => {
                temp.write_all(bytes)?;
                temp.flush()?;
                readable(temp.as_file())?;
                temp.as_file().sync_all()?;
                temp.persist(&to).map_err(|e| e.error)?;
            }
            Sink::InPlace(mut file) => {
                file.write_all(bytes)?;
                file.flush()?;
            }
        }
        Ok(())
    }
}

/// The OS's error without the temporary file's name, which the user never
/// gave and which is gone by the time they read it.
fn without_temp_name(e: io::Error) -> io::Error {
    // tempfile appends ` at path "…"` to the OS's message, and keeps no
    // error code to rebuild it from.
    let message = e.to_string();
    let os = message.split(" at path ").next().unwrap_or(&message);
    io::Error::new(e.kind(), os.to_string())
}

/// Most links followed before a chain counts as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The path a chain of symbolic links at `path` ends in (the path itself
/// when it is no link); the end need not exist yet.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = fs::read_link(&at)?;
                at = parent_dir(&at).join(next);
            }
            _ => return Ok(at),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a chain"
    )))
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
    fn open_temporaries_are_listed_until_committed_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let listed = |f: &AtomicFile| match &f.sink {
            Sink::Temp { temp, .. } => lock_open().contains(&temp.path().to_path_buf()),
            Sink::InPlace(_) => false,
        };
        let a = AtomicFile::create(&dir.path().join("a")).unwrap();
        let b = AtomicFile::create(&dir.path().join("b")).unwrap();
        assert!(listed(&a) && listed(&b));
        let temp_a = match &a.sink {
            Sink::Temp { temp, .. } => temp.path().to_path_buf(),
            Sink::InPlace(_) => unreachable!(),
        };
        a.commit(b"x").unwrap();
        assert!(!lock_open().contains(&temp_a));
        assert!(listed(&b));
        drop(b);
        assert!(lock_open().iter().all(|p| !p.starts_with(dir.path())));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_stays_a_link_and_its_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let (file, link) = (dir.path().join("target.csv"), dir.path().join("link.csv"));
        fs::write(&file, "old").unwrap();
        std::os::unix::fs::symlink("target.csv", &link).unwrap();
        AtomicFile::create(&link).unwrap().commit(b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        // A dangling link gets its file.
        fs::remove_file(&file).unwrap();
        AtomicFile::create(&link).unwrap().commit(b"again").unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "again");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_device_is_written_in_place_and_its_errors_reported() {
        let full = Path::new("/dev/full");
        if !fs::metadata(full).is_ok_and(|m| !m.is_file()) {
            return;
        }
        let err = AtomicFile::create(full).unwrap().commit(b"x").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
        assert!(!fs::metadata(full).unwrap().is_file());
        AtomicFile::create(Path::new("/dev/null"))
            .unwrap()
            .commit(b"x")
            .unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().is_file());
    }

    #[test]
    fn bad_targets_fail_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("new/dir/out.csv");
        let err = AtomicFile::create(&missing).unwrap_err();
        assert!(matches!(err, TargetError::Io(_)));
        // The temporary file's name is no business of the user's.
        assert!(!err.to_string().contains(".tmp"), "{err}");
        // create_all makes the directory.
        assert!(AtomicFile::create_all(&missing).is_ok());
        assert!(matches!(
            AtomicFile::create(dir.path()),
            Err(TargetError::Directory)
        ));
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        let err = AtomicFile::create_all(&file.join("sub/out.csv")).unwrap_err();
        assert!(
            matches!(err, TargetError::UnderFile(ref f) if *f == file),
            "{err}"
        );
    }
}
