"""The probe's timer on real Linux (memtint.probe.linux, native/dram_probe): each refused host
names its remedy, and where this machine can run the probe (Linux, x86-64, root) a small real
run returns every round's time, refuses addresses outside its buffer and leaves no process."""

from __future__ import annotations

import math
import os
import platform
import random
import shutil
import signal
import subprocess

import pytest

from memtint.linux.errors import LinuxError, PrivilegeError
from memtint.probe import linux
from memtint.probe.timer import PAGE_BITS, Measurement

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GIB = 1 << 30


def meminfo(available_mb: int = 16 * 1024, total_mb: int = 32 * 1024):
    return lambda: {"MemTotal": total_mb * linux.MIB, "MemAvailable": available_mb * linux.MIB,
                    "Hugepagesize": 2 * linux.MIB}


@pytest.fixture
def capable_host(monkeypatch, tmp_path):
    """A host every check passes on, whatever runs the test: Linux, x86-64, root, a probe file."""
    monkeypatch.setattr(linux.platform, "system", lambda: "Linux")
    monkeypatch.setattr(linux.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(linux.os, "geteuid", lambda: 0)
    probe = tmp_path / "memtint-dram-probe"
    probe.write_text("")
    monkeypatch.setenv("MEMTINT_DRAM_PROBE", str(probe))
    monkeypatch.setattr(linux, "hugepages_2mb", lambda meminfo=None: linux.Hugepages(total=64, free=64, default=True))
    return str(probe)


def test_a_capable_host_passes_every_check(capable_host):
    assert linux.check_host(64, hugepages=False, meminfo=meminfo()) == capable_host
    assert linux.check_host(64, hugepages=True, meminfo=meminfo()) == capable_host


def test_another_architecture_is_refused(capable_host, monkeypatch):
    monkeypatch.setattr(linux.platform, "machine", lambda: "aarch64")
    with pytest.raises(LinuxError, match="x86-64.*aarch64"):
        linux.check_host(64, hugepages=False, meminfo=meminfo())


def test_a_user_other_than_root_is_told_to_run_as_root(capable_host, monkeypatch):
    monkeypatch.setattr(linux.os, "geteuid", lambda: 1000)
    with pytest.raises(PrivilegeError, match="/proc/self/pagemap, which only root reads: run the command as root"):
        linux.LinuxTimer(64, meminfo=meminfo())


def test_a_buffer_beyond_the_available_memory_names_both_sizes_and_the_option(capable_host):
    with pytest.raises(LinuxError) as error:
        linux.LinuxTimer(1024, meminfo=meminfo(available_mb=600))
    message = str(error.value)
    assert "1024 MiB" in message and "600 MiB" in message and "MemAvailable" in message
    assert "--buffer-mb, e.g. 256" in message
    # `run --verify`'s own option, not probe's.
    with pytest.raises(LinuxError, match="choose a smaller --verify-buffer-mb, e.g. 256"):
        linux.LinuxTimer(1024, meminfo=meminfo(available_mb=600), option="--verify-buffer-mb")


def test_hugepages_none_free_name_the_pool_file_and_the_count_needed(capable_host, monkeypatch):
    monkeypatch.setattr(linux, "hugepages_2mb", lambda meminfo=None: linux.Hugepages(total=0, free=0, default=True))
    with pytest.raises(LinuxError) as error:
        linux.LinuxTimer(64, hugepages=True, meminfo=meminfo())
    assert "needs 32 free hugepages, 0 are free" in str(error.value)
    assert "echo 32 > /proc/sys/vm/nr_hugepages" in str(error.value)
    # A smaller buffer needs hugepages too: no remedy with none free.
    assert "smaller" not in str(error.value) and "or less" not in str(error.value)


def test_hugepages_of_another_default_size_name_the_2mb_pool(capable_host, monkeypatch):
    monkeypatch.setattr(linux, "hugepages_2mb", lambda meminfo=None: linux.Hugepages(total=10, free=4, default=False))
    with pytest.raises(LinuxError, match=r"echo 38 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages "
                       r"\(or --buffer-mb 8 or less\)"):
        linux.LinuxTimer(64, hugepages=True, meminfo=meminfo())


def test_a_missing_probe_says_to_build_it(capable_host, monkeypatch, tmp_path):
    monkeypatch.delenv("MEMTINT_DRAM_PROBE")
    monkeypatch.setattr(linux, "PACKAGED", str(tmp_path / "absent" / "memtint-dram-probe"))
    with pytest.raises(LinuxError, match="not built .*absent.*run make build"):
        linux.LinuxTimer(64, meminfo=meminfo())
    monkeypatch.setenv("MEMTINT_DRAM_PROBE", str(tmp_path / "elsewhere"))
    with pytest.raises(LinuxError, match="MEMTINT_DRAM_PROBE=.*elsewhere: no such file"):
        linux.LinuxTimer(64, meminfo=meminfo())


def test_the_address_space_spans_the_top_of_system_ram():
    iomem = ("00001000-0009fbff : System RAM\n00100000-bfffffff : System RAM\n  01000000-01ffffff : Kernel code\n"
             "100000000-63fffffff : System RAM\n")
    assert linux.system_ram_top(iomem) == 0x640000000
    # What users other than root see: every address zero.
    assert linux.system_ram_top("00000000-00000000 : System RAM\n") is None
    bits, source = linux.capacity_bits(meminfo(total_mb=24 * 1024), iomem_path="/nonexistent")
    assert bits == 35 and "MemTotal" in source


def test_the_vm_note_says_the_frames_are_guest_physical(monkeypatch):
    import memtint.linux.hypervisor as hypervisor

    monkeypatch.setattr(hypervisor, "detect_hypervisor", lambda: "the CPU reports the 'hypervisor' flag")
    note = linux.vm_note()
    assert "guest-physical" in note and "other guests" in note and "host's own address mapping" in note
    monkeypatch.setattr(hypervisor, "detect_hypervisor", lambda: None)
    assert linux.vm_note() is None


def test_a_failed_probes_json_carries_the_vm_note(monkeypatch, tmp_path):
    # The terminal said the frames are guest-physical; the JSON of the failure did not.
    import json

    from memtint import cli
    from memtint.probe import command

    class Timer:
        def __init__(self, **_):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

    def fail(search, timer, org, settings, err, args, label, failures):
        failures.append({"label": label, "error": "too weak", "warnings": ["its own"]})

    monkeypatch.setattr(linux, "LinuxTimer", Timer)
    monkeypatch.setattr(linux, "vm_note", lambda: "frames are guest-physical")
    monkeypatch.setattr(command, "_search", fail)
    assert cli.main(["probe", "--no-progress", "--json", str(tmp_path / "p.json")]) == 1
    failed = json.loads((tmp_path / "p.json").read_text())["failed"]
    assert failed[0]["warnings"] == ["frames are guest-physical", "its own"]


# ---- real runs on this machine ----

def _can_probe() -> str | None:
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return "needs Linux on x86-64"
    if os.geteuid() != 0:
        return "needs root (frame numbers from /proc/self/pagemap)"
    if linux.read_meminfo().get("MemAvailable", 0) < 256 * linux.MIB:
        return "needs 256 MiB of available memory"
    return None


@pytest.fixture(scope="module")
def probe_binary():
    reason = _can_probe()
    if reason:
        pytest.skip(reason)
    if shutil.which("make") is None:
        pytest.skip("needs make to build native/dram_probe")
    built = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "native", "dram_probe")], capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"native/dram_probe does not build here: {built.stderr.strip()[:200]}")
    return os.path.join(ROOT, "native", "build", "memtint-dram-probe")


@pytest.fixture
def timer(probe_binary, monkeypatch):
    monkeypatch.setenv("MEMTINT_DRAM_PROBE", probe_binary)
    t = linux.LinuxTimer(64, repetitions=5, warmup=2)
    yield t
    t.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_space_is_the_buffers_frames(timer):
    space = timer.space()
    assert len(space.frames()) == 64 * linux.MIB >> PAGE_BITS
    assert 1 << timer.capacity_bits >= linux.read_meminfo()["MemTotal"]
    assert all(space.contains(f << PAGE_BITS) for f in timer.frames)


def test_every_round_of_every_measurement_has_a_positive_time(timer):
    rng = random.Random(7)
    space = timer.space()
    line = lambda: space.random_line(rng)  # noqa: E731
    batch = [Measurement(((line(), line()),)), Measurement(((line(), line()), (line(), line()))),
             Measurement((tuple(line() for _ in range(8)),)), Measurement(((line(),),))]
    times = timer.time(batch)
    assert [len(t) for t in times] == [5, 10, 5, 5]
    assert all(math.isfinite(t) and t > 0 for ts in times for t in ts)
    assert timer.measurements == 4


def test_a_large_batch_is_split_and_comes_back_whole_in_order(timer):
    rng = random.Random(8)
    space = timer.space()
    timer.samples_per_request = 12
    batch = [Measurement(tuple((space.random_line(rng),) for _ in range(1 + i % 3))) for i in range(9)]
    times = timer.time(batch)
    assert [len(t) for t in times] == [5 * (1 + i % 3) for i in range(9)]
    assert timer.measurements == 9


def test_an_address_outside_the_buffer_is_refused_and_the_timer_goes_on(timer):
    space = timer.space()
    frame = next(f for f in range(1, 1 << (timer.capacity_bits - PAGE_BITS)) if not space.contains(f << PAGE_BITS))
    outside = (frame << PAGE_BITS) + 64
    inside = space.frames()[0] << PAGE_BITS
    with pytest.raises(LinuxError, match=f"address 0x{outside:x} is outside the buffer"):
        timer.time([Measurement(((inside,),)), Measurement(((inside, outside),))])
    assert timer.measurements == 0
    assert len(timer.time([Measurement(((inside,),))])[0]) == 5


def test_the_probe_process_is_gone_after_close(probe_binary, monkeypatch):
    monkeypatch.setenv("MEMTINT_DRAM_PROBE", probe_binary)
    t = linux.LinuxTimer(64)
    pid = t.pid
    assert _alive(pid)
    t.close()
    assert not _alive(pid)
    t.close()
    with pytest.raises(LinuxError, match="closed"):
        t.time([Measurement(((t.frames[0] << PAGE_BITS,),))])
    with pytest.raises(RuntimeError):
        with linux.LinuxTimer(64) as t2:
            pid = t2.pid
            raise RuntimeError("leaving the block early")
    assert not _alive(pid)


def test_a_probe_killed_under_the_timer_is_reported_not_waited_for(timer):
    os.kill(timer.pid, signal.SIGKILL)
    with pytest.raises(LinuxError, match="exited \\(signal 9\\)"):
        timer.time([Measurement(((timer.frames[0] << PAGE_BITS,),))])


@pytest.fixture
def unprivileged_probe(probe_binary, monkeypatch, tmp_path):
    """The real probe started as user nobody with a 4 MiB lock limit: the Python side runs as
    root, the program meets what an unprivileged user would."""
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv (util-linux) to start the probe as another user")
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if subprocess.run(drop + ["test", "-x", probe_binary]).returncode != 0:
        pytest.skip(f"user nobody cannot run {probe_binary}")
    wrapper = tmp_path / "as-nobody"
    wrapper.write_text(f"#!/bin/sh\nulimit -l 4096 || exit 9\nexec {' '.join(drop)} {probe_binary} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("MEMTINT_DRAM_PROBE", str(wrapper))


def test_a_lock_limit_too_low_names_rlimit_memlock_and_ulimit(unprivileged_probe):
    with pytest.raises(LinuxError, match=r"cannot lock the 64 MiB buffer.*RLIMIT_MEMLOCK is 4096 KiB.*ulimit -l"):
        linux.LinuxTimer(64)


def test_frame_numbers_read_as_zero_say_to_run_as_root(unprivileged_probe):
    with pytest.raises(LinuxError, match=r"status 3.*frame number 0 for every page.*run memtint probe as root"):
        linux.LinuxTimer(1)
