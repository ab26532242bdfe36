//! Partitioning that adapts (os/dynamic/): under memory pressure static BPM's even split makes
//! a program whose footprint outgrows its colours swap (os/swap.rs); dynamic BPM lends it whole
//! colours from programs that do not need theirs, re-colouring the lenders' pages at a cost the
//! statistics show. Bad settings are refused by key.

use crate::common::*;
use serde_json::{json, Value};

/// A light program with a 2 MiB footprint.
const LIGHT: &str = "light:footprint_bytes=2097152";

/// A 24 MiB random footprint beside three 2 MiB programs on the i7-860 (32 bank colours) cut to
/// `memory_mb`, under BPM with swapping.
fn run(memory_mb: u32, others: &str, os: Value) -> Value {
    let mut base = json!({"memory_mb": memory_mb, "overflow": "swap", "policy": "bpm"});
    for (k, v) in os.as_object().unwrap() {
        base[k] = v.clone();
    }
    sim_run(json!({
        "machine": "i7-860",
        "programs": ["random:footprint_bytes=25165824,reads_pki=20", others, others, others],
        "instructions": 300_000,
        "os": base,
    }))
}

/// With 64 MiB each colour holds 2 MiB and BPM's even split gives each program 16 MiB. Static
/// BPM maps the big footprint's first 16 MiB and swaps the rest; dynamic BPM, whose epochs end
/// whenever a fault finds the colours full while footprints are mapped, lends it colours first.
#[test]
fn static_bpm_swaps_under_pressure_and_dynamic_bpm_lends_colours_instead() {
    let fixed = run(64, LIGHT, json!({}));
    let dynamic = run(64, LIGHT, json!({"dynamic": "dynamic-bpm"}));
    let swap = |v: &Value, key: &str| u(&v["processes"][0]["swap"][key]);
    // Populating 6144 pages into 4096 frames put 2048 in swap; the random reads find them, and
    // each brings one back by sending another out.
    assert_eq!(swap(&fixed, "swapped"), 2048);
    assert!(swap(&fixed, "swap_ins") > 100, "static BPM swaps: {}", swap(&fixed, "swap_ins"));
    assert_eq!(swap(&fixed, "swap_outs"), swap(&fixed, "swap_ins"));
    for key in ["swapped", "swap_ins", "swap_outs"] {
        assert_eq!(swap(&dynamic, key), 0, "{key}");
    }
    let d = &dynamic["dynamic"];
    assert_eq!(u(&d["colours_lent"]), 4, "2048 pages short: four 512-frame colours. {d}");
    assert_eq!(u(&d["sets_shared"]), 0, "ΣRNP fits: lending suffices");
    // Lent from the largest NICE while the lenders had nothing mapped: each lent the colour
    // holding none of its pages.
    let first = &d["adjustments"][0];
    assert_eq!((first["rnp"][0].clone(), first["bnp"][0].clone()), (json!(4097), json!(4096)), "{first}");
    assert_eq!(first["at_ns"], json!(0.0));
    let colours = |p: usize| dynamic["colours"]["processes"][p]["colours"].as_array().unwrap().len();
    assert_eq!((colours(0), (1..4).map(colours).sum::<usize>()), (12, 20));
    let ipc = |v: &Value| v["processes"][0]["ipc"].as_f64().unwrap();
    assert!(ipc(&dynamic) > 10.0 * ipc(&fixed), "the big program runs faster: {} against {}", ipc(&dynamic), ipc(&fixed));
}

/// Footprints that grow during the run (nothing populated): 32 MiB gives each program 8 MiB;
/// the big program outgrows it and swaps until an epoch lends it colours, whose pages of the
/// lenders (three 2 MiB streams) are copied into their remaining colours at a cost charged to
/// the lenders' threads.
#[test]
fn a_growing_footprint_is_lent_colours_at_an_epoch_and_the_lenders_pay_for_the_copies() {
    // The lenders run longest, so every copy happens before their statistics stop.
    let run = |dynamic: &str| {
        let lender = json!({"threads": ["stream:footprint_bytes=2097152"], "instructions": 3_000_000});
        sim_run(json!({
            "machine": "i7-860",
            "processes": [{"threads": ["random:footprint_bytes=25165824,reads_pki=20"]}, lender, lender, lender],
            "instructions": 300_000,
            "os": {"memory_mb": 32, "overflow": "swap", "policy": "bpm", "populate": false, "dynamic": dynamic,
                   "dynamic-bpm": {"epoch_ns": 20000}, "numa_scan": {"shootdown_ns": 1.0}},
        }))
    };
    let (fixed, dynamic) = (run("none"), run("dynamic-bpm"));
    let d = &dynamic["dynamic"];
    let first = &d["adjustments"][0];
    assert!(first["at_ns"].as_f64().unwrap() > 0.0, "{first}");
    assert_eq!(first["bnp"][0], json!(2048));
    assert!(u(&first["rnp"][0]) > 2048, "{first}");
    let swap_outs = |v: &Value| u(&v["processes"][0]["swap"]["swap_outs"]);
    assert!(swap_outs(&dynamic) * 2 < swap_outs(&fixed), "swap-outs {} dynamic, {} static", swap_outs(&dynamic), swap_outs(&fixed));
    let recoloured = u(&d["pages_recoloured"]);
    assert!(recoloured > 0, "{d}");
    assert_eq!(u(&d["copy_bytes"]), 2 * 4096 * recoloured);
    // Each re-coloured page stalls its process's thread one migration (3 µs), and each batch a
    // shootdown (1 ns here, so the two parts of a thread's stall separate); the big program,
    // which lent nothing, none. A lender's count stops at its target: it covers at least the
    // adjustments before the first lender finished.
    let ghz = dynamic["config"]["cpu"]["frequency_ghz"].as_f64().unwrap();
    let (per_page, per_batch) = ((3000.0 * ghz).round() as u64, (1.0 * ghz).round() as u64);
    let recolour = |p: usize| u(&dynamic["processes"][p]["page_migration"]["recolour_cycles"]);
    assert_eq!(recolour(0), 0);
    let (mut pages, repartitions) = (0, u(&d["repartitions"]));
    for p in 1..4 {
        let (a, b) = (recolour(p) / per_page, recolour(p) % per_page / per_batch);
        assert_eq!(recolour(p), a * per_page + b * per_batch);
        assert!(b <= repartitions && (a == 0) == (b == 0), "lender {p}: {a} pages, {b} batches");
        pages += a;
    }
    let first_done = (1..4).map(|p| u(&dynamic["cores"][p]["finished_at"])).min().unwrap() as f64 / ghz;
    let before: u64 = d["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["at_ns"].as_f64().unwrap() < first_done)
        .map(|a| u(&a["pages_recoloured"]))
        .sum();
    assert!(before > 0 && before <= pages && pages <= recoloured, "{before} <= {pages} <= {recoloured}");
}

#[test]
fn without_pressure_dynamic_bpm_changes_nothing() {
    let run = |os: Value| sim_run(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 100_000, "os": os}));
    let fixed = run(json!({"policy": "bpm"}));
    let dynamic = run(json!({"policy": "bpm", "dynamic": "dynamic-bpm", "dynamic-bpm": {"epoch_ns": 5000}}));
    assert!(u(&dynamic["dynamic"]["epochs"]) >= 2, "{}", dynamic["dynamic"]);
    assert_eq!(u(&dynamic["dynamic"]["repartitions"]), 0);
    assert_eq!(fixed["cores"][0]["ipc"], dynamic["cores"][0]["ipc"], "an epoch that changes nothing costs nothing");
}

#[test]
fn bad_dynamic_settings_are_refused_by_key() {
    let err = |os: Value| sim_err(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 10_000, "os": os}));
    let e = err(json!({"dynamic": "dynamic-bpm"}));
    assert!(e.contains("os.dynamic") && e.contains("bpm") && e.contains("buddy"), "{e}");
    let e = err(json!({"dynamic": "nosuch"}));
    assert!(e.contains("os.dynamic") && e.contains("nosuch") && e.contains("dynamic-bpm"), "{e}");
    let e = err(json!({"policy": "bpm", "dynamic": "dynamic-bpm", "dynamic-bpm": {"epoch_ns": 10}}));
    assert!(e.contains("os.dynamic-bpm.epoch_ns") && e.contains("10"), "{e}");
    let e = err(json!({"overflow": "spill"}));
    assert!(e.contains("os.overflow") && e.contains("spill"), "{e}");
    let e = err(json!({"overflow": "swap", "strict": true}));
    assert!(e.contains("os.overflow") && e.contains("strict"), "{e}");
    let e = err(json!({"memory_mb": 100000}));
    assert!(e.contains("os.memory_mb") && e.contains("100000"), "{e}");
    let e = err(json!({"swap": {"fault_ns": -1}}));
    assert!(e.contains("os.swap.fault_ns"), "{e}");
    // An epoch longer than the run: a warning naming the key.
    let v = sim_run(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 10_000,
                           "os": {"policy": "bpm", "dynamic": "dynamic-bpm", "dynamic-bpm": {"epoch_ns": 1e9}}}));
    let w = v["warnings"].to_string();
    assert!(w.contains("os.dynamic-bpm.epoch_ns") && w.contains("longer than the run"), "{w}");
    assert!(w.contains("never adjusted the colours"), "{w}");
    // Under pressure, faults that find the colours full end epochs of their own: the warning
    // says where the repartitions came from instead of "never adjusted" beside them.
    let v = run(64, LIGHT, json!({"dynamic": "dynamic-bpm", "dynamic-bpm": {"epoch_ns": 1e9}}));
    let (w, n) = (v["warnings"].to_string(), u(&v["dynamic"]["repartitions"]));
    assert!(n > 0, "{}", v["dynamic"]);
    assert!(w.contains(&format!("the {n} repartition(s) came from faults")) && !w.contains("never adjusted"), "{w}");
}

#[test]
fn without_swap_a_full_memory_is_an_error_and_with_it_the_baseline_swaps() {
    let os = |overflow: &str| json!({"memory_mb": 16, "overflow": overflow});
    let programs = json!(["random:footprint_bytes=25165824,reads_pki=20", "light"]);
    let e = sim_err(json!({"machine": "i7-860", "programs": programs, "instructions": 10_000, "os": os("borrow")}));
    assert!(e.contains("out of physical memory"), "{e}");
    let v = sim_run(json!({"machine": "i7-860", "programs": programs, "instructions": 50_000, "os": os("swap")}));
    assert!(u(&v["swap"]["swap_ins"]) > 0, "{}", v["swap"]);
    assert!(u(&v["processes"][0]["page_migration"]["system_cycles"]) > 0);
}

/// A first process that fills memory leaves the second, of two threads, a page or two of its
/// own: each thread's major fault used to swap out the page the other had just brought back and
/// was waiting to use, so neither retired an instruction again (the watchdog ended the run). A
/// page a thread's fault just mapped is no victim now, so the other's fault takes the first
/// process's oldest page and both threads finish.
#[test]
fn two_threads_with_one_page_each_do_not_swap_each_others_pages_for_ever() {
    let v = sim_run(json!({
        "machine": "i7-860",
        "processes": [{"threads": ["hotset"]}, {"threads": ["random", "stream"]}],
        "instructions": 3000,
        "warmup": 0,
        "os": {"policy": "buddy", "memory_mb": 64, "overflow": "swap"},
    }));
    assert!(u(&v["swap"]["swap_ins"]) > 0, "{}", v["swap"]);
    for c in v["cores"].as_array().unwrap() {
        assert!(u(&c["instructions"]) >= 3000, "{c}");
    }
}

/// Dynamic BPM+ on the i7-860 with per-page channels (BPM+'s static split puts the first two
/// programs in channel 0, the last two in channel 1). Four equal streams are balanced: nothing
/// moves. One stream beside three light programs needs more than they do together by more
/// than the threshold, which no assignment balances: every program gets its banks in both
/// channels. (Which program moves when one would balance is `assign_channels`' unit test.)
#[test]
fn dynamic_bpm_plus_keeps_balanced_channels_and_spreads_a_hog() {
    let light = "light:footprint_bytes=4194304";
    let stream = "stream:footprint_bytes=12582912";
    let run = |programs: Value| {
        sim_run(json!({
            "machine": "i7-860-bpm-plus",
            "programs": programs,
            "instructions": 200_000,
            "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 20000}},
        }))
    };
    let channels = |v: &Value, p: usize| v["colours"]["processes"][p]["channels"].clone();
    let balanced = run(json!([stream, stream, stream, stream]));
    assert!(u(&balanced["dynamic"]["epochs"]) >= 3, "{}", balanced["dynamic"]);
    assert_eq!(u(&balanced["dynamic"]["repartitions"]), 0, "{}", balanced["dynamic"]);
    assert_eq!((channels(&balanced, 0), channels(&balanced, 3)), (json!([0]), json!([1])));
    let hog = run(json!([stream, light, light, light]));
    assert!((0..4).all(|p| channels(&hog, p) == json!([0, 1])), "{}", hog["dynamic"]);
    let first = &hog["dynamic"]["adjustments"][0];
    assert_eq!(first["colours"][0], json!("0-7, 32-39"), "bank positions 0-7 in both channels: {first}");
    let e = sim_err(json!({"machine": "i7-860-bpm-plus", "programs": [light, light], "instructions": 1000,
                           "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"uf_threshold": -1}}}));
    assert!(e.contains("os.dynamic-bpm-plus.uf_threshold"), "{e}");
}

/// The channel step reads each channel's traffic (BPM §2.9's BUC): two streams in channel 0,
/// whose reads are partly their prefetcher's, beside two random readers in channel 1, none
/// prefetched (a threshold nothing crosses keeps them there). The loads it read stand in the
/// ratio of the channels' DRAM requests, UF near 0.38; by demand misses, which its loads used
/// to count, UF would be below 0.2 and the channels left alone.
#[test]
fn dynamic_bpm_plus_reads_the_channels_traffic_prefetches_included() {
    let stream = "stream:footprint_bytes=12582912";
    let random = "random:footprint_bytes=12582912,reads_pki=40";
    let v = sim_run(json!({
        "machine": "i7-860-bpm-plus",
        "programs": [stream, stream, random, random],
        "instructions": 200_000,
        "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 20000, "uf_threshold": 100}},
    }));
    let b = &v["dynamic"]["channel_balance"];
    assert!(u(&b["kept"]) >= 3 && u(&b["changed"]) == 0, "{b}");
    let load = |c: usize| b["loads_gbps"][c].as_f64().unwrap();
    let requests = |c: usize| (u(&v["dram"]["channels"][c]["reads"]) + u(&v["dram"]["channels"][c]["writes"])) as f64;
    let (read, measured) = (load(0) / load(1), requests(0) / requests(1));
    assert!((read / measured - 1.0).abs() < 0.02, "loads {b} against requests {} and {}", requests(0), requests(1));
    assert!(b["uf"].as_f64().unwrap() > 0.3, "{b}");
    let misses = |p: usize| u(&v["processes"][p]["llc_misses"]) as f64;
    assert!((misses(0) + misses(1)) / (misses(2) + misses(3)) < 1.2, "demand misses alone look balanced");
}

/// Three equal streams on two channels: the best split, two against one, leaves UF near 1,
/// above the threshold, and BPM §2.11 and §6.5 then use BPM without channel partitioning. No
/// single move narrows the gap, so the static split used to stay; every program now gets its
/// banks in both channels.
#[test]
fn dynamic_bpm_plus_spreads_loads_no_split_balances() {
    let stream = "stream:footprint_bytes=12582912";
    let v = sim_run(json!({
        "machine": "i7-860-bpm-plus",
        "programs": [stream, stream, stream],
        "instructions": 200_000,
        "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 20000}},
    }));
    assert!(u(&v["dynamic"]["repartitions"]) >= 1, "{}", v["dynamic"]);
    assert!((0..3).all(|p| v["colours"]["processes"][p]["channels"] == json!([0, 1])), "{}", v["dynamic"]);
}

/// The copy daemon (`[os.recolour] pages_per_ms`): the hog's re-colouring of every program is
/// queued at the epoch and copied at the daemon's rate, each copy charged as an eager one; the
/// pages not reached by the end stay, counted, in colours their process no longer owns.
#[test]
fn a_copy_daemon_paces_re_colouring_and_charges_each_copy() {
    let light = "light:footprint_bytes=4194304";
    let stream = "stream:footprint_bytes=12582912";
    let run = |pages_per_ms: f64| {
        sim_run(json!({
            "machine": "i7-860-bpm-plus",
            "programs": [stream, light, light, light],
            "instructions": 400_000,
            "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 20000},
                   "recolour": {"pages_per_ms": pages_per_ms, "period_ns": 10000}, "numa_scan": {"shootdown_ns": 1.0}},
        }))
    };
    let (eager, paced) = (run(0.0), run(200.0));
    let (e, d) = (&eager["dynamic"], &paced["dynamic"]);
    assert_eq!(u(&e["recolour_pending"]), 0);
    assert_eq!(e["adjustments"][0]["colours"], d["adjustments"][0]["colours"], "the same decision");
    let queued = u(&d["adjustments"][0]["pages_recoloured"]);
    assert_eq!(queued, u(&e["adjustments"][0]["pages_recoloured"]), "the same pages displaced");
    let (copied, pending) = (u(&d["pages_recoloured"]), u(&d["recolour_pending"]));
    assert_eq!(u(&d["repartitions"]), 1, "{d}");
    assert_eq!(copied + pending + u(&d["recolour_blocked"]), queued, "{d}");
    assert!(copied > 0 && pending > 0, "the run ends with the daemon under way: {copied} copied, {pending} waiting");
    // At most the rate since the adjustment, per process (0.2 pages per µs each, whole pages).
    let ghz = paced["config"]["cpu"]["frequency_ghz"].as_f64().unwrap();
    let end_ns = (0..4).map(|p| u(&paced["cores"][p]["finished_at"])).max().unwrap() as f64 / ghz;
    let since = end_ns - d["adjustments"][0]["at_ns"].as_f64().unwrap();
    assert!(copied as f64 <= 4.0 * (200.0 / 1e6 * since + 1.0), "{copied} pages in {since} ns");
    // Each copy stalls its process one migration (3 µs), each batch a shootdown (1 ns).
    let (per_page, per_batch) = ((3000.0 * ghz).round() as u64, (1.0 * ghz).round() as u64);
    let recolour = |v: &Value, p: usize| u(&v["processes"][p]["page_migration"]["recolour_cycles"]);
    let pages: u64 = (0..4).map(|p| recolour(&paced, p) / per_page).sum();
    assert!(pages <= copied, "{pages} charged, {copied} copied");
    let batches = recolour(&paced, 0) % per_page / per_batch;
    assert!(batches > 1, "several batches, not one: {batches}");
    // Spread out, the hog's stall is a fraction of the eager one's.
    assert!(recolour(&paced, 0) * 2 < recolour(&eager, 0), "{} paced, {} eager", recolour(&paced, 0), recolour(&eager, 0));
    let e = sim_err(json!({"machine": "i7-860", "programs": [light], "instructions": 1000,
                           "os": {"recolour": {"pages_per_ms": -3}}}));
    assert!(e.contains("os.recolour.pages_per_ms"), "{e}");
    let v = sim_run(json!({"machine": "i7-860", "programs": [light], "instructions": 1000, "os": {"recolour": {"pages_per_ms": 5}}}));
    assert!(v["warnings"].to_string().contains("os.recolour"), "{}", v["warnings"]);
}

/// Lazy re-colouring (`[os.recolour] mode = "lazy"`): the hog's re-colouring marks every
/// displaced page; a page is copied when a load touches it, the fault and copy charged to the
/// touching thread; pages not touched again stay, counted, in their old colours.
#[test]
fn lazy_re_colouring_copies_a_page_when_it_is_touched() {
    let light = "light:footprint_bytes=4194304";
    let stream = "stream:footprint_bytes=12582912";
    let v = sim_run(json!({
        "machine": "i7-860-bpm-plus",
        "programs": [stream, light, light, light],
        "instructions": 400_000,
        "at_end": "wait",
        "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 20000},
               "recolour": {"mode": "lazy"}},
    }));
    let d = &v["dynamic"];
    assert_eq!(u(&d["repartitions"]), 1, "{d}");
    let marked = u(&d["adjustments"][0]["pages_recoloured"]);
    let (copied, pending, blocked) = (u(&d["pages_recoloured"]), u(&d["recolour_pending"]), u(&d["recolour_blocked"]));
    assert_eq!(copied + pending + blocked, marked, "{d}");
    assert!(copied > 0 && pending > 0, "touched pages moved, others wait: {copied} copied, {pending} waiting");
    // Every touch of a marked page is a fault (1 µs) on the touching thread, a copy (3 µs) too
    // when it moved; one thread per process, so no shootdowns. Each halts at its target, so
    // its statistics hold all its faults.
    let ghz = v["config"]["cpu"]["frequency_ghz"].as_f64().unwrap();
    let (fault, migrate) = ((1000.0 * ghz).round() as u64, (3000.0 * ghz).round() as u64);
    let stalled: u64 = (0..4).map(|p| u(&v["processes"][p]["page_migration"]["recolour_cycles"])).sum();
    assert_eq!(stalled, copied * (fault + migrate) + blocked * fault);
    assert_eq!(u(&d["copy_bytes"]), 2 * 4096 * copied);
    let e = sim_err(json!({"machine": "i7-860", "programs": [light], "instructions": 1000,
                           "os": {"policy": "bpm", "dynamic": "dynamic-bpm", "recolour": {"mode": "soon"}}}));
    assert!(e.contains("os.recolour.mode") && e.contains("soon"), "{e}");
}

/// Channel-only partitioning (Fig. 12's first scheme): static, the first half of the processes
/// in channel 0, sharing its banks; dynamic, the same balance decisions as dynamic BPM+ with a
/// channel's banks shared: balanced streams stay, a hog spreads everyone over both channels.
#[test]
fn channel_only_shares_a_channel_s_banks_and_its_dynamic_form_spreads_a_hog() {
    let light = "light:footprint_bytes=4194304";
    let stream = "stream:footprint_bytes=12582912";
    let run = |programs: Value, dynamic: &str| {
        sim_run(json!({
            "machine": "i7-860-bpm-plus",
            "programs": programs,
            "instructions": 200_000,
            "os": {"policy": "channel-only", "dynamic": dynamic, "dynamic-channel-only": {"epoch_ns": 20000}},
        }))
    };
    let channels = |v: &Value, p: usize| v["colours"]["processes"][p]["channels"].clone();
    let colours = |v: &Value, p: usize| v["colours"]["processes"][p]["colours"].clone();
    let fixed = run(json!([stream, light, light, stream]), "none");
    assert_eq!((0..4).map(|p| channels(&fixed, p)).collect::<Vec<_>>(), vec![json!([0]), json!([0]), json!([1]), json!([1])]);
    assert_eq!(colours(&fixed, 0), colours(&fixed, 1), "a channel's processes share its colours");
    let banks = |p: usize| fixed["colours"]["processes"][p]["banks"].as_array().unwrap().clone();
    assert_eq!(banks(0).len(), 32, "all 32 banks of its channel (half the machine's 64)");
    assert!(banks(0).iter().all(|b| !banks(2).contains(b)), "the channels' banks are disjoint");
    let balanced = run(json!([stream, stream, stream, stream]), "dynamic-channel-only");
    assert!(u(&balanced["dynamic"]["epochs"]) >= 3, "{}", balanced["dynamic"]);
    assert_eq!(u(&balanced["dynamic"]["repartitions"]), 0, "{}", balanced["dynamic"]);
    let hog = run(json!([stream, light, light, light]), "dynamic-channel-only");
    assert!((0..4).all(|p| channels(&hog, p) == json!([0, 1])), "{}", hog["dynamic"]);
    assert_eq!(hog["dynamic"]["adjustments"][0]["colours"][0], json!("0-1"), "{}", hog["dynamic"]);
    let e = sim_err(json!({"machine": "i7-860-bpm-plus", "programs": [light, light], "instructions": 1000,
                           "os": {"policy": "channel-only", "dynamic": "dynamic-channel-only",
                                  "dynamic-channel-only": {"min_channel_share": 2}}}));
    assert!(e.contains("os.dynamic-channel-only.min_channel_share"), "{e}");
    let e = sim_err(json!({"machine": "i7-860", "programs": [light, light], "instructions": 1000, "os": {"policy": "channel-only"}}));
    assert!(e.contains("i7-860-bpm-plus"), "{e}");
    let e = sim_err(json!({"machine": "i7-860-bpm-plus", "programs": [light, light], "instructions": 1000,
                           "os": {"policy": "bpm", "dynamic": "dynamic-channel-only"}}));
    assert!(e.contains("channel-only"), "{e}");
}

/// Eager re-colouring moves whole footprints at an epoch. The copies go through the memory
/// system as the kernel makes them, on each copying thread's core with `os.numa_scan.copy_lines`
/// lines in flight: they wait their turn instead of entering the controllers at once, and the
/// other programs' loads go on beside them.
#[test]
fn eager_copies_of_whole_footprints_leave_the_other_programs_running() {
    let stream = "stream:footprint_bytes=67108864";
    let run = |os: Value| {
        sim_run(json!({
            "machine": "i7-860-bpm-plus",
            "programs": [stream, "light", "light", "light"],
            "instructions": 2_000_000,
            "overrides": {"cpu": {"watchdog_cycles": 2_000_000}},
            "os": os,
        }))
    };
    let fixed = run(json!({"policy": "bpm-plus"}));
    let v = run(json!({"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 20000}}));
    // One adjustment spreads every program over both channels: each of the 4 x 16,384 pages
    // not in its program's new colours is copied at the epoch.
    let d = &v["dynamic"];
    assert_eq!((u(&d["repartitions"]), u(&d["pages_recoloured"]), u(&d["recolour_pending"])), (1, 49_312, 0), "{d}");
    assert_eq!(u(&d["copy_bytes"]), 49_312 * 4096 * 2, "a read and a write of every line");
    // Each program is stalled for its own copies (3 µs a page), then runs to its target: with
    // every copy queued at once instead, loads were refused past the 2 M-cycle watchdog.
    let ghz = v["config"]["cpu"]["frequency_ghz"].as_f64().unwrap();
    let stall = u(&v["cores"][0]["page_migration"]["recolour_cycles"]);
    assert!(stall >= (3000.0 * ghz) as u64 * 8_000, "half its 16,384 pages at least: {stall}");
    for p in 0..4 {
        assert_eq!(u(&v["processes"][p]["instructions"]), u(&fixed["processes"][p]["instructions"]));
    }
    let e = sim_err(json!({"machine": "i7-860", "programs": ["light"], "instructions": 1000,
                           "os": {"numa_scan": {"copy_lines": 0}}}));
    assert!(e.contains("os.numa_scan.copy_lines"), "{e}");
}

/// Eager copies at short epochs: the threads spend most of their time in the kernel copying,
/// and the run says so with the remedy instead of reporting IPCs a hundred times lower in silence.
#[test]
fn re_colouring_that_takes_most_of_the_run_is_warned_about() {
    let v = sim_run(json!({
        "machine": "i7-860-bpm-plus",
        "programs": ["stream", "random:footprint_bytes=3145728", "light", "copy"],
        "instructions": 100_000,
        "os": {"policy": "bpm-plus", "dynamic": "dynamic-bpm-plus", "dynamic-bpm-plus": {"epoch_ns": 50_000}},
    }));
    let w = v["warnings"].to_string();
    assert!(u(&v["dynamic"]["pages_recoloured"]) > 0, "{}", v["dynamic"]);
    assert!(w.contains("re-colouring took") && w.contains("os.recolour") && w.contains("os.dynamic-bpm-plus.epoch_ns"), "{w}");
}

/// A component's table while another is in force used to be dropped unseen.
#[test]
fn a_table_of_a_component_not_in_force_is_warned_about() {
    let run = |os: Value| sim_run(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 5_000, "os": os}));
    let v = run(json!({"policy": "bpm", "dynamic": "dynamic-bpm", "dynamic-bpm-plus": {"uf_threshold": 0.5}, "cat": {"ways": [8, 8]}}));
    let w = v["warnings"].to_string();
    assert!(w.contains("[os.dynamic-bpm-plus] is set but os.dynamic = \\\"dynamic-bpm\\\""), "{w}");
    assert!(w.contains("[os.cat] is set but os.resctrl does not name"), "{w}");
    // In force, no such warning.
    let v = run(json!({"policy": "bpm", "resctrl": ["cat"], "cat": {"ways": [8, 8]}}));
    assert!(!v["warnings"].to_string().contains("nothing reads it"), "{}", v["warnings"]);
    // A placement policy's table, and the scanner's keys without a migration.
    let v = run(json!({"policy": "bpm", "mcp": {"mpki_threshold": 5.0}, "numa_scan": {"period_ns": 20_000.0, "migrate_ns": 1000.0}}));
    let w = v["warnings"].to_string();
    assert!(w.contains("[os.mcp] is set but os.policy = \\\"bpm\\\": nothing reads it"), "{w}");
    assert!(w.contains("os.numa_scan.period_ns is set but os.migration = \\\"none\\\": nothing scans"), "{w}");
    assert!(!w.contains("numa_scan.migrate_ns"), "re-colouring reads the costs: {w}");
    // UCP's epoch under a static allocation; not under UCP.
    let v = run(json!({"policy": "bpm", "resctrl": ["cat"], "cat": {"epoch_ns": 1e6}}));
    assert!(v["warnings"].to_string().contains("os.cat.epoch_ns is set but os.cat.allocation"), "{}", v["warnings"]);
    let v = run(json!({"policy": "bpm", "resctrl": ["cat"], "cat": {"epoch_ns": 1e6, "allocation": "ucp"}}));
    assert!(!v["warnings"].to_string().contains("never change"), "{}", v["warnings"]);
    // Swap timings without swapping, sampling timings without sampling; in force, no warning.
    let v = run(json!({"policy": "bpm", "swap": {"fault_ns": 100.0}, "hot_pages": {"walk_ns_per_page": 20.0}}));
    let w = v["warnings"].to_string();
    assert!(w.contains("[os.swap] times swap faults; os.overflow is \\\"borrow\\\""), "{w}");
    assert!(w.contains("[os.hot_pages] times accessed-bit sampling") && w.contains("no effect"), "{w}");
    let v = run(json!({"policy": "bpm", "overflow": "swap", "swap": {"fault_ns": 100.0},
                       "hot_pages": {"enabled": true, "walk_ns_per_page": 20.0}}));
    assert!(!v["warnings"].to_string().contains("[os.swap]") && !v["warnings"].to_string().contains("[os.hot_pages]"), "{}", v["warnings"]);
    let v = run(json!({"policy": "hvr", "dynamic": "hvr-online", "hot_pages": {"walk_ns_per_page": 20.0}}));
    assert!(!v["warnings"].to_string().contains("[os.hot_pages]"), "hvr-online samples: {}", v["warnings"]);
    // A scheme named twice is a mistake, not a second partitioning.
    let e = sim_err(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 5_000,
                           "os": {"policy": "bpm", "resctrl": ["cat", "cat"]}}));
    assert!(e.contains("os.resctrl[1]") && e.contains("named twice"), "{e}");
}

/// A flat [os] key the policy in force does not read was dropped unseen: `os.colours` under
/// buddy left every program on every bank.
#[test]
fn a_flat_os_key_the_policy_does_not_read_is_warned_about() {
    let run = |os: Value| sim_run(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 5_000, "os": os}));
    let v = run(json!({"policy": "buddy", "colours": [[0], [1]], "colour_split": "strided", "frame_order": "ascending",
                       "strict": true, "profiles": [{"mpki": 1.0, "rbh": 0.5}, {"mpki": 1.0, "rbh": 0.5}]}));
    let w = v["warnings"].to_string();
    for key in ["colours", "colour_split", "frame_order", "strict", "profiles"] {
        assert!(w.contains(&format!("os.{key} is set but os.policy = \\\"buddy\\\": nothing reads it")), "{key}: {w}");
    }
    // Each read by bpm: no warning; ccps reads its frame order, not colours.
    let v = run(json!({"policy": "bpm", "colours": [[0], [1]], "frame_order": "ascending", "strict": true}));
    assert!(!v["warnings"].to_string().contains("nothing reads it"), "{}", v["warnings"]);
    let v = sim_run(json!({"machine": "ccps-4c-64b", "programs": ["stream", "light"], "instructions": 5_000,
                           "os": {"policy": "ccps", "colours": [[0], [1]], "frame_order": "ascending"}}));
    let w = v["warnings"].to_string();
    assert!(w.contains("os.colours is set but os.policy = \\\"ccps\\\"") && !w.contains("os.frame_order"), "{w}");
    // Explicit colour sets leave the even split's shape unread.
    let v = run(json!({"policy": "bpm", "colours": [[0], [1]], "colour_split": "strided"}));
    assert!(v["warnings"].to_string().contains("os.colour_split is set but os.colours gives the colour sets"), "{}", v["warnings"]);
    // os.exclude_bits is read by the colour analysis under every policy, and changes bpm's banks in nothing.
    let v = run(json!({"policy": "bpm", "exclude_bits": [16]}));
    assert!(
        v["warnings"]
            .to_string()
            .contains("os.exclude_bits is set but os.policy = \\\"bpm\\\" colours by none of the bits it takes out ([16]"),
        "{}",
        v["warnings"]
    );
    let v = run(json!({"policy": "vertical", "vertical": {"bits": [1, 2, 1]}, "exclude_bits": [16]}));
    assert!(!v["warnings"].to_string().contains("os.exclude_bits"), "{}", v["warnings"]);
}

/// A policy a program registers, whose epoch no key sets: the warning about an epoch longer than
/// the run names the policy's epoch, not a key it does not have.
#[test]
fn a_policy_without_an_epoch_key_is_warned_of_without_naming_one() {
    use memtint_engine::os::dynamic::{DynamicInfo, DynamicPolicy, EpochView, Repartition, DYNAMIC};
    use memtint_engine::params::ParamSchema;
    struct Fixed;
    impl DynamicPolicy for Fixed {
        fn epoch_ns(&self) -> f64 {
            1e9
        }
        fn on_epoch(&mut self, _: &EpochView) -> Option<Repartition> {
            None
        }
    }
    static FIXED: DynamicInfo = DynamicInfo {
        name: "fixed-epoch-test",
        summary: "a test policy with a fixed epoch",
        works_with: &["bpm"],
        params: ParamSchema::NONE,
        build: |_| Ok(Box::new(Fixed)),
    };
    DYNAMIC.register(&FIXED).unwrap();
    let v = sim_run(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 10_000,
                           "os": {"policy": "bpm", "dynamic": "fixed-epoch-test"}}));
    let w = v["warnings"].to_string();
    assert!(w.contains("fixed-epoch-test's epoch (1000000000 ns) is longer than the run"), "{w}");
    assert!(!w.contains("os.fixed-epoch-test"), "{w}");
}
