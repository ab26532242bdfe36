//! Every refused input names its place: the key path of a run spec or override, the file and
//! line of a trace or device file. Each test feeds one input that once ended in a panic, a hang,
//! garbage or a message pointing at a column of generated JSON.

use memtint_engine::dram_sim::run_json;
use memtint_engine::multicore::run_sim_json;

fn sim_err(spec: &str) -> String {
    run_sim_json(spec).expect_err("the spec must be refused").to_string()
}

fn dram_err(spec: &str) -> String {
    run_json(spec).expect_err("the spec must be refused").to_string()
}

/// A CPU-trace run spec with `os` and `overrides` as given (JSON text, which may hold the `NaN`
/// and `Infinity` Python writes).
fn sim_spec(os: &str, overrides: &str) -> String {
    format!(r#"{{"machine": "i7-860", "programs": ["light", "light"], "instructions": 1000, "os": {os}, "overrides": {overrides}}}"#)
}

fn generate_spec(generate: &str, outstanding: &str) -> String {
    format!(r#"{{"machine": "ddr4-2400", "workload": {{"generate": {generate}}}, "outstanding": {outstanding}}}"#)
}

#[test]
fn a_value_of_the_wrong_kind_in_a_run_spec_names_its_key_path() {
    let e = sim_err(&sim_spec(r#"{"colours": [[-1], [1]]}"#, "{}"));
    assert!(e.contains("os.colours[0][0]: invalid value: integer `-1`, expected a whole number from 0 to 4294967295"), "{e}");
    assert!(!e.contains("column"), "{e}");
    let e = sim_err(&sim_spec(r#"{"exclude_bits": [3, -2]}"#, "{}"));
    assert!(e.contains("os.exclude_bits[1]: invalid value: integer `-2`, expected a whole number from 0 to 4294967295"), "{e}");
    let e = sim_err(&sim_spec(r#"{"sched": {"switch_cycles": -5}}"#, "{}"));
    assert!(e.contains("os.sched.switch_cycles: invalid value: integer `-5`, expected a whole number of at least 0"), "{e}");
    let e = dram_err(&generate_spec(r#"{"kind": "random", "requests": 10, "footprint_bytes": 1e30}"#, "4"));
    assert!(
        e.contains("workload.generate.footprint_bytes: invalid type: floating point `1e+30`, expected a whole number of at least 0"),
        "{e}"
    );
    let e = dram_err(&generate_spec(r#"{"kind": "random", "requests": 10, "seed": 18446744073709551616}"#, "4"));
    assert!(e.contains("workload.generate.seed: invalid type: floating point"), "{e}");
    let e = dram_err(&generate_spec(r#"{"kind": "random", "requests": 10}"#, "1e20"));
    assert!(e.contains("outstanding: invalid type: floating point `1e+20`"), "{e}");
}

/// Python's json.dumps writes NaN and an overflowing float as `NaN` and `Infinity`.
#[test]
fn nan_and_infinity_name_their_key() {
    let cases = [
        (sim_spec("{}", r#"{"controller": {"write_high_watermark": NaN}}"#), "overrides.controller.write_high_watermark"),
        (sim_spec("{}", r#"{"cpu": {"frequency_ghz": NaN}}"#), "overrides.cpu.frequency_ghz"),
        (sim_spec(r#"{"policy": "mcp", "mcp": {"mpki_threshold": NaN}}"#, "{}"), "os.mcp.mpki_threshold"),
        (sim_spec("{}", r#"{"controller": {"read_queue": Infinity}}"#), "overrides.controller.read_queue"),
        (sim_spec("{}", r#"{"cache": {"llc": {"size_bytes": 1e400}}}"#), "overrides.cache.llc.size_bytes"),
    ];
    for (spec, key) in cases {
        let e = sim_err(&spec);
        assert!(e.contains(&format!("{key}: not valid JSON")) && e.contains("NaN and infinite numbers"), "{key}: {e}");
    }
}

/// TOML values (profile parameters here; device and machine files alike) may be `nan` or `inf`.
#[test]
fn a_non_finite_number_in_toml_names_its_key() {
    let spec = r#"{"machine": "i7-860", "programs": ["random:reads_pki=nan"], "instructions": 1000}"#;
    let e = sim_err(spec);
    assert!(e.contains("workload parameters 'reads_pki=nan': reads_pki: must be a finite number, got NaN"), "{e}");
}

const DDR4_2400: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr4-2400.toml"));

/// A file under the system temp dir, removed on drop.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!("memtint-input-errors-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The DDR4-2400 preset as a device file with `key`'s first line set to `value`.
fn device_with(key: &str, value: &str) -> TempFile {
    let mut done = false;
    let text: String = DDR4_2400
        .lines()
        .map(|l| {
            if !done && l.split('=').next().unwrap().trim() == key {
                done = true;
                format!("{key} = {value}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(done, "{key} is in the preset");
    TempFile::new(&format!("{key}.toml"), text.as_bytes())
}

/// The error of a short DRAM run on the DDR4-2400 machine with `device` as its device.
fn device_err(device: &TempFile) -> String {
    let spec = serde_json::json!({
        "machine": "ddr4-2400",
        "workload": {"generate": {"kind": "random", "requests": 100}},
        "overrides": {"dram": {"device": device.0}},
    });
    dram_err(&spec.to_string())
}

/// `--set controller.frontend_latency=1099511627776` aborted allocating 16 TiB of latency
/// histogram, and `CL = 4000000000` 32 GiB.
#[test]
fn a_latency_beyond_its_bound_is_an_error_naming_the_key_before_anything_is_allocated() {
    let spec = r#"{"machine": "ddr4-2400", "workload": {"generate": {"kind": "random", "requests": 100}},
        "overrides": {"controller": {"frontend_latency": 1099511627776}}}"#;
    let e = dram_err(spec);
    assert!(e.contains("controller.frontend_latency: must be between 1 and 100000 cycles"), "{e}");
    let device = device_with("CL", "4000000000");
    let e = device_err(&device);
    assert!(e.contains(&format!("{}: timing.CL: must be between 1 and 100000 cycles", device.0.display())), "{e}");
    let e = sim_err(&sim_spec("{}", r#"{"cache": {"llc": {"latency": 1099511627776}}}"#));
    assert!(e.contains("cache.llc.latency: must be between 0 and 100000 cycles"), "{e}");
    let e = sim_err(&sim_spec(r#"{"sched": {"switch_cycles": 1099511627776}}"#, "{}"));
    assert!(e.contains("os.sched.switch_cycles: must be between 0 and 100000 cycles"), "{e}");
    let e = dram_err(
        &spec
            .replace(r#""frontend_latency": 1099511627776"#, r#""atlas": {"starvation_threshold": 18446744073709551615}"#)
            .replace("\"overrides\"", "\"scheduler\": \"atlas\", \"overrides\""),
    );
    assert!(e.contains("controller.atlas.starvation_threshold: must be between 0 and 1000000000000 cycles"), "{e}");
}

/// `tREFI = 0` or `1` ended in "internal error: simulation stalled"; `tCK_ns` of 0, -1.5 or nan
/// ran and reported 0 ns; `CL = 0` and `tRFC_ns = nan` were accepted.
#[test]
fn an_impossible_device_is_refused_naming_the_file_and_the_key() {
    for (key, value, expected) in [
        ("tREFI", "0", "timing.tREFI: must be between 1 and 100000 cycles"),
        (
            "tREFI",
            "1",
            "timing.tREFI: must exceed tRFC + tRC (313 + 55 cycles, organisation[0]) to leave a row cycle between refreshes, got 1",
        ),
        ("tREFI", "368", "timing.tREFI: must exceed tRFC + tRC"),
        ("tRC", "54", "timing.tRC: must be at least tRAS + tRP (55), got 54"),
        ("tRAS", "15", "timing.tRAS: must be at least tRCD (16), got 15"),
        ("tCK_ns", "0", "timing.tCK_ns: must be between 0.1 and 100 ns"),
        ("tCK_ns", "-1.5", "timing.tCK_ns: must be between 0.1 and 100 ns"),
        ("tCK_ns", "nan", "timing.tCK_ns: must be a finite number, got NaN"),
        ("CL", "0", "timing.CL: must be between 1 and 100000 cycles"),
        ("tRFC_ns", "nan", "organisation[0].tRFC_ns: must be a finite number, got NaN"),
        ("tRFC_ns", "0", "organisation[0].tRFC_ns: must be above 0 ns"),
        ("tCCD_L", "3", "timing.tCCD_L: must be at least tCCD_S (4), got 3"),
        ("CL", "-1", "timing.CL: invalid value: integer `-1`, expected a whole number of at least 0"),
        ("banks_per_group", "256", "organisation[0].banks_per_group: must be at most 32 (devices have 2 to 8), got 256"),
        ("rows", "1000", "organisation[0].rows: must be a non-zero power of two, got 1000"),
        // A burst longer than the column gap reported 18.3 GB/s on a 9.6 GB/s bus.
        ("tBL", "8", "timing.tCCD_S: must be at least tBL (8): bursts would overlap on the data bus, got 4"),
        // A device of 128 KiB ran as "8 Gb"; widths of 3 or 128 scaled energy by devices that cannot be.
        (
            "rows",
            "65536",
            "organisation[0]: rows x columns x banks x device_width = 65536 x 1024 x 16 x 8 is 8 Gbit, not its density_gbit 4",
        ),
        ("device_width", "3", "organisation[0].device_width: must be a power of two (x4, x8, x16, ...), got 3"),
        ("data_rate_mts", "3200", "data_rate_mts: must be two transfers per clock of tCK_ns (2400 MT/s at 0.8333333 ns), got 3200"),
    ] {
        let device = device_with(key, value);
        let e = device_err(&device);
        assert!(e.contains(&device.0.display().to_string()) && e.contains(expected), "{key} = {value}: {e}");
    }
    // The same organisation twice: the first won in silence.
    let twice = DDR4_2400.replacen(
        "density_gbit = 16\ndevice_width = 8\nbank_groups = 4\nbanks_per_group = 4\nrows = 131072",
        "density_gbit = 8\ndevice_width = 8\nbank_groups = 4\nbanks_per_group = 4\nrows = 65536",
        1,
    );
    let e = device_err(&TempFile::new("twice.toml", twice.as_bytes()));
    assert!(e.contains("organisation[2]: 8Gb x8 is listed twice (organisation[1] too)"), "{e}");
    // A throttle's command count is a count, not cycles.
    let throttled = DDR4_2400.replacen("tREFI = 9360", "column_window = 100\ncolumn_window_commands = 0\ntREFI = 9360", 1);
    let e = device_err(&TempFile::new("throttle.toml", throttled.as_bytes()));
    assert!(e.contains("timing.column_window_commands: must be between 1 and 100000 commands"), "{e}");
    // The VPP currents obey VDD's rules: negative ACT energy came of ipp2n above ipp3n.
    for (from, to, expected) in [
        ("ipp2n = 3.0", "ipp2n = 50.0", "power.ipp3n: must be at least ipp2n (50 mA), got 3"),
        ("ipp0 = 3.0, ", "", "power.ipp0: must be given, above 0 mA: vpp is set"),
        ("ipp5b = 28.0", "ipp5b = 1.0", "power.ipp5b: must be at least ipp3n (3 mA), got 1"),
        ("vpp = 2.5, ", "", "power.ipp0: is the vpp rail's current; vpp is 0 (not given)"),
        ("idd5b = 250.0", "idd5b = 40.0", "power.idd5b: must be at least idd3n (43 mA), got 40"),
    ] {
        assert!(DDR4_2400.contains(from), "{from}");
        let e = device_err(&TempFile::new("power.toml", DDR4_2400.replacen(from, to, 1).as_bytes()));
        assert!(e.contains(&format!("organisation[1].{expected}")), "{from} -> {to}: {e}");
    }
}

/// A DRAMSim3 trace whose second line arrives at 10^15 or 2^64 - 1 ran for hours or for ever.
#[test]
fn a_dramsim3_arrival_beyond_the_bound_names_the_file_and_line() {
    for (cycle, expected) in [
        ("1000000000000000", "cycle 1000000000000000 is beyond the last arrival a trace may give (1000000000000 cycles"),
        ("18446744073709551615", "cycle 18446744073709551615 is beyond the last arrival"),
        ("18446744073709551616", "cycle out of range"),
        ("5", "cycle 5 is earlier than the previous line's 10"),
    ] {
        let trace = TempFile::new("dramsim3.trace", format!("0x0 READ 10\n0x40 READ {cycle}\n0x80 WRITE 2000000\n").as_bytes());
        let spec = serde_json::json!({"machine": "ddr4-2400", "workload": {"trace": {"path": trace.0, "format": "dramsim3"}}});
        let e = dram_err(&spec.to_string());
        assert!(e.starts_with(&format!("{}:2: {expected}", trace.0.display())), "{cycle}: {e}");
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// trace-stats labelled an empty trace "light" and exited 0; `sim` and `dram` refuse one.
#[test]
fn an_empty_trace_is_refused_by_trace_stats_as_by_sim() {
    let mtt = TempFile::new("empty.mtt", b"");
    memtint_engine::workload::BinaryTraceWriter::create(&mtt.0, false).unwrap().finish().unwrap();
    let files =
        [TempFile::new("empty.trace", b""), TempFile::new("blank.trace", b"\n  \n\t\n"), TempFile::new("empty.trace.gz", &gzip(b"")), mtt];
    let paths: Vec<String> = files.iter().map(|f| f.0.display().to_string()).chain(["/dev/null".to_string()]).collect();
    for path in paths {
        for reuse in [false, true] {
            let request = serde_json::json!({"workload": path, "reuse": reuse}).to_string();
            let e = memtint_engine::workload::trace_stats_json(&request).expect_err("refused").to_string();
            assert_eq!(e, format!("invalid configuration: workload: {path}: the trace has no records (an empty file, only comments and blank lines, or a header of none)"));
        }
        let sim = serde_json::json!({"machine": "i7-860", "programs": [path], "instructions": 1000}).to_string();
        let e = sim_err(&sim);
        assert!(e.contains(&format!("{path}: the trace has no records (an empty file")), "{e}");
    }
}

/// Found by the fuzzer: 10^9 cores ran for minutes, 4 * 10^9 prefetch trackers aborted allocating
/// 128 GB, and overrides that are not a table named no key; 2^20 channels allocate per bank; an LLC of 1 MSHR
/// under 4 programs starved all but one for ever.
#[test]
fn a_count_beyond_its_bound_is_an_error_naming_the_key() {
    let e = sim_err(&sim_spec("{}", r#"{"cpu": {"cores": 1000000000}}"#));
    assert!(e.contains("cpu.cores: must be between 1 and 1024 cores"), "{e}");
    let e = sim_err(&sim_spec("{}", r#"{"cache": {"prefetcher": {"kind": "stream", "trackers": 4000000000}}}"#));
    assert!(e.contains("cache.prefetcher.trackers: must be between 1 and 65536 entries"), "{e}");
    let e = sim_err(&sim_spec("{}", r#"{"dram": {"channels": 1048576}}"#));
    assert!(e.contains("channels x ranks x banks per rank: must be between 1 and 65536 banks"), "{e}");
    let e = sim_err(&sim_spec("{}", r#"{"cache": {"llc": {"mshrs": 1}}}"#));
    assert!(e.contains("cache.llc.mshrs: must be at least cpu.mshrs (16), the misses one core may have outstanding, got 1"), "{e}");
    let e = sim_err(&sim_spec("{}", "5"));
    assert!(e.contains("overrides: invalid type: 5, expected a table"), "{e}");
}

/// Datasheet currents that cannot be (negative, or a command below the standby it adds to) are
/// refused with the organisation and key, before any energy is computed from them.
#[test]
fn impossible_power_figures_are_refused_naming_the_key() {
    for (from, to, expected) in [
        ("idd0 = 48.0", "idd0 = -1.0", "organisation[1].power.idd0: must be a number >= 0, got -1"),
        ("idd4r = 135.0", "idd4r = 10.0", "organisation[1].power.idd4r: must be at least idd3n (43 mA), got 10"),
        ("vdd = 1.2", "vdd = 0.0", "organisation[1].power.vdd: must be above 0 V"),
    ] {
        assert!(DDR4_2400.contains(from), "{from} is in the preset");
        let device = TempFile::new("power.toml", DDR4_2400.replacen(from, to, 1).as_bytes());
        let e = device_err(&device);
        assert!(e.contains(&device.0.display().to_string()) && e.contains(expected), "{to}: {e}");
    }
}

/// Per-bank refresh timing belongs to devices with REFPB, and they must give it; a REFPB may not
/// take longer than the rank's REF; such a device's currents include IDD5PB.
#[test]
fn per_bank_refresh_timing_is_refused_where_it_does_not_belong_or_is_missing() {
    use memtint_engine::dram::DeviceSpec;
    let lpddr4 = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/lpddr4-3200.toml"));
    let err = |text: String| DeviceSpec::from_toml(&text, "dev.toml").unwrap_err().to_string();
    let e = err(DDR4_2400.replace("tREFI = 9360", "tREFI = 9360\ntPBR2PBR = 144"));
    assert!(e.contains("dev.toml: timing.tPBR2PBR: is per-bank refresh timing; DDR4 devices have no REFPB"), "{e}");
    let e = err(lpddr4.replace("tPBR2PBR = 144", ""));
    assert!(e.contains("dev.toml: timing.tPBR2PBR: is required: LPDDR4 devices refresh per bank"), "{e}");
    let e = err(lpddr4.replacen("tRFCpb_ns = 90", "", 1));
    assert!(e.contains("dev.toml: organisation[0].tRFCpb_ns: is required"), "{e}");
    let e = err(lpddr4.replacen("tRFCpb_ns = 90", "tRFCpb_ns = 400", 1));
    assert!(e.contains("organisation[0].tRFCpb_ns: must be above 0 and at most tRFC_ns (180 ns), got 400"), "{e}");
    let e = err(lpddr4.replacen("ipp5b = 10.0, idd5pb = 30.0, ", "ipp5b = 10.0, ", 1));
    assert!(e.contains("power.idd5pb: must be at least idd2n"), "{e}");
    let e = err(DDR4_2400.replace("ipp5b = 28.0,", "ipp5b = 28.0, idd5pb = 40.0,"));
    assert!(e.contains("power.idd5pb: is per-bank refresh current; this device has no REFPB"), "{e}");
}

/// Same-bank refresh timing belongs to DDR5, which must give it.
#[test]
fn same_bank_refresh_timing_is_refused_where_it_does_not_belong_or_is_missing() {
    use memtint_engine::dram::DeviceSpec;
    let ddr5 = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr5-4800.toml"));
    let err = |text: String| DeviceSpec::from_toml(&text, "dev.toml").unwrap_err().to_string();
    let e = err(DDR4_2400.replace("tREFI = 9360", "tREFI = 9360\ntREFSBRD = 72"));
    assert!(e.contains("dev.toml: timing.tREFSBRD: is same-bank refresh timing; DDR4 devices have no REFSB"), "{e}");
    let e = err(ddr5.replace("tREFSBRD = 72", ""));
    assert!(e.contains("dev.toml: timing.tREFSBRD: is required: DDR5 devices refresh same bank (REFSB)"), "{e}");
    let e = err(ddr5.replacen("tRFCsb_ns = 115", "tRFCsb_ns = 500", 1));
    assert!(e.contains("organisation[0].tRFCsb_ns: must be above 0 and at most tRFC_ns (195 ns), got 500"), "{e}");
}

/// DDR5's write-to-write distance in a bank group: required there, refused elsewhere, and never
/// below tCCD_L.
#[test]
fn write_to_write_same_group_timing_belongs_to_ddr5() {
    use memtint_engine::dram::DeviceSpec;
    let ddr5 = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr5-4800.toml"));
    let err = |text: String| DeviceSpec::from_toml(&text, "dev.toml").unwrap_err().to_string();
    let e = err(ddr5.replacen("tCCD_L_WR = 48", "", 1));
    assert!(e.contains("dev.toml: timing.tCCD_L_WR: is required: DDR5 devices space writes to one bank group by tCCD_L_WR"), "{e}");
    let e = err(DDR4_2400.replace("tREFI = 9360", "tREFI = 9360\ntCCD_L_WR = 24"));
    assert!(e.contains("dev.toml: timing.tCCD_L_WR: is DDR5's write-to-write distance in a bank group; DDR4 devices"), "{e}");
    let e = err(ddr5.replacen("tCCD_L_WR = 48", "tCCD_L_WR = 11", 1));
    assert!(e.contains("dev.toml: timing.tCCD_L_WR: must be at least tCCD_L (12), got 11"), "{e}");
}

/// DDR5's precharge-to-precharge distance: required there, refused elsewhere.
#[test]
fn precharge_to_precharge_timing_belongs_to_ddr5() {
    use memtint_engine::dram::DeviceSpec;
    let ddr5 = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr5-4800.toml"));
    let err = |text: String| DeviceSpec::from_toml(&text, "dev.toml").unwrap_err().to_string();
    let e = err(ddr5.replacen("tPPD = 2", "", 1));
    assert!(e.contains("dev.toml: timing.tPPD: is required: DDR5 devices space a rank's precharges by tPPD"), "{e}");
    let e = err(DDR4_2400.replace("tREFI = 9360", "tREFI = 9360\ntPPD = 2"));
    assert!(e.contains("dev.toml: timing.tPPD: is DDR5's precharge-to-precharge distance; DDR4 devices have no tPPD"), "{e}");
    let e = err(ddr5.replacen("tPPD = 2", "tPPD = 0", 1));
    assert!(e.contains("dev.toml: timing.tPPD"), "{e}");
}

/// Two settings a run ignores, said: `outstanding` on a timed trace, and the idle-drain timeout
/// where one write already drains an idle queue (Ramulator's rule).
#[test]
fn settings_a_dram_run_ignores_are_warned_of() {
    let warnings = |spec: serde_json::Value| -> String {
        let out: serde_json::Value = serde_json::from_str(&run_json(&spec.to_string()).unwrap()).unwrap();
        out["warnings"].to_string()
    };
    let trace = TempFile::new("timed.dramsim3", b"0x0 READ 1\n0x40 READ 2\n0x80 WRITE 9\n");
    let timed = |extra: serde_json::Value| {
        let mut s = serde_json::json!({"machine": "ddr4-2400", "workload": {"trace": {"path": trace.0, "format": "dramsim3"}}});
        s.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        s
    };
    assert!(warnings(timed(serde_json::json!({"outstanding": 4}))).contains("outstanding is set but the trace is timed"));
    assert!(!warnings(timed(serde_json::json!({}))).contains("outstanding"));
    let generated = |handling: &str| {
        serde_json::json!({"machine": "ddr4-2400", "workload": {"generate": {"kind": "mix", "requests": 500}},
                           "overrides": {"controller": {"write_handling": handling, "write_idle_drain_timeout": 5}}})
    };
    assert!(warnings(generated("ramulator")).contains("write_idle_drain_timeout is set but write_idle_drain_min is 1"));
    assert!(!warnings(generated("batched")).contains("write_idle_drain_timeout"));
}

/// A width the device does not come in was blamed on the density.
#[test]
fn an_organisation_a_device_lacks_is_named_by_the_key_at_fault() {
    let spec = |dram: serde_json::Value| {
        serde_json::json!({"machine": "ddr4-2400", "workload": {"generate": {"kind": "random", "requests": 10}},
                           "overrides": {"dram": dram}})
        .to_string()
    };
    let e = dram_err(&spec(serde_json::json!({"device_width": 16})));
    assert!(e.contains("dram.device_width: ddr4-2400 has no 8Gb x16 device; it comes as 4Gb x8, 8Gb x8, 16Gb x8"), "{e}");
    let e = dram_err(&spec(serde_json::json!({"density_gbit": 2})));
    assert!(e.contains("dram.density_gbit: ddr4-2400 has no 2Gb x8 device"), "{e}");
}

fn rt_err(spec: serde_json::Value) -> String {
    memtint_engine::rt_sim::run_json(&spec.to_string()).expect_err("the spec must be refused").to_string()
}

/// A clock, a time unit or a bandwidth checked only "above 0" let 5e-324 through: a core clock
/// of it ran with a null makespan, a task unit of it blamed `horizon` with 2^64 - 1 (or ran no
/// job), a device clock blamed `tRFC_ns`. Each is refused by its own key, as are its siblings.
#[test]
fn a_clock_time_or_bandwidth_next_to_zero_is_refused_naming_its_key() {
    for tiny in ["5e-324", "1e-300"] {
        let e = sim_err(&sim_spec("{}", &format!(r#"{{"cpu": {{"frequency_ghz": {tiny}}}}}"#)));
        assert!(e.contains("cpu.frequency_ghz: must be between 0.1 and 100 GHz"), "{tiny}: {e}");
        let device = device_with("tCK_ns", tiny);
        let e = device_err(&device);
        assert!(e.contains(&format!("{}: timing.tCK_ns: must be between 0.1 and 100 ns", device.0.display())), "{tiny}: {e}");
        let e = sim_err(&sim_spec(&format!(r#"{{"hot_pages": {{"enabled": true, "tick_ns": {tiny}}}}}"#), "{}"));
        assert!(e.contains("os.hot_pages.tick_ns: must be between 1 and 1000000000000 ns"), "{tiny}: {e}");
        for (table, key) in [("damon", "sample_ns"), ("damon", "quota_mb_per_s"), ("memory-tiering", "promote_rate_mbps")] {
            let e = sim_err(&sim_spec(&format!(r#"{{"{table}": {{"{key}": {tiny}}}}}"#), "{}"));
            assert!(e.contains(&format!("os.{table}.{key}: must be between")), "{table}.{key} = {tiny}: {e}");
        }
        let e = sim_err(&format!(r#"{{"machine": "i7-860", "programs": ["light:reads_pki={tiny}"], "instructions": 1000}}"#));
        assert!(e.contains("workload.light.reads_pki: must be between 0.00001"), "{tiny}: {e}");
        let rt = |key: &str| {
            let mut s = serde_json::json!({"machine": "ddr4-2400-8r", "schedule": "edf", "horizon": 40,
                "tasks": [{"name": "a", "period": 20, "wcet": 4, "compute": 3.2, "loads": 40}]});
            s[key] = serde_json::json!(tiny.parse::<f64>().unwrap());
            rt_err(s)
        };
        assert!(rt("unit_us").contains("unit_us: must be between 0.001 and 1000000 µs"), "{tiny}");
        assert!(rt("copy_gbps").contains("copy_gbps: must be between 0.001 and 100000 GB/s"), "{tiny}");
        assert!(rt("retention_ms").contains("retention_ms: must be between 0.001 and 1000 ms"), "{tiny}");
        let burst =
            sim_spec("{}", &format!(r#"{{"controller": {{"refresh": "burst", "burst": {{"retention_ms": {tiny}, "jedec": false}}}}}}"#));
        assert!(sim_err(&burst).contains("controller.burst.retention_ms: must be between 0.001 and 1000 ms"), "{tiny}");
    }
    // A per-bank refresh under a cycle refreshed a bank in no time.
    let lpddr4 = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/lpddr4-3200.toml"));
    let e = memtint_engine::dram::DeviceSpec::from_toml(&lpddr4.replacen("tRFCpb_ns = 90", "tRFCpb_ns = 1e-300", 1), "dev.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("dev.toml: organisation[0].tRFCpb_ns: is 0 cycles of 0.625 ns; must be at least one cycle"), "{e}");
}

/// `vdd = 1e100` printed an energy of 150 digits, `1e308` one of 0.00 µJ and nulls in the JSON.
#[test]
fn a_voltage_or_current_beyond_any_device_is_refused_naming_the_key() {
    for (from, to, expected) in [
        ("vdd = 1.2", "vdd = 1e100", "organisation[1].power.vdd: must be between 0.3 and 3.6 V"),
        ("vdd = 1.2", "vdd = 1e308", "organisation[1].power.vdd: must be between 0.3 and 3.6 V"),
        ("vdd = 1.2", "vdd = 5e-324", "organisation[1].power.vdd: must be between 0.3 and 3.6 V"),
        ("vpp = 2.5", "vpp = 1e100", "organisation[1].power.vpp: must be between 0.3 and 3.6 V"),
        ("idd0 = 48.0", "idd0 = 1e300", "organisation[1].power.idd0: must be between 0 and 10000 mA"),
        ("idd5b = 250.0", "idd5b = 1e100", "organisation[1].power.idd5b: must be between 0 and 10000 mA"),
        ("ipp5b = 28.0", "ipp5b = 1e100", "organisation[1].power.ipp5b: must be between 0 and 10000 mA"),
    ] {
        assert!(DDR4_2400.contains(from), "{from} is in the preset");
        let device = TempFile::new("power-range.toml", DDR4_2400.replacen(from, to, 1).as_bytes());
        let e = device_err(&device);
        assert!(e.contains(&device.0.display().to_string()) && e.contains(expected), "{to}: {e}");
    }
}

/// A stride at or past the footprint wrapped onto another: the capacity's hit one line every time.
#[test]
fn a_stride_at_or_past_the_footprint_is_refused() {
    let e = dram_err(&generate_spec(r#"{"kind": "strided", "requests": 10, "stride_bytes": 8589934592}"#, "4"));
    assert!(e.contains("generate.stride_bytes: must be below the footprint (8589934592 B"), "{e}");
    let e = dram_err(&generate_spec(r#"{"kind": "strided", "requests": 10, "stride_bytes": 8192, "footprint_bytes": 8192}"#, "4"));
    assert!(e.contains("generate.stride_bytes: must be below the footprint (8192 B"), "{e}");
    run_json(&generate_spec(r#"{"kind": "strided", "requests": 10, "stride_bytes": 4096, "footprint_bytes": 8192}"#, "4")).unwrap();
}

/// trace-stats called a `phases:` program with no access in its window an empty file (only a
/// profile's name counted as generated), and would have read one without a limit for ever.
#[test]
fn a_generated_program_in_phases_is_not_an_empty_trace() {
    let stats = |request: serde_json::Value| memtint_engine::workload::trace_stats_json(&request.to_string());
    for workload in ["phases:light@500+stream", "light"] {
        let out: serde_json::Value =
            serde_json::from_str(&stats(serde_json::json!({"workload": workload, "instructions": 10})).unwrap()).unwrap();
        assert_eq!(out["records"], 0, "{workload}: {out}");
        let e = stats(serde_json::json!({"workload": workload})).expect_err("no limit").to_string();
        assert!(e.contains("instructions: a generated program never ends: give an instruction limit"), "{workload}: {e}");
    }
}
