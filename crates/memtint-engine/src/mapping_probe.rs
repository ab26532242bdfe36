//! The simulated side of `memtint probe`: timed rounds of loads through a machine's memory
//! system, where the true address mapping is known (docs/probe.md).
//!
//! A measurement is rounds of physical addresses. Each round's loads reach the controllers
//! together, as the independent loads of a real probe do after `clflush`; the round ends when the
//! last one's data is back, and its time is a sample. Rows stay as the loads left them, so a pair
//! in one bank but different rows conflicts every round, as on a real machine. Noise a real probe
//! meets is optional: timer jitter, interrupt spikes and another core's random reads (refresh is
//! the device's own and always on unless the machine turns it off).

use crate::config::{MachineSource, MemoryConfig};
use crate::controller::{Completion, Origin};
use crate::error::{Error, Result};
use crate::mapping::{AddressMapping, Field};
use crate::memory_system::MemorySystem;
use crate::Cycle;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::{json, Value};

/// Loads one call may simulate: a search's batch is far smaller, a runaway spec is refused.
const MAX_LOADS: u64 = 20_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    pub machine: MachineSource,
    /// A partial machine table applied over `machine` (as a run spec's `overrides`).
    #[serde(default)]
    pub overrides: Option<Value>,
    /// Per measurement, its rounds; per round, the physical addresses loaded together.
    #[serde(default)]
    pub measurements: Vec<Vec<Vec<u64>>>,
    /// Timed passes over a measurement's rounds.
    #[serde(default = "default_repetitions")]
    pub repetitions: u32,
    /// Untimed passes first (rows opened, queues settled).
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    #[serde(default)]
    pub noise: Noise,
    #[serde(default)]
    pub seed: u64,
}

fn default_repetitions() -> u32 {
    8
}
fn default_warmup() -> u32 {
    1
}

/// What disturbs a real probe's timings, added to the simulated ones.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Noise {
    /// Standard deviation of normal timer noise on every sample (rdtscp and pipeline), ns.
    #[serde(default)]
    pub jitter_ns: f64,
    /// Probability that a sample is hit by an interrupt or preemption.
    #[serde(default)]
    pub spike_rate: f64,
    /// What such a hit adds, ns.
    #[serde(default = "default_spike_ns")]
    pub spike_ns: f64,
    /// Another core's random reads over all of memory, GB/s (Poisson arrivals).
    #[serde(default)]
    pub corunner_gbps: f64,
    /// The core's part of every round (issue, clflush, fences), ns.
    #[serde(default = "default_overhead_ns")]
    pub overhead_ns: f64,
    /// Idle time between rounds (the flushes and the timer), ns.
    #[serde(default = "default_gap_ns")]
    pub gap_ns: f64,
}

fn default_spike_ns() -> f64 {
    2000.0
}
fn default_overhead_ns() -> f64 {
    20.0
}
fn default_gap_ns() -> f64 {
    30.0
}

impl Default for Noise {
    fn default() -> Self {
        Noise {
            jitter_ns: 0.0,
            spike_rate: 0.0,
            spike_ns: default_spike_ns(),
            corunner_gbps: 0.0,
            overhead_ns: default_overhead_ns(),
            gap_ns: default_gap_ns(),
        }
    }
}

impl Noise {
    fn validate(&self) -> Result<()> {
        let checks = [
            ("noise.jitter_ns", self.jitter_ns, 1e6),
            ("noise.spike_rate", self.spike_rate, 1.0),
            ("noise.spike_ns", self.spike_ns, 1e9),
            ("noise.corunner_gbps", self.corunner_gbps, 1e4),
            ("noise.overhead_ns", self.overhead_ns, 1e6),
            ("noise.gap_ns", self.gap_ns, 1e6),
        ];
        for (key, v, most) in checks {
            if !(v.is_finite() && (0.0..=most).contains(&v)) {
                return Err(Error::config(key, format!("must be a number from 0 to {most}, got {v}")));
            }
        }
        Ok(())
    }
}

/// One memory node as the probe sees it: where its memory lies and its true mapping.
struct NodeMemory {
    base: u64,
    mapping: AddressMapping,
    org: crate::dram::Organisation,
    device: String,
}

fn node_memories(cfg: &MemoryConfig) -> Vec<NodeMemory> {
    match &cfg.topology {
        None => vec![NodeMemory { base: 0, mapping: cfg.mapping.clone(), org: cfg.org.clone(), device: cfg.machine.dram.device.clone() }],
        Some(t) => t
            .memories
            .iter()
            .zip(&t.bases)
            .filter_map(|(m, &base)| {
                m.as_ref().map(|m| NodeMemory {
                    base,
                    mapping: m.mapping.clone(),
                    org: m.org.clone(),
                    device: m.machine.dram.device.clone(),
                })
            })
            .collect(),
    }
}

/// The machine as the probe's caller needs it: each node's memory, organisation and true fields.
fn describe(cfg: &MemoryConfig) -> Value {
    let nodes: Vec<Value> = node_memories(cfg)
        .iter()
        .map(|n| {
            let m = &n.mapping;
            let fields: serde_json::Map<String, Value> =
                Field::ALL.iter().map(|&f| (f.name().to_string(), json!(m.field_bits(f)))).collect();
            let o = &n.org;
            json!({
                "base": n.base, "capacity_bits": m.capacity_bits(), "offset_bits": m.offset_bits(), "fields": fields,
                "device": n.device,
                "organisation": {
                    "channels": o.channels, "ranks": o.ranks, "bank_groups": o.bank_groups,
                    "banks_per_group": o.banks_per_group, "rows": o.rows, "columns": o.columns,
                    "bus_width_bits": o.bus_width_bits, "burst_length": o.burst_length,
                },
            })
        })
        .collect();
    json!({
        "name": cfg.machine.name,
        "tck_ns": cfg.timing.tCK_ns,
        "nodes": nodes,
        // The machine as resolved (presets' files read, node defaults left as written), for a
        // preset written with the probed mapping in place of the true one.
        "config": serde_json::to_value(&cfg.machine).expect("machine config serialises"),
    })
}

/// Another core's random reads: the next arrival and the address stream. Like a core, it has at
/// most `MAX_OUTSTANDING` reads in flight and waits for one to return before the next.
struct CoRunner {
    interval_cycles: f64,
    next: f64,
    ranges: Vec<(u64, u64)>,
    id: u64,
    outstanding: u32,
}

/// A core's reads in flight: its L2's miss queue (Intel's superqueue holds 16).
const MAX_OUTSTANDING: u32 = 16;

/// Ids above this are the co-runner's.
const CORUNNER_IDS: u64 = 1 << 62;

impl CoRunner {
    fn new(gbps: f64, tck_ns: f64, nodes: &[NodeMemory]) -> Option<Self> {
        (gbps > 0.0).then(|| CoRunner {
            interval_cycles: 64.0 / gbps / tck_ns,
            next: 0.0,
            ranges: nodes.iter().map(|n| (n.base, 1u64 << n.mapping.capacity_bits())).collect(),
            id: CORUNNER_IDS,
            outstanding: 0,
        })
    }

    /// Queue every read due by `now`. A full queue, or `MAX_OUTSTANDING` reads in flight, stalls
    /// the co-runner as it would a core: it goes on when the memory next changes or a read
    /// returns, and owes nothing for the time it stalled (a rate above what one core draws
    /// saturates it; it builds no endless backlog that the probe's rounds would then crawl
    /// through a cycle at a time, starved of queue slots).
    fn issue(&mut self, mem: &mut MemorySystem, now: Cycle, rng: &mut ChaCha8Rng) {
        while self.next <= now as f64 {
            if self.outstanding >= MAX_OUTSTANDING {
                self.next = f64::INFINITY; // until `returned`
                return;
            }
            let (base, size) = self.ranges[rng.gen_range(0..self.ranges.len())];
            let addr = base + (rng.gen_range(0..size) & !63);
            if !mem.try_enqueue(now, self.id, addr, false, Origin::single(1)) {
                self.next = mem.next_event().max(now + 1) as f64;
                return;
            }
            self.id += 1;
            self.outstanding += 1;
            let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
            self.next += -u.ln() * self.interval_cycles;
        }
    }

    /// One of its reads returned at `at`: a co-runner stalled on its reads in flight goes on.
    fn returned(&mut self, at: Cycle) {
        self.outstanding -= 1;
        if self.next.is_infinite() {
            self.next = at as f64;
        }
    }

    fn next_cycle(&self) -> Cycle {
        if self.next.is_infinite() {
            Cycle::MAX
        } else {
            self.next.ceil() as Cycle
        }
    }
}

/// Run the spec's measurements; JSON with each measurement's round times (ns) and the machine.
pub fn run(spec: &ProbeSpec) -> Result<Value> {
    let machine = spec.machine.load_with(spec.overrides.as_ref(), None, None)?;
    let cfg = MemoryConfig::resolve(&machine)?;
    spec.noise.validate()?;
    if !(1..=100_000).contains(&spec.repetitions) {
        return Err(Error::config("repetitions", format!("must be from 1 to 100000, got {}", spec.repetitions)));
    }
    if spec.warmup > 1000 {
        return Err(Error::config("warmup", format!("must be at most 1000, got {}", spec.warmup)));
    }
    let nodes = node_memories(&cfg);
    let inside = |a: u64| nodes.iter().any(|n| a >= n.base && a - n.base < (1u64 << n.mapping.capacity_bits()));
    let mut loads = 0u64;
    for (i, m) in spec.measurements.iter().enumerate() {
        if m.is_empty() {
            return Err(Error::config(format!("measurements[{i}]"), "a measurement needs at least one round"));
        }
        for (r, round) in m.iter().enumerate() {
            if round.is_empty() || round.len() > 256 {
                return Err(Error::config(
                    format!("measurements[{i}][{r}]"),
                    format!("a round loads 1 to 256 addresses, got {}", round.len()),
                ));
            }
            if let Some((k, a)) = round.iter().enumerate().find(|(_, &a)| !inside(a)) {
                return Err(Error::config(
                    format!("measurements[{i}][{r}][{k}]"),
                    format!("address {a:#x} lies beyond the machine's memory"),
                ));
            }
            loads += round.len() as u64 * u64::from(spec.repetitions + spec.warmup);
        }
    }
    if loads > MAX_LOADS {
        return Err(Error::config("measurements", format!("{loads} loads in one call; at most {MAX_LOADS}: split the batch")));
    }

    let tck = cfg.timing.tCK_ns;
    let mut mem = MemorySystem::new(&cfg)?;
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut corunner = CoRunner::new(spec.noise.corunner_gbps, tck, &nodes);
    let gap = (spec.noise.gap_ns / tck).round() as Cycle;
    let (mut now, mut done): (Cycle, Vec<Completion>) = (0, Vec::new());
    let mut out = Vec::with_capacity(spec.measurements.len());
    for m in &spec.measurements {
        let mut samples = Vec::with_capacity(m.len() * spec.repetitions as usize);
        for pass in 0..spec.warmup + spec.repetitions {
            for round in m {
                let start = now;
                let end = load_round(&mut mem, round, &mut now, &mut done, &mut corunner, &mut rng);
                if pass >= spec.warmup {
                    samples.push(sample_ns(end - start, tck, &spec.noise, &mut rng));
                }
                now = end + gap;
            }
        }
        out.push(samples);
    }
    Ok(json!({ "ns": out, "machine": describe(&cfg) }))
}

/// Load `round`'s addresses together from `*now`; returns the cycle the last one's data arrived.
fn load_round(
    mem: &mut MemorySystem,
    round: &[u64],
    now: &mut Cycle,
    done: &mut Vec<Completion>,
    corunner: &mut Option<CoRunner>,
    rng: &mut ChaCha8Rng,
) -> Cycle {
    let (mut queued, mut left, mut last) = (0usize, round.len(), *now);
    loop {
        if let Some(c) = corunner.as_mut() {
            c.issue(mem, *now, rng);
        }
        while queued < round.len() && mem.try_enqueue(*now, queued as u64, round[queued], false, Origin::single(0)) {
            queued += 1;
        }
        mem.tick(*now, done, false);
        for c in done.drain(..) {
            if c.id < CORUNNER_IDS {
                left -= 1;
                last = last.max(c.done);
            } else if let Some(r) = corunner.as_mut() {
                r.returned(c.done);
            }
        }
        if left == 0 {
            return last;
        }
        let mut next = mem.next_event();
        if let Some(c) = corunner.as_ref() {
            next = next.min(c.next_cycle());
        }
        *now = next.max(*now + 1);
    }
}

/// A round's time as a timer would read it: memory time, the core's part, noise.
fn sample_ns(cycles: Cycle, tck: f64, noise: &Noise, rng: &mut ChaCha8Rng) -> f64 {
    let mut ns = cycles as f64 * tck + noise.overhead_ns;
    if noise.jitter_ns > 0.0 {
        // Box-Muller: one normal draw.
        let (u1, u2): (f64, f64) = (rng.gen_range(f64::MIN_POSITIVE..1.0), rng.gen());
        ns += noise.jitter_ns * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    }
    if noise.spike_rate > 0.0 && rng.gen::<f64>() < noise.spike_rate {
        ns += noise.spike_ns * rng.gen_range(0.5..1.5);
    }
    ns.max(0.0)
}

/// `run` from JSON to JSON (the Python extension's entry).
pub fn run_json(spec: &str) -> Result<String> {
    let spec: ProbeSpec = crate::error::from_json(spec, "probe spec")?;
    Ok(run(&spec)?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(machine: &str, measurements: Value) -> Vec<f64> {
        let spec = json!({ "machine": machine, "measurements": measurements, "repetitions": 4 }).to_string();
        let out: Value = serde_json::from_str(&run_json(&spec).unwrap()).unwrap();
        out["ns"].as_array().unwrap().iter().map(|s| s.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).sum::<f64>() / 4.0).collect()
    }

    #[test]
    fn a_row_conflict_costs_a_precharge_and_an_activation() {
        // i7-860: b17 is a row bit, b13 a bank bit, b7 a column bit, b6 the channel.
        let base = 1u64 << 24;
        let t =
            times("i7-860", json!([[[base, base | 1 << 17]], [[base, base | 1 << 13]], [[base, base | 1 << 7]], [[base, base | 1 << 6]]]));
        let (conflict, banks, row_hit, channels) = (t[0], t[1], t[2], t[3]);
        let m = MemoryConfig::resolve(&crate::config::MachineConfig::load("i7-860").unwrap()).unwrap();
        let tm = &m.timing;
        // The second load of a conflicting pair waits for its own precharge and activation.
        let extra = (tm.tRP + tm.tRCD) as f64 * tm.tCK_ns;
        assert!(conflict - banks > extra * 0.9, "conflict {conflict} ns, other bank {banks} ns, tRP + tRCD = {extra} ns");
        assert!(channels <= banks && banks <= row_hit + tm.tCK_ns * 2.0, "{channels} {banks} {row_hit}");
    }

    #[test]
    fn noise_is_seeded_and_an_address_beyond_memory_is_refused() {
        let spec = |seed: u64| {
            json!({ "machine": "xor-bank", "measurements": [[[0, 1 << 17]]], "seed": seed,
                    "noise": { "jitter_ns": 5.0, "corunner_gbps": 2.0, "spike_rate": 0.1 } })
            .to_string()
        };
        assert_eq!(run_json(&spec(3)).unwrap(), run_json(&spec(3)).unwrap());
        assert_ne!(run_json(&spec(3)).unwrap(), run_json(&spec(4)).unwrap());
        let e = run_json(&json!({ "machine": "xor-bank", "measurements": [[[0, 1u64 << 31]]] }).to_string()).unwrap_err();
        assert!(e.to_string().contains("measurements[0][0][1]"), "{e}");
        let e = run_json(&json!({ "machine": "xor-bank", "noise": { "jitter_ns": -1.0 } }).to_string()).unwrap_err();
        assert!(e.to_string().contains("noise.jitter_ns"), "{e}");
    }
}
