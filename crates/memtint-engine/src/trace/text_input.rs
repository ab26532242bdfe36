//! Shared input layer of the text trace readers (DRAM-level and CPU-level): opening a file plain
//! or gzip (detected by magic bytes), streaming it line by line through one chunk buffer, and the
//! byte-level field and number parsers the readers' fast and general paths share.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Size of the chunk buffer the file is read into.
const CHUNK_BYTES: usize = 256 * 1024;
/// A line longer than this is not a trace line (most likely a binary file): report it rather than
/// growing the buffer without bound.
const MAX_LINE_BYTES: usize = 1 << 20;
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens `path` for reading, decompressing on the fly when it starts with the gzip magic bytes
/// (concatenated members are fine), whatever its name. Returns the reader and whether it is gzip.
pub(crate) fn open_input(path: &Path) -> Result<(Box<dyn Read + Send>, bool)> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 2];
    let got = read_full(&mut file, &mut magic).map_err(|e| Error::io(path, e))?;
    let gzip = got == 2 && magic == GZIP_MAGIC;
    file.seek(SeekFrom::Start(0)).map_err(|e| Error::io(path, e))?;
    let source: Box<dyn Read + Send> =
        if gzip { Box::new(flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(64 * 1024, file))) } else { Box::new(file) };
    Ok((source, gzip))
}

/// Reads until `buf` is full or the end of the input; returns how many bytes were read.
pub(crate) fn read_full(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A text file streamed through one chunk buffer that is refilled in place: no allocation per
/// line. Readers parse well-formed lines straight out of `pending()` (fast path) and fall back to
/// `next_line()` for everything else.
pub(crate) struct LineReader {
    path: PathBuf,
    source: Box<dyn Read + Send>,
    gzip: bool,
    /// Chunk buffer; bytes `pos..end` are read but not yet consumed.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Lines consumed so far (including blank and comment lines); the 1-based number of the
    /// line last returned or rejected.
    lines: u64,
    /// The last line returned ended the file without a `\n` (a truncated file, when gzip).
    unterminated: bool,
}

impl LineReader {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let (source, gzip) = open_input(path)?;
        Ok(LineReader {
            path: path.to_path_buf(),
            source,
            gzip,
            buf: vec![0; CHUNK_BYTES],
            pos: 0,
            end: 0,
            eof: false,
            lines: 0,
            unterminated: false,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn is_gzip(&self) -> bool {
        self.gzip
    }

    pub(crate) fn lines_read(&self) -> u64 {
        self.lines
    }

    /// Read but unconsumed bytes; may end in the middle of a line.
    #[inline]
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// Consumes one whole line (`len` bytes including its `\n`) taken from `pending()`.
    #[inline]
    pub(crate) fn consume_line(&mut self, len: usize) {
        self.pos += len;
        self.lines += 1;
    }

    #[inline]
    pub(crate) fn line(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }

    pub(crate) fn parse_error(&self, line: u64, reason: impl Into<String>) -> Error {
        let mut reason = reason.into();
        // A gzip stream cut short decompresses to a prefix that ends mid-line: say so, rather
        // than only that the partial line is malformed.
        if self.gzip && self.unterminated && line == self.lines {
            reason = format!("the gzip file ends in the middle of this line, so it is probably truncated ({reason})");
        }
        Error::Parse { path: self.path.clone(), line, reason }
    }

    /// The next line (without its `\n`) as a range for `line()`, or `None` at the end of the
    /// file. Counts the line in `lines_read()`.
    pub(crate) fn next_line(&mut self) -> Result<Option<Range<usize>>> {
        let mut scanned = 0; // bytes of pos..end already known to hold no '\n'
        loop {
            let window = &self.buf[self.pos + scanned..self.end];
            if let Some(i) = window.iter().position(|&b| b == b'\n') {
                let start = self.pos;
                let stop = self.pos + scanned + i;
                self.pos = stop + 1;
                self.lines += 1;
                return Ok(Some(start..stop));
            }
            scanned = self.end - self.pos;
            if self.eof {
                if self.pos < self.end {
                    let start = self.pos;
                    self.pos = self.end;
                    self.lines += 1;
                    self.unterminated = true;
                    return Ok(Some(start..self.end));
                }
                return Ok(None);
            }
            if scanned > MAX_LINE_BYTES {
                return Err(self.parse_error(self.lines + 1, format!("line longer than {MAX_LINE_BYTES} bytes; is this a text trace?")));
            }
            // Move the partial line to the front, grow if one line fills the buffer, refill.
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = loop {
                match self.source.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if self.gzip => return Err(self.parse_error(self.lines + 1, format!("corrupt or truncated gzip data: {e}"))),
                    Err(e) => return Err(Error::io(&self.path, e)),
                }
            };
            if n == 0 {
                self.eof = true;
            } else {
                self.end += n;
            }
        }
    }
}

// ---- Fast path: one pass over a well-formed line, no error reporting ----

/// Value of each byte as a hex digit, 0xff when it is not one.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// A decimal number of 1..=`max_digits` digits at `s[i..]` (`max_digits` <= 19, so no overflow);
/// returns it and the index after it.
#[inline(always)]
pub(crate) fn fast_decimal(s: &[u8], mut i: usize, max_digits: usize) -> Option<(u64, usize)> {
    let start = i;
    let mut v: u64 = 0;
    // Addresses in CPU traces have 8-15 digits: take them eight at a time.
    while let Some(x) = eight_digits(s, i) {
        v = v.wrapping_mul(100_000_000).wrapping_add(x);
        i += 8;
    }
    while i < s.len() {
        let d = s[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    let n = i - start;
    (n > 0 && n <= max_digits).then_some((v, i))
}

/// The value of `s[i..i + 8]` when all eight bytes are decimal digits (SWAR: one 64-bit word).
#[inline(always)]
fn eight_digits(s: &[u8], i: usize) -> Option<u64> {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let chunk = u64::from_le_bytes(s.get(i..i + 8)?.try_into().ok()?);
    // A byte is a digit when its high nibble is 3 and stays 3 after adding 6 (no carry can
    // cross bytes once the first test passed).
    if chunk & HIGH != ZEROS || chunk.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    // The first byte is the most significant digit: combine pairs, then quads, then halves.
    let v = chunk & 0x0f0f_0f0f_0f0f_0f0f;
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    Some((v.wrapping_mul(10_000) + (v >> 32)) & 0xffff_ffff)
}

/// An address at `s[i..]`: `0x`-hex of at most 16 digits or decimal of at most 19.
#[inline(always)]
pub(crate) fn fast_addr(s: &[u8], i: usize) -> Option<(u64, usize)> {
    if s.len() > i + 2 && s[i] == b'0' && s[i + 1] | 0x20 == b'x' {
        let start = i + 2;
        let mut j = start;
        let mut v: u64 = 0;
        while j < s.len() {
            let d = HEX_VALUE[s[j] as usize];
            if d == 0xff {
                break;
            }
            v = v.wrapping_shl(4) | d as u64;
            j += 1;
        }
        (j > start && j - start <= 16).then_some((v, j))
    } else {
        fast_decimal(s, i, 19)
    }
}

/// The index of the first non-space, non-tab byte at or after `i`.
#[inline(always)]
pub(crate) fn fast_blanks(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
        i += 1;
    }
    i
}

/// The end of a line at `s[i..]`: blanks, an optional `\r`, then `\n`; returns the index after
/// the `\n`.
#[inline(always)]
pub(crate) fn fast_line_end(s: &[u8], i: usize) -> Option<usize> {
    let mut i = fast_blanks(s, i);
    if i < s.len() && s[i] == b'\r' {
        i += 1;
    }
    (i < s.len() && s[i] == b'\n').then_some(i + 1)
}

// ---- General path: field splitting and numbers with reasons ----

#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

/// Splits off the next blank-separated field; `None` when only blanks remain.
#[inline]
pub(crate) fn next_field<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let s = *rest;
    let start = s.iter().position(|&b| !is_blank(b))?;
    let s = &s[start..];
    let len = s.iter().position(|&b| is_blank(b)).unwrap_or(s.len());
    *rest = &s[len..];
    Some(&s[..len])
}

/// A field as text for an error message: printable ASCII as it is, other bytes as `\xNN` (a
/// binary file's bytes would otherwise reach the terminal), at most 40 of them, then "...".
pub(crate) fn show(field: &[u8]) -> String {
    const MOST: usize = 40;
    let mut out = String::new();
    for &b in field.iter().take(MOST) {
        if b.is_ascii_graphic() || b == b' ' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    if field.len() > MOST {
        out.push_str("...");
    }
    out
}

/// A byte address, `0x`-hex or decimal; `Err(reason)` names the field.
#[inline]
pub(crate) fn parse_addr(field: &[u8]) -> std::result::Result<u64, String> {
    let invalid = || format!("address '{}' is neither decimal nor 0x-hex", show(field));
    let out_of_range = || "address out of range (more than 64 bits)".to_string();
    match field {
        [b'0', b'x' | b'X', digits @ ..] => {
            if digits.is_empty() {
                return Err(invalid());
            }
            let mut v: u64 = 0;
            let mut overflow = false;
            for &b in digits {
                let d = HEX_VALUE[b as usize];
                if d == 0xff {
                    return Err(invalid());
                }
                overflow |= v >> 60 != 0;
                v = (v << 4) | d as u64;
            }
            if overflow {
                Err(out_of_range())
            } else {
                Ok(v)
            }
        }
        _ => parse_decimal(field).map_err(|e| match e {
            DecimalError::Invalid => invalid(),
            DecimalError::Overflow => out_of_range(),
        }),
    }
}

pub(crate) enum DecimalError {
    Invalid,
    Overflow,
}

#[inline]
pub(crate) fn parse_decimal(field: &[u8]) -> std::result::Result<u64, DecimalError> {
    if field.is_empty() {
        return Err(DecimalError::Invalid);
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &b in field {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(DecimalError::Invalid);
        }
        match v.checked_mul(10).and_then(|v| v.checked_add(d as u64)) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    if overflow {
        Err(DecimalError::Overflow)
    } else {
        Ok(v)
    }
}

/// A file under the system temp dir with a name unique to this process and call; removed on drop.
#[cfg(test)]
pub(crate) struct TempFile(pub PathBuf);

#[cfg(test)]
impl TempFile {
    pub(crate) fn new(tag: &str) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let name = format!("memtint-trace-test-{}-{n}-{nanos}-{tag}", std::process::id());
        TempFile(std::env::temp_dir().join(name))
    }

    pub(crate) fn with_bytes(tag: &str, bytes: &[u8]) -> Self {
        let t = TempFile::new(tag);
        std::fs::write(&t.0, bytes).unwrap();
        t
    }

    /// A file of gzip members, one per element of `members`.
    pub(crate) fn gzip(tag: &str, members: &[&[u8]]) -> Self {
        use std::io::Write;
        let mut out = Vec::new();
        for m in members {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(m).unwrap();
            out.extend(enc.finish().unwrap());
        }
        TempFile::with_bytes(tag, &out)
    }
}

#[cfg(test)]
impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_shown_as_printable_text_of_bounded_length() {
        assert_eq!(show(b"0x3"), "0x3");
        assert_eq!(show(b"\x7f*\xe2\x1b"), "\\x7f*\\xe2\\x1b");
        let long = show(&[b'\x01'; 300]);
        assert_eq!(long, format!("{}...", "\\x01".repeat(40)));
    }

    #[test]
    fn fast_decimal_agrees_with_parse_decimal_at_every_length() {
        let mut n: u64 = 0;
        for digits in 1..=19 {
            n = n * 10 + (digits as u64 * 7) % 10;
            for text in [n.to_string(), format!("{n}\n"), format!("{n} 5"), format!("{n}x123456789")] {
                let len = n.to_string().len();
                assert_eq!(fast_decimal(text.as_bytes(), 0, 19), Some((n, len)), "{text:?}");
                assert!(matches!(parse_decimal(&text.as_bytes()[..len]), Ok(v) if v == n));
            }
        }
        assert_eq!(fast_decimal(b"12345678901234567890", 0, 19), None, "20 digits defer to the general path");
        assert_eq!(fast_decimal(b"1234567:", 0, 19), Some((1234567, 7)));
        assert_eq!(fast_decimal(b"x0123456789", 1, 19), Some((123456789, 11)));
        assert_eq!(fast_decimal(b"99999999/", 0, 9), Some((99999999, 8)));
        assert_eq!(fast_decimal(b"", 0, 19), None);
    }
}
