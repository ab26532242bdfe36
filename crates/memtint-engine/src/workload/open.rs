//! Opens a CPU workload named by one string: a built-in profile, optionally with parameters
//! (`stream`, `copy:streams=4,seed=7`), or a trace file (`.mtt` by its magic bytes, otherwise
//! Ramulator CPU-trace text, plain or gzip), or a program in phases of those
//! (`phases:stream@1000000+light`, `phases.rs`).
//!
//! Profile names come first: a file called `stream` in the working directory is opened as
//! `./stream`.

use std::path::Path;

use super::binary_trace::{is_mtt, BinaryTraceReader};
use super::profile::Profile;
use super::{CpuTraceReader, CpuTraceSource};
use crate::error::{Error, Result};

/// Whether `spec` names a generated program, as `open_cpu_workload` reads it: a profile or
/// phases (which repeat or run their last part for ever). It never ends, and a window without a
/// record is a program that accessed no memory there, not an empty file.
pub fn is_generated(spec: &str) -> bool {
    spec.starts_with(super::phases::PREFIX) || Profile::NAMES.contains(&spec.split_once(':').map_or(spec, |(name, _)| name))
}

/// `seed` seeds a profile unless its parameters set `seed=`; files ignore it.
pub fn open_cpu_workload(spec: &str, seed: u64) -> Result<Box<dyn CpuTraceSource>> {
    if spec.starts_with(super::phases::PREFIX) {
        return Ok(Box::new(super::phases::Phases::open(spec, seed)?));
    }
    let name = spec.split_once(':').map_or(spec, |(name, _)| name);
    if Profile::NAMES.contains(&name) {
        // Named as given, parameters included: two programs of one profile stay apart in statistics.
        return Ok(Box::new(Profile::parse(spec, seed)?.generator().named(spec)));
    }
    let path = Path::new(spec);
    if !path.exists() {
        let reason = format!("no such file, and not a built-in workload profile ({})", Profile::NAMES.join(", "));
        return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::NotFound, reason)));
    }
    if is_mtt(path)? {
        Ok(Box::new(BinaryTraceReader::open(path)?))
    } else {
        Ok(Box::new(CpuTraceReader::open(path)?))
    }
}

#[cfg(test)]
mod tests {
    use super::super::binary_trace::write_mtt;
    use super::super::{collect, CpuRecord, VecCpuSource};
    use super::*;
    use crate::trace::text_input::TempFile;

    fn first(source: &mut dyn CpuTraceSource, n: usize) -> Vec<CpuRecord> {
        (0..n).map(|_| source.next_record().unwrap().unwrap()).collect()
    }

    #[test]
    fn profile_names_open_generators_with_parameters_and_seed() {
        let mut a = open_cpu_workload("stream", 5).unwrap();
        assert_eq!(a.name(), "stream");
        let mut b = open_cpu_workload("stream:seed=5", 99).unwrap();
        assert_eq!(b.name(), "stream:seed=5", "a profile's parameters are part of its name");
        assert_eq!(first(&mut *a, 1000), first(&mut *b, 1000), "seed= in the spec wins over the argument");
        let mut c = open_cpu_workload("stream", 6).unwrap();
        a.rewind().unwrap();
        assert_ne!(first(&mut *a, 1000), first(&mut *c, 1000));
        let e = open_cpu_workload("stream:reads_pki=2000", 1).err().expect("an error").to_string();
        assert!(e.contains("workload.stream.reads_pki"), "{e}");
        let e = open_cpu_workload("copy:strams=4", 1).err().expect("an error").to_string();
        assert!(e.contains("unknown field") && e.contains("strams"), "{e}");
    }

    #[test]
    fn files_are_opened_by_content() {
        let text = "3 0x1000\n0 0x1040 0x2000\n";
        let plain = TempFile::with_bytes("open.mtt", text.as_bytes()); // the name does not matter
        let gz = TempFile::gzip("open.txt", &[text.as_bytes()]);
        let want = collect(&mut CpuTraceReader::open(&plain.0).unwrap()).unwrap();
        let mtt = TempFile::new("open.gz");
        write_mtt(&mut VecCpuSource::new("v", want.clone()), &mtt.0, true).unwrap();
        for f in [&plain, &gz, &mtt] {
            let mut s = open_cpu_workload(f.0.to_str().unwrap(), 1).unwrap();
            assert_eq!(collect(&mut *s).unwrap(), want, "{}", f.0.display());
            assert_eq!(s.name(), f.0.display().to_string());
        }
    }

    #[test]
    fn missing_file_error_names_the_path_and_lists_profiles() {
        let t = TempFile::new("missing.gz");
        let spec = t.0.to_str().unwrap();
        let e = open_cpu_workload(spec, 1).err().expect("an error");
        assert!(matches!(e, Error::Io { .. }));
        let msg = e.to_string();
        assert!(msg.starts_with(spec) && msg.contains("no such file"), "{msg}");
        let msg = open_cpu_workload("strem", 1).err().expect("an error").to_string();
        assert!(msg.contains("strem") && msg.contains("no such file"), "{msg}");
        for name in Profile::NAMES {
            assert!(msg.contains(name), "{msg}");
        }
    }
}
