//! Reader of Ramulator CPU traces: one record per line,
//! `<non-memory instructions> <read address> [<writeback address>]`, e.g.
//! `13 47339704180800 47339704049728`.
//!
//! * The instruction count is decimal and fits in 32 bits; addresses are decimal or `0x`-hex
//!   (any case) and fit in 64 bits. Negative numbers are rejected with their own reason.
//! * Blank lines and lines whose first non-blank character is `#` are skipped (they still count
//!   for line numbers); a `#` after the fields is not a comment but an extra field, an error.
//!   Fields are separated by any run of spaces or tabs; a trailing `\r` (CRLF) is ignored.
//! * Plain or gzip (detected by the magic bytes, not the name), streamed through one chunk
//!   buffer (see `trace::text_input`); `rewind` reopens the file.

use std::path::Path;

use super::{CpuRecord, CpuTraceSource};
use crate::error::Result;
use crate::trace::text_input::{
    fast_addr, fast_blanks, fast_decimal, fast_line_end, next_field, parse_addr, parse_decimal, show, DecimalError, LineReader,
};

const FORMAT: &str = "format: <instructions> <read address> [<writeback address>]";

/// A streaming reader of a Ramulator CPU trace, plain or gzip-compressed.
pub struct CpuTraceReader {
    input: LineReader,
    name: String,
}

impl std::fmt::Debug for CpuTraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuTraceReader")
            .field("path", &self.input.path())
            .field("gzip", &self.input.is_gzip())
            .field("lines_read", &self.input.lines_read())
            .finish()
    }
}

impl CpuTraceReader {
    pub fn open(path: &Path) -> Result<Self> {
        Ok(CpuTraceReader { input: LineReader::open(path)?, name: path.display().to_string() })
    }

    pub fn path(&self) -> &Path {
        self.input.path()
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.input.is_gzip()
    }

    /// Lines consumed so far, blank and comment lines included.
    pub fn lines_read(&self) -> u64 {
        self.input.lines_read()
    }
}

impl CpuTraceSource for CpuTraceReader {
    #[inline]
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        loop {
            // Fast path: a well-formed line lying whole in the buffer, parsed in one pass.
            if let Some((len, record)) = parse_fast(self.input.pending()) {
                self.input.consume_line(len);
                return Ok(Some(record));
            }
            // General path: comments, blank lines, errors, a line cut by the buffer's end.
            let Some(range) = self.input.next_line()? else { return Ok(None) };
            match parse_line(self.input.line(range)) {
                Ok(None) => continue,
                Ok(Some(record)) => return Ok(Some(record)),
                Err(reason) => return Err(self.input.parse_error(self.input.lines_read(), reason)),
            }
        }
    }

    fn rewind(&mut self) -> Result<()> {
        self.input = LineReader::open(self.input.path())?;
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// The common case only: a valid line ending in `\n` within `s`, with at most 9 digits of
/// instruction count (so it fits in 32 bits). Returns the bytes consumed and the record; `None`
/// means "use the general path", which gives the same result for every line this accepts (see
/// `fast_path_agrees_with_general_path`).
#[inline]
fn parse_fast(s: &[u8]) -> Option<(usize, CpuRecord)> {
    let (bubbles, i) = fast_decimal(s, 0, 9)?;
    let j = fast_blanks(s, i);
    if j == i {
        return None;
    }
    let (read, i) = fast_addr(s, j)?;
    let j = fast_blanks(s, i);
    if j == i || matches!(s.get(j), None | Some(b'\r' | b'\n')) {
        let len = fast_line_end(s, i)?;
        return Some((len, CpuRecord { bubbles: bubbles as u32, read, writeback: None }));
    }
    let (writeback, i) = fast_addr(s, j)?;
    let len = fast_line_end(s, i)?;
    Some((len, CpuRecord { bubbles: bubbles as u32, read, writeback: Some(writeback) }))
}

/// Parses one line; `Ok(None)` for blank and comment lines, `Err(reason)` for malformed ones.
fn parse_line(line: &[u8]) -> std::result::Result<Option<CpuRecord>, String> {
    let mut rest = line;
    let Some(first) = next_field(&mut rest) else { return Ok(None) };
    if first[0] == b'#' {
        return Ok(None);
    }
    let bubbles = parse_bubbles(first)?;
    let read = match next_field(&mut rest) {
        None => return Err(format!("missing the read address ({FORMAT})")),
        Some(f) => parse_cpu_addr(f, "read")?,
    };
    let writeback = next_field(&mut rest).map(|f| parse_cpu_addr(f, "writeback")).transpose()?;
    if let Some(extra) = next_field(&mut rest) {
        return Err(format!("unexpected extra field '{}' ({FORMAT})", show(extra)));
    }
    Ok(Some(CpuRecord { bubbles, read, writeback }))
}

fn parse_bubbles(field: &[u8]) -> std::result::Result<u32, String> {
    if field[0] == b'-' {
        return Err(format!("negative instruction count '{}'", show(field)));
    }
    let out_of_range = || format!("instruction count '{}' out of range (more than 32 bits)", show(field));
    match parse_decimal(field) {
        Ok(v) => u32::try_from(v).map_err(|_| out_of_range()),
        Err(DecimalError::Overflow) => Err(out_of_range()),
        Err(DecimalError::Invalid) => Err(format!("instruction count '{}' is not a decimal number", show(field))),
    }
}

/// `which` is "read" or "writeback"; prefixed to the shared parser's reason.
fn parse_cpu_addr(field: &[u8], which: &str) -> std::result::Result<u64, String> {
    if field[0] == b'-' {
        return Err(format!("negative {which} address '{}'", show(field)));
    }
    parse_addr(field).map_err(|reason| format!("{which} {reason}"))
}

#[cfg(test)]
mod tests {
    use super::super::collect;
    use super::*;
    use crate::error::Error;
    use crate::trace::text_input::TempFile;
    use std::io::Write;

    fn rec(bubbles: u32, read: u64, writeback: Option<u64>) -> CpuRecord {
        CpuRecord { bubbles, read, writeback }
    }

    fn read_str(text: impl AsRef<[u8]>) -> Result<Vec<CpuRecord>> {
        let f = TempFile::with_bytes("cpu", text.as_ref());
        collect(&mut CpuTraceReader::open(&f.0)?)
    }

    /// Expects a parse error naming the file, `line` and a reason containing `reason`.
    fn assert_parse_error(text: impl AsRef<[u8]>, line: u64, reason: &str) {
        let f = TempFile::with_bytes("cpubad", text.as_ref());
        match collect(&mut CpuTraceReader::open(&f.0).unwrap()) {
            Err(e @ Error::Parse { .. }) => {
                let Error::Parse { ref path, line: l, reason: ref r } = e else { unreachable!() };
                assert_eq!(path, &f.0);
                assert_eq!(l, line, "line number (reason: {r})");
                assert!(r.contains(reason), "reason {r:?} should contain {reason:?}");
                assert!(e.to_string().starts_with(&format!("{}:{line}: ", f.0.display())), "{e}");
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn reads_decimal_and_hex_two_and_three_field_lines() {
        let got = read_str("0 9618752\n13 47339704180800 47339704049728\n2 0x7ffc0040 0X1000\n7\t0xAbC0 4096\n").unwrap();
        assert_eq!(
            got,
            vec![
                rec(0, 9618752, None),
                rec(13, 47339704180800, Some(47339704049728)),
                rec(2, 0x7ffc_0040, Some(0x1000)),
                rec(7, 0xabc0, Some(4096)),
            ]
        );
    }

    #[test]
    fn extremes_are_in_range() {
        let got = read_str("4294967295 18446744073709551615 0xffffffffffffffff\n0 0x0000000000000000000040\n").unwrap();
        assert_eq!(got, vec![rec(u32::MAX, u64::MAX, Some(u64::MAX)), rec(0, 0x40, None)]);
    }

    #[test]
    fn comments_blank_lines_crlf_and_whitespace_are_skipped() {
        let got = read_str("# gcc\r\n\r\n  \n\t3  64\t \r\n  # indented\n5 128 192 \n\n7 256").unwrap();
        assert_eq!(got, vec![rec(3, 64, None), rec(5, 128, Some(192)), rec(7, 256, None)]);
        assert!(read_str("").unwrap().is_empty());
        assert!(read_str("# only\n\n").unwrap().is_empty());
    }

    #[test]
    fn instructions_are_bubbles_plus_one() {
        assert_eq!(rec(0, 0, None).instructions(), 1);
        assert_eq!(rec(13, 0, Some(1)).instructions(), 14);
        assert_eq!(rec(u32::MAX, 0, None).instructions(), 1 << 32);
    }

    #[test]
    fn malformed_lines_name_file_line_and_reason() {
        assert_parse_error("1 64\n2\n", 2, "missing the read address");
        assert_parse_error("# c\n\nx 64\n", 3, "instruction count 'x' is not a decimal number");
        assert_parse_error("0x3 64\n", 1, "instruction count '0x3' is not a decimal number");
        assert_parse_error("-3 64\n", 1, "negative instruction count '-3'");
        assert_parse_error("1 -64\n", 1, "negative read address '-64'");
        assert_parse_error("1 64 -128\n", 1, "negative writeback address '-128'");
        assert_parse_error("1 64\n1 6z4\n", 2, "read address '6z4' is neither decimal nor 0x-hex");
        assert_parse_error("1 64 0x\n", 1, "writeback address '0x' is neither decimal nor 0x-hex");
        assert_parse_error("1 64 128 192\n", 1, "unexpected extra field '192'");
        assert_parse_error("1 64 128 # late comment\n", 1, "unexpected extra field '#'");
        assert_parse_error("4294967296 64\n", 1, "instruction count '4294967296' out of range (more than 32 bits)");
        assert_parse_error("1 18446744073709551616\n", 1, "read address out of range (more than 64 bits)");
        assert_parse_error(b"1 64\n1 \xff\n", 2, "read address");
    }

    #[test]
    fn missing_file_is_an_io_error_naming_the_path() {
        let t = TempFile::new("no-such-cpu-trace");
        let e = CpuTraceReader::open(&t.0).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e:?}");
        assert!(e.to_string().contains(&t.0.display().to_string()), "{e}");
    }

    #[test]
    fn gzip_is_detected_by_content_and_gives_the_same_records_across_chunks() {
        let mut text = String::new();
        for i in 0..60_000u64 {
            match i % 3 {
                0 => text.push_str(&format!("{} {}\n", i % 17, i * 64)),
                1 => text.push_str(&format!("{} {:#x} {}\n", i % 5, i * 64, i * 32)),
                _ => text.push_str(&format!("{}\t{} {:#X}\r\n", i % 300, i * 64 + 3, i)),
            }
        }
        let plain = TempFile::with_bytes("cpuplain", text.as_bytes());
        let gz = TempFile::gzip("cpugz.txt", &[&text.as_bytes()[..1000], &text.as_bytes()[1000..]]);
        let mut r = CpuTraceReader::open(&gz.0).unwrap();
        assert!(r.is_gzip());
        let a = collect(&mut CpuTraceReader::open(&plain.0).unwrap()).unwrap();
        let b = collect(&mut r).unwrap();
        assert_eq!(a.len(), 60_000);
        assert_eq!(a, b);
        assert_eq!(a[59_999], rec((59_999 % 300) as u32, 59_999 * 64 + 3, Some(59_999)));
    }

    #[test]
    fn rewind_starts_again_from_the_first_record() {
        let f = TempFile::gzip("cpurew", &[b"# c\n1 64\n2 128 192\n3 256\n"]);
        let mut r = CpuTraceReader::open(&f.0).unwrap();
        let first = collect(&mut r).unwrap();
        assert_eq!(first.len(), 3);
        assert!(r.next_record().unwrap().is_none(), "the end stays the end");
        r.rewind().unwrap();
        assert_eq!(r.next_record().unwrap(), Some(rec(1, 64, None)));
        r.rewind().unwrap();
        assert_eq!(collect(&mut r).unwrap(), first);
        assert_eq!(r.lines_read(), 4);
    }

    /// A CPU trace cut short inside its gzip data: the partial last line used to be reported as a
    /// malformed line, not as a truncated file.
    #[test]
    fn a_gzip_cpu_trace_cut_anywhere_is_reported_as_truncated() {
        let mut text = String::new();
        for i in 0..3_000u64 {
            text.push_str(&format!("3 {} {}\n", 4096 + i * 64, 8192 + i * 64));
        }
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        let mut silent = Vec::new();
        for cut in (20..gz.len() - 1).step_by(7) {
            match read_str(&gz[..cut]) {
                Err(Error::Parse { reason, .. }) => assert!(reason.contains("truncated"), "cut at {cut}: {reason}"),
                Err(other) => panic!("cut at {cut}: {other}"),
                Ok(_) => silent.push(cut),
            }
        }
        assert!(silent.is_empty(), "cut gzip traces read without an error at {silent:?}");
    }

    #[test]
    fn truncated_gzip_is_a_parse_error() {
        let mut text = String::new();
        for i in 0..20_000u64 {
            text.push_str(&format!("3 {}\n", i * 64));
        }
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        match read_str(&gz[..gz.len() / 2]) {
            Err(Error::Parse { reason, .. }) => assert!(reason.contains("corrupt or truncated gzip data"), "{reason}"),
            other => panic!("expected a gzip parse error, got {other:?}"),
        }
    }

    proptest::proptest! {
        /// The one-pass fast path never accepts a line the general parser treats differently.
        #[test]
        fn fast_path_agrees_with_general_path(
            line in "[ \t]{0,2}(-?[0-9]{0,11}|#|0x3)[ \t]{0,2}(-?0[xX][0-9a-fA-F]{0,18}|-?[0-9]{0,21}|zz)?[ \t]{0,2}(0[xX][0-9a-fA-F]{0,18}|[0-9]{0,21}|#)?[ \t]{0,2}(7)?\r?",
        ) {
            let mut bytes = line.as_bytes().to_vec();
            bytes.push(b'\n');
            if let Some((len, fast)) = parse_fast(&bytes) {
                proptest::prop_assert_eq!(len, bytes.len());
                proptest::prop_assert_eq!(parse_line(line.as_bytes()), Ok(Some(fast)));
            }
            proptest::prop_assert!(parse_fast(line.as_bytes()).is_none(), "without its newline the fast path defers");
        }
    }

    #[test]
    fn fast_path_takes_ordinary_lines() {
        for line in [&b"0 9618752\n"[..], b"13 47339704180800 47339704049728\n", b"2\t0x40 0x80 \r\n", b"999999999 1\n"] {
            let (len, r) = parse_fast(line).expect("fast path");
            assert_eq!(len, line.len());
            assert_eq!(parse_line(&line[..len - 1]), Ok(Some(r)));
        }
    }

    /// Throughput of the text reader, plain and gzip. Run with
    /// `cargo test -p memtint-engine cpu_trace_reader_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn cpu_trace_reader_speed() {
        const LINES: u64 = 10_000_000;
        let mut text = Vec::with_capacity(LINES as usize * 34);
        let mut addr = 47_339_704_180_800u64;
        for i in 0..LINES {
            addr = addr.wrapping_add(64 + (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52 << 6));
            if i % 4 == 0 {
                writeln!(text, "{} {} {}", i % 23, addr, addr - 131_072).unwrap();
            } else {
                writeln!(text, "{} {}", i % 23, addr).unwrap();
            }
        }
        let plain = TempFile::with_bytes("cpuspeed", &text);
        let gz = TempFile::gzip("cpuspeedgz", &[&text]);
        for (what, f) in [("plain", &plain), ("gzip", &gz)] {
            for _ in 0..2 {
                let start = std::time::Instant::now();
                let mut r = CpuTraceReader::open(&f.0).unwrap();
                let (mut n, mut acc) = (0u64, 0u64);
                while let Some(rec) = r.next_record().unwrap() {
                    n += 1;
                    acc ^= rec.read ^ rec.bubbles as u64;
                }
                let secs = start.elapsed().as_secs_f64();
                assert_eq!(n, LINES);
                println!("{what} cpu trace: {:.1} M records/s ({acc:x})", n as f64 / secs / 1e6);
            }
        }
    }
}
