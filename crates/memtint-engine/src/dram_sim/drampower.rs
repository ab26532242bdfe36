//! A run's DRAM commands and device in DRAMPower 6's input formats (the energy reference,
//! docs/energy.md): one command trace per channel (`timestamp,CMD,rank,bank_group,bank,row,column[,data]`
//! in clock cycles, banks numbered within the rank, an `END` line at the run's last cycle) and a
//! core-only DDR4 memspec (memtint's timing and datasheet currents; interface terminations off,
//! so DRAMPower's total is its core energy, the part memtint models).

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

/// DRAMPower's DDR4 memspec for `cfg`'s device, rank and timing, core energy only.
pub fn memspec(cfg: &MemoryConfig) -> Result<Value> {
    let (org, t) = (&cfg.org, &cfg.timing);
    if cfg.device.standard != Standard::Ddr4 {
        return Err(Error::config(
            "export_drampower",
            format!("DRAMPower 6 models DDR4, DDR5 and LPDDR4-6, not {} ({})", cfg.device.standard.name(), cfg.device.name),
        ));
    }
    let Some(p) = cfg.device.power(org.density_gbit, org.device_width) else {
        return Err(Error::config(
            "export_drampower",
            format!("{} {}Gb x{} gives no datasheet currents (organisation.power)", cfg.device.name, org.density_gbit, org.device_width),
        ));
    };
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
            "idd6n": 0.0, "idd2p": 0.0, "idd3p": 0.0,
            "vpp": p.vpp, "ipp0": ma(p.ipp0), "ipp2n": ma(p.ipp2n), "ipp3n": ma(p.ipp3n), "ipp4r": ma(p.ipp4r),
            "ipp4w": ma(p.ipp4w), "ipp5B": ma(p.ipp5b), "ipp5F2": ma(p.ipp5b), "ipp5F4": ma(p.ipp5b),
            "ipp6n": 0.0, "ipp2p": 0.0, "ipp3p": 0.0,
            "vddq": p.vdd
        },
        "memtimingspec": {
            "tCK": t.tCK_ns * 1e-9,
            "CKE": 0, "CKESR": 0, "XP": 0, "XS": 0, "XPDLL": 0, "XSDLL": 0, "ACTPDEN": 0, "PRPDEN": 0, "REFPDEN": 0,
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

/// The files an export of `channels` channels writes.
pub fn file_names(channels: u32) -> Vec<String> {
    let mut v = vec!["memspec.json".to_string(), "config.json".to_string()];
    v.extend((0..channels).map(|c| format!("trace-ch{c}.csv")));
    v
}

/// Creates `dir` if needed; an error if a file the export would write is already there (an
/// export never replaces a file).
pub fn prepare_dir(dir: &Path, channels: u32) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    if let Some(f) = file_names(channels).into_iter().find(|f| dir.join(f).exists()) {
        return Err(Error::config(
            "export_drampower",
            format!("{}: {f} exists; the export does not replace files: give a new or empty directory", dir.display()),
        ));
    }
    Ok(())
}
