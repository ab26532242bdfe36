//! Readers of DRAM-level traces.
//!
//! Four line formats are understood:
//!
//! * Ramulator (DRAM mode): `<addr> R|W`, e.g. `0x12345680 R`.
//! * DRAMSim3: `<addr> READ|WRITE <cycle>`, e.g. `0x12345680 READ 42`; the arrival cycle must
//!   not decrease from one request to the next (equal is fine), nor exceed `MAX_ARRIVAL`.
//! * Ramulator 2 (its `LoadStoreTrace` frontend): `LD|ST <addr>`, e.g. `LD 0x12345680`; untimed.
//! * DRAMSim2, its three trace kinds (its TraceBasedSim picks one by the file name's prefix; here
//!   the first request line's operation picks it, and the rest of the file must be of that kind):
//!   k6 `<addr> P_MEM_RD|P_MEM_WR|P_FETCH|P_LOCK_RD|P_LOCK_WR|BOFF <cycle>`, e.g.
//!   `0x12345680 P_MEM_RD 42`; mase `<addr> IFETCH|READ|WRITE <cycle>` (its sample traces);
//!   misc `<addr> read|write [<data>]`, which has no cycle, so every line arrives at cycle 0 (as
//!   DRAMSim2 issues it as soon as the controller takes it) and its hex data is ignored. Timed
//!   as DRAMSim3's.
//!
//! The first two accept either spelling of the operation (`R`/`W`/`READ`/`WRITE`, any case);
//! Ramulator 2's and DRAMSim2's are exactly theirs, as they read them.
//! Addresses are hex with a `0x`/`0X` prefix or decimal. Ramulator and DRAMSim3 read every
//! DRAM-trace address as hex, prefix or not, and DRAMSim2 drops its first two characters, so a
//! trace with addresses of two or more digits and no prefix reads differently there: the reader
//! says so (`TraceSource::warnings`). Blank lines and lines whose first
//! non-blank character is `#` are skipped; fields may be separated by any run of spaces or tabs;
//! a trailing `\r` (CRLF files) is ignored.
//!
//! Files are streamed, never loaded whole: the reader owns one chunk buffer that is refilled in
//! place, and each line is parsed straight out of it with byte-level code (no allocation per
//! line; the input layer is shared with the CPU-trace reader, see `text_input`). A file starting with the gzip magic bytes `1f 8b` is decompressed on the fly
//! (concatenated gzip members are fine), whatever its name.

use std::path::Path;

use super::text_input::{
    fast_addr, fast_blanks, fast_decimal, fast_line_end, next_field, parse_addr, parse_decimal, show, DecimalError, LineReader,
};
use super::{DramRequest, TraceSource};
use crate::error::{Error, Result};
use crate::Cycle;

/// The latest arrival cycle a DRAMSim3 trace may give: 10^12 cycles is over ten minutes at any
/// DDR3/DDR4 clock, longer than any traced run, and keeps every cycle sum far from overflowing.
/// (Idle time until an arrival is skipped, not stepped: `Controller::skip_idle`.)
pub const MAX_ARRIVAL: Cycle = 1_000_000_000_000;

/// Which line format a DRAM-level trace uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DramTraceFormat {
    /// `<addr> R|W`
    Ramulator,
    /// `<addr> READ|WRITE <cycle>`
    DramSim3,
    /// `LD|ST <addr>` (Ramulator 2's LoadStoreTrace)
    Ramulator2,
    /// `<addr> P_MEM_RD|P_MEM_WR|... <cycle>` (DRAMSim2's k6 trace, its TraceBasedSim's default)
    DramSim2,
}

impl DramTraceFormat {
    pub const ALL: [DramTraceFormat; 4] =
        [DramTraceFormat::Ramulator, DramTraceFormat::DramSim3, DramTraceFormat::Ramulator2, DramTraceFormat::DramSim2];

    /// Parses a format name as written in a configuration (`ramulator`, `dramsim3`, ...).
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| Error::unknown("trace format", name, Self::ALL.map(|f| f.name())))
    }

    pub fn name(self) -> &'static str {
        match self {
            DramTraceFormat::Ramulator => "ramulator",
            DramTraceFormat::DramSim3 => "dramsim3",
            DramTraceFormat::Ramulator2 => "ramulator2",
            DramTraceFormat::DramSim2 => "dramsim2",
        }
    }

    /// A line of the format, for messages.
    fn syntax(self) -> &'static str {
        match self {
            DramTraceFormat::Ramulator => "Ramulator's <addr> R|W",
            DramTraceFormat::DramSim3 => "DRAMSim3's timed <addr> READ|WRITE <cycle>",
            DramTraceFormat::Ramulator2 => "Ramulator 2's LD|ST <addr>",
            DramTraceFormat::DramSim2 => "DRAMSim2's <addr> P_MEM_RD|IFETCH|read|... [<cycle>]",
        }
    }

    /// Whether each line gives its request's arrival cycle.
    pub fn is_timed(self) -> bool {
        matches!(self, DramTraceFormat::DramSim3 | DramTraceFormat::DramSim2)
    }

    /// How the simulator whose format this is reads an address written without 0x; None when
    /// it reads it as decimal, as memtint does.
    fn unprefixed_reading(self) -> Option<&'static str> {
        match self {
            DramTraceFormat::Ramulator => Some("Ramulator reads DRAM-trace addresses as hex, 0x or not"),
            DramTraceFormat::DramSim3 => Some("DRAMSim3 reads DRAM-trace addresses as hex, 0x or not"),
            DramTraceFormat::DramSim2 => Some("DRAMSim2 drops an address's first two characters and reads the rest as hex"),
            DramTraceFormat::Ramulator2 => None,
        }
    }
}

/// A streaming reader of a DRAM-level trace in one of the `DramTraceFormat`s, plain or
/// gzip-compressed.
pub struct DramTraceReader {
    input: LineReader,
    format: DramTraceFormat,
    /// Arrival cycle of the previous request (DRAMSim3), to reject cycles that go backwards.
    prev_cycle: Option<Cycle>,
    /// DRAMSim2: the kind of the file's first request line and its line number.
    dramsim2_kind: Option<(Dramsim2Kind, u64)>,
    /// The first line whose address, read as decimal, the format's simulator reads otherwise:
    /// its number and the address.
    unprefixed: Option<(u64, u64)>,
    /// The memory's capacity in bytes, when known: an address at or above it aliases one below.
    capacity: Option<u64>,
    /// The first line whose address is beyond the capacity (its number and address), and how
    /// many lines were.
    beyond: Option<(u64, u64)>,
    beyond_count: u64,
}

impl std::fmt::Debug for DramTraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DramTraceReader")
            .field("path", &self.input.path())
            .field("format", &self.format)
            .field("gzip", &self.input.is_gzip())
            .field("lines_read", &self.input.lines_read())
            .finish()
    }
}

impl DramTraceReader {
    /// Opens `path`; detects gzip by content (magic bytes `1f 8b`), not by extension.
    pub fn open(path: &Path, format: DramTraceFormat) -> Result<Self> {
        Ok(DramTraceReader {
            input: LineReader::open(path)?,
            format,
            prev_cycle: None,
            dramsim2_kind: None,
            unprefixed: None,
            capacity: None,
            beyond: None,
            beyond_count: 0,
        })
    }

    /// Warns of addresses at or above `bytes`, the memory's capacity, which the mapping folds
    /// onto addresses below it (a trace replayed on a smaller device).
    pub fn with_capacity(mut self, bytes: u64) -> Self {
        self.capacity = Some(bytes);
        self
    }

    /// Lines consumed so far, blank and comment lines included.
    pub fn lines_read(&self) -> u64 {
        self.input.lines_read()
    }

    pub fn path(&self) -> &Path {
        self.input.path()
    }

    pub fn format(&self) -> DramTraceFormat {
        self.format
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.input.is_gzip()
    }

    /// Checks the arrival order and builds the request for the line just consumed.
    #[inline]
    fn accept(&mut self, parsed: ParsedLine) -> Result<DramRequest> {
        let ParsedLine { addr, is_write, cycle, prefixed, dramsim2_kind } = parsed;
        if let Some(kind) = dramsim2_kind {
            match self.dramsim2_kind {
                None => self.dramsim2_kind = Some((kind, self.input.lines_read())),
                Some((first, line)) if first != kind => {
                    return Err(self.input.parse_error(
                        self.input.lines_read(),
                        format!("a {} line in a {} trace (line {line}); DRAMSim2 reads one kind per file", kind.name(), first.name()),
                    ))
                }
                Some(_) => {}
            }
        }
        if self.capacity.is_some_and(|c| addr >= c) {
            self.beyond_count += 1;
            if self.beyond.is_none() {
                self.beyond = Some((self.input.lines_read(), addr));
            }
        }
        // One digit reads the same in both bases.
        if !prefixed && addr >= 10 && self.unprefixed.is_none() && self.format.unprefixed_reading().is_some() {
            self.unprefixed = Some((self.input.lines_read(), addr));
        }
        if let Some(cycle) = cycle {
            if cycle > MAX_ARRIVAL {
                return Err(self.input.parse_error(
                    self.input.lines_read(),
                    format!(
                        "cycle {cycle} is beyond the last arrival a trace may give ({MAX_ARRIVAL} cycles: over ten minutes of DRAM time)"
                    ),
                ));
            }
            if let Some(prev) = self.prev_cycle {
                if cycle < prev {
                    return Err(self
                        .input
                        .parse_error(self.input.lines_read(), format!("cycle {cycle} is earlier than the previous line's {prev}")));
                }
            }
            self.prev_cycle = Some(cycle);
        }
        Ok(DramRequest { addr, is_write, arrival: cycle })
    }
}

impl TraceSource for DramTraceReader {
    fn warnings(&self) -> Vec<String> {
        let reading = self.format.unprefixed_reading().unwrap_or_default();
        self.unprefixed
            .map(|(line, addr)| {
                format!(
                    "{} line {line}: address {addr} has no 0x, so it was read as decimal (as every address without one); \
                     {reading}: if the trace is from there, write 0x before each address",
                    self.input.path().display()
                )
            })
            .into_iter()
            .chain(self.beyond.map(|(line, addr)| {
                let capacity = self.capacity.unwrap_or_default();
                let more = self.beyond_count - 1;
                format!(
                    "{} line {line}: address {addr:#x} is beyond the memory's {capacity:#x} bytes ({} GiB){}: the mapping \
                     reads only its low bits, so it aliases address {:#x}; replay the trace on a memory as large as \
                     the one it came from (--set dram.density_gbit, dram.ranks or dram.channels)",
                    self.input.path().display(),
                    capacity as f64 / (1u64 << 30) as f64,
                    if more > 0 { format!(" (and {more} more line(s))") } else { String::new() },
                    addr % capacity.max(1),
                )
            }))
            .collect()
    }

    fn next_request(&mut self) -> Result<Option<DramRequest>> {
        loop {
            // Fast path: a well-formed request line lying whole in the buffer, parsed in one pass.
            if let Some((len, parsed)) = parse_fast(self.input.pending(), self.format) {
                self.input.consume_line(len);
                return self.accept(parsed).map(Some);
            }
            // General path: anything else (comments, blank lines, errors, a line cut by the end
            // of the buffer or the end of the file).
            let Some(range) = self.input.next_line()? else { return Ok(None) };
            let line = self.input.line(range);
            match parse_line(line, self.format) {
                Ok(None) => continue,
                Ok(Some(parsed)) => return self.accept(parsed).map(Some),
                Err(reason) => {
                    let reason = reason + &other_format_hint(line, self.format);
                    return Err(self.input.parse_error(self.input.lines_read(), reason));
                }
            }
        }
    }
}

/// Parses the common case only: a valid request line, terminated by `\n` within `s`, whose
/// numbers cannot overflow (at most 16 hex or 19 decimal digits). Returns the bytes consumed
/// (including the `\n`) and the request; `None` means "use the general path", which accepts every
/// line this accepts, with the same result (see the `fast_path_agrees_with_general_path` test).
#[inline]
fn parse_fast(s: &[u8], format: DramTraceFormat) -> Option<(usize, ParsedLine)> {
    if matches!(format, DramTraceFormat::Ramulator2 | DramTraceFormat::DramSim2) {
        return None; // operation first, or DRAMSim2's operations: the general path
    }
    let (addr, i) = fast_addr(s, 0)?;
    let op_start = fast_blanks(s, i);
    if op_start == i {
        return None;
    }
    let mut i = op_start;
    while i < s.len() && s[i].is_ascii_alphabetic() {
        i += 1;
    }
    let is_write = parse_op(&s[op_start..i])?;

    let cycle = match format {
        DramTraceFormat::Ramulator | DramTraceFormat::Ramulator2 | DramTraceFormat::DramSim2 => None,
        DramTraceFormat::DramSim3 => {
            let c = fast_blanks(s, i);
            if c == i {
                return None;
            }
            let (cycle, next) = fast_decimal(s, c, 19)?;
            i = next;
            Some(cycle)
        }
    };
    let len = fast_line_end(s, i)?;
    Some((len, ParsedLine { addr, is_write, cycle, prefixed: s[1] | 0x20 == b'x', dramsim2_kind: None }))
}

#[derive(Debug, PartialEq, Eq)]
struct ParsedLine {
    addr: u64,
    is_write: bool,
    cycle: Option<Cycle>,
    /// The address was written with 0x.
    prefixed: bool,
    /// A DRAMSim2 line's kind.
    dramsim2_kind: Option<Dramsim2Kind>,
}

/// DRAMSim2's trace kinds (its `TraceType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dramsim2Kind {
    K6,
    Mase,
    Misc,
}

impl Dramsim2Kind {
    fn name(self) -> &'static str {
        match self {
            Dramsim2Kind::K6 => "k6",
            Dramsim2Kind::Mase => "mase",
            Dramsim2Kind::Misc => "misc",
        }
    }
}

/// Parses one line; `Ok(None)` for blank and comment lines, `Err(reason)` for malformed ones.
fn parse_line(line: &[u8], format: DramTraceFormat) -> std::result::Result<Option<ParsedLine>, String> {
    let mut rest = line;
    let Some(first) = next_field(&mut rest) else { return Ok(None) };
    if first[0] == b'#' {
        return Ok(None);
    }
    if format == DramTraceFormat::Ramulator2 {
        return parse_load_store(first, rest).map(Some);
    }
    let addr_field = first;
    let addr = parse_addr(addr_field)?;

    let prefixed = addr_field.len() > 1 && addr_field[1] | 0x20 == b'x';
    if format == DramTraceFormat::DramSim2 {
        return parse_dramsim2(addr, prefixed, rest).map(Some);
    }

    let expected_op = if format == DramTraceFormat::DramSim3 { "READ or WRITE" } else { "R or W" };
    let is_write = match next_field(&mut rest) {
        None => return Err(format!("expected {expected_op} after the address, found the end of the line")),
        Some(op) => parse_op(op).ok_or_else(|| format!("expected {expected_op} after the address, found '{}'", show(op)))?,
    };

    let cycle = match format {
        DramTraceFormat::DramSim3 => match next_field(&mut rest) {
            None => return Err("missing the cycle field (DRAMSim3 format: <addr> READ|WRITE <cycle>)".into()),
            Some(c) => Some(parse_cycle(c)?),
        },
        _ => None,
    };

    if let Some(extra) = next_field(&mut rest) {
        return Err(format!("unexpected extra field '{}'", show(extra)));
    }
    Ok(Some(ParsedLine { addr, is_write, cycle, prefixed, dramsim2_kind: None }))
}

/// For a line `format` refuses: the formats that read it, as a hint to give one of them (a
/// trace's format comes from its suffix, else `ramulator`, so a file of another format without
/// one fails on its first line).
fn other_format_hint(line: &[u8], format: DramTraceFormat) -> String {
    let fits: Vec<DramTraceFormat> =
        DramTraceFormat::ALL.into_iter().filter(|&f| f != format && matches!(parse_line(line, f), Ok(Some(_)))).collect();
    if fits.is_empty() {
        return String::new();
    }
    let syntax: Vec<&str> = fits.iter().map(|f| f.syntax()).collect();
    let names: Vec<&str> = fits.iter().map(|f| f.name()).collect();
    format!(" (the line is {}: read it as format {})", syntax.join(" or "), names.join(" or "))
}

/// A DRAMSim2 line after its address: the operation names the kind (k6, mase or misc); k6 and
/// mase lines end with their cycle, a misc line with optional hex data.
fn parse_dramsim2(addr: u64, prefixed: bool, mut rest: &[u8]) -> std::result::Result<ParsedLine, String> {
    let Some(op) = next_field(&mut rest) else {
        return Err(format!("expected {DRAMSIM2_OPS} after the address, found the end of the line"));
    };
    let (kind, is_write) =
        parse_dramsim2_op(op).ok_or_else(|| format!("expected {DRAMSIM2_OPS} after the address, found '{}'", show(op)))?;
    let cycle = match (kind, next_field(&mut rest)) {
        (Dramsim2Kind::Misc, None) => 0,
        (Dramsim2Kind::Misc, Some(data)) => match data.iter().all(u8::is_ascii_hexdigit) {
            true => 0,
            false => return Err(format!("expected hex data after misc's {}, found '{}'", show(op), show(data))),
        },
        (_, None) => {
            return Err(format!(
                "missing the cycle field (DRAMSim2's {} kind: <addr> {} <cycle>)",
                kind.name(),
                if kind == Dramsim2Kind::K6 { "P_MEM_RD|P_MEM_WR|..." } else { "IFETCH|READ|WRITE" }
            ))
        }
        (_, Some(c)) => parse_cycle(c)?,
    };
    if let Some(extra) = next_field(&mut rest) {
        return Err(format!("unexpected extra field '{}'", show(extra)));
    }
    Ok(ParsedLine { addr, is_write, cycle: Some(cycle), prefixed, dramsim2_kind: Some(kind) })
}

/// Ramulator 2's `LD|ST <addr>` after its operation `op` (exactly `LD` or `ST`, as Ramulator 2
/// reads it; the address decimal or 0x-hex, as there).
fn parse_load_store(op: &[u8], mut rest: &[u8]) -> std::result::Result<ParsedLine, String> {
    let is_write = match op {
        b"LD" => false,
        b"ST" => true,
        _ => return Err(format!("expected LD or ST (Ramulator 2's LoadStoreTrace: LD|ST <addr>), found '{}'", show(op))),
    };
    let Some(addr_field) = next_field(&mut rest) else {
        return Err("expected an address after the operation, found the end of the line".into());
    };
    let addr = parse_addr(addr_field)?;
    if let Some(extra) = next_field(&mut rest) {
        return Err(format!("unexpected extra field '{}'", show(extra)));
    }
    // Ramulator 2 reads an address without 0x as decimal, as memtint does: nothing to point out.
    Ok(ParsedLine { addr, is_write, cycle: None, prefixed: true, dramsim2_kind: None })
}

const DRAMSIM2_OPS: &str =
    "P_MEM_RD, P_MEM_WR, P_FETCH, P_LOCK_RD, P_LOCK_WR or BOFF (DRAMSim2's k6 kind), IFETCH, READ or WRITE (mase), read or write (misc)";

/// DRAMSim2's operations, exactly as its TraceBasedSim reads them: k6's `P_MEM_WR` and `BOFF`
/// write, `P_MEM_RD`, `P_FETCH`, `P_LOCK_RD` and `P_LOCK_WR` read; mase's `WRITE` writes,
/// `IFETCH` and `READ` read; misc's `write` and `read`. `Some((kind, is_write))`.
fn parse_dramsim2_op(op: &[u8]) -> Option<(Dramsim2Kind, bool)> {
    match op {
        b"P_MEM_WR" | b"BOFF" => Some((Dramsim2Kind::K6, true)),
        b"P_MEM_RD" | b"P_FETCH" | b"P_LOCK_RD" | b"P_LOCK_WR" => Some((Dramsim2Kind::K6, false)),
        b"WRITE" => Some((Dramsim2Kind::Mase, true)),
        b"IFETCH" | b"READ" => Some((Dramsim2Kind::Mase, false)),
        b"write" => Some((Dramsim2Kind::Misc, true)),
        b"read" => Some((Dramsim2Kind::Misc, false)),
        _ => None,
    }
}

/// `R`, `W`, `READ`, `WRITE` in any case; `Some(is_write)`.
#[inline]
fn parse_op(op: &[u8]) -> Option<bool> {
    match op {
        [r] if r.eq_ignore_ascii_case(&b'r') => Some(false),
        [w] if w.eq_ignore_ascii_case(&b'w') => Some(true),
        _ if op.eq_ignore_ascii_case(b"read") => Some(false),
        _ if op.eq_ignore_ascii_case(b"write") => Some(true),
        _ => None,
    }
}

fn parse_cycle(field: &[u8]) -> std::result::Result<Cycle, String> {
    parse_decimal(field).map_err(|e| match e {
        DecimalError::Invalid => format!("cycle '{}' is not a decimal number", show(field)),
        DecimalError::Overflow => "cycle out of range (more than 64 bits)".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::text_input::TempFile;
    use super::*;
    use std::fs::File;
    use std::io::{self, Write};

    fn read_all(path: &Path, format: DramTraceFormat) -> Result<Vec<DramRequest>> {
        let mut r = DramTraceReader::open(path, format)?;
        let mut out = Vec::new();
        while let Some(req) = r.next_request()? {
            out.push(req);
        }
        Ok(out)
    }

    fn read_str(text: &str, format: DramTraceFormat) -> Result<Vec<DramRequest>> {
        let f = TempFile::with_bytes("text", text.as_bytes());
        read_all(&f.0, format)
    }

    fn req(addr: u64, is_write: bool, arrival: Option<Cycle>) -> DramRequest {
        DramRequest { addr, is_write, arrival }
    }

    /// Expects a parse error at `line` whose reason contains `reason`.
    fn assert_parse_error(text: impl AsRef<[u8]>, format: DramTraceFormat, line: u64, reason: &str) {
        let text = text.as_ref();
        let f = TempFile::with_bytes("bad", text);
        let text = String::from_utf8_lossy(text);
        match read_all(&f.0, format) {
            Err(Error::Parse { path, line: l, reason: r }) => {
                assert_eq!(path, f.0);
                assert_eq!(l, line, "line number for {text:?} (reason: {r})");
                assert!(r.contains(reason), "reason {r:?} should contain {reason:?}");
            }
            other => panic!("expected a parse error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn format_names_round_trip_and_unknown_lists_valid_ones() {
        for f in DramTraceFormat::ALL {
            assert_eq!(DramTraceFormat::from_name(f.name()).unwrap(), f);
        }
        let e = DramTraceFormat::from_name("usimm").unwrap_err().to_string();
        assert!(e.contains("usimm") && e.contains("ramulator") && e.contains("dramsim3"), "{e}");
    }

    #[test]
    fn ramulator_reads_hex_and_decimal_addresses() {
        let got = read_str("0x12345680 R\n4096 W\n0XABCdef00 r\n0 w\n0xffffffffffffffff R\n", DramTraceFormat::Ramulator).unwrap();
        assert_eq!(
            got,
            vec![
                req(0x1234_5680, false, None),
                req(4096, true, None),
                req(0xabcd_ef00, false, None),
                req(0, true, None),
                req(u64::MAX, false, None),
            ]
        );
    }

    #[test]
    fn ramulator_accepts_read_write_words_in_any_case() {
        let got = read_str("0x40 READ\n0x80 write\n0xc0 Read\n", DramTraceFormat::Ramulator).unwrap();
        assert_eq!(got, vec![req(0x40, false, None), req(0x80, true, None), req(0xc0, false, None)]);
    }

    #[test]
    fn dramsim3_reads_arrival_cycles() {
        let got =
            read_str("0x1000 READ 0\n0x2000 WRITE 5\n8192 read 5\n0x40 W 17\n0x80 r 1000000000000\n", DramTraceFormat::DramSim3).unwrap();
        assert_eq!(
            got,
            vec![
                req(0x1000, false, Some(0)),
                req(0x2000, true, Some(5)),
                req(8192, false, Some(5)),
                req(0x40, true, Some(17)),
                req(0x80, false, Some(1_000_000_000_000)),
            ]
        );
    }

    #[test]
    fn comments_blank_lines_crlf_and_extra_whitespace_are_fine() {
        let text = "# header comment\r\n\r\n   \n\t0x40 \t R  \r\n  # indented comment\n0x80\tW\r\n\n4096 R";
        let got = read_str(text, DramTraceFormat::Ramulator).unwrap();
        assert_eq!(got, vec![req(0x40, false, None), req(0x80, true, None), req(4096, false, None)]);

        let text = "#addr op cycle\r\n0x40  READ\t\t3\r\n\r\n0x80 WRITE 3 \r\n";
        let got = read_str(text, DramTraceFormat::DramSim3).unwrap();
        assert_eq!(got, vec![req(0x40, false, Some(3)), req(0x80, true, Some(3))]);
    }

    #[test]
    fn empty_file_has_no_requests() {
        assert!(read_str("", DramTraceFormat::Ramulator).unwrap().is_empty());
        assert!(read_str("\n# only a comment\n\n", DramTraceFormat::DramSim3).unwrap().is_empty());
    }

    #[test]
    fn lines_read_counts_every_line_including_comments() {
        let f = TempFile::with_bytes("count", b"# c\n0x40 R\n\n0x80 W\n");
        let mut r = DramTraceReader::open(&f.0, DramTraceFormat::Ramulator).unwrap();
        assert_eq!(r.lines_read(), 0);
        r.next_request().unwrap().unwrap();
        assert_eq!(r.lines_read(), 2);
        r.next_request().unwrap().unwrap();
        assert_eq!(r.lines_read(), 4);
        assert!(r.next_request().unwrap().is_none());
        assert!(r.next_request().unwrap().is_none(), "the end stays the end");
        assert_eq!(r.lines_read(), 4);
    }

    #[test]
    fn ramulator2_load_store_lines_are_read_as_ramulator_2_reads_them() {
        let text = "# c\nLD 0x40\n\nST 4096\n  LD\t0X80  \r\n";
        let got = read_str(text, DramTraceFormat::Ramulator2).unwrap();
        let want = [(0x40, false), (4096, true), (0x80, false)];
        assert_eq!(got.iter().map(|r| (r.addr, r.is_write)).collect::<Vec<_>>(), want);
        assert!(got.iter().all(|r| r.arrival.is_none()), "untimed");
        for (line, needle) in [
            ("ld 0x40\n", "expected LD or ST"),
            ("0x40 R\n", "expected LD or ST"),
            ("LD\n", "expected an address after the operation"),
            ("LD 0x40 7\n", "unexpected extra field '7'"),
            ("ST zz\n", "neither decimal nor 0x-hex"),
        ] {
            let e = read_str(line, DramTraceFormat::Ramulator2).unwrap_err().to_string();
            assert!(e.contains(needle), "{line:?}: {e}");
        }
        // Decimal reads as decimal there too: nothing to point out.
        let f = TempFile::with_bytes("ls", b"LD 1000\n");
        let mut r = DramTraceReader::open(&f.0, DramTraceFormat::Ramulator2).unwrap();
        while r.next_request().unwrap().is_some() {}
        assert!(r.warnings().is_empty());
    }

    #[test]
    fn addresses_without_0x_that_reference_simulators_read_as_hex_are_pointed_out() {
        let warnings = |text: &[u8], format| {
            let f = TempFile::with_bytes("bare", text);
            let mut r = DramTraceReader::open(&f.0, format).unwrap();
            while r.next_request().unwrap().is_some() {}
            r.warnings()
        };
        // Ramulator's and DRAMSim3's 0x1000 and 0x2000; memtint reads 1000 and 2000.
        let w = warnings(b"# c\n7 R\n1000 R\n2000 W\n", DramTraceFormat::Ramulator);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("line 3: address 1000 has no 0x, so it was read as decimal"), "{w:?}");
        let w = warnings(b"  4096 READ 0\n", DramTraceFormat::DramSim3);
        assert!(w[0].contains("line 1: address 4096") && w[0].contains("DRAMSim3 reads"), "{w:?}");
        let w = warnings(b"4096 P_MEM_RD 0\n", DramTraceFormat::DramSim2);
        assert!(w[0].contains("DRAMSim2 drops an address's first two characters"), "{w:?}");
        // Ramulator 2 reads decimal as memtint does.
        assert!(warnings(b"LD 4096\n", DramTraceFormat::Ramulator2).is_empty());
        // With 0x, or one digit (the same in both bases): nothing to say.
        assert!(warnings(b"0x1000 R\n0X2000 W\n5 R\n", DramTraceFormat::Ramulator).is_empty());
    }

    #[test]
    fn addresses_beyond_the_capacity_are_warned_of_with_the_first_line_and_the_count() {
        let f = TempFile::with_bytes("big", b"0x1000 R\n0x200001000 R\n0x1ffffffc0 W\n0x300000000 R\n");
        let mut r = DramTraceReader::open(&f.0, DramTraceFormat::Ramulator).unwrap().with_capacity(8 << 30);
        while r.next_request().unwrap().is_some() {}
        let w = r.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("line 2: address 0x200001000 is beyond the memory's 0x200000000 bytes (8 GiB) (and 1 more line(s))"),
            "{w:?}"
        );
        assert!(w[0].contains("aliases address 0x1000"), "{w:?}");
        // Within the capacity, or with none given: nothing to say.
        let mut r = DramTraceReader::open(&f.0, DramTraceFormat::Ramulator).unwrap();
        while r.next_request().unwrap().is_some() {}
        assert!(r.warnings().is_empty());
        let f = TempFile::with_bytes("fits", b"0x1ffffffc0 R\n");
        let mut r = DramTraceReader::open(&f.0, DramTraceFormat::Ramulator).unwrap().with_capacity(8 << 30);
        while r.next_request().unwrap().is_some() {}
        assert!(r.warnings().is_empty());
    }

    #[test]
    fn dramsim2_k6_lines_are_read_as_dramsim2_reads_them() {
        let text = "0x7FFF1A40 P_MEM_RD 0\n0x40 P_FETCH 3\n0x80 P_MEM_WR 3\n\n0xC0 BOFF 9\n0x100 P_LOCK_RD 9\n0x140 P_LOCK_WR 12\n";
        let got = read_str(text, DramTraceFormat::DramSim2).unwrap();
        assert_eq!(
            got,
            vec![
                req(0x7fff_1a40, false, Some(0)),
                req(0x40, false, Some(3)),
                req(0x80, true, Some(3)),
                req(0xc0, true, Some(9)),
                req(0x100, false, Some(9)),
                req(0x140, false, Some(12)),
            ]
        );
        for (line, needle) in [
            ("0x40 p_mem_rd 0\n", "expected P_MEM_RD, P_MEM_WR"),
            ("0x40 Read 0\n", "found 'Read'"),
            ("0x40 P_I/O_RD 0\n", "found 'P_I/O_RD'"),
            ("0x40 P_MEM_RD\n", "missing the cycle field (DRAMSim2's k6 kind"),
            ("0x40 P_MEM_RD 5 7\n", "unexpected extra field '7'"),
        ] {
            assert_parse_error(line, DramTraceFormat::DramSim2, 1, needle);
        }
        assert_parse_error("0x40 P_MEM_RD 5\n0x80 P_MEM_WR 4\n", DramTraceFormat::DramSim2, 2, "earlier than the previous line's 5");
        assert!(DramTraceFormat::DramSim2.is_timed() && !DramTraceFormat::Ramulator2.is_timed());
    }

    #[test]
    fn a_timed_line_read_as_ramulator_says_which_format_it_is() {
        assert_parse_error("0x40 READ 12\n", DramTraceFormat::Ramulator, 1, "unexpected extra field '12' (the line is DRAMSim3's");
        assert_parse_error("0x40 R x\n", DramTraceFormat::Ramulator, 1, "unexpected extra field 'x'");
    }

    /// Every format's lines, read as another (a file without a suffix is read as ramulator),
    /// fail naming the format that reads them: Ramulator 2's and DRAMSim2's had no hint.
    #[test]
    fn a_line_of_another_format_says_which_format_reads_it() {
        let hint = |f: &str| format!("read it as format {f})");
        for (text, format, needle) in [
            (
                "LD 0x0\n",
                DramTraceFormat::Ramulator,
                "address 'LD' is neither decimal nor 0x-hex (the line is Ramulator 2's LD|ST <addr>: ",
            ),
            ("ST 4096\n", DramTraceFormat::DramSim3, "(the line is Ramulator 2's LD|ST <addr>: read it as format ramulator2)"),
            ("0x40 P_MEM_RD 5\n", DramTraceFormat::Ramulator, "found 'P_MEM_RD' (the line is DRAMSim2's"),
            ("0x40 IFETCH 5\n", DramTraceFormat::Ramulator, &hint("dramsim2")),
            ("0x80 write 0123abcd\n", DramTraceFormat::Ramulator, &hint("dramsim2")),
            ("0x40 READ 12\n", DramTraceFormat::Ramulator, &hint("dramsim3 or dramsim2")),
            ("0x40 W\n", DramTraceFormat::Ramulator2, &hint("ramulator")),
            (
                "0x40 W\n",
                DramTraceFormat::DramSim3,
                "missing the cycle field (DRAMSim3 format: <addr> READ|WRITE <cycle>) (the line is Ramulator's",
            ),
            ("0x40 Read 5\n", DramTraceFormat::DramSim2, &hint("dramsim3")),
        ] {
            assert_parse_error(text, format, 1, needle);
        }
        // A line no format reads gets no hint.
        let f = TempFile::with_bytes("bad", b"0x40 RD 3\n");
        assert!(!read_all(&f.0, DramTraceFormat::Ramulator).unwrap_err().to_string().contains("read it as"));
    }

    /// DRAMSim2's other kinds: mase (its sample traces: IFETCH and READ read, WRITE writes, a
    /// cycle) and misc (read/write, optional hex data, no cycle: every line at cycle 0); one kind
    /// per file, as DRAMSim2 reads one kind per file.
    #[test]
    fn dramsim2_mase_and_misc_lines_are_read_as_dramsim2_reads_them() {
        let mase = "0x7FFF1A40 IFETCH 1\n0x40 READ 3\n0x80 WRITE 3\n";
        assert_eq!(
            read_str(mase, DramTraceFormat::DramSim2).unwrap(),
            vec![req(0x7fff_1a40, false, Some(1)), req(0x40, false, Some(3)), req(0x80, true, Some(3))]
        );
        let misc = "0x40 read\n0x80 write 0123456789abcdef0123\n0xC0 write\n";
        assert_eq!(
            read_str(misc, DramTraceFormat::DramSim2).unwrap(),
            vec![req(0x40, false, Some(0)), req(0x80, true, Some(0)), req(0xc0, true, Some(0))]
        );
        for (text, line, needle) in [
            ("0x40 READ\n", 1, "missing the cycle field (DRAMSim2's mase kind"),
            ("0x40 write zz\n", 1, "expected hex data after misc's write, found 'zz'"),
            ("0x40 read 00 11\n", 1, "unexpected extra field '11'"),
            ("0x40 READ 1\n0x80 P_MEM_RD 2\n", 2, "a k6 line in a mase trace (line 1)"),
            ("0x40 P_MEM_RD 1\n# c\n0x80 read\n", 3, "a misc line in a k6 trace (line 1)"),
        ] {
            assert_parse_error(text, DramTraceFormat::DramSim2, line, needle);
        }
    }

    #[test]
    fn gzip_file_is_detected_by_content_and_streamed() {
        let text = "# gz\n0x40 READ 1\n0x80 WRITE 2\n";
        // No .gz extension: detection is by the magic bytes.
        let f = TempFile::gzip("trace.txt", &[text.as_bytes()]);
        let r = DramTraceReader::open(&f.0, DramTraceFormat::DramSim3).unwrap();
        assert!(r.is_gzip());
        let got = read_all(&f.0, DramTraceFormat::DramSim3).unwrap();
        assert_eq!(got, vec![req(0x40, false, Some(1)), req(0x80, true, Some(2))]);
    }

    #[test]
    fn concatenated_gzip_members_are_read_in_full() {
        let f = TempFile::gzip("multi", &[b"0x40 R\n0x80 W\n", b"0xc0 R\n"]);
        let got = read_all(&f.0, DramTraceFormat::Ramulator).unwrap();
        assert_eq!(got, vec![req(0x40, false, None), req(0x80, true, None), req(0xc0, false, None)]);
    }

    #[test]
    fn large_gzip_and_plain_files_give_the_same_requests_across_chunk_boundaries() {
        let mut text = String::new();
        for i in 0..100_000u64 {
            let op = if i % 3 == 0 { "W" } else { "R" };
            if i % 2 == 0 {
                text.push_str(&format!("{:#x} {op}\n", i * 64));
            } else {
                text.push_str(&format!("{} {op}\n", i * 64));
            }
        }
        let plain = TempFile::with_bytes("bigplain", text.as_bytes());
        let gz = TempFile::gzip("biggz", &[text.as_bytes()]);
        let a = read_all(&plain.0, DramTraceFormat::Ramulator).unwrap();
        let b = read_all(&gz.0, DramTraceFormat::Ramulator).unwrap();
        assert_eq!(a.len(), 100_000);
        assert_eq!(a, b);
        for (i, r) in a.iter().enumerate() {
            assert_eq!(r.addr, i as u64 * 64);
            assert_eq!(r.is_write, i % 3 == 0);
        }
    }

    #[test]
    fn a_gzip_file_cut_anywhere_is_reported_as_truncated() {
        let mut text = String::new();
        for i in 0..3_000u64 {
            text.push_str(&format!("{:#x} R\n", i * 64));
        }
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        let mut silent = Vec::new();
        for cut in (20..gz.len() - 1).step_by(7) {
            let f = TempFile::with_bytes("cut", &gz[..cut]);
            match read_all(&f.0, DramTraceFormat::Ramulator) {
                Err(Error::Parse { reason, .. }) => assert!(reason.contains("truncated"), "cut at {cut}: {reason}"),
                Err(other) => panic!("cut at {cut}: {other}"),
                Ok(_) => silent.push(cut),
            }
        }
        assert!(silent.is_empty(), "cut gzip files read without an error at {silent:?}");
    }

    #[test]
    fn truncated_gzip_is_a_parse_error() {
        let mut text = String::new();
        for i in 0..20_000u64 {
            text.push_str(&format!("{:#x} R\n", i * 64));
        }
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        let f = TempFile::with_bytes("trunc", &gz[..gz.len() / 2]);
        match read_all(&f.0, DramTraceFormat::Ramulator) {
            Err(Error::Parse { path, reason, .. }) => {
                assert_eq!(path, f.0);
                assert!(reason.contains("corrupt or truncated gzip data"), "{reason}");
            }
            other => panic!("expected a gzip parse error, got {other:?}"),
        }
    }

    #[test]
    fn corrupt_gzip_is_a_parse_error() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"0x40 R\n0x80 W\n").unwrap();
        let mut gz = enc.finish().unwrap();
        // Break the CRC in the trailer: the data inflates but does not check out.
        let n = gz.len();
        gz[n - 8] ^= 0xff;
        let f = TempFile::with_bytes("crc", &gz);
        match read_all(&f.0, DramTraceFormat::Ramulator) {
            Err(Error::Parse { reason, .. }) => assert!(reason.contains("corrupt or truncated gzip data"), "{reason}"),
            other => panic!("expected a gzip parse error, got {other:?}"),
        }
        // Magic bytes but garbage afterwards.
        let f = TempFile::with_bytes("garbage", b"\x1f\x8bthis is not gzip at all");
        match read_all(&f.0, DramTraceFormat::Ramulator) {
            Err(Error::Parse { line, reason, .. }) => {
                assert_eq!(line, 1);
                assert!(reason.contains("corrupt or truncated gzip data"), "{reason}");
            }
            other => panic!("expected a gzip parse error, got {other:?}"),
        }
    }

    #[test]
    fn bad_operation_names_the_line_and_the_field() {
        assert_parse_error("0x40 R\n0x80 X\n", DramTraceFormat::Ramulator, 2, "expected R or W after the address, found 'X'");
        assert_parse_error(
            "0x40 R\n\n0x80\n",
            DramTraceFormat::Ramulator,
            3,
            "expected R or W after the address, found the end of the line",
        );
        assert_parse_error("0x40 RD 3\n", DramTraceFormat::DramSim3, 1, "expected READ or WRITE after the address, found 'RD'");
    }

    #[test]
    fn bad_address_names_the_line_and_the_field() {
        assert_parse_error("# c\nzz R\n", DramTraceFormat::Ramulator, 2, "address 'zz' is neither decimal nor 0x-hex");
        assert_parse_error("0x40 R\n0x R\n", DramTraceFormat::Ramulator, 2, "address '0x' is neither decimal nor 0x-hex");
        assert_parse_error("0x4g0 R\n", DramTraceFormat::Ramulator, 1, "address '0x4g0' is neither decimal nor 0x-hex");
        assert_parse_error("-64 R\n", DramTraceFormat::Ramulator, 1, "address '-64' is neither decimal nor 0x-hex");
        assert_parse_error("\n\n12ab READ 1\n", DramTraceFormat::DramSim3, 3, "address '12ab' is neither decimal nor 0x-hex");
    }

    #[test]
    fn address_beyond_64_bits_is_out_of_range() {
        assert_parse_error("0x40 R\n0x10000000000000000 R\n", DramTraceFormat::Ramulator, 2, "address out of range (more than 64 bits)");
        assert_parse_error("18446744073709551616 W\n", DramTraceFormat::Ramulator, 1, "address out of range (more than 64 bits)");
        // Leading zeros do not count against the 64 bits.
        let got = read_str("0x00000000000000000040 R\n18446744073709551615 W\n", DramTraceFormat::Ramulator).unwrap();
        assert_eq!(got, vec![req(0x40, false, None), req(u64::MAX, true, None)]);
    }

    #[test]
    fn dramsim3_missing_cycle_is_reported() {
        assert_parse_error(
            "0x40 READ 1\n0x80 WRITE\n",
            DramTraceFormat::DramSim3,
            2,
            "missing the cycle field (DRAMSim3 format: <addr> READ|WRITE <cycle>)",
        );
        assert_parse_error("0x40 READ 1x\n", DramTraceFormat::DramSim3, 1, "cycle '1x' is not a decimal number");
    }

    #[test]
    fn dramsim3_backwards_cycle_is_rejected() {
        assert_parse_error(
            "0x40 READ 100\n0x80 READ 200\n# c\n0xc0 WRITE 100\n",
            DramTraceFormat::DramSim3,
            4,
            "cycle 100 is earlier than the previous line's 200",
        );
    }

    #[test]
    fn extra_field_is_rejected() {
        assert_parse_error("0x40 R\n0x80 W foo\n", DramTraceFormat::Ramulator, 2, "unexpected extra field 'foo'");
        assert_parse_error("0x40 READ 1 foo\n", DramTraceFormat::DramSim3, 1, "unexpected extra field 'foo'");
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        assert_parse_error(b"0x40 R\n\xff\xfe R\n", DramTraceFormat::Ramulator, 2, "is neither decimal nor 0x-hex");
    }

    #[test]
    fn missing_file_is_an_io_error_naming_the_path() {
        let t = TempFile::new("does-not-exist");
        match DramTraceReader::open(&t.0, DramTraceFormat::Ramulator) {
            Err(e @ Error::Io { .. }) => {
                let Error::Io { ref path, .. } = e else { unreachable!() };
                assert_eq!(path, &t.0);
                assert!(e.to_string().contains(&t.0.display().to_string()));
            }
            other => panic!("expected an Io error, got {other:?}"),
        }
    }

    proptest::proptest! {
        /// The one-pass fast path never accepts a line the general parser would treat
        /// differently.
        #[test]
        fn fast_path_agrees_with_general_path(
            line in "[ \t]{0,2}(0[xX][0-9a-fA-F]{0,18}|[0-9]{0,21}|#|zz)[ \t]{0,2}(R|W|r|w|READ|WRITE|Write|RD|X)?[ \t]{0,2}([0-9]{0,21}|x)?[ \t]{0,2}(foo)?\r?",
        ) {
            for format in DramTraceFormat::ALL {
                let mut bytes = line.as_bytes().to_vec();
                bytes.push(b'\n');
                if let Some((len, fast)) = parse_fast(&bytes, format) {
                    proptest::prop_assert_eq!(len, bytes.len());
                    proptest::prop_assert_eq!(parse_line(line.as_bytes(), format), Ok(Some(fast)));
                }
                // Without the newline (end of buffer) the fast path must defer.
                proptest::prop_assert!(parse_fast(line.as_bytes(), format).is_none());
            }
        }
    }

    #[test]
    fn fast_path_takes_ordinary_lines() {
        let cases: [(&[u8], DramTraceFormat); 4] = [
            (b"0x12345680 R\n", DramTraceFormat::Ramulator),
            (b"4096\tw\r\n", DramTraceFormat::Ramulator),
            (b"0xffffffffffffffff READ 9999999999999999999\n", DramTraceFormat::DramSim3),
            (b"64 write 7 \r\n", DramTraceFormat::DramSim3),
        ];
        for (line, format) in cases {
            let (len, parsed) = parse_fast(line, format).expect("fast path");
            assert_eq!(len, line.len());
            assert_eq!(Ok(Some(parsed)), parse_line(&line[..line.len() - 1], format));
        }
    }

    /// Throughput of the plain-text reader. Run with
    /// `cargo test -p memtint-engine trace_reader_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn trace_reader_speed() {
        const LINES: u64 = 10_000_000;
        let t = TempFile::new("speed");
        {
            let mut w = io::BufWriter::new(File::create(&t.0).unwrap());
            for i in 0..LINES {
                let addr = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 30 << 6;
                writeln!(w, "{addr:#x} {}", if i % 3 == 0 { 'W' } else { 'R' }).unwrap();
            }
        }
        for _ in 0..3 {
            let start = std::time::Instant::now();
            let mut r = DramTraceReader::open(&t.0, DramTraceFormat::Ramulator).unwrap();
            let mut n = 0u64;
            let mut acc = 0u64;
            while let Some(req) = r.next_request().unwrap() {
                n += 1;
                acc ^= req.addr;
            }
            let secs = start.elapsed().as_secs_f64();
            assert_eq!(n, LINES);
            println!("plain ramulator: {:.1} M lines/s ({acc:x})", n as f64 / secs / 1e6);
        }
    }
}
