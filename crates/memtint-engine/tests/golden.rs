//! Golden regression: the exact command stream and counters of 180 small runs (4 machines x 3
//! schedulers x 3 row policies x 5 workloads, checker on) must not change. Speed work on the
//! controller may change how decisions are found, never which decisions are made.
//!
//! Each run is reduced to a 64-bit FNV-1a hash of every issued command (cycle, command, bank,
//! row, column), the read-latency distribution, queue integrals, write-mode switches and the
//! final cycle. The reference values below were produced by the controller of commit e27bbd6
//! (per-bank candidate caches, before the speed work), whose results equal those of the
//! independent timing checker and of cycle-by-cycle runs. If a change is *meant* to alter
//! scheduling, regenerate them with `MEMTINT_GOLDEN_PRINT=1 cargo test -p memtint-engine --test
//! golden -- --nocapture` and say why in the commit.

mod common;

use common::*;
use memtint_engine::dram_sim::DramSimOptions;
use memtint_engine::trace::GeneratorKind;
use serde_json::json;

const MACHINES: &[&str] = &["ddr4-2400", "ddr4-2400-2ch2r", "i7-860", "ddr3-1333"];
const SCHEDULERS: &[&str] = &["fcfs", "fr-fcfs", "fr-fcfs-cap"];
const ROW_POLICIES: &[&str] = &["open", "closed", "timeout"];
const KINDS: &[GeneratorKind] =
    &[GeneratorKind::Random, GeneratorKind::Mix, GeneratorKind::Stream, GeneratorKind::Conflict, GeneratorKind::Strided];
const REQUESTS: u64 = 3000;
const OUTSTANDING: usize = 48;

struct Fnv(u64);

impl Fnv {
    fn add(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// The run's fingerprint: (final cycle, hash of commands and counters).
fn fingerprint(machine: &str, scheduler: &str, row_policy: &str, kind: GeneratorKind) -> (u64, u64) {
    let cfg = machine_cfg(machine, scheduler, row_policy);
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(OUTSTANDING) };
    let (mem, totals) = run(&cfg, &generated(kind, REQUESTS, 7), opts);
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for c in &totals.commands {
        let a = &c.addr;
        for v in [c.cycle, c.command.index() as u64, a.channel as u64, a.rank as u64, a.bank_group as u64, a.bank as u64, a.row as u64, a.column as u64] {
            h.add(v);
        }
    }
    for ch in mem.channels() {
        let s = ch.stats();
        let l = s.read_latency.summary();
        for v in [l.mean, l.p50, l.p90, l.p99, l.p999, l.max] {
            h.add(v.to_bits());
        }
        for v in [s.reads, s.writes, s.busy_data_cycles, s.write_mode_switches, s.read_queue_integral as u64, s.write_queue_integral as u64] {
            h.add(v);
        }
    }
    h.add(totals.front_end_stalls);
    (totals.dram_cycles, h.0)
}

fn machine_cfg(name: &str, scheduler: &str, row_policy: &str) -> memtint_engine::config::MemoryConfig {
    machine(name, json!({"controller": {"scheduler": scheduler, "row_policy": row_policy}}))
}

fn all_runs() -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for m in MACHINES {
        for s in SCHEDULERS {
            for rp in ROW_POLICIES {
                for &k in KINDS {
                    let (cycles, hash) = fingerprint(m, s, rp, k);
                    out.push((format!("{m}/{s}/{rp}/{k:?}"), cycles, hash));
                }
            }
        }
    }
    out
}

#[test]
fn scheduling_decisions_match_the_reference() {
    let runs = all_runs();
    if std::env::var("MEMTINT_GOLDEN_PRINT").is_ok() {
        for (name, cycles, hash) in &runs {
            println!("    (\"{name}\", {cycles}, 0x{hash:016x}),");
        }
        return;
    }
    assert_eq!(runs.len(), REFERENCE.len());
    let wrong: Vec<String> = runs
        .iter()
        .zip(REFERENCE)
        .filter(|((n, c, h), (rn, rc, rh))| (n.as_str(), *c, *h) != (*rn, *rc, *rh))
        .map(|((n, c, h), (_, rc, rh))| format!("{n}: cycles {c} (reference {rc}), hash 0x{h:016x} (reference 0x{rh:016x})"))
        .collect();
    assert!(wrong.is_empty(), "{} of {} runs differ from the reference:\n{}", wrong.len(), runs.len(), wrong.join("\n"));
}

/// (machine/scheduler/row policy/workload, final cycle, fingerprint), from commit e27bbd6.
const REFERENCE: &[(&str, u64, u64)] = &[
    ("ddr4-2400/fcfs/open/Random", 20513, 0x9da94be817c0a1dc),
    ("ddr4-2400/fcfs/open/Mix", 22525, 0x6761dc5428427677),
    ("ddr4-2400/fcfs/open/Stream", 12507, 0x27dc06ce303a849e),
    ("ddr4-2400/fcfs/open/Conflict", 172670, 0x0ce8286f8f114596),
    ("ddr4-2400/fcfs/open/Strided", 12514, 0xc36cb326fcd9c539),
    ("ddr4-2400/fcfs/closed/Random", 20494, 0x6b92b1d706a6762a),
    ("ddr4-2400/fcfs/closed/Mix", 22182, 0x03cda72f15080bf4),
    ("ddr4-2400/fcfs/closed/Stream", 12507, 0xa0f16e5a72a81c3c),
    ("ddr4-2400/fcfs/closed/Conflict", 172670, 0x7194c806ad919e72),
    ("ddr4-2400/fcfs/closed/Strided", 12514, 0xe3aa42d8c36f8418),
    ("ddr4-2400/fcfs/timeout/Random", 20494, 0x4603686690ce2c7c),
    ("ddr4-2400/fcfs/timeout/Mix", 22444, 0x26b48c4168783b57),
    ("ddr4-2400/fcfs/timeout/Stream", 12507, 0xc8c8735142d3d487),
    ("ddr4-2400/fcfs/timeout/Conflict", 172670, 0x0ce8286f8f114596),
    ("ddr4-2400/fcfs/timeout/Strided", 12514, 0xbf4ee1db4e6d1d5d),
    ("ddr4-2400/fr-fcfs/open/Random", 20513, 0x5d26b612fa2c887b),
    ("ddr4-2400/fr-fcfs/open/Mix", 22273, 0xcb5d47b565e8ed04),
    ("ddr4-2400/fr-fcfs/open/Stream", 12499, 0x8913fcd9aed03317),
    ("ddr4-2400/fr-fcfs/open/Conflict", 172670, 0x0ce8286f8f114596),
    ("ddr4-2400/fr-fcfs/open/Strided", 12514, 0xc36cb326fcd9c539),
    ("ddr4-2400/fr-fcfs/closed/Random", 20494, 0x6b92b1d706a6762a),
    ("ddr4-2400/fr-fcfs/closed/Mix", 22025, 0xcea239beba7cd8f0),
    ("ddr4-2400/fr-fcfs/closed/Stream", 12499, 0x9f7a4946bc3a7edd),
    ("ddr4-2400/fr-fcfs/closed/Conflict", 172670, 0x7194c806ad919e72),
    ("ddr4-2400/fr-fcfs/closed/Strided", 12514, 0xe3aa42d8c36f8418),
    ("ddr4-2400/fr-fcfs/timeout/Random", 20494, 0x4603686690ce2c7c),
    ("ddr4-2400/fr-fcfs/timeout/Mix", 22252, 0xd9f08f83d1232cb5),
    ("ddr4-2400/fr-fcfs/timeout/Stream", 12499, 0x74e8028605f89236),
    ("ddr4-2400/fr-fcfs/timeout/Conflict", 172670, 0x0ce8286f8f114596),
    ("ddr4-2400/fr-fcfs/timeout/Strided", 12514, 0xbf4ee1db4e6d1d5d),
    ("ddr4-2400/fr-fcfs-cap/open/Random", 20513, 0x5d26b612fa2c887b),
    ("ddr4-2400/fr-fcfs-cap/open/Mix", 22273, 0xcb5d47b565e8ed04),
    ("ddr4-2400/fr-fcfs-cap/open/Stream", 12499, 0x25ac59b415b463e5),
    ("ddr4-2400/fr-fcfs-cap/open/Conflict", 172670, 0x0ce8286f8f114596),
    ("ddr4-2400/fr-fcfs-cap/open/Strided", 12514, 0xc36cb326fcd9c539),
    ("ddr4-2400/fr-fcfs-cap/closed/Random", 20494, 0x6b92b1d706a6762a),
    ("ddr4-2400/fr-fcfs-cap/closed/Mix", 22025, 0xcea239beba7cd8f0),
    ("ddr4-2400/fr-fcfs-cap/closed/Stream", 12499, 0x0b4310bb3959e4b3),
    ("ddr4-2400/fr-fcfs-cap/closed/Conflict", 172670, 0x7194c806ad919e72),
    ("ddr4-2400/fr-fcfs-cap/closed/Strided", 12514, 0xe3aa42d8c36f8418),
    ("ddr4-2400/fr-fcfs-cap/timeout/Random", 20494, 0x4603686690ce2c7c),
    ("ddr4-2400/fr-fcfs-cap/timeout/Mix", 22252, 0xd9f08f83d1232cb5),
    ("ddr4-2400/fr-fcfs-cap/timeout/Stream", 12499, 0x261208f8404e2678),
    ("ddr4-2400/fr-fcfs-cap/timeout/Conflict", 172670, 0x0ce8286f8f114596),
    ("ddr4-2400/fr-fcfs-cap/timeout/Strided", 12514, 0xbf4ee1db4e6d1d5d),
    ("ddr4-2400-2ch2r/fcfs/open/Random", 7521, 0xaada63c89da64ea3),
    ("ddr4-2400-2ch2r/fcfs/open/Mix", 11970, 0x40fb40ab7c43fe43),
    ("ddr4-2400-2ch2r/fcfs/open/Stream", 6051, 0xbb5d82100bcb72b9),
    ("ddr4-2400-2ch2r/fcfs/open/Conflict", 172670, 0x4eb4cecc9296fbd6),
    ("ddr4-2400-2ch2r/fcfs/open/Strided", 12868, 0x6b31a25f1100968b),
    ("ddr4-2400-2ch2r/fcfs/closed/Random", 7365, 0x44429d1de7a17290),
    ("ddr4-2400-2ch2r/fcfs/closed/Mix", 10341, 0x317178e991068261),
    ("ddr4-2400-2ch2r/fcfs/closed/Stream", 6051, 0xa9443587d9aff0f0),
    ("ddr4-2400-2ch2r/fcfs/closed/Conflict", 172670, 0xba499017e581371a),
    ("ddr4-2400-2ch2r/fcfs/closed/Strided", 12675, 0x2f53f2cf4b12c2c3),
    ("ddr4-2400-2ch2r/fcfs/timeout/Random", 7530, 0xfc406ebb10761e45),
    ("ddr4-2400-2ch2r/fcfs/timeout/Mix", 11122, 0x79e398d58d2070af),
    ("ddr4-2400-2ch2r/fcfs/timeout/Stream", 6051, 0x3302e3260f35f090),
    ("ddr4-2400-2ch2r/fcfs/timeout/Conflict", 172670, 0x4eb4cecc9296fbd6),
    ("ddr4-2400-2ch2r/fcfs/timeout/Strided", 12675, 0x99448268ee46b517),
    ("ddr4-2400-2ch2r/fr-fcfs/open/Random", 7216, 0x53d577846b230c87),
    ("ddr4-2400-2ch2r/fr-fcfs/open/Mix", 11676, 0xfade36827a0a0295),
    ("ddr4-2400-2ch2r/fr-fcfs/open/Stream", 6051, 0xbb5d82100bcb72b9),
    ("ddr4-2400-2ch2r/fr-fcfs/open/Conflict", 172670, 0x4eb4cecc9296fbd6),
    ("ddr4-2400-2ch2r/fr-fcfs/open/Strided", 12868, 0x6b31a25f1100968b),
    ("ddr4-2400-2ch2r/fr-fcfs/closed/Random", 7051, 0xcb46f30b842fa59c),
    ("ddr4-2400-2ch2r/fr-fcfs/closed/Mix", 10223, 0x2dcc62f5fbd4e5cd),
    ("ddr4-2400-2ch2r/fr-fcfs/closed/Stream", 6051, 0xa9443587d9aff0f0),
    ("ddr4-2400-2ch2r/fr-fcfs/closed/Conflict", 172670, 0xba499017e581371a),
    ("ddr4-2400-2ch2r/fr-fcfs/closed/Strided", 12675, 0x2f53f2cf4b12c2c3),
    ("ddr4-2400-2ch2r/fr-fcfs/timeout/Random", 7113, 0x3a5485476e5e59f4),
    ("ddr4-2400-2ch2r/fr-fcfs/timeout/Mix", 10719, 0x38c9c195fe6dfae8),
    ("ddr4-2400-2ch2r/fr-fcfs/timeout/Stream", 6051, 0x3302e3260f35f090),
    ("ddr4-2400-2ch2r/fr-fcfs/timeout/Conflict", 172670, 0x4eb4cecc9296fbd6),
    ("ddr4-2400-2ch2r/fr-fcfs/timeout/Strided", 12675, 0x99448268ee46b517),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/open/Random", 7216, 0x53d577846b230c87),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/open/Mix", 11676, 0xfade36827a0a0295),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/open/Stream", 6051, 0xbb5d82100bcb72b9),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/open/Conflict", 172670, 0x4eb4cecc9296fbd6),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/open/Strided", 12868, 0x6b31a25f1100968b),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/closed/Random", 7051, 0xcb46f30b842fa59c),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/closed/Mix", 10223, 0x2dcc62f5fbd4e5cd),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/closed/Stream", 6051, 0xa9443587d9aff0f0),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/closed/Conflict", 172670, 0xba499017e581371a),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/closed/Strided", 12675, 0x2f53f2cf4b12c2c3),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/timeout/Random", 7113, 0x3a5485476e5e59f4),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/timeout/Mix", 10719, 0x38c9c195fe6dfae8),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/timeout/Stream", 6051, 0x3302e3260f35f090),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/timeout/Conflict", 172670, 0x4eb4cecc9296fbd6),
    ("ddr4-2400-2ch2r/fr-fcfs-cap/timeout/Strided", 12675, 0x99448268ee46b517),
    ("i7-860/fcfs/open/Random", 7274, 0x4ccb31503259bb8a),
    ("i7-860/fcfs/open/Mix", 8963, 0xe709b97176e3a183),
    ("i7-860/fcfs/open/Stream", 6136, 0xf831f0eb959db217),
    ("i7-860/fcfs/open/Conflict", 100404, 0xd5a0404c6c75a7e6),
    ("i7-860/fcfs/open/Strided", 12247, 0xd8a31324bef08da2),
    ("i7-860/fcfs/closed/Random", 7207, 0x80bf48168971456b),
    ("i7-860/fcfs/closed/Mix", 8161, 0x7e6996cc45927358),
    ("i7-860/fcfs/closed/Stream", 6132, 0x05f832c2427338e3),
    ("i7-860/fcfs/closed/Conflict", 100404, 0x423a0f4059ba89d9),
    ("i7-860/fcfs/closed/Strided", 12242, 0xe8ac8321d0087c8e),
    ("i7-860/fcfs/timeout/Random", 7286, 0x47845b6ac8d218f5),
    ("i7-860/fcfs/timeout/Mix", 8617, 0x75f3ed7e3685b7a1),
    ("i7-860/fcfs/timeout/Stream", 6136, 0xf831f0eb959db217),
    ("i7-860/fcfs/timeout/Conflict", 100404, 0xd5a0404c6c75a7e6),
    ("i7-860/fcfs/timeout/Strided", 12242, 0x3491f6a01a303ce6),
    ("i7-860/fr-fcfs/open/Random", 6797, 0xb2b9cf2a1442a868),
    ("i7-860/fr-fcfs/open/Mix", 8604, 0x31c52ddc7ba38cc1),
    ("i7-860/fr-fcfs/open/Stream", 6128, 0xb3848f1e89f2375d),
    ("i7-860/fr-fcfs/open/Conflict", 100404, 0xd5a0404c6c75a7e6),
    ("i7-860/fr-fcfs/open/Strided", 12231, 0x425a7d9f10af3fb3),
    ("i7-860/fr-fcfs/closed/Random", 6757, 0x714f93db3844aaae),
    ("i7-860/fr-fcfs/closed/Mix", 7779, 0xadb7caeeb1ae5cfb),
    ("i7-860/fr-fcfs/closed/Stream", 6128, 0x9aaf99a7261c86d1),
    ("i7-860/fr-fcfs/closed/Conflict", 100404, 0x423a0f4059ba89d9),
    ("i7-860/fr-fcfs/closed/Strided", 12228, 0x29316a05b7b70263),
    ("i7-860/fr-fcfs/timeout/Random", 6769, 0x1b3a17613e32b269),
    ("i7-860/fr-fcfs/timeout/Mix", 8324, 0xd36fba2befa94415),
    ("i7-860/fr-fcfs/timeout/Stream", 6128, 0xb3848f1e89f2375d),
    ("i7-860/fr-fcfs/timeout/Conflict", 100404, 0xd5a0404c6c75a7e6),
    ("i7-860/fr-fcfs/timeout/Strided", 12228, 0x36e809850d8f659b),
    ("i7-860/fr-fcfs-cap/open/Random", 6797, 0xb2b9cf2a1442a868),
    ("i7-860/fr-fcfs-cap/open/Mix", 8604, 0x31c52ddc7ba38cc1),
    ("i7-860/fr-fcfs-cap/open/Stream", 6128, 0x06112cfc70838021),
    ("i7-860/fr-fcfs-cap/open/Conflict", 100404, 0xd5a0404c6c75a7e6),
    ("i7-860/fr-fcfs-cap/open/Strided", 12231, 0x425a7d9f10af3fb3),
    ("i7-860/fr-fcfs-cap/closed/Random", 6757, 0x714f93db3844aaae),
    ("i7-860/fr-fcfs-cap/closed/Mix", 7779, 0xadb7caeeb1ae5cfb),
    ("i7-860/fr-fcfs-cap/closed/Stream", 6128, 0x3636adcbf6832241),
    ("i7-860/fr-fcfs-cap/closed/Conflict", 100404, 0x423a0f4059ba89d9),
    ("i7-860/fr-fcfs-cap/closed/Strided", 12228, 0x29316a05b7b70263),
    ("i7-860/fr-fcfs-cap/timeout/Random", 6769, 0x1b3a17613e32b269),
    ("i7-860/fr-fcfs-cap/timeout/Mix", 8324, 0xd36fba2befa94415),
    ("i7-860/fr-fcfs-cap/timeout/Stream", 6128, 0x06112cfc70838021),
    ("i7-860/fr-fcfs-cap/timeout/Conflict", 100404, 0xd5a0404c6c75a7e6),
    ("i7-860/fr-fcfs-cap/timeout/Strided", 12228, 0x36e809850d8f659b),
    ("ddr3-1333/fcfs/open/Random", 16402, 0xdb97cbaa1626ecc5),
    ("ddr3-1333/fcfs/open/Mix", 18360, 0x024f0c09687e43de),
    ("ddr3-1333/fcfs/open/Stream", 12529, 0x2999f84fcbff2c39),
    ("ddr3-1333/fcfs/open/Conflict", 103370, 0x347f2eca39dac985),
    ("ddr3-1333/fcfs/open/Strided", 12551, 0x727bdbef944d5975),
    ("ddr3-1333/fcfs/closed/Random", 16086, 0x4b4c56f1b16b8096),
    ("ddr3-1333/fcfs/closed/Mix", 18117, 0x0c8a9a937fa3b193),
    ("ddr3-1333/fcfs/closed/Stream", 12528, 0x372ccc7d217acb29),
    ("ddr3-1333/fcfs/closed/Conflict", 103370, 0x36b3d3dabbfdbea0),
    ("ddr3-1333/fcfs/closed/Strided", 12551, 0xba0df5ef5668369d),
    ("ddr3-1333/fcfs/timeout/Random", 16402, 0x9c7c1469f303e5ce),
    ("ddr3-1333/fcfs/timeout/Mix", 18360, 0x5897219e2d46f230),
    ("ddr3-1333/fcfs/timeout/Stream", 12529, 0x2999f84fcbff2c39),
    ("ddr3-1333/fcfs/timeout/Conflict", 103370, 0x347f2eca39dac985),
    ("ddr3-1333/fcfs/timeout/Strided", 12551, 0xf84f56ac83ceb5d5),
    ("ddr3-1333/fr-fcfs/open/Random", 16549, 0x41ec6ae764002e24),
    ("ddr3-1333/fr-fcfs/open/Mix", 18677, 0x7b2c3e06443e0014),
    ("ddr3-1333/fr-fcfs/open/Stream", 12525, 0x6bb0e1a9c5ab0339),
    ("ddr3-1333/fr-fcfs/open/Conflict", 103370, 0x347f2eca39dac985),
    ("ddr3-1333/fr-fcfs/open/Strided", 12551, 0x727bdbef944d5975),
    ("ddr3-1333/fr-fcfs/closed/Random", 16115, 0x61de41230b85b94b),
    ("ddr3-1333/fr-fcfs/closed/Mix", 18192, 0x3edbe8792ca29dc8),
    ("ddr3-1333/fr-fcfs/closed/Stream", 12525, 0xad8c742936e39afb),
    ("ddr3-1333/fr-fcfs/closed/Conflict", 103370, 0x36b3d3dabbfdbea0),
    ("ddr3-1333/fr-fcfs/closed/Strided", 12551, 0xba0df5ef5668369d),
    ("ddr3-1333/fr-fcfs/timeout/Random", 16546, 0x02e8b91210dcc29e),
    ("ddr3-1333/fr-fcfs/timeout/Mix", 18677, 0x59b3361babef5a14),
    ("ddr3-1333/fr-fcfs/timeout/Stream", 12525, 0x6bb0e1a9c5ab0339),
    ("ddr3-1333/fr-fcfs/timeout/Conflict", 103370, 0x347f2eca39dac985),
    ("ddr3-1333/fr-fcfs/timeout/Strided", 12551, 0xf84f56ac83ceb5d5),
    ("ddr3-1333/fr-fcfs-cap/open/Random", 16549, 0x41ec6ae764002e24),
    ("ddr3-1333/fr-fcfs-cap/open/Mix", 18677, 0x7b2c3e06443e0014),
    ("ddr3-1333/fr-fcfs-cap/open/Stream", 12525, 0xdc299640f1266f76),
    ("ddr3-1333/fr-fcfs-cap/open/Conflict", 103370, 0x347f2eca39dac985),
    ("ddr3-1333/fr-fcfs-cap/open/Strided", 12551, 0x727bdbef944d5975),
    ("ddr3-1333/fr-fcfs-cap/closed/Random", 16115, 0x61de41230b85b94b),
    ("ddr3-1333/fr-fcfs-cap/closed/Mix", 18192, 0x3edbe8792ca29dc8),
    ("ddr3-1333/fr-fcfs-cap/closed/Stream", 12525, 0xf023964d1269f7ec),
    ("ddr3-1333/fr-fcfs-cap/closed/Conflict", 103370, 0x36b3d3dabbfdbea0),
    ("ddr3-1333/fr-fcfs-cap/closed/Strided", 12551, 0xba0df5ef5668369d),
    ("ddr3-1333/fr-fcfs-cap/timeout/Random", 16546, 0x02e8b91210dcc29e),
    ("ddr3-1333/fr-fcfs-cap/timeout/Mix", 18677, 0x59b3361babef5a14),
    ("ddr3-1333/fr-fcfs-cap/timeout/Stream", 12525, 0xdc299640f1266f76),
    ("ddr3-1333/fr-fcfs-cap/timeout/Conflict", 103370, 0x347f2eca39dac985),
    ("ddr3-1333/fr-fcfs-cap/timeout/Strided", 12551, 0xf84f56ac83ceb5d5),
];
