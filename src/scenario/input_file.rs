//! Opening an input file, the one way every command does it: a path that is not a regular file
//! (a folder, a FIFO, a device such as /dev/zero, a socket, a symbolic link loop) is refused
//! before it is opened, so nothing blocks on a FIFO with no writer or reads a device forever;
//! a file read whole is read with a size limit applied while it streams in; text that is not
//! UTF-8 is refused at its byte offset and line. Every refusal is an [`InputError`] (exit 2)
//! naming the path.

use super::InputError;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Most bytes of a text file read whole: a scenario, sweep, checks or shard file, an output
/// folder's inputs.toml, review.toml or recommendation.txt.
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Most bytes of a data file read whole (a JSON trace export, a label file).
pub const MAX_DATA_BYTES: u64 = 4 << 30;

/// `path`'s metadata when it is a regular file (after following symbolic links), else why not.
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, &e))?;
    refuse_special(path, &meta)?;
    Ok(meta)
}

/// Opens `path` for reading when it is a regular file (after following symbolic links).
pub fn open_input(path: &Path) -> Result<File, InputError> {
    regular_file(path)?;
    let file = File::open(path).map_err(|e| cannot_read(path, &e))?;
    // The path may have been replaced between the look and the opening.
    let opened = file.metadata().map_err(|e| cannot_read(path, &e))?;
    refuse_special(path, &opened)?;
    Ok(file)
}

/// Opens `path` to be read as it streams: a regular file, or a pipe (a FIFO, a shell's
/// `<(command)`), which waits for its writer as a pipe does. At most `limit` bytes are read:
/// past them the reader fails, naming the limit, rather than holding an endless stream.
pub fn open_stream(path: &Path, limit: u64) -> Result<Limited<File>, InputError> {
    let is_pipe = |m: &std::fs::Metadata| is_fifo(m);
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, &e))?;
    if !is_pipe(&meta) {
        refuse_special(path, &meta)?;
    }
    let file = File::open(path).map_err(|e| cannot_read(path, &e))?;
    let opened = file.metadata().map_err(|e| cannot_read(path, &e))?;
    if !is_pipe(&opened) {
        refuse_special(path, &opened)?;
    }
    Ok(Limited { inner: file, left: limit, limit })
}

/// A reader that fails once more than its limit of bytes would be read.
pub struct Limited<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX).min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "more than {}, the most this kind of file may hold",
                size_words(self.limit)
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The whole of the regular file `path`, refused when it holds more than `limit` bytes (also
/// when it grows past the limit while being read).
pub fn read_input(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = open_input(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let too_big = || {
        InputError::file(
            path,
            format!("holds more than {}, the most this kind of file may hold", size_words(limit)),
        )
    };
    if size > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| cannot_read(path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// The whole of the regular file `path` as UTF-8 text, at most `limit` bytes.
pub fn read_input_text(path: &Path, limit: u64) -> Result<String, InputError> {
    utf8_text(path, read_input(path, limit)?)
}

/// `bytes`, read from `path`, as text; refused at the first byte that is not UTF-8, with its
/// offset, line and column.
pub fn utf8_text(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
        let line = valid.matches('\n').count() + 1;
        let message = format!(
            "not UTF-8 text: byte 0x{:02x} at byte offset {offset} (line {line}); save the file as UTF-8",
            bytes[offset]
        );
        InputError::at_offset(path, valid, offset, message)
    })
}

/// A limit in words: whole MiB when it is some, else bytes.
fn size_words(limit: u64) -> String {
    if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// Refuses what is not a regular file.
fn refuse_special(path: &Path, meta: &std::fs::Metadata) -> Result<(), InputError> {
    if meta.is_file() {
        return Ok(());
    }
    let what = if meta.is_dir() { "a folder" } else { special_kind(meta) };
    Err(InputError::file(path, format!("is {what}, not a file")))
}

/// Refuses `dir` unless it is a folder (after following symbolic links), saying what it is
/// instead: an output folder that `report` and `explain` read back.
pub fn output_folder(dir: &Path) -> Result<(), InputError> {
    let not = |what: &str| InputError::file(dir, format!("not an output folder ({what})"));
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(meta) if meta.is_file() => Err(not("a file, not a folder")),
        Ok(meta) => Err(not(&format!("{}, not a folder", special_kind(&meta)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not("no such directory")),
        Err(e) => Err(not(cannot_read(dir, &e).message.trim_start_matches("cannot read: "))),
    }
}

#[cfg(unix)]
fn is_fifo(meta: &std::fs::Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type())
}

#[cfg(not(unix))]
fn is_fifo(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(unix)]
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_meta: &std::fs::Metadata) -> &'static str {
    "not a regular file"
}

/// `cannot read: why`, in words for the common cases.
fn cannot_read(path: &Path, e: &std::io::Error) -> InputError {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
        _ if e.raw_os_error() == Some(40) => "a symbolic link loop (too many levels of links)".to_string(),
        _ => e.to_string(),
    };
    InputError::file(path, format!("cannot read: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_folder_that_is_not_one_says_what_it_is() {
        let d = tempfile::tempdir().unwrap();
        let err = |p: &Path| output_folder(p).unwrap_err().to_string();
        assert!(output_folder(d.path()).is_ok());
        assert_eq!(err(Path::new("/dev/zero")), "/dev/zero: not an output folder (a device, not a folder)");
        let file = d.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(err(&file).ends_with("f: not an output folder (a file, not a folder)"), "{}", err(&file));
        assert!(err(&d.path().join("none")).ends_with("none: not an output folder (no such directory)"));
        let looped = d.path().join("loop");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        assert!(err(&looped).contains("not an output folder (a symbolic link loop"), "{}", err(&looped));
    }

    #[test]
    fn special_files_are_refused_before_they_are_opened() {
        let d = tempfile::tempdir().unwrap();
        let err = |p: &Path| open_input(p).unwrap_err().to_string();
        assert!(err(d.path()).ends_with("is a folder, not a file"), "{}", err(d.path()));
        assert!(err(Path::new("/dev/zero")).ends_with("/dev/zero: is a device, not a file"));
        let looped = d.path().join("loop");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        assert!(err(&looped).contains("symbolic link loop"), "{}", err(&looped));
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // Opening a FIFO with no writer would block forever: it is refused first.
            assert!(err(&fifo).ends_with("is a FIFO (named pipe), not a file"), "{}", err(&fifo));
        }
        assert!(err(&d.path().join("none")).ends_with("cannot read: no such file"));
    }

    #[test]
    fn the_size_limit_and_utf8_are_checked_with_where_it_went_wrong() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.toml");
        std::fs::write(&p, b"a = 1\nb = \"x\xffy\"\n").unwrap();
        let e = read_input_text(&p, 1 << 20).unwrap_err();
        assert_eq!(e.position, Some((2, 7)));
        assert!(e.message.contains("byte 0xff at byte offset 12 (line 2)"), "{e}");
        assert!(read_input(&p, 5).unwrap_err().to_string().contains("holds more than 5 bytes"));
        assert_eq!(read_input(&p, 16).unwrap().len(), 16);
        let mut streamed = Vec::new();
        let e = open_stream(&p, 10).unwrap().read_to_end(&mut streamed).unwrap_err();
        assert_eq!(e.to_string(), "more than 10 bytes, the most this kind of file may hold");
        assert!(open_stream(Path::new("/dev/zero"), 10).is_err());
        streamed.clear();
        assert_eq!(open_stream(&p, 16).unwrap().read_to_end(&mut streamed).unwrap(), 16);
    }
}
