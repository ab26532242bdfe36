//! memtint's compact binary CPU-trace format, `.mtt`: the same records as a Ramulator CPU trace,
//! delta- and varint-encoded, read several times faster than gzip text and smaller.
//!
//! # Format, version 1
//!
//! A 32-byte header, then the body. All header integers are little-endian.
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0  | 4 | magic: the ASCII bytes `MTT1` |
//! | 4  | 2 | version: 1 |
//! | 6  | 2 | flags: bit 0 set = the body is gzip-compressed (one or more gzip members); other bits 0 |
//! | 8  | 8 | record count; `0xffff_ffff_ffff_ffff` = the writer never finished (file unusable) |
//! | 16 | 8 | instruction count: sum over records of bubbles + 1 |
//! | 24 | 8 | writeback count: records that carry a writeback |
//!
//! The body is the records, back to back, nothing after the last. Addresses are split into a
//! line (`addr >> 6`) and an offset (`addr & 63`). Programs interleave several access streams,
//! so lines are coded as deltas from one of 8 recent lines: a read table and a writeback table,
//! 8 slots each, every slot 0 at the start. Each record is:
//!
//! 1. bubbles, a varint (at most `u32::MAX`);
//! 2. one selector byte: bits 0-2 the read slot `r`, bits 3-5 the writeback slot `w`, bit 6
//!    set when the record has a writeback, bit 7 set when an address is not line-aligned;
//! 3. a zigzag varint: read line minus `read_table[r]` (wrapping, as `i64`); then
//!    `read_table[r]` = read line;
//! 4. if bit 6: a zigzag varint: writeback line minus `writeback_table[w]`; then
//!    `writeback_table[w]` = writeback line (without a writeback, writers set `w` to 0 and
//!    readers ignore it);
//! 5. if bit 7: one byte, the read's offset, then, with a writeback, one byte, its offset.
//!
//! A varint is LEB128: 7 bits per byte, least significant first, high bit set on every byte
//! but the last; at most 10 bytes. Zigzag maps a signed `n` to `(n << 1) ^ (n >> 63)`. A record
//! is thus at most 28 bytes. Which slot a writer picks is its choice (any slot decodes); this
//! one takes the slot nearest the line, or, when none is within 256 lines (a new stream), the
//! least recently used slot, so that active streams keep theirs.
//!
//! The whole file may also be gzip-compressed as a unit (e.g. by `gzip`); readers undo that
//! first. A reader checks the magic, version and flags, that the body holds exactly the
//! announced number of records (a truncated or padded file is an error), and at its end that
//! they add up to the header's instruction and writeback counts.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{CpuRecord, CpuTraceReader, CpuTraceSource};
use crate::error::{Error, Result};
use crate::trace::text_input::{open_input, read_full};

pub const MTT_MAGIC: [u8; 4] = *b"MTT1";
pub const MTT_VERSION: u16 = 1;
const HEADER_BYTES: usize = 32;
const FLAG_GZIP_BODY: u16 = 1;
const UNFINISHED: u64 = u64::MAX;
/// The longest record: 5 bytes of bubbles, the selector, two 10-byte deltas, two offset bytes.
const MAX_RECORD_BYTES: usize = 28;
const SLOTS: usize = 8;
/// A line farther than this from every slot starts a new stream (see the format).
const NEAR_LINES: u64 = 256;
const SEL_WRITEBACK: u8 = 1 << 6;
const SEL_UNALIGNED: u8 = 1 << 7;
const LINE_SHIFT: u32 = 6;
const OFFSET_MASK: u64 = 63;
const CHUNK_BYTES: usize = 256 * 1024;
/// A body of at most this many bytes (decompressed) is kept in memory on its first pass, so a
/// core that wraps the trace replays it without opening and inflating the file again: captured
/// traces are about 34 M instructions and 2-10 MB decoded, and runs of 100 M instructions or a
/// billion wrap them 3 to 30 times. Larger bodies stream every pass.
pub const REPLAY_BYTES: usize = 64 << 20;

/// The header of an `.mtt` file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MttHeader {
    pub gzip_body: bool,
    pub records: u64,
    pub instructions: u64,
    pub writebacks: u64,
}

impl MttHeader {
    fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[0..4].copy_from_slice(&MTT_MAGIC);
        h[4..6].copy_from_slice(&MTT_VERSION.to_le_bytes());
        h[6..8].copy_from_slice(&(if self.gzip_body { FLAG_GZIP_BODY } else { 0 }).to_le_bytes());
        h[8..16].copy_from_slice(&self.records.to_le_bytes());
        h[16..24].copy_from_slice(&self.instructions.to_le_bytes());
        h[24..32].copy_from_slice(&self.writebacks.to_le_bytes());
        h
    }

    /// `got` is how many header bytes the file had.
    fn decode(path: &Path, h: &[u8; HEADER_BYTES], got: usize) -> Result<Self> {
        let err = |reason: String| header_error(path, reason);
        if got < MTT_MAGIC.len() || h[0..4] != MTT_MAGIC {
            return Err(err(format!(
                "not a memtint binary trace: expected magic bytes 'MTT1', found {:?}",
                String::from_utf8_lossy(&h[..got.min(4)])
            )));
        }
        if got < HEADER_BYTES {
            return Err(err(format!("truncated header: {got} of {HEADER_BYTES} bytes")));
        }
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap());
        let version = u16_at(4);
        if version != MTT_VERSION {
            return Err(err(format!("unsupported .mtt version {version} (this memtint reads version {MTT_VERSION})")));
        }
        let flags = u16_at(6);
        if flags & !FLAG_GZIP_BODY != 0 {
            return Err(err(format!("unknown flags {flags:#06x}")));
        }
        let records = u64_at(8);
        if records == UNFINISHED {
            return Err(err("incomplete file: its writer never finished it (no record count)".into()));
        }
        Ok(MttHeader { gzip_body: flags & FLAG_GZIP_BODY != 0, records, instructions: u64_at(16), writebacks: u64_at(24) })
    }
}

/// Errors in the header are reported at "line" 0; errors in a record at its 1-based number.
fn header_error(path: &Path, reason: String) -> Error {
    Error::Parse { path: path.to_path_buf(), line: 0, reason: format!("header: {reason}") }
}

#[inline]
fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

#[inline]
fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

#[inline]
fn put_varint(out: &mut [u8], mut n: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        out[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    n + 1
}

enum Body {
    Plain(BufWriter<File>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
}

/// Writes an `.mtt` file record by record; `finish` writes the counts into the header. A file
/// whose writer is dropped unfinished is rejected by readers.
pub struct BinaryTraceWriter {
    path: PathBuf,
    body: Body,
    header: MttHeader,
    reads: SlotChooser,
    writebacks: SlotChooser,
}

/// The writer's side of a slot table: the lines, and when each slot was last used.
#[derive(Default)]
struct SlotChooser {
    lines: [u64; SLOTS],
    last_use: [u64; SLOTS],
    clock: u64,
}

impl SlotChooser {
    /// Picks the slot for `line`, records it there, and returns the slot and the delta.
    #[inline]
    fn code(&mut self, line: u64) -> (u8, i64) {
        let mut best = 0;
        let mut best_distance = u64::MAX;
        for (i, &l) in self.lines.iter().enumerate() {
            let d = (line.wrapping_sub(l) as i64).unsigned_abs();
            if d < best_distance {
                best = i;
                best_distance = d;
            }
        }
        if best_distance >= NEAR_LINES {
            best = (0..SLOTS).min_by_key(|&i| self.last_use[i]).unwrap_or(0);
        }
        self.clock += 1;
        self.last_use[best] = self.clock;
        let delta = line.wrapping_sub(self.lines[best]) as i64;
        self.lines[best] = line;
        (best as u8, delta)
    }
}

impl BinaryTraceWriter {
    /// Creates (or truncates) `path`; `gzip_body` compresses the records (header stays plain).
    pub fn create(path: &Path, gzip_body: bool) -> Result<Self> {
        Self::to_file(File::create(path).map_err(|e| Error::io(path, e))?, path, gzip_body)
    }

    /// Writes into `file` (seekable: `finish` rewrites the header); `path` names it in errors.
    pub fn to_file(file: File, path: &Path, gzip_body: bool) -> Result<Self> {
        let mut file = BufWriter::with_capacity(CHUNK_BYTES, file);
        let header = MttHeader { gzip_body, records: UNFINISHED, ..MttHeader::default() };
        file.write_all(&header.encode()).map_err(|e| Error::io(path, e))?;
        let body =
            if gzip_body { Body::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::default())) } else { Body::Plain(file) };
        Ok(BinaryTraceWriter {
            path: path.to_path_buf(),
            body,
            header: MttHeader { records: 0, ..header },
            reads: SlotChooser::default(),
            writebacks: SlotChooser::default(),
        })
    }

    #[inline]
    pub fn write(&mut self, r: &CpuRecord) -> Result<()> {
        let mut buf = [0u8; MAX_RECORD_BYTES];
        let wb = r.writeback.unwrap_or(0);
        let has_wb = r.writeback.is_some();
        let unaligned = (r.read | wb) & OFFSET_MASK != 0;
        let mut n = put_varint(&mut buf, 0, r.bubbles as u64);
        let sel_at = n;
        n += 1;
        let (read_slot, delta) = self.reads.code(r.read >> LINE_SHIFT);
        let mut sel = read_slot;
        n = put_varint(&mut buf, n, zigzag(delta));
        if has_wb {
            let (wb_slot, delta) = self.writebacks.code(wb >> LINE_SHIFT);
            sel |= wb_slot << 3 | SEL_WRITEBACK;
            n = put_varint(&mut buf, n, zigzag(delta));
        }
        if unaligned {
            sel |= SEL_UNALIGNED;
        }
        buf[sel_at] = sel;
        if unaligned {
            buf[n] = (r.read & OFFSET_MASK) as u8;
            n += 1;
            if has_wb {
                buf[n] = (wb & OFFSET_MASK) as u8;
                n += 1;
            }
        }
        let res = match &mut self.body {
            Body::Plain(w) => w.write_all(&buf[..n]),
            Body::Gzip(w) => w.write_all(&buf[..n]),
        };
        res.map_err(|e| Error::io(&self.path, e))?;
        self.header.records += 1;
        self.header.instructions += r.instructions();
        self.header.writebacks += has_wb as u64;
        Ok(())
    }

    /// Flushes the body and writes the final header; returns it.
    pub fn finish(self) -> Result<MttHeader> {
        let io_err = |e| Error::io(&self.path, e);
        let buffered = match self.body {
            Body::Plain(w) => w,
            Body::Gzip(w) => w.finish().map_err(io_err)?,
        };
        let mut file = buffered.into_inner().map_err(|e| io_err(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        file.write_all(&self.header.encode()).map_err(io_err)?;
        file.flush().map_err(io_err)?;
        Ok(self.header)
    }
}

/// Writes every remaining record of `source` to a new `.mtt` file at `output`.
pub fn write_mtt(source: &mut (impl CpuTraceSource + ?Sized), output: &Path, gzip_body: bool) -> Result<MttHeader> {
    let mut w = BinaryTraceWriter::create(output, gzip_body)?;
    while let Some(r) = source.next_record()? {
        w.write(&r)?;
    }
    w.finish()
}

/// Converts a CPU trace (Ramulator text, plain or gzip, or `.mtt`, by content) to `.mtt`. The body is gzip-compressed
/// when `output`'s name ends in `.gz`. Written as `write_replacing` writes.
pub fn convert(input: &Path, output: &Path) -> Result<MttHeader> {
    let mut source = open_input_trace(input, output)?;
    let gzip_body = output.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    write_replacing(output, |file| {
        let mut w = BinaryTraceWriter::to_file(file, output, gzip_body)?;
        let mut records = 0u64;
        while let Some(r) = source.next_record()? {
            w.write(&r)?;
            records += 1;
            if records & crate::interrupt::RECORD_CHECK_MASK == 0 {
                crate::interrupt::check()?;
            }
        }
        w.finish()
    })
}

/// Writes `output` with `write`, which fills the file it is given: a new file beside `output`,
/// renamed over it only when `write` succeeds, so a conversion that fails (a corrupt input, a
/// full disk) leaves no partial trace behind and an existing file as it was. An output that
/// exists and is not a regular file (`/dev/null`, a FIFO) is written into directly, never
/// renamed over; a symbolic link is followed to its file. Errors name `output`.
fn write_replacing<T>(output: &Path, write: impl FnOnce(File) -> Result<T>) -> Result<T> {
    let io_err = |e| Error::io(output, e);
    let target = match std::fs::metadata(output) {
        Ok(m) if !m.is_file() => return write(File::options().write(true).open(output).map_err(io_err)?),
        Ok(_) => output.canonicalize().map_err(io_err)?,
        Err(_) => output.to_path_buf(),
    };
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map_or("output".into(), |n| n.to_string_lossy().into_owned());
    let (tmp, file) = (0..100)
        .find_map(|i| {
            let tmp = dir.join(format!(".{name}.{}-{i}.part", std::process::id()));
            match File::options().write(true).create_new(true).open(&tmp) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                opened => Some(opened.map(|f| (tmp, f))),
            }
        })
        .unwrap_or_else(|| Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name beside it")))
        .map_err(io_err)?;
    if let Ok(m) = std::fs::metadata(&target) {
        let _ = file.set_permissions(m.permissions());
    }
    let done = write(file).and_then(|v| std::fs::rename(&tmp, &target).map(|()| v).map_err(io_err));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// The input of a conversion, read by its content (`.mtt` or Ramulator text); an error, before
/// anything is written, when the output is the input itself (creating the output would empty it).
fn open_input_trace(input: &Path, output: &Path) -> Result<Box<dyn CpuTraceSource>> {
    if let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize()) {
        if a == b {
            return Err(Error::config(
                "output",
                format!("{} is both the input and the output; write the conversion to another file", input.display()),
            ));
        }
    }
    Ok(if is_mtt(input)? { Box::new(BinaryTraceReader::open(input)?) } else { Box::new(CpuTraceReader::open(input)?) })
}

/// Writes a CPU trace (`.mtt` or Ramulator text, by content) as Ramulator CPU-trace text, one
/// `<bubbles> <read address> [<writeback address>]` line per record, decimal like Ramulator's own
/// traces; gzip-compressed when `output`'s name ends in `.gz`. Returns the counts written.
pub fn convert_to_text(input: &Path, output: &Path) -> Result<MttHeader> {
    let mut source = open_input_trace(input, output)?;
    let io_err = |e| Error::io(output, e);
    write_replacing(output, |file| {
        let file = BufWriter::with_capacity(CHUNK_BYTES, file);
        if output.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz")) {
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            let counts = write_text(source.as_mut(), &mut gz, output)?;
            gz.finish().and_then(|mut f| f.flush()).map_err(io_err)?;
            Ok(counts)
        } else {
            let mut file = file;
            let counts = write_text(source.as_mut(), &mut file, output)?;
            file.flush().map_err(io_err)?;
            Ok(counts)
        }
    })
}

/// The records of `source` as text lines into `out` (`output` names it in errors).
fn write_text(source: &mut dyn CpuTraceSource, out: &mut impl Write, output: &Path) -> Result<MttHeader> {
    let mut counts = MttHeader::default();
    while let Some(r) = source.next_record()? {
        match r.writeback {
            Some(wb) => writeln!(out, "{} {} {}", r.bubbles, r.read, wb),
            None => writeln!(out, "{} {}", r.bubbles, r.read),
        }
        .map_err(|e| Error::io(output, e))?;
        counts.records += 1;
        counts.instructions += r.instructions();
        counts.writebacks += r.writeback.is_some() as u64;
        if counts.records & crate::interrupt::RECORD_CHECK_MASK == 0 {
            crate::interrupt::check()?;
        }
    }
    Ok(counts)
}

/// Whether `path` holds an `.mtt` trace (possibly gzipped as a whole), judged by its magic bytes.
pub fn is_mtt(path: &Path) -> Result<bool> {
    let (mut source, _) = open_input(path)?;
    let mut magic = [0u8; 4];
    // A gzip error here means "not readable as .mtt"; the text reader will report it properly.
    let got = read_full(&mut source, &mut magic).unwrap_or(0);
    Ok(got == 4 && magic == MTT_MAGIC)
}

/// A streaming reader of an `.mtt` file.
pub struct BinaryTraceReader {
    path: PathBuf,
    name: String,
    header: MttHeader,
    source: Box<dyn Read + Send>,
    /// Chunk buffer; bytes `pos..end` are read but not yet decoded.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    records_read: u64,
    /// What the records read so far add up to, checked against the header at the end.
    instructions_read: u64,
    writebacks_read: u64,
    checked_end: bool,
    /// The read and writeback slot tables (see the format).
    tables: SlotTables,
    /// The body read so far on the first pass while it fits in `replay_limit` (None past that).
    kept: Option<Vec<u8>>,
    replay_limit: usize,
    /// The whole body is in `buf[..replay_len]` (a rewind after a verified first pass): rewinds
    /// start over in memory.
    replay_len: Option<usize>,
}

impl std::fmt::Debug for BinaryTraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinaryTraceReader")
            .field("path", &self.path)
            .field("header", &self.header)
            .field("records_read", &self.records_read)
            .finish()
    }
}

impl BinaryTraceReader {
    pub fn open(path: &Path) -> Result<Self> {
        let (mut source, outer_gzip) = open_input(path)?;
        let mut h = [0u8; HEADER_BYTES];
        let got = read_full(&mut source, &mut h).map_err(|e| {
            if outer_gzip {
                header_error(path, format!("corrupt or truncated gzip data: {e}"))
            } else {
                Error::io(path, e)
            }
        })?;
        let header = MttHeader::decode(path, &h, got)?;
        if header.gzip_body {
            source = Box::new(flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(64 * 1024, source)));
        }
        Ok(BinaryTraceReader {
            path: path.to_path_buf(),
            name: path.display().to_string(),
            header,
            source,
            buf: vec![0; CHUNK_BYTES],
            pos: 0,
            end: 0,
            eof: false,
            records_read: 0,
            instructions_read: 0,
            writebacks_read: 0,
            checked_end: false,
            tables: SlotTables::default(),
            kept: Some(Vec::new()),
            replay_limit: REPLAY_BYTES,
            replay_len: None,
        })
    }

    /// The largest body kept in memory for rewinds (`REPLAY_BYTES` unless set; 0: none).
    pub fn with_replay_limit(mut self, bytes: usize) -> Self {
        self.replay_limit = bytes;
        self
    }

    pub fn header(&self) -> &MttHeader {
        &self.header
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record_error(&self, reason: String) -> Error {
        Error::Parse { path: self.path.clone(), line: self.records_read + 1, reason: format!("record {}: {reason}", self.records_read + 1) }
    }

    /// Tops the buffer up to at least `MAX_RECORD_BYTES` pending bytes, or to the end of file.
    #[cold]
    fn refill(&mut self) -> Result<()> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while !self.eof && self.end < MAX_RECORD_BYTES {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    if let Some(kept) = &mut self.kept {
                        if kept.len() + n <= self.replay_limit {
                            kept.extend_from_slice(&self.buf[self.end..self.end + n]);
                        } else {
                            self.kept = None;
                        }
                    }
                    self.end += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if self.header.gzip_body || e.kind() == io::ErrorKind::InvalidInput || e.kind() == io::ErrorKind::InvalidData => {
                    return Err(self.record_error(format!("corrupt or truncated gzip data: {e}")))
                }
                Err(e) => return Err(Error::io(&self.path, e)),
            }
        }
        Ok(())
    }

    /// Called once all announced records are read: the body must end here, and its counts
    /// must be the header's.
    #[cold]
    fn check_end(&mut self) -> Result<()> {
        self.refill()?;
        if self.end > self.pos {
            return Err(Error::Parse {
                path: self.path.clone(),
                line: self.records_read,
                reason: format!("data after the last of the {} records the header announces", self.header.records),
            });
        }
        let h = &self.header;
        for (what, said, has) in
            [("instruction", h.instructions, self.instructions_read), ("writeback", h.writebacks, self.writebacks_read)]
        {
            if said != has {
                return Err(header_error(
                    &self.path,
                    format!("the {what} count disagrees with the body: the header says {said}, the records hold {has}"),
                ));
            }
        }
        Ok(())
    }
}

/// Why a record could not be decoded from the bytes at hand.
enum DecodeError {
    Truncated,
    Overlong,
    BubblesOutOfRange,
}

#[inline(always)]
fn get_varint(s: &[u8], pos: &mut usize) -> std::result::Result<u64, DecodeError> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *s.get(*pos).ok_or(DecodeError::Truncated)?;
        *pos += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Ok(v);
        }
        shift += 7;
        if shift > 63 {
            return Err(DecodeError::Overlong);
        }
    }
}

#[derive(Default)]
struct SlotTables {
    reads: [u64; SLOTS],
    writebacks: [u64; SLOTS],
}

/// Decodes the record at the start of `s`, updating the slot tables; returns its length. On an
/// error the tables may be half-updated, which does not matter: reading stops.
#[inline(always)]
fn decode_record(s: &[u8], tables: &mut SlotTables) -> std::result::Result<(usize, CpuRecord), DecodeError> {
    let mut i = 0;
    let bubbles = u32::try_from(get_varint(s, &mut i)?).map_err(|_| DecodeError::BubblesOutOfRange)?;
    let sel = *s.get(i).ok_or(DecodeError::Truncated)?;
    i += 1;
    let slot = &mut tables.reads[(sel & 7) as usize];
    *slot = slot.wrapping_add(unzigzag(get_varint(s, &mut i)?) as u64);
    let mut read = *slot << LINE_SHIFT;
    let mut writeback = None;
    if sel & SEL_WRITEBACK != 0 {
        let slot = &mut tables.writebacks[(sel >> 3 & 7) as usize];
        *slot = slot.wrapping_add(unzigzag(get_varint(s, &mut i)?) as u64);
        writeback = Some(*slot << LINE_SHIFT);
    }
    if sel & SEL_UNALIGNED != 0 {
        read |= *s.get(i).ok_or(DecodeError::Truncated)? as u64 & OFFSET_MASK;
        i += 1;
        if let Some(wb) = &mut writeback {
            *wb |= *s.get(i).ok_or(DecodeError::Truncated)? as u64 & OFFSET_MASK;
            i += 1;
        }
    }
    Ok((i, CpuRecord { bubbles, read, writeback }))
}

impl BinaryTraceReader {
    #[cold]
    fn decode_failure(&self, e: DecodeError) -> Error {
        match e {
            DecodeError::Truncated => {
                let where_ = if self.pos == self.end {
                    format!("after record {}", self.records_read)
                } else {
                    format!("inside record {}", self.records_read + 1)
                };
                self.record_error(format!("truncated file: the header announces {} records, the data ends {where_}", self.header.records))
            }
            DecodeError::Overlong => self.record_error("corrupt data: a varint longer than 10 bytes".into()),
            DecodeError::BubblesOutOfRange => self.record_error("corrupt data: instruction count out of range (more than 32 bits)".into()),
        }
    }

    /// Decodes the record at `pos` (the buffer topped up first where it may not hold one).
    #[inline(always)]
    fn decode_next(&mut self) -> Result<CpuRecord> {
        if self.end - self.pos < MAX_RECORD_BYTES && !self.eof {
            self.refill()?;
        }
        match decode_record(&self.buf[self.pos..self.end], &mut self.tables) {
            Ok((len, r)) => {
                self.pos += len;
                self.records_read += 1;
                self.instructions_read = self.instructions_read.wrapping_add(r.instructions());
                self.writebacks_read += r.writeback.is_some() as u64;
                Ok(r)
            }
            Err(e) => Err(self.decode_failure(e)),
        }
    }
}

impl CpuTraceSource for BinaryTraceReader {
    #[inline]
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        if self.records_read == self.header.records {
            if !self.checked_end {
                self.check_end()?;
                self.checked_end = true;
            }
            return Ok(None);
        }
        self.decode_next().map(Some)
    }

    fn next_records(&mut self, out: &mut [CpuRecord], budget: u64) -> Result<usize> {
        // No more than the records left: the end's checks stay next_record's.
        let left = (self.header.records - self.records_read).min(out.len() as u64) as usize;
        let (mut n, mut instructions) = (0, 0);
        while n < left && instructions < budget {
            let r = self.decode_next()?;
            out[n] = r;
            n += 1;
            instructions += r.instructions();
        }
        if left == 0 && !out.is_empty() && budget > 0 {
            debug_assert!(self.records_read == self.header.records);
            self.next_record()?; // at the end: its checks, once
        }
        Ok(n)
    }

    fn rewind(&mut self) -> Result<()> {
        // A first pass read and checked to its end, whole in `kept`: the same bytes again.
        if self.replay_len.is_none() && self.checked_end && self.kept.is_some() {
            let mut body = self.kept.take().unwrap_or_default();
            body.shrink_to_fit();
            self.replay_len = Some(body.len());
            self.buf = body;
            self.source = Box::new(io::empty());
        }
        match self.replay_len {
            Some(len) => {
                self.pos = 0;
                self.end = len;
                self.eof = true;
                self.records_read = 0;
                self.instructions_read = 0;
                self.writebacks_read = 0;
                self.tables = SlotTables::default();
                // Checked on the first pass; the bytes are those bytes.
                self.checked_end = true;
            }
            None => {
                let limit = self.replay_limit;
                let too_big = self.kept.is_none();
                *self = BinaryTraceReader::open(&self.path)?.with_replay_limit(limit);
                if too_big {
                    self.kept = None; // it did not fit the first time either
                }
            }
        }
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::super::{collect, spec_traces_dir, trace_stats, VecCpuSource};
    use super::*;
    use crate::trace::text_input::TempFile;

    fn rec(bubbles: u32, read: u64, writeback: Option<u64>) -> CpuRecord {
        CpuRecord { bubbles, read, writeback }
    }

    /// Aligned and unaligned, forward and backward jumps, extremes.
    fn handmade() -> Vec<CpuRecord> {
        vec![
            rec(3, 0x1000, None),
            rec(0, 0x1040, Some(0x2000)),
            rec(9, 0x40, None),
            rec(4, 0x5003, Some(0x1fc0)),
            rec(1, 0x1000, Some(0x1041)),
            rec(u32::MAX, u64::MAX, Some(0)),
            rec(0, 0, Some(u64::MAX)),
            rec(7, 140734746854976, None),
        ]
    }

    fn round_trip(records: &[CpuRecord], gzip_body: bool) -> (Vec<CpuRecord>, MttHeader) {
        let f = TempFile::new("mtt");
        let header = write_mtt(&mut VecCpuSource::new("v", records.to_vec()), &f.0, gzip_body).unwrap();
        let mut r = BinaryTraceReader::open(&f.0).unwrap();
        assert_eq!(r.header(), &header);
        (collect(&mut r).unwrap(), header)
    }

    /// Passes after the first replay the body from memory (the file is gone by then), record
    /// for record, plain and gzip; a body over the limit is read from the file again.
    #[test]
    fn rewinds_replay_a_kept_body_and_stream_one_over_the_limit() {
        let records: Vec<CpuRecord> =
            (0..5000u64).map(|i| rec((i % 7) as u32, 0x1000 + i * 4160 % 99_991, (i % 3 == 0).then_some(i * 64))).collect();
        for gzip_body in [false, true] {
            for (limit, replays) in [(REPLAY_BYTES, true), (100, false)] {
                let f = TempFile::new("mtt");
                write_mtt(&mut VecCpuSource::new("v", records.clone()), &f.0, gzip_body).unwrap();
                let mut r = BinaryTraceReader::open(&f.0).unwrap().with_replay_limit(limit);
                assert_eq!(collect(&mut r).unwrap(), records);
                r.rewind().unwrap();
                std::fs::remove_file(&f.0).unwrap();
                for pass in 2..=3 {
                    let got = collect(&mut r);
                    if replays {
                        assert_eq!(got.unwrap(), records, "pass {pass}, gzip {gzip_body}");
                        r.rewind().unwrap();
                    } else {
                        // Streaming: the first rewind opened the file, the next one cannot.
                        assert_eq!(got.unwrap(), records, "pass {pass}, gzip {gzip_body}");
                        assert!(r.rewind().is_err(), "over the limit, a rewind reads the file");
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn mtt_to_text_and_back_keeps_every_record_plain_and_gzip_text() {
        let records = handmade();
        let mtt = TempFile::new("mtt");
        let header = write_mtt(&mut VecCpuSource::new("v", records.clone()), &mtt.0, false).unwrap();
        for name in ["txt", "txt.gz"] {
            let text = TempFile::new(name);
            let counts = convert_to_text(&mtt.0, &text.0).unwrap();
            assert_eq!((counts.records, counts.instructions, counts.writebacks), (header.records, header.instructions, header.writebacks));
            assert_eq!(collect(&mut CpuTraceReader::open(&text.0).unwrap()).unwrap(), records);
            let back = TempFile::new("mtt");
            convert(&text.0, &back.0).unwrap();
            assert_eq!(std::fs::read(&back.0).unwrap(), std::fs::read(&mtt.0).unwrap(), "the same bytes");
        }
    }

    /// `memtint convert x x` used to truncate x and report 0 records.
    #[test]
    fn converting_a_trace_onto_itself_is_refused_and_leaves_it_whole() {
        let records = handmade();
        let mtt = TempFile::new("mtt");
        write_mtt(&mut VecCpuSource::new("v", records.clone()), &mtt.0, false).unwrap();
        let before = std::fs::read(&mtt.0).unwrap();
        for result in [convert(&mtt.0, &mtt.0), convert_to_text(&mtt.0, &mtt.0)] {
            let e = result.unwrap_err().to_string();
            assert!(e.contains("both the input and the output"), "{e}");
        }
        assert_eq!(std::fs::read(&mtt.0).unwrap(), before);
    }

    /// `convert --to ramulator` of a corrupt `.mtt` left a plausible partial text trace at the
    /// output: both directions now write beside it and rename only a whole conversion.
    #[test]
    fn a_failed_conversion_leaves_no_partial_output_and_an_existing_one_as_it_was() {
        let records: Vec<CpuRecord> = (0..50_000u64).map(|i| rec((i % 7) as u32, i * 4096, None)).collect();
        let good = mtt_bytes(&records, false);
        let corrupt = TempFile::with_bytes("mttcorrupt", &good[..good.len() / 2]);
        let dir = std::env::temp_dir().join(format!("memtint-convert-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["out.txt", "out.txt.gz", "out.mtt"] {
            let out = dir.join(name);
            let convert_it =
                |output: &Path| if name.ends_with(".mtt") { convert(&corrupt.0, output) } else { convert_to_text(&corrupt.0, output) };
            let e = convert_it(&out).unwrap_err().to_string();
            assert!(e.starts_with(&corrupt.0.display().to_string()) && e.contains("truncated file"), "{e}");
            assert!(!out.exists(), "{name}: no partial output");
            std::fs::write(&out, b"kept\n").unwrap();
            convert_it(&out).unwrap_err();
            assert_eq!(std::fs::read(&out).unwrap(), b"kept\n", "{name}: the old file stays");
            // A link is followed: its file is replaced, the link stays.
            let link = dir.join(format!("link-{name}"));
            std::os::unix::fs::symlink(&out, &link).unwrap();
            let whole = TempFile::with_bytes("mttwhole", &good);
            if name.ends_with(".mtt") { convert(&whole.0, &link) } else { convert_to_text(&whole.0, &link) }.unwrap();
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert_ne!(std::fs::read(&out).unwrap(), b"kept\n");
        }
        let left: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n.to_string_lossy().ends_with(".part")).collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A device or a FIFO is written into, never renamed over.
    #[test]
    fn a_conversion_writes_into_a_device_or_fifo() {
        let mtt = TempFile::with_bytes("mttdev", &mtt_bytes(&handmade(), false));
        assert_eq!(convert_to_text(&mtt.0, Path::new("/dev/null")).unwrap().records, 8);
        assert_eq!(convert(&mtt.0, Path::new("/dev/null")).unwrap().records, 8);
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&std::fs::metadata("/dev/null").unwrap().file_type()), "still the device");
        let fifo = TempFile::new("fifo");
        if std::process::Command::new("mkfifo").arg(&fifo.0).status().is_ok_and(|s| s.success()) {
            let path = fifo.0.clone();
            let reader = std::thread::spawn(move || std::fs::read_to_string(path).unwrap());
            assert_eq!(convert_to_text(&mtt.0, &fifo.0).unwrap().records, 8);
            assert_eq!(reader.join().unwrap().lines().count(), 8);
            assert!(!std::fs::metadata(&fifo.0).unwrap().is_file(), "still the FIFO");
        }
    }

    /// `memtint convert a.mtt b.mtt` used to parse the binary input as text.
    #[test]
    fn an_mtt_input_converts_to_mtt() {
        let records = handmade();
        let (a, b) = (TempFile::new("mtt"), TempFile::new("mtt"));
        let header = write_mtt(&mut VecCpuSource::new("v", records.clone()), &a.0, false).unwrap();
        assert_eq!(convert(&a.0, &b.0).unwrap(), header);
        assert_eq!(collect(&mut BinaryTraceReader::open(&b.0).unwrap()).unwrap(), records);
    }

    #[test]
    fn handmade_records_round_trip_plain_and_gzip_body() {
        let records = handmade();
        for gzip_body in [false, true] {
            let (got, header) = round_trip(&records, gzip_body);
            assert_eq!(got, records);
            let instructions: u64 = records.iter().map(|r| r.instructions()).sum();
            assert_eq!(header, MttHeader { gzip_body, records: 8, instructions, writebacks: 5 });
        }
        let (got, header) = round_trip(&[], false);
        assert!(got.is_empty());
        assert_eq!(header.records, 0);
    }

    #[test]
    fn text_to_mtt_conversion_keeps_every_record_and_the_stats() {
        let text = "# handmade\n3 0x1000\n0 0x1040 0x2000\n9 4096\n4 0x5000\n1 0x1000 0x1043\n";
        let input = TempFile::with_bytes("mtttext", text.as_bytes());
        let out = TempFile::new("conv.mtt");
        let header = convert(&input.0, &out.0).unwrap();
        assert!(!header.gzip_body);
        assert_eq!((header.records, header.instructions, header.writebacks), (5, 22, 2));
        let want = collect(&mut CpuTraceReader::open(&input.0).unwrap()).unwrap();
        let mut r = BinaryTraceReader::open(&out.0).unwrap();
        assert_eq!(collect(&mut r).unwrap(), want);
        r.rewind().unwrap();
        let s = trace_stats(&mut r, None).unwrap();
        assert_eq!((s.records, s.instructions, s.writebacks), (5, 22, 2));
    }

    #[test]
    fn spec_trace_prefix_round_trips_through_mtt() {
        let Some(dir) = spec_traces_dir() else { return };
        let mut text = CpuTraceReader::open(&dir.join("456.hmmer.gz")).unwrap();
        let mut records = Vec::new();
        while records.len() < 200_000 {
            records.push(text.next_record().unwrap().expect("hmmer has more than 200k records"));
        }
        for gzip_body in [false, true] {
            let (got, header) = round_trip(&records, gzip_body);
            assert_eq!(header.records, 200_000);
            assert!(got == records, "round trip differs (gzip body: {gzip_body})");
        }
    }

    fn mtt_bytes(records: &[CpuRecord], gzip_body: bool) -> Vec<u8> {
        let f = TempFile::new("mttbytes");
        write_mtt(&mut VecCpuSource::new("v", records.to_vec()), &f.0, gzip_body).unwrap();
        std::fs::read(&f.0).unwrap()
    }

    /// Reads `bytes` as an .mtt file to the end; the error message, or "ok".
    fn read_bytes(bytes: &[u8]) -> String {
        let f = TempFile::with_bytes("mttbad", bytes);
        match BinaryTraceReader::open(&f.0).and_then(|mut r| collect(&mut r)) {
            Ok(_) => "ok".into(),
            Err(e) => {
                assert!(matches!(e, Error::Parse { .. }), "{e:?}");
                let msg = e.to_string();
                assert!(msg.starts_with(&f.0.display().to_string()), "{msg}");
                msg
            }
        }
    }

    #[test]
    fn bad_header_is_a_clear_error() {
        let good = mtt_bytes(&handmade(), false);
        assert_eq!(read_bytes(&good), "ok");
        assert!(read_bytes(b"3 0x1000\n").contains("not a memtint binary trace: expected magic bytes 'MTT1'"));
        assert!(read_bytes(b"").contains("not a memtint binary trace"));
        assert!(read_bytes(&good[..20]).contains(": header: truncated header: 20 of 32 bytes"));
        let mut v2 = good.clone();
        v2[4] = 2;
        assert!(read_bytes(&v2).contains("unsupported .mtt version 2"));
        let mut flags = good.clone();
        flags[6] = 0x82;
        assert!(read_bytes(&flags).contains("unknown flags 0x0082"));
        let mut unfinished = good.clone();
        unfinished[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read_bytes(&unfinished).contains("incomplete file"));
    }

    #[test]
    fn truncated_or_padded_body_is_a_clear_error() {
        let records: Vec<CpuRecord> =
            (0..50_000u64).map(|i| rec((i % 7) as u32, i * 4096 + i % 3, (i % 2 == 0).then_some(i * 64))).collect();
        let good = mtt_bytes(&records, false);
        let cut = read_bytes(&good[..good.len() - 1]);
        assert!(cut.contains("truncated file: the header announces 50000 records, the data ends inside record 50000"), "{cut}");
        let cut = read_bytes(&good[..HEADER_BYTES + 100]);
        assert!(cut.contains("truncated file") && cut.contains("announces 50000"), "{cut}");
        let mut padded = good.clone();
        padded.push(0);
        assert!(read_bytes(&padded).contains("data after the last of the 50000 records"));
        // A header that announces fewer records than there are.
        let mut short = good.clone();
        short[8..16].copy_from_slice(&49_999u64.to_le_bytes());
        assert!(read_bytes(&short).contains("data after the last of the 49999 records"));

        let gz = mtt_bytes(&records, true);
        assert_eq!(read_bytes(&gz), "ok");
        let cut = read_bytes(&gz[..gz.len() - 10]);
        assert!(cut.contains("corrupt or truncated gzip data") || cut.contains("truncated file"), "{cut}");
    }

    /// A header whose instruction or writeback count disagreed with its records was accepted
    /// by trace-stats and convert.
    #[test]
    fn header_counts_that_disagree_with_the_body_are_refused_by_every_reader() {
        let good = mtt_bytes(&handmade(), false);
        let said = |at: usize| u64::from_le_bytes(good[at..at + 8].try_into().unwrap());
        for (at, what) in [(16, "instruction"), (24, "writeback")] {
            let mut bad = good.clone();
            bad[at..at + 8].copy_from_slice(&(said(at) + 1).to_le_bytes());
            let expected = format!(
                ": header: the {what} count disagrees with the body: the header says {}, the records hold {}",
                said(at) + 1,
                said(at)
            );
            assert!(read_bytes(&bad).contains(&expected), "{}", read_bytes(&bad));
            let f = TempFile::with_bytes("mttcounts", &bad);
            let stats = crate::workload::trace_stats_json(&serde_json::json!({"workload": f.0}).to_string()).unwrap_err().to_string();
            assert_eq!(stats, format!("{}{expected}", f.0.display()));
            for to in ["mtt", "ramulator"] {
                let out = TempFile::new("mttcounts-out");
                let request = serde_json::json!({"input": f.0, "output": out.0, "to": to});
                let e = crate::workload::convert_json(&request.to_string()).unwrap_err().to_string();
                assert_eq!(e, format!("{}{expected}", f.0.display()), "to {to}");
            }
        }
    }

    /// Reads `bytes` as an .mtt file to the end in batches of up to `batch` records holding
    /// `budget` instructions: every record as `next_record` gives them, or its error message.
    fn read_batched(bytes: &[u8], batch: usize, budget: u64) -> std::result::Result<Vec<CpuRecord>, String> {
        let f = TempFile::with_bytes("mttbatch", bytes);
        let mut r = BinaryTraceReader::open(&f.0).map_err(|e| e.to_string())?;
        let mut out = vec![CpuRecord::default(); batch];
        let mut got = Vec::new();
        loop {
            let n = r.next_records(&mut out, budget).map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(got);
            }
            let held: u64 = out[..n].iter().map(|r| r.instructions()).sum();
            let before: u64 = out[..n - 1].iter().map(|r| r.instructions()).sum();
            assert!(n == batch || held >= budget || r.records_read == r.header.records, "stopped early: {n} records, {held}");
            assert!(before < budget, "read past the record that reached the budget");
            got.extend_from_slice(&out[..n]);
        }
    }

    /// The batched read (functional warming's) gives the records `next_record` gives, stops at
    /// the record that reaches its budget, and meets a bad body with the same error.
    #[test]
    fn batched_reads_give_the_records_and_errors_of_single_ones() {
        let records: Vec<CpuRecord> =
            (0..50_000u64).map(|i| rec((i % 7) as u32, i * 4096 + i % 3, (i % 2 == 0).then_some(i * 64))).collect();
        let good = mtt_bytes(&records, false);
        for (batch, budget) in [(1, 1), (64, 1), (64, 10), (64, u64::MAX), (3, 40), (50_001, u64::MAX)] {
            assert_eq!(read_batched(&good, batch, budget).unwrap(), records, "batch {batch}, budget {budget}");
        }
        assert_eq!(read_batched(&mtt_bytes(&handmade(), true), 5, 7).unwrap(), handmade());
        let mut bad = vec![good[..good.len() - 1].to_vec(), good[..HEADER_BYTES + 100].to_vec(), [&good[..], &[0]].concat()];
        let mut short = good.clone();
        short[8..16].copy_from_slice(&49_999u64.to_le_bytes());
        bad.push(short);
        let mut counts = good.clone();
        counts[16] ^= 1;
        bad.push(counts);
        let mut overlong = good.clone();
        overlong[HEADER_BYTES..HEADER_BYTES + 11].fill(0xff);
        bad.push(overlong);
        for bytes in &bad {
            // Each message after its (temporary) file's name.
            let single = read_bytes(bytes);
            let single = single.split_once(": ").unwrap().1;
            for (batch, budget) in [(64, u64::MAX), (7, 20)] {
                let e = read_batched(bytes, batch, budget).unwrap_err();
                assert_eq!(e.split_once(": ").unwrap().1, single);
            }
        }
    }

    #[test]
    fn interleaved_streams_cost_about_three_bytes_per_record() {
        // Five streams far apart, as in hmmer, plus a stream of writebacks; bubbles below 128.
        let bases = [47339700895424u64, 47339697114816, 47339704061632, 6732928, 6761856];
        let records: Vec<CpuRecord> = (0..10_000u64)
            .map(|i| rec((i % 100) as u32, bases[(i % 5) as usize] + i / 5 * 64, (i % 2 == 0).then_some(0x7000_0000 + i * 32)))
            .collect();
        let bytes = mtt_bytes(&records, false);
        let per_record = (bytes.len() - HEADER_BYTES) as f64 / records.len() as f64;
        assert!(per_record < 3.6, "{per_record} bytes per record");
        let (got, _) = round_trip(&records, false);
        assert_eq!(got, records);
    }

    #[test]
    fn random_records_round_trip() {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let records: Vec<CpuRecord> = (0..20_000)
            .map(|_| {
                let x = rng.next_u64();
                let read = if x & 1 == 0 { rng.next_u64() } else { (x >> 20) % 4096 * 64 };
                let writeback = (x & 6 == 0).then(|| if x & 8 == 0 { rng.next_u64() } else { read + 64 });
                rec((x >> 40) as u32 >> (x % 32), read, writeback)
            })
            .collect();
        for gzip_body in [false, true] {
            assert_eq!(round_trip(&records, gzip_body).0, records);
        }
    }

    #[test]
    fn overlong_varint_is_corrupt_data() {
        let mut bytes = mtt_bytes(&[rec(1, 64, None)], false);
        bytes.truncate(HEADER_BYTES);
        bytes.extend([0xff; 12]);
        bytes.push(0);
        assert!(read_bytes(&bytes).contains("record 1: corrupt data: a varint longer than 10 bytes"));
    }

    #[test]
    fn whole_file_gzip_is_read_too() {
        let records = handmade();
        let f = TempFile::gzip("mttwhole", &[&mtt_bytes(&records, false)]);
        assert!(is_mtt(&f.0).unwrap());
        assert_eq!(collect(&mut BinaryTraceReader::open(&f.0).unwrap()).unwrap(), records);
        let text = TempFile::gzip("notmtt", &[b"3 0x1000\n"]);
        assert!(!is_mtt(&text.0).unwrap());
    }

    #[test]
    fn rewind_starts_again_from_the_first_record() {
        let f = TempFile::new("mttrew");
        write_mtt(&mut VecCpuSource::new("v", handmade()), &f.0, true).unwrap();
        let mut r = BinaryTraceReader::open(&f.0).unwrap();
        let first = collect(&mut r).unwrap();
        assert!(r.next_record().unwrap().is_none());
        r.rewind().unwrap();
        assert_eq!(collect(&mut r).unwrap(), first);
    }

    /// Size and read speed of .mtt against gzip text on a SPEC trace. Run with
    /// `cargo test -p memtint-engine mtt_size_and_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn mtt_size_and_speed() {
        let Some(dir) = spec_traces_dir() else { return };
        let gz = dir.join("456.hmmer.gz");
        let plain = TempFile::new("hmmer.txt");
        {
            let mut out = std::io::BufWriter::new(File::create(&plain.0).unwrap());
            io::copy(&mut flate2::read::MultiGzDecoder::new(File::open(&gz).unwrap()), &mut out).unwrap();
        }
        let mtt = TempFile::new("hmmer.mtt");
        let mtt_gz = TempFile::new("hmmer.mtt.gz");
        write_mtt(&mut CpuTraceReader::open(&gz).unwrap(), &mtt.0, false).unwrap();
        write_mtt(&mut CpuTraceReader::open(&gz).unwrap(), &mtt_gz.0, true).unwrap();
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        let text_gz = size(&gz);
        for (what, p) in [("text", &plain.0), ("text gz", &gz), ("mtt", &mtt.0), ("mtt gz body", &mtt_gz.0)] {
            let open = |p: &Path| -> Box<dyn CpuTraceSource> {
                if is_mtt(p).unwrap() {
                    Box::new(BinaryTraceReader::open(p).unwrap())
                } else {
                    Box::new(CpuTraceReader::open(p).unwrap())
                }
            };
            let mut best = 0f64;
            let mut n = 0u64;
            for _ in 0..5 {
                let mut r = open(p);
                let start = std::time::Instant::now();
                n = 0;
                let mut acc = 0u64;
                // Several passes: the trace is short (565k records).
                for _ in 0..4 {
                    while let Some(rec) = r.next_record().unwrap() {
                        n += 1;
                        acc ^= rec.read;
                    }
                    r.rewind().unwrap();
                }
                std::hint::black_box(acc);
                best = best.max(n as f64 / start.elapsed().as_secs_f64());
            }
            println!(
                "{what:>12}: {:>9} bytes ({:.2} x text gz, {:.2} B/record), {:.1} M records/s",
                size(p),
                size(p) as f64 / text_gz as f64,
                size(p) as f64 / (n / 4) as f64,
                best / 1e6
            );
        }
    }
}
