//! Errors are values with context (file, line, field); the CLI turns them into one message.

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is impossible; `field` names it as the user wrote it.
    #[error("invalid configuration: {}: {}", escaped(field), escaped(&short_numbers(reason)))]
    Config { field: String, reason: String },

    /// A preset name that does not exist; lists the valid ones.
    #[error("unknown {kind} '{}'; valid {}: {}", escaped(name), plural(kind), valid.join(", "))]
    UnknownName { kind: &'static str, name: String, valid: Vec<String> },

    /// A malformed line in an input file. The reason quotes the input, so it is shown escaped
    /// and cut short: a binary file's bytes never reach the terminal raw.
    /// Line 0 is a place without a line (a binary file's header).
    #[error("{}: {}", location(path, *line), printable(reason))]
    Parse { path: PathBuf, line: u64, reason: String },

    /// A file could not be opened or read.
    #[error("{}: {}", escaped(&path.display().to_string()), io_text(source))]
    Io { path: PathBuf, source: std::io::Error },

    /// A timing or protocol violation found by the independent checker.
    #[error("timing violation: {0}")]
    Violation(String),

    /// The run was asked to stop from outside (`interrupt::request_stop`).
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// What went wrong without the kind and key in front, for a caller that names its own key
    /// around it (a configuration error's reason; the whole message of the others).
    pub fn reason(&self) -> String {
        match self {
            Error::Config { reason, .. } => short_numbers(reason),
            other => other.to_string(),
        }
    }

    /// What went wrong with its key but without the kind (`workload.stream.reads_pki: must be
    /// ...`), for a caller that puts its own key in front: the kind is said once.
    pub fn keyed_reason(&self) -> String {
        match self {
            Error::Config { field, reason } => format!("{field}: {}", short_numbers(reason)),
            other => other.to_string(),
        }
    }

    pub fn config(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Config { field: field.into(), reason: reason.into() }
    }

    pub fn unknown(kind: &'static str, name: &str, valid: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Error::UnknownName { kind, name: name.to_string(), valid: valid.into_iter().map(Into::into).collect() }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// A trace with nothing in it, refused the same way by every command that reads one;
    /// `unit` is what it should hold ("requests", "records").
    pub fn empty_trace(key: &str, name: &str, unit: &str) -> Self {
        Error::config(key, format!("{name}: the trace has no {unit} (an empty file, only comments and blank lines, or a header of none)"))
    }
}

/// `d` deserialised, or the error and the key path where it arose (`os.colours[0][0]`; empty at
/// the top). Every reader of user input goes through it (`from_json`, `from_value`, `from_toml`),
/// so a message names the key the user wrote, never a column of generated JSON.
fn keyed<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> std::result::Result<T, (String, D::Error)>
where
    D::Error: std::fmt::Display,
{
    serde_path_to_error::deserialize(d).map_err(|e| {
        let path = e.path().to_string();
        let mut path = if path == "." { String::new() } else { path };
        // An unknown key is named by the message; the place is the table that holds it.
        if let Some((key, _)) = e.inner().to_string().split_once("unknown field `").and_then(|(_, m)| m.split_once('`')) {
            if path == key {
                path.clear();
            } else if let Some(table) = path.strip_suffix(&format!(".{key}")) {
                path = table.to_string();
            }
        }
        (path, e.into_inner())
    })
}

/// `prefix` and `path` joined as one key path (`controller.tcm` + `quantum`, `programs` + `[2]`).
fn join_key(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (_, true) => prefix.to_string(),
        (true, false) => path.to_string(),
        (false, false) if path.starts_with('[') => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// A serde_json error's message: a value of the wrong kind without the position (the key says
/// where), broken JSON with it (there is no key to name).
fn json_reason(e: &serde_json::Error) -> String {
    let shown = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    let message = shown.strip_suffix(&at).unwrap_or(&shown);
    if e.is_syntax() || e.is_eof() {
        // Python writes NaN and Infinity, which JSON has no numbers for.
        format!("not valid JSON{at}: {message} (NaN and infinite numbers cannot be given)")
    } else {
        no_type_names(message)
    }
}

/// serde's "expected struct TaskSpec" or "expected u64" names a Rust type the user never wrote: a
/// struct is a table to them, a u64 a whole number of at least 0. (serde reads a struct from an
/// array too, so an array's error is a length's.)
fn no_type_names(message: &str) -> String {
    let message = number_type_names(message);
    let Some(i) = message.find("expected struct ") else { return message };
    let (head, tail) = (&message[..i], &message[i + "expected struct ".len()..]);
    let tail = tail.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
    let tail = tail.strip_prefix(" with ").and_then(|t| t.split_once(" elements")).map_or(tail, |(_, rest)| rest);
    let head = if head.starts_with("invalid length ") { "invalid type: array, " } else { head };
    format!("{head}expected a table{tail}")
}

/// serde's words for a value's kind in the user's: "expected u32" as the range a user can write,
/// a sequence as an array, a map as a table.
fn number_type_names(message: &str) -> String {
    const NAMES: [(&str, &str); 12] = [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number of at least 0"),
        ("usize", "a whole number of at least 0"),
        ("i8", "a whole number from -128 to 127"),
        ("i16", "a whole number from -32768 to 32767"),
        ("i32", "a whole number from -2147483648 to 2147483647"),
        ("i64", "a whole number"),
        ("isize", "a whole number"),
        ("f32", "a number"),
        ("f64", "a number"),
    ];
    // serde's data model's names for what TOML and JSON call an array, a table and null.
    const KINDS: [(&str, &str); 7] = [
        ("invalid type: sequence,", "invalid type: array,"),
        ("invalid type: map,", "invalid type: table,"),
        ("invalid type: unit value,", "invalid type: null,"),
        ("invalid type: Option value,", "invalid type: null,"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("expected unit", "expected null"),
    ];
    let mut message = message.to_string();
    for (serde, words) in KINDS {
        message = message.replace(serde, words);
    }
    let Some(i) = message.rfind(", expected ") else { return message };
    let (head, ty) = message.split_at(i + ", expected ".len());
    match NAMES.iter().find(|(name, _)| *name == ty) {
        Some((_, words)) => format!("{head}{words}"),
        None => message,
    }
}

/// JSON text as a `T` (a run spec, a request from the Python extension); a mistake names its key
/// path, or `what` (the document) when it is at the top.
pub fn from_json<T: DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = keyed(&mut de).and_then(|v| de.end().map(|()| v).map_err(|e| (String::new(), e)));
    value.map_err(|(path, e)| Error::config(if path.is_empty() { what.to_string() } else { path }, json_reason(&e)))
}

/// A JSON value as a `T`; a mistake names its key path under `prefix` (`controller.tcm`).
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value, prefix: &str) -> Result<T> {
    keyed(value).map_err(|(path, e)| Error::config(join_key(prefix, &path), json_reason(&e)))
}

/// TOML text as a `T` (a device, machine or mapping file); a mistake names `origin`, its line and
/// key path. Every float must be finite: no quantity memtint reads is NaN or infinite.
pub fn from_toml<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T> {
    let value = keyed(toml::Deserializer::new(text)).map_err(|(path, e)| {
        let reason = if path.is_empty() { toml_reason(&e) } else { format!("{path}: {}", toml_reason(&e)) };
        match e.span() {
            Some(s) => Error::Parse { path: origin.into(), line: text[..s.start.min(text.len())].matches('\n').count() as u64 + 1, reason },
            None => Error::config(in_file(origin, &path), toml_reason(&e)),
        }
    })?;
    let table: toml::Table = toml::from_str(text).map_err(|e| Error::config(origin, toml_reason(&e)))?;
    if let Some((key, v)) = non_finite(&toml::Value::Table(table), String::new()) {
        return Err(Error::config(in_file(origin, &key), format!("must be a finite number, got {v}")));
    }
    Ok(value)
}

/// A TOML error's reason on one line. Some parse errors carry no message of their own (a control
/// character in a comment): their report's last line says what is wrong.
fn toml_reason(e: &toml::de::Error) -> String {
    // Some messages span lines ("invalid string" then "expected ..."): one line, joined.
    let message = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(": ");
    if !message.is_empty() {
        return escaped(&no_type_names(&message));
    }
    let report = e.to_string();
    let last = report.lines().map(str::trim).filter(|l| !l.is_empty() && !l.contains('|')).last();
    escaped(last.filter(|l| !l.starts_with("TOML parse error")).unwrap_or("not valid TOML (a character TOML does not allow?)"))
}

/// "file: key", or "file" for the file as a whole.
pub fn in_file(origin: &str, key: &str) -> String {
    if key.is_empty() {
        origin.to_string()
    } else {
        format!("{origin}: {key}")
    }
}

/// The first float in `v` that is NaN or infinite, with its key path.
fn non_finite(v: &toml::Value, path: String) -> Option<(String, f64)> {
    match v {
        toml::Value::Float(f) if !f.is_finite() => Some((path, *f)),
        toml::Value::Table(t) => t.iter().find_map(|(k, v)| non_finite(v, join_key(&path, k))),
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| non_finite(v, format!("{path}[{i}]"))),
        _ => None,
    }
}

/// "file:line", or "file" for line 0.
fn location(path: &std::path::Path, line: u64) -> String {
    let shown = escaped(&path.display().to_string());
    if line == 0 {
        shown
    } else {
        format!("{shown}:{line}")
    }
}

/// `text` with control characters escaped, whole (names and lists of valid values).
fn escaped(text: &str) -> String {
    if text.chars().any(char::is_control) {
        text.chars().map(|c| if c.is_control() { escape(c) } else { c.to_string() }).collect()
    } else {
        text.to_string()
    }
}

fn escape(c: char) -> String {
    match c {
        '\0' => "\\0".into(),
        '\r' => "\\r".into(),
        '\n' => "\\n".into(),
        '\t' => "\\t".into(),
        c => format!("\\x{:02x}", c as u32),
    }
}

/// Most digits a number shows in full: `u64::MAX` has 20, so a longer run is a float's `Display`.
const MAX_DIGITS: usize = 20;

/// `text` with every number of more than `MAX_DIGITS` digits in exponent form: a float's
/// `Display` writes 1e300 as 301 digits, and a reason says `got {v}` of whatever the user gave.
fn short_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let run = &rest[start..];
        let len = run.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(run.len());
        // A sentence's full stop after the number is not part of it.
        let number = run[..len].trim_end_matches('.');
        let digits = number.bytes().filter(u8::is_ascii_digit).count();
        // Only a float's own `Display`: a long integer a user typed is shown as typed.
        match number.parse::<f64>() {
            Ok(v) if digits > MAX_DIGITS && v.is_finite() && format!("{v}") == number => out.push_str(&format!("{v:e}")),
            _ => out.push_str(number),
        }
        rest = &run[number.len()..];
    }
    out.push_str(rest);
    out
}

/// Longest reason a parse error shows, in characters.
const MAX_REASON: usize = 400;

/// `text` with control characters escaped (`\x1b`, `\0`, `\r`) and cut to `MAX_REASON`
/// characters.
pub fn printable(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == MAX_REASON {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.push_str(&escape(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// "policy" -> "policies", "machine" -> "machines".
fn plural(kind: &str) -> String {
    match kind.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{kind}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        timing: Timing,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case, dead_code)]
    struct Timing {
        CL: u32,
        tCK_ns: f64,
        list: Option<Vec<u32>>,
    }

    #[test]
    fn a_toml_mistake_names_the_file_its_line_and_the_key() {
        let e = from_toml::<Doc>("name = \"d\"\n[timing]\ntCK_ns = 1.0\nCL = -1\n", "d.toml").unwrap_err().to_string();
        assert!(e.starts_with("d.toml:4: timing.CL: invalid value: integer `-1`, expected a whole number from 0 to 4294967295"), "{e}");
        let e = from_toml::<Doc>("name = \"d\"\n[timing]\nCL = 1\ntCK_ns = 1.0\nlist = [1, -1]\n", "d.toml").unwrap_err().to_string();
        assert!(e.starts_with("d.toml:5: timing.list[1]: invalid value"), "{e}");
        let e = from_toml::<Doc>("name = \"d\"\n[timing]\nCL = 1\ntCK_ns = 1.0\nCLL = 2\n", "d.toml").unwrap_err().to_string();
        assert!(e.starts_with("d.toml:5: timing: unknown field `CLL`"), "{e}");
        for bad in ["nan", "-nan", "inf", "-inf"] {
            let e = from_toml::<Doc>(&format!("name = \"d\"\n[timing]\nCL = 1\ntCK_ns = {bad}\n"), "d.toml").unwrap_err().to_string();
            assert!(e.contains("d.toml: timing.tCK_ns: must be a finite number"), "{e}");
        }
        // A control character in a comment: toml gives no message of its own, yet one is said.
        let e = from_toml::<Doc>("# a \u{1b}[2J comment\nname = \"d\"\n", "d.toml").unwrap_err().to_string();
        let reason = e.strip_prefix("d.toml:1: ").unwrap_or_else(|| panic!("{e}"));
        assert!(!reason.trim().is_empty() && !reason.chars().any(char::is_control) && !e.contains('\n'), "{e:?}");
    }

    #[test]
    fn a_json_mistake_names_the_key_path_or_the_document() {
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": 1, "tCK_ns": 1, "list": [2, -3]}}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: timing.list[1]: invalid value: integer `-3`, expected a whole number from 0 to 4294967295");
        // A float or a string for a whole number, in the user's words (serde's: "expected u32").
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": "x", "tCK_ns": 1}}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: timing.CL: invalid type: string \"x\", expected a whole number from 0 to 4294967295");
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": 1, "tCK_ns": "x"}}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: timing.tCK_ns: invalid type: string \"x\", expected a number");
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": 1, "tCK_ns": 1, "list": {"a": 1}}}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: timing.list: invalid type: table, expected an array");
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": [1], "tCK_ns": 1}}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: timing.CL: invalid type: array, expected a whole number from 0 to 4294967295");
        let e = from_json::<Doc>(r#"{"name": "d"}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: spec: missing field `timing`");
        // A Rust type's name means nothing to the user: a struct is a table.
        let e = from_json::<Doc>(r#"{"name": "d", "timing": 1}"#, "spec").unwrap_err().to_string();
        assert_eq!(e, "invalid configuration: timing: invalid type: integer `1`, expected a table");
        let e = from_toml::<Doc>("name = \"d\"\ntiming = [1]\n", "d.toml").unwrap_err().to_string();
        assert!(e.starts_with("d.toml:2: timing: invalid type: array, expected a table"), "{e}");
        let e = from_toml::<Doc>("name = \"d\"\ntiming = \"x\"\n", "d.toml").unwrap_err().to_string();
        assert!(e.starts_with("d.toml:2: timing: invalid type: string \"x\", expected a table"), "{e}");
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": 1, "tCK_ns": NaN}}"#, "spec").unwrap_err().to_string();
        assert!(e.starts_with("invalid configuration: timing.tCK_ns: not valid JSON at line 1 column"), "{e}");
        let e = from_json::<Doc>(r#"{"name": "d", "timing": {"CL": 1, "tCK_ns": 1}} x"#, "spec").unwrap_err().to_string();
        assert!(e.starts_with("invalid configuration: spec: not valid JSON"), "{e}");
        let e = from_value::<Timing>(serde_json::json!({"CL": 1, "tCK_ns": 1, "lst": 1}), "dev.timing").unwrap_err().to_string();
        assert!(e.starts_with("invalid configuration: dev.timing: unknown field `lst`"), "{e}");
    }

    /// Parse errors used to echo ESC, NUL and CR from a binary file raw and unbounded.
    #[test]
    fn a_parse_error_shows_control_bytes_escaped_and_cut_short() {
        let e = Error::Parse { path: "t".into(), line: 3, reason: format!("bad 'a\x1b[2J\0\r{}'", "z".repeat(1000)) };
        let shown = e.to_string();
        assert!(shown.starts_with("t:3: bad 'a\\x1b[2J\\0\\r"), "{shown}");
        assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        assert!(shown.len() < 450 && shown.ends_with("..."), "{}", shown.len());
    }

    /// `--jitter-ns 1e300` used to be refused with 301 digits.
    #[test]
    fn a_huge_or_tiny_number_is_shown_in_exponent_form() {
        let e = Error::config("noise.jitter_ns", format!("must be a number from 0 to {}, got {}.", 1e6, 1e300));
        assert_eq!(e.to_string(), "invalid configuration: noise.jitter_ns: must be a number from 0 to 1000000, got 1e300.");
        assert_eq!(e.reason(), "must be a number from 0 to 1000000, got 1e300.");
        let tiny = Error::config("x", format!("got {}, {} and {}", 1.5e-30, -2.5e40, u64::MAX));
        assert_eq!(tiny.reason(), "got 1.5e-30, -2.5e40 and 18446744073709551615");
        assert_eq!(short_numbers("v1.2.3, 10.5 ns"), "v1.2.3, 10.5 ns");
        assert_eq!(short_numbers("got 99999999999999999999999"), "got 99999999999999999999999");
    }

    /// A preset name from a TOML string ("i7\n860") used to print on two lines.
    #[test]
    fn an_unknown_name_shows_control_characters_escaped() {
        let e = Error::UnknownName { kind: "machine", name: "i7\n860\x1b".into(), valid: vec!["i7-860".into()] };
        assert_eq!(e.to_string(), "unknown machine 'i7\\n860\\x1b'; valid machines: i7-860");
    }
}

/// An I/O error as a user reads it: the system's words without Rust's " (os error 28)".
fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}
