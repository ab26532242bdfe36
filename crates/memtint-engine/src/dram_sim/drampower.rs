//! A run's DRAM commands and device in DRAMPower's input formats (the energy reference,
//! docs/energy.md), for the DRAMPower that models the device's standard:
//!
//! - DDR4, DRAMPower 6: one command trace per channel (`timestamp,CMD,rank,bank_group,bank,row,column[,data]`
//!   in clock cycles, banks numbered within the rank, an `END` line at the run's last cycle) and a
//!   core-only DDR4 memspec (memtint's timing and datasheet currents; interface terminations off,
//!   so DRAMPower's total is its core energy, the part memtint models), `memspec.json` and
//!   `config.json`;
//! - DDR3, DRAMPower 4.1 (the last release with DDR3): one trace per channel and rank
//!   (`cycle,CMD,bank`; DRAMPower 4 models one rank), ended by a zero-length power-down at the
//!   run's last cycle (an `END` line would count the idle tail twice), and an XML memspec of one
//!   device (DRAMPower 4 has no device count: a rank's energy is its figures times the devices).

use crate::config::MemoryConfig;
use crate::dram::{Command, CommandRecord, Standard};
use crate::error::{Error, Result};
use crate::Cycle;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

/// DRAMPower's name of a command.
fn name(c: Command) -> &'static str {
    match c {
        Command::Ref => "REFA",
        c => c.name(),
    }
}

/// The commands of `channel` (records of every channel, in issue order) as a DRAMPower trace
/// ending at cycle `end`.
pub fn command_trace(cfg: &MemoryConfig, commands: &[CommandRecord], channel: u32, end: Cycle) -> String {
    let per_group = cfg.org.banks_per_group;
    let mut out = String::new();
    let mut last = 0;
    for r in commands.iter().filter(|r| r.addr.channel == channel) {
        let a = &r.addr;
        let bank = a.bank_group * per_group + a.bank;
        let _ = write!(out, "{},{},{},{},{},{},{}", r.cycle, name(r.command), a.rank, a.bank_group, bank, a.row, a.column);
        // Column commands carry a data field; empty: no data-bus energy (core only).
        out.push_str(if r.command.is_column() { ",\n" } else { "\n" });
        last = last.max(r.cycle);
    }
    let _ = writeln!(out, "{},END,0,0,0,0,0", end.max(last));
    out
}

/// The commands of `channel` and `rank` as a DRAMPower 4.1 trace ending at cycle `end`, or
/// just after the last RDA/WRA's implicit precharge if that is later (DRAMPower 4 miscounts a
/// precharge that falls after the trace's closing power-down).
pub fn command_trace_v4(cfg: &MemoryConfig, commands: &[CommandRecord], channel: u32, rank: u32, end: Cycle) -> String {
    let per_group = cfg.org.banks_per_group;
    let c = crate::dram::constraints::Constraints::derive(cfg.device.standard, &cfg.timing);
    let mut out = String::new();
    let (mut last, mut open) = (0, 0u64);
    // A power-down entry still open: its exit at the end, before the closing power-down.
    let mut down: Option<&str> = None;
    let mut act = vec![0; (cfg.org.bank_groups * per_group) as usize];
    for r in commands.iter().filter(|r| r.addr.channel == channel && r.addr.rank == rank) {
        let bank = r.addr.bank_group * per_group + r.addr.bank;
        // DRAMPower 4 names fast-exit power-down by the banks' state.
        let name = match r.command {
            Command::Pdea => "PDN_F_ACT",
            Command::Pdep => "PDN_F_PRE",
            Command::Pdxa => "PUP_ACT",
            Command::Pdxp => "PUP_PRE",
            c => c.name(),
        };
        let _ = writeln!(out, "{},{},{}", r.cycle, name, bank);
        last = last.max(r.cycle + 1);
        match r.command {
            Command::Act => {
                open |= 1 << bank;
                act[bank as usize] = r.cycle;
            }
            Command::Rda | Command::Wra => {
                open &= !(1 << bank);
                last = last.max(c.implicit_precharge(act[bank as usize], r.cycle, r.command.is_write()) + 1);
            }
            Command::Pre => open &= !(1 << bank),
            Command::Prea => open = 0,
            Command::Pdea => down = Some("PUP_ACT"),
            Command::Pdep => down = Some("PUP_PRE"),
            Command::Pdxa | Command::Pdxp => down = None,
            _ => {}
        }
    }
    if let Some(exit) = down {
        let _ = writeln!(out, "{},{exit},0", end.max(last));
    }
    let mode = if open == 0 { "PDN_F_PRE" } else { "PDN_F_ACT" };
    let _ = writeln!(out, "{},{mode},0", end.max(last));
    out
}

/// Which DRAMPower reads `cfg`'s export; an error for a device neither models or one without
/// datasheet currents.
fn power_of(cfg: &MemoryConfig) -> Result<&crate::dram::energy::PowerSpec> {
    let org = &cfg.org;
    if !matches!(cfg.device.standard, Standard::Ddr3 | Standard::Ddr4) {
        return Err(Error::config(
            "export_drampower",
            format!(
                "the export is written for DRAMPower 6 (DDR4) and DRAMPower 4.1 (DDR3) only, not {} ({}): memtint has no memspec for it, though DRAMPower 6 itself models DDR5 and LPDDR4-6",
                cfg.device.standard.name(),
                cfg.device.name
            ),
        ));
    }
    cfg.device.power(org.density_gbit, org.device_width).ok_or_else(|| {
        Error::config(
            "export_drampower",
            format!("{} {}Gb x{} gives no datasheet currents (organisation.power)", cfg.device.name, org.density_gbit, org.device_width),
        )
    })
}

/// Checks before a run that its export can be written: a device DRAMPower models, with currents.
pub fn check(cfg: &MemoryConfig) -> Result<()> {
    power_of(cfg).map(|_| ())
}

/// DRAMPower 4.1's XML memspec of one of `cfg`'s DDR3 devices (timing in cycles, currents in mA).
pub fn memspec_v4(cfg: &MemoryConfig) -> Result<String> {
    let (org, t, p) = (&cfg.org, &cfg.timing, power_of(cfg)?);
    let param = |id: &str, ty: &str, v: String| format!("    <parameter id=\"{id}\" type=\"{ty}\" value=\"{v}\" />\n");
    let mut x = String::from("<!DOCTYPE memspec SYSTEM \"memspec.dtd\">\n<memspec>\n");
    x += &param("memoryId", "string", format!("memtint_{}_{}Gb_x{}", cfg.device.name, org.density_gbit, org.device_width));
    x += &param("memoryType", "string", "DDR3".into());
    x += "  <memarchitecturespec>\n";
    for (id, v) in [
        ("width", org.device_width),
        ("nbrOfBanks", org.bank_groups * org.banks_per_group),
        ("nbrOfRanks", 1),
        ("nbrOfColumns", org.columns),
        ("nbrOfRows", org.rows),
        ("dataRate", 2),
        ("burstLength", org.burst_length),
    ] {
        x += &param(id, "uint", v.to_string());
    }
    x += "  </memarchitecturespec>\n  <memtimingspec>\n";
    x += &param("clkMhz", "double", format!("{}", 1000.0 / t.tCK_ns));
    for (id, v) in [
        ("RC", t.tRC),
        ("RCD", t.tRCD),
        ("RL", t.CL),
        ("RP", t.tRP),
        ("RFC", t.tRFC),
        ("RAS", t.tRAS),
        ("WL", t.CWL),
        ("AL", 0),
        ("DQSCK", 0),
        ("RTP", t.tRTP),
        ("WR", t.tWR),
        ("XP", t.tXP),
        ("XPDLL", 0),
        ("XS", 0),
        ("XSDLL", 0),
        ("REFI", t.tREFI),
        ("CL", t.CL),
        ("FAW", t.tFAW),
        ("RRD", t.tRRD_S),
        ("CCD", t.tCCD_S),
        ("WTR", t.tWTR_S),
        ("CKE", t.tCKE),
        ("CKESR", 0),
    ] {
        x += &param(id, "uint", v.to_string());
    }
    x += "  </memtimingspec>\n  <mempowerspec>\n";
    for (id, v) in [
        ("idd0", p.idd0),
        ("idd2p0", 0.0),
        ("idd2p1", p.idd2p),
        ("idd2n", p.idd2n),
        ("idd3p0", p.idd3p),
        ("idd3p1", p.idd3p),
        ("idd3n", p.idd3n),
        ("idd4w", p.idd4w),
        ("idd4r", p.idd4r),
        ("idd5", p.idd5b),
        ("idd6", 0.0),
        ("vdd", p.vdd),
    ] {
        x += &param(id, "double", format!("{v}"));
    }
    x += "  </mempowerspec>\n</memspec>\n";
    Ok(x)
}

/// DRAMPower's DDR4 memspec for `cfg`'s device, rank and timing, core energy only.
pub fn memspec(cfg: &MemoryConfig) -> Result<Value> {
    let (org, t) = (&cfg.org, &cfg.timing);
    if cfg.device.standard != Standard::Ddr4 {
        return Err(Error::config(
            "export_drampower",
            format!(
                "the DRAMPower 6 memspec is written for DDR4 only, not {} ({}): memtint has no memspec for it, though DRAMPower 6 itself models DDR5 and LPDDR4-6",
                cfg.device.standard.name(),
                cfg.device.name
            ),
        ));
    }
    let p = power_of(cfg)?;
    let ma = |x: f64| x / 1000.0;
    let off = |k: &str| [(format!("{k}_termination"), json!(false)), (format!("{k}_R_eq"), json!(1e6)), (format!("{k}_dyn_E"), json!(0.0))];
    let impedance: serde_json::Map<String, Value> =
        ["ck", "ca", "rdq", "wdq", "rdqs", "wdqs", "rdbi", "wdbi"].iter().flat_map(|k| off(k)).collect();
    Ok(json!({"memspec": {
        "memoryId": format!("memtint {} {}Gb x{}", cfg.device.name, org.density_gbit, org.device_width),
        "memoryType": "DDR4",
        "memarchitecturespec": {
            "nbrOfChannels": 1,
            "nbrOfDevices": org.bus_width_bits / org.device_width,
            "nbrOfRanks": org.ranks,
            "nbrOfBanks": org.bank_groups * org.banks_per_group,
            "nbrOfBankGroups": org.bank_groups,
            "nbrOfRows": org.rows,
            "nbrOfColumns": org.columns,
            "burstLength": org.burst_length,
            "maxBurstLength": org.burst_length,
            "dataRate": 2,
            "width": org.device_width,
            "RefMode": 1
        },
        "mempowerspec": {
            "vdd": p.vdd, "idd0": ma(p.idd0), "idd2n": ma(p.idd2n), "idd3n": ma(p.idd3n), "idd4r": ma(p.idd4r),
            "idd4w": ma(p.idd4w), "idd5B": ma(p.idd5b), "idd5F2": ma(p.idd5b), "idd5F4": ma(p.idd5b),
            "idd6n": 0.0, "idd2p": ma(p.idd2p), "idd3p": ma(p.idd3p),
            "vpp": p.vpp, "ipp0": ma(p.ipp0), "ipp2n": ma(p.ipp2n), "ipp3n": ma(p.ipp3n), "ipp4r": ma(p.ipp4r),
            "ipp4w": ma(p.ipp4w), "ipp5B": ma(p.ipp5b), "ipp5F2": ma(p.ipp5b), "ipp5F4": ma(p.ipp5b),
            "ipp6n": 0.0, "ipp2p": ma(p.ipp2p), "ipp3p": ma(p.ipp3p),
            "vddq": p.vdd
        },
        "memtimingspec": {
            "tCK": t.tCK_ns * 1e-9,
            "CKE": t.tCKE, "CKESR": 0, "XP": t.tXP, "XS": 0, "XPDLL": 0, "XSDLL": 0, "ACTPDEN": 0, "PRPDEN": 0, "REFPDEN": 0,
            "RAS": t.tRAS, "RC": t.tRC, "RCD": t.tRCD, "RP": t.tRP, "RL": t.CL, "WL": t.CWL, "AL": 0,
            "RTP": t.tRTP, "WR": t.tWR, "RPRE": 0, "WPRE": 0, "DQSCK": 0,
            "REFI": t.tREFI, "RFC1": t.tRFC, "RFC2": t.tRFC, "RFC4": t.tRFC,
            "CCD_S": t.tCCD_S, "CCD_L": t.tCCD_L, "FAW": t.tFAW, "RRD_S": t.tRRD_S, "RRD_L": t.tRRD_L,
            "WTR_S": t.tWTR_S, "WTR_L": t.tWTR_L, "RTRS": t.tRTRS, "REFM": 0
        },
        "memimpedancespec": impedance,
        "prepostamble": {
            "read_zeroes": 0.0, "write_zeroes": 0.0, "read_ones": 0.0, "write_ones": 0.0,
            "read_zeroes_to_ones": 0, "write_zeroes_to_ones": 0, "read_ones_to_zeroes": 0, "write_ones_to_zeroes": 0,
            "readMinTccd": 0, "writeMinTccd": 0
        }
    }}))
}

/// DRAMPower's run configuration: no toggling-rate assumption (the traces carry no data).
pub fn config() -> Value {
    json!({"useToggleRate": false, "simconfig": {}})
}

/// The files `cfg`'s export writes.
pub fn file_names(cfg: &MemoryConfig) -> Vec<String> {
    let (channels, ranks) = (cfg.org.channels, cfg.org.ranks);
    if cfg.device.standard == Standard::Ddr3 {
        let mut v = vec!["memspec.xml".to_string()];
        v.extend((0..channels).flat_map(|c| (0..ranks).map(move |r| format!("trace-ch{c}-r{r}.csv"))));
        return v;
    }
    let mut v = vec!["memspec.json".to_string(), "config.json".to_string()];
    v.extend((0..channels).map(|c| format!("trace-ch{c}.csv")));
    v
}

/// Writes `cfg`'s export of `commands` (a run ending at `end`) into `dir`; the names written.
pub fn write(dir: &Path, cfg: &MemoryConfig, commands: &[CommandRecord], end: Cycle) -> Result<Vec<String>> {
    let mut texts: Vec<String> = Vec::new();
    if cfg.device.standard == Standard::Ddr3 {
        texts.push(memspec_v4(cfg)?);
        for ch in 0..cfg.org.channels {
            texts.extend((0..cfg.org.ranks).map(|r| command_trace_v4(cfg, commands, ch, r, end)));
        }
    } else {
        texts.push(serde_json::to_string_pretty(&memspec(cfg)?).expect("JSON"));
        texts.push(config().to_string());
        texts.extend((0..cfg.org.channels).map(|ch| command_trace(cfg, commands, ch, end)));
    }
    // All or none: each file is written beside under a temporary name, and renamed only once
    // every one is whole (a full disk left some files, or half of one).
    let names = file_names(cfg);
    let temp = |name: &str| dir.join(format!(".{name}.partial-{}", std::process::id()));
    let mut written = Vec::new();
    for (name, text) in names.iter().zip(texts) {
        let path = temp(name);
        if let Err(e) = std::fs::write(&path, text) {
            for p in written.iter().chain([&path]) {
                let _ = std::fs::remove_file(p);
            }
            return Err(Error::io(&dir.join(name), e));
        }
        written.push(path);
    }
    for (name, path) in names.iter().zip(&written) {
        std::fs::rename(path, dir.join(name)).map_err(|e| Error::io(&dir.join(name), e))?;
    }
    Ok(names)
}

/// Creates `dir` if needed; an error if a file the export would write is already there (an
/// export never replaces a file).
pub fn prepare_dir(dir: &Path, cfg: &MemoryConfig) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    if let Some(f) = file_names(cfg).into_iter().find(|f| dir.join(f).exists()) {
        return Err(Error::config(
            "export_drampower",
            format!("{}: {f} exists; the export does not replace files: give a new or empty directory", dir.display()),
        ));
    }
    Ok(())
}
