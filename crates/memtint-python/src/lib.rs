//! The `memtint._engine` Python extension (PyO3): a thin JSON boundary over the engine.
//!
//! Python builds a run specification (docs/stats.md), this module hands it to the engine with
//! the GIL released, and returns the statistics JSON. Engine errors become `MemtintError` with
//! the engine's complete user-facing message; nothing here interprets the simulation.

// pyo3 0.22's `create_exception!` expands to a cfg this rustc does not know; the warning is
// about pyo3's macro, not this crate.
#![allow(unexpected_cfgs)]
// pyo3 0.22's `#[pyfunction]` converts each `PyResult`'s error into itself; same story.
#![allow(clippy::useless_conversion)]
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(memtint, MemtintError, PyException, "An error reported by the memtint engine.");

/// Run a DRAM simulation described by a JSON run specification; return statistics JSON.
///
/// The GIL is released while the engine runs, so simulations in several threads proceed in
/// parallel. Raises `MemtintError` with the engine's message on any configuration, input or
/// simulation error.
#[pyfunction]
fn run_dram(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    call_engine(py, spec_json, memtint_engine::dram_sim::run_json)
}

/// Run the engine on one JSON string with the GIL released; engine errors and panics become
/// `MemtintError`.
fn call_engine(py: Python<'_>, input: &str, f: fn(&str) -> memtint_engine::Result<String>) -> PyResult<String> {
    let input = input.to_owned();
    let result = py.allow_threads(move || std::panic::catch_unwind(|| f(&input)));
    match result {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(MemtintError::new_err(e.to_string())),
        Err(panic) => Err(MemtintError::new_err(format!("internal error in the engine: {}", panic_message(&panic)))),
    }
}

/// Ask every CPU-trace run in progress to end soon with `MemtintError("interrupted")` (Ctrl-C in
/// a Python session: the run holds no GIL, so Python cannot stop it otherwise).
#[pyfunction]
fn request_stop() {
    memtint_engine::interrupt::request_stop();
}

/// Let runs go on again once the stopped ones have returned.
#[pyfunction]
fn clear_stop() {
    memtint_engine::interrupt::clear_stop();
}

/// Run a multi-programmed CPU-trace simulation described by JSON; return statistics JSON.
#[pyfunction]
fn run_sim(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    call_engine(py, spec_json, memtint_engine::multicore::run_sim_json)
}

/// Run periodic real-time tasks through the simulated DRAM (EDF, Colored Refresh or its server)
/// described by JSON; return per-task statistics JSON.
#[pyfunction]
fn run_rt(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    call_engine(py, spec_json, memtint_engine::rt_sim::run_json)
}

/// Timed rounds of loads through a machine's memory system (`memtint probe --simulate`): each
/// measurement's round times in ns and the machine's nodes with their true mappings.
#[pyfunction]
fn probe_rounds(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    call_engine(py, spec_json, memtint_engine::mapping_probe::run_json)
}

/// Weighted speedup, harmonic speedup and maximum slowdown of `[{"ipc_alone", "ipc_shared"}]`.
#[pyfunction]
fn mix_metrics(py: Python<'_>, programs_json: &str) -> PyResult<String> {
    call_engine(py, programs_json, memtint_engine::multicore::metrics_json)
}

/// One pass over a CPU workload (trace path or profile): counts, MPKI as the trace counts it,
/// footprint. `{"workload": .., "instructions": null | N, "seed": S}` in, JSON out.
#[pyfunction]
fn cpu_trace_stats(py: Python<'_>, request_json: &str) -> PyResult<String> {
    call_engine(py, request_json, memtint_engine::workload::trace_stats_json)
}

/// Convert a Ramulator CPU trace to memtint's binary format: `{"input": .., "output": ..}`.
#[pyfunction]
fn convert_cpu_trace(py: Python<'_>, request_json: &str) -> PyResult<String> {
    call_engine(py, request_json, memtint_engine::workload::convert_json)
}

/// A machine's colour space in compact form (masks, labels) with the bank, channel, rank and
/// LLC-colour functions `memtint inspect` histograms by: `{"machine", "mapping", "space"}` in.
#[pyfunction]
fn colour_layout(py: Python<'_>, request_json: &str) -> PyResult<String> {
    call_engine(py, request_json, memtint_engine::linux_layout::colour_layout_json)
}

/// Each process's colours under a placement policy, from the simulator's own policy code:
/// `{"machine", "mapping", "processes", "os": {"policy": ..}}` in.
#[pyfunction]
fn policy_partition(py: Python<'_>, request_json: &str) -> PyResult<String> {
    call_engine(py, request_json, memtint_engine::linux_layout::policy_partition_json)
}

/// The preset catalogue (machines, devices, mappings, layouts, components) as JSON.
#[pyfunction]
fn presets_json() -> String {
    memtint_engine::catalogue::catalogue_json()
}

/// The engine's version with its model identity (`memtint_engine::MODEL_VERSION`).
#[pyfunction]
fn version() -> &'static str {
    memtint_engine::MODEL_VERSION
}

thread_local! {
    /// Where the last engine panic on this thread happened, recorded by the quiet hook.
    static PANIC_LOCATION: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// An engine panic is a bug, but the user should see one line, not Rust's panic banner: record
/// its location for the error message and stay quiet unless RUST_BACKTRACE asks for detail.
fn install_quiet_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let location = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        PANIC_LOCATION.with(|slot| *slot.borrow_mut() = location);
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            previous(info);
        }
    }));
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let message = if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic without a message".to_string()
    };
    match PANIC_LOCATION.with(|slot| slot.borrow_mut().take()) {
        Some(location) => format!("{message} (at {location}; please report this bug)"),
        None => format!("{message} (please report this bug)"),
    }
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_quiet_panic_hook();
    m.add("MemtintError", m.py().get_type_bound::<MemtintError>())?;
    m.add_function(wrap_pyfunction!(run_dram, m)?)?;
    m.add_function(wrap_pyfunction!(presets_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_sim, m)?)?;
    m.add_function(wrap_pyfunction!(request_stop, m)?)?;
    m.add_function(wrap_pyfunction!(clear_stop, m)?)?;
    m.add_function(wrap_pyfunction!(probe_rounds, m)?)?;
    m.add_function(wrap_pyfunction!(run_rt, m)?)?;
    m.add_function(wrap_pyfunction!(mix_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(convert_cpu_trace, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(colour_layout, m)?)?;
    m.add_function(wrap_pyfunction!(policy_partition, m)?)?;
    Ok(())
}
