"""Placement over memory nodes on real Linux (issue 30, "Real Linux"): the thesis's algorithms
(bw-aware-tiering.md §6.3 tests 1-3, 9, 11 as pure functions; 12 on this machine), the fake
kernel's documented semantics, `memtint run --tier-policy` against the fake (its errors, and
every sysfs/procfs setting restored on normal exit, error, SIGINT and SIGTERM), and the real
one-node machine: the policy reaches the child, the real weights are unchanged afterwards.
"""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from memtint.linux.errors import LinuxError
from memtint.linux.numa import (MPOL_BIND, MPOL_INTERLEAVE, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL,
                                MPOL_WEIGHTED_INTERLEAVE, PAGE_BYTES, WEIGHTS_DIR, LinuxNuma, NumaError)
from memtint.linux.numa_fake import FakeNuma
from memtint.linux.tier_run import ChunkPlacer, SystemChanges, plan_tiering
from memtint.linux.tiering import (BwInterleave, BwLocal, BwRandom, Clusters, MigrationGate, kernel_auto_weights,
                                   parse_bandwidths, parse_weights, shares, weights_from_bandwidths)

CLI = [sys.executable, "-m", "memtint.cli"]
REAL_WEIGHTS = "/sys/kernel/mm/mempolicy/weighted_interleave"
# A child that prints its memory policy mode (get_mempolicy) and its pid, then the files named.
REPORTER = ("import ctypes,os,sys,platform;l=ctypes.CDLL(None,use_errno=True);m=ctypes.c_int();"
            "n={'x86_64':239,'aarch64':236}[platform.machine()];l.syscall(n,ctypes.byref(m),None,0,None,0);"
            "print(json.dumps({'mode':m.value,'pid':os.getpid(),'files':{p:open(p).read().strip() "
            "for p in sys.argv[1:]}}))")
REPORTER = "import json;" + REPORTER


def two_clusters(d: int, n: int) -> Clusters:
    return Clusters([[0], [1]], [d, n])


# ---- the thesis's algorithms ---------------------------------------------------------------

@pytest.mark.parametrize("d, n, dram, nvm", [(2, 1, 2000, 1000), (5, 1, 2500, 500), (10, 1, 2728, 272)])
def test_bw_interleave_gives_d_then_n_over_3000_allocations(d, n, dram, nvm):
    policy = BwInterleave(two_clusters(d, n))
    sequence = [policy.cluster(thread=0) for _ in range(3000)]
    assert (sequence.count(0), sequence.count(1)) == (dram, nvm)
    assert sequence[:d + n] == [0] * d + [1] * n
    assert abs(sequence.count(0) / 3000 - d / (d + n)) < 0.003


def test_bw_interleave_keeps_a_counter_per_thread():
    policy = BwInterleave(two_clusters(2, 1))
    assert [policy.cluster(thread=1), policy.cluster(thread=2), policy.cluster(thread=1)] == [0, 0, 0]
    assert policy.cluster(thread=1) == 1 and policy.cluster(thread=2) == 0


def test_bw_random_share_is_within_three_sigma_and_repeats_with_its_seed():
    n, p = 20000, 5 / 6
    first = [BwRandom(two_clusters(5, 1), seed=7).cluster() for _ in range(1)]
    policy = BwRandom(two_clusters(5, 1), seed=7)
    draws = [policy.cluster() for _ in range(n)]
    share = draws.count(0) / n
    assert abs(share - p) <= 3 * math.sqrt(p * (1 - p) / n)
    again = BwRandom(two_clusters(5, 1), seed=7)
    assert [again.cluster() for _ in range(n)] == draws
    assert first[0] == draws[0]
    assert [BwRandom(two_clusters(5, 1), seed=8).cluster() for _ in range(200)] != draws[:200]


def test_bw_local_dram_side_thread_goes_d_then_n_and_nvm_side_thread_n_then_d():
    policy = BwLocal(two_clusters(2, 1))
    dram_side = [policy.cluster(thread=1, current=0) for _ in range(6)]
    nvm_side = [policy.cluster(thread=2, current=1) for _ in range(6)]
    assert dram_side == [0, 0, 1, 0, 0, 1]
    assert nvm_side == [1, 0, 0, 1, 0, 0]
    # both end at D:N, and the node is the thread's own when its cluster is chosen
    assert policy.node(thread=3, local_node=1) == 1


def test_bw_local_and_bw_interleave_differ_by_at_most_max_d_n_pages_per_thread():
    local, interleave = BwLocal(two_clusters(5, 2)), BwInterleave(two_clusters(5, 2))
    for pages in (1, 3, 7, 100, 1001):
        local.count.clear()
        interleave.count.clear()
        l_dram = sum(local.cluster(thread=0, current=1) == 0 for _ in range(pages))
        i_dram = sum(interleave.cluster(thread=0) == 0 for _ in range(pages))
        assert abs(l_dram - i_dram) <= 5


def test_gate_admits_exactly_m_promotions_then_refuses_until_reverse_flow():
    gate = MigrationGate(clusters=2, limit=10)
    admitted = [gate.admit(1, 0) for _ in range(25)]
    assert admitted == [True] * 10 + [False] * 15
    assert gate.admit(0, 0) and gate.admit(1, 1)  # intra-cluster moves are always admitted
    assert gate.admit(0, 1)  # one demotion makes room for one promotion
    assert gate.admit(1, 0) and not gate.admit(1, 0)
    assert all(-10 <= c <= 10 for c in gate.counters.values())


def test_gate_does_not_over_admit_under_concurrent_requests():
    gate = MigrationGate(clusters=2, limit=50)
    results: list[bool] = []
    lock = threading.Lock()

    def promote() -> None:
        mine = [gate.admit(1, 0) for _ in range(100)]
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=promote) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(results) == 50 and gate.counters[(0, 1)] == 50


def test_three_clusters_take_shares_b_over_sum_b_with_three_bounded_pair_counters():
    clusters = Clusters([[0], [1], [2]], weights_from_bandwidths([40, 20, 10]))
    assert clusters.weights == [4, 2, 1]
    policy = BwInterleave(clusters)
    draws = [policy.cluster() for _ in range(7000)]
    assert [draws.count(i) for i in range(3)] == [4000, 2000, 1000]
    assert shares(clusters.weights) == pytest.approx([4 / 7, 2 / 7, 1 / 7])
    gate = MigrationGate(clusters=3, limit=4)
    assert sorted(gate.counters) == [(0, 1), (0, 2), (1, 2)]
    for source, destination in [(2, 0)] * 9 + [(1, 0)] * 9 + [(2, 1)] * 9 + [(0, 2)] * 20:
        gate.admit(source, destination)
        assert all(-4 <= c <= 4 for c in gate.counters.values())
    assert gate.counters == {(0, 1): 4, (0, 2): -4, (1, 2): 4}


@pytest.mark.parametrize("bandwidths, weights", [([4, 2], [2, 1]), ([15, 10], [3, 2]), ([20, 4], [5, 1]),
                                                 ([17, 1.7], [10, 1]), ([10, 10], [1, 1])])
def test_weights_from_bandwidths_are_small_and_reduced_by_gcd(bandwidths, weights):
    assert weights_from_bandwidths(bandwidths) == weights


def test_kernel_auto_weights_truncate_to_32ths_then_divide_by_gcd():
    # 32*20/30 = 21.3 -> 21, 32*10/30 = 10.7 -> 10 (mm/mempolicy.c reduce_interleave_weights)
    assert kernel_auto_weights([20, 10]) == [21, 10]
    assert kernel_auto_weights([16, 16]) == [1, 1]
    assert kernel_auto_weights([100, 1]) == [31, 1]


@pytest.mark.parametrize("text, words", [("2:0", ["weight 0", "node1", "1-255"]), ("2:256", ["weight 256", "node1"]),
                                         ("2:1:1", ["3 weights for 2 nodes"]), ("2:x", ["'x'", "node1"])])
def test_bad_weights_are_refused_naming_the_value(text, words):
    with pytest.raises(LinuxError) as error:
        parse_weights(text, 2, ["node0", "node1"])
    assert all(w in str(error.value) for w in words), str(error.value)


def test_a_bandwidth_of_zero_is_refused_naming_it():
    with pytest.raises(LinuxError, match="bandwidth 0 for node1"):
        parse_bandwidths("0=20,1=0")
    with pytest.raises(LinuxError, match="bandwidth 0 of cluster 1"):
        weights_from_bandwidths([20, 0])
    assert parse_bandwidths("0=20,node1=4.5") == {0: 20.0, 1: 4.5}


# ---- the fake kernel -----------------------------------------------------------------------

@pytest.fixture
def fake(tmp_path) -> FakeNuma:
    return FakeNuma.create(str(tmp_path / "fake"))


def aligned(multiple: int) -> int:
    """An address whose page index is a multiple of `multiple` (the interleave index starts at 0)."""
    return (1 << 32) // (multiple * PAGE_BYTES) * multiple * PAGE_BYTES


def test_fake_weighted_interleave_gives_each_node_its_weight_of_consecutive_pages(fake):
    fake.set_interleave_weight(0, 2)
    fake.set_interleave_weight(1, 1)
    fake.set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, [0, 1])
    start = aligned(3)
    fake.map(0, start, 9 * PAGE_BYTES)
    assert fake.touch(0, start, 9 * PAGE_BYTES) == [0, 0, 1] * 3


def test_fake_interleave_alternates_nodes_in_order_by_page_index(fake):
    fake.set_mempolicy(MPOL_INTERLEAVE, [1, 0])
    start = aligned(2) + PAGE_BYTES
    fake.map(0, start, 4 * PAGE_BYTES)
    assert fake.touch(0, start, 4 * PAGE_BYTES) == [1, 0, 1, 0]


def test_fake_weights_follow_the_sysfs_abi(fake):
    assert fake.interleave_weights() == {0: 21, 1: 10} and fake.auto_weights() is True
    for bad in ("0", "256", ""):
        with pytest.raises(NumaError) as error:
            fake.set_interleave_weight(1, bad)  # type: ignore[arg-type]
        assert error.value.errno == errno.EINVAL
    fake.set_interleave_weight(1, 3)
    assert fake.auto_weights() is False  # a weight write switches to manual mode
    fake.set_auto_weights(True)
    assert fake.interleave_weights() == {0: 21, 1: 10}


def test_an_unreadable_weight_is_an_error_naming_its_file(fake):
    with open(fake.path(f"{WEIGHTS_DIR}/node1"), "w", encoding="utf-8") as f:
        f.write("x\n")
    with pytest.raises(NumaError, match=r"node1: expected an interleave weight 1-255, got 'x'"):
        fake.interleave_weights()


def test_a_reader_never_sees_a_half_written_weight(fake):
    # sysfs shows a whole value; the fake, written by another process, must too.
    done = threading.Event()

    def writer():
        for i in range(400):
            fake.set_interleave_weight(1, 1 + i % 200)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    reads = 0
    while not done.is_set():
        assert 1 <= fake.interleave_weights()[1] <= 200
        reads += 1
    thread.join()
    assert reads > 0


def test_fake_accepts_the_auto_file_under_either_name(tmp_path):
    odd = FakeNuma.create(str(tmp_path / "odd"), auto_name="__auto_type")
    assert odd.auto_file().endswith("__auto_type") and odd.auto_weights() is True
    assert FakeNuma.create(str(tmp_path / "none"), auto_name=None).auto_weights() is None


def test_fake_move_pages_status_codes(fake):
    pid, start = 77, aligned(1)
    fake.map(pid, start, 6 * PAGE_BYTES)
    fake.touch(pid, start, 4 * PAGE_BYTES)
    space = fake.space(pid)
    space.shared.add(start + PAGE_BYTES)
    space.busy.add(start + 2 * PAGE_BYTES)
    pages = [start + i * PAGE_BYTES for i in range(5)] + [start + 100 * PAGE_BYTES]
    assert fake.move_pages(pid, pages, None) == [0, 0, 0, 0, -errno.ENOENT, -errno.EFAULT]
    status = fake.move_pages(pid, pages, [1] * 6, MPOL_MF_MOVE)
    assert status == [1, -errno.EACCES, -errno.EBUSY, 1, -errno.ENOENT, -errno.EFAULT]
    assert fake.move_pages(pid, pages[1:2], [1], MPOL_MF_MOVE_ALL) == [1]  # root may move shared pages
    with pytest.raises(NumaError) as error:
        fake.move_pages(pid, pages[:4], [0, 0, 5, 0])
    assert error.value.errno == errno.ENODEV
    # pages before the bad target were moved, as the kernel processes them in order
    assert fake.move_pages(pid, pages[:1], None) == [0]


def test_fake_refuses_what_the_kernel_refuses(tmp_path, fake):
    for mode, nodes in [(MPOL_BIND, [7]), (9, [0]), (MPOL_INTERLEAVE, [])]:
        with pytest.raises(NumaError) as error:
            fake.set_mempolicy(mode, nodes)
        assert error.value.errno == errno.EINVAL
    fake.set_mempolicy(MPOL_BIND, [0, 7])  # a mask with one usable node is accepted
    old = FakeNuma.create(str(tmp_path / "old"), kernel=(6, 8))
    with pytest.raises(NumaError, match="EINVAL"):
        old.set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, [0, 1])
    user = FakeNuma.create(str(tmp_path / "user"), as_root=False)
    with pytest.raises(NumaError) as error:
        user.set_interleave_weight(0, 2)
    assert error.value.errno == errno.EACCES
    with pytest.raises(NumaError) as error:
        user.move_pages(1, [aligned(1)], [1], MPOL_MF_MOVE_ALL)
    assert error.value.errno == errno.EPERM


def test_fake_mbind_binds_a_chunk_and_leaves_the_rest_to_first_touch(fake):
    start = aligned(512)
    fake.map(0, start, 8 * PAGE_BYTES)
    fake.mbind(start + 2 * PAGE_BYTES, 3 * PAGE_BYTES, MPOL_BIND, [1])
    assert fake.touch(0, start, 8 * PAGE_BYTES) == [0, 0, 1, 1, 1, 0, 0, 0]
    assert len(fake.space(0).vmas) == 3
    with pytest.raises(NumaError, match="EFAULT"):
        fake.mbind(start + 8 * PAGE_BYTES, PAGE_BYTES, MPOL_BIND, [1])


# ---- plans: what a policy needs, errors naming the value ------------------------------------

def error_of(system, policy, **options) -> str:
    with pytest.raises(LinuxError) as error:
        plan_tiering(system, policy, **options)
    return str(error.value)


def test_plan_errors_name_the_bad_value(tmp_path, fake):
    assert "weight 0 for node1" in error_of(fake, "bw-interleave", weights="3:0")
    assert "node 5 does not exist" in error_of(fake, "weighted-interleave", nodes="0,5")
    assert "bandwidth 0 for node1" in error_of(fake, "bw-local", bandwidths="0=20,1=0")
    assert "no bandwidth figures" in error_of(fake, "bw-interleave")
    assert "unknown" in error_of(fake, "tpp")
    old = FakeNuma.create(str(tmp_path / "old"), kernel=(6, 8))
    assert "this kernel is 6.8" in error_of(old, "weighted-interleave")
    user = FakeNuma.create(str(tmp_path / "user"), as_root=False)
    assert "needs root" in error_of(user, "bw-interleave", weights="2:1")
    assert "needs root" in error_of(user, "damon")
    assert "takes no --weights" in error_of(fake, "damon", weights="2:1")
    assert "needs root" in error_of(user, "bw-local", weights="2:1")  # numa_balancing is 1 in the fake
    plan_tiering(user, "weighted-interleave")  # the kernel's own weights need no root


def test_plans_take_bandwidths_from_hmat_and_say_when_nothing_is_to_be_placed(tmp_path):
    hmat = FakeNuma.create(str(tmp_path / "hmat"), {0: {"gbs": 20.0}, 1: {"gbs": 4.0}}, hmat=True)
    plan = plan_tiering(hmat, "bw-interleave")
    assert plan.weights == [5, 1] and "HMAT" in plan.weights_source and plan.write_weights
    one = FakeNuma.create(str(tmp_path / "one"), {0: {"gbs": 20.0, "cpus": [0]}})
    plan = plan_tiering(one, "bw-interleave")
    assert plan.nothing_to_place and not plan.write_weights and "nothing to place" in plan.notes[0]
    assert "weight 0 for node0" in error_of(one, "bw-interleave", weights="0")
    # A node that is not there is named even when one node leaves nothing to place (it was ignored).
    assert "node 5 is not one of the nodes placed on (node0)" in error_of(one, "bw-interleave", bandwidths="5=20")
    assert "node 1 is not one of the nodes placed on" in error_of(one, "bw-local", bandwidths="0=20,1=4")
    # --weights on one node are not written (nor need root), and the plan says the kernel's apply.
    alone = FakeNuma.create(str(tmp_path / "alone"), {0: {"gbs": 20.0, "cpus": [0]}}, as_root=False)
    plan = plan_tiering(alone, "weighted-interleave", weights="3")
    assert not plan.write_weights and plan.weights == [alone.interleave_weights().get(0, 1)]
    assert "--weights 3 is not written" in plan.weights_source
    # DAMON on one node is not started: another's kdamond, a missing root or DAMON dir are no bar.
    alone._put("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1")
    plan = plan_tiering(alone, "damon")
    assert plan.nothing_to_place and "DAMON is not started" in plan.notes[0]
    without = FakeNuma.create(str(tmp_path / "without"), {0: {"gbs": 20.0, "cpus": [0]}}, damon=False)
    assert plan_tiering(without, "damon").nothing_to_place
    # Nor is NUMA balancing turned off (it is 1 in the fake; turning it off needs root).
    plan = plan_tiering(alone, "bw-local")
    assert plan.daemon and not plan.balancing_off


# ---- the daemon --------------------------------------------------------------------------

def placer_on_fake(fake, policy, chunks, weights="2:1", limit=10, task_node=0):
    pid, chunk = 4321, 2 << 20
    start = aligned(chunk // PAGE_BYTES)
    fake.map(pid, start, chunks * chunk)
    fake.touch(pid, start, chunks * chunk)
    plan = plan_tiering(fake, policy, weights=weights, limit=limit)
    where = {"node": task_node}
    placer = ChunkPlacer(fake, pid, plan, regions=lambda _: [(start, start + chunks * chunk)],
                         cpu_node=lambda _: where["node"])
    return placer, where


def test_daemon_places_chunks_d_to_n_for_bw_local(fake):
    placer, _ = placer_on_fake(fake, "bw-local", 30)
    stats = placer.step()
    assert stats.chunks == 30
    assert list(placer.assigned.values())[:3] == [0, 0, 1]
    assert stats.pages_per_node == {0: 20 * 512, 1: 10 * 512} and stats.pages_moved == 10 * 512
    again = placer.step()  # nothing new: nothing moves
    assert again.pages_moved == 10 * 512 and again.chunks == 30


def test_daemon_counts_pages_the_kernel_refuses(fake):
    placer, _ = placer_on_fake(fake, "bw-random", 12, weights="1:1")
    space = fake.space(placer.pid)
    chunk1 = sorted({p - p % (2 << 20) for p in space.pages})
    for base in chunk1:
        space.busy.add(base)
    stats = placer.step()
    moved_chunks = sum(1 for n in placer.assigned.values() if n == 1)
    assert stats.pages_failed == {"EBUSY": moved_chunks}
    assert stats.pages_moved == moved_chunks * 511


def test_bw_migration_gate_lets_exactly_m_pages_move_towards_the_task(fake):
    placer, where = placer_on_fake(fake, "bw-migration", 9, limit=100)
    placer.step()
    assert placer.stats.pages_per_node == {0: 6 * 512, 1: 3 * 512}
    where["node"] = 1  # the program now runs on node 1: every node-0 chunk is proposed to move there
    stats = placer.step()
    assert stats.gate_admitted == 100 and stats.gate_refused == 6 * 512 - 100
    assert stats.pages_per_node == {0: 6 * 512 - 100, 1: 3 * 512 + 100}
    assert placer.gate.counters[(0, 1)] == -100


# ---- restoring what a run changed --------------------------------------------------------

def test_changes_are_undone_in_reverse_with_auto_mode_last(fake):
    changes = SystemChanges(fake)
    changes.weights([0, 1], [2, 1])
    assert fake.interleave_weights() == {0: 2, 1: 1} and fake.auto_weights() is False
    assert changes.restore() == []
    assert fake.interleave_weights() == {0: 21, 1: 10} and fake.auto_weights() is True


def cli(*args, fake_dir=None, timeout=60):
    env = dict(os.environ, COLUMNS="200")
    if fake_dir:
        env["MEMTINT_NUMA_FAKE"] = fake_dir
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def reporter(*files):
    return ["--", sys.executable, "-c", REPORTER, *files]


def test_run_sets_the_policy_in_the_child_and_restores_the_weights_after(fake):
    weights = [fake.path(f"{WEIGHTS_DIR}/node{n}") for n in (0, 1)]
    done = cli("run", "--tier-policy", "bw-interleave", "--weights", "2:1", *reporter(*weights), fake_dir=fake.root)
    assert done.returncode == 0, done.stderr
    child = json.loads(done.stdout)
    assert list(child["files"].values()) == ["2", "1"]  # the program ran under the run's weights
    assert fake.interleave_weights() == {0: 21, 1: 10} and fake.auto_weights() is True
    calls = [c for c in fake.calls() if c["call"] == "set_mempolicy" and c["pid"] == child["pid"]]
    assert calls == [{"call": "set_mempolicy", "pid": child["pid"], "mode": 6, "nodes": [0, 1], "errno": 0}]
    assert "restored" in done.stderr


def test_run_restores_after_the_program_fails_to_start(fake):
    done = cli("run", "--tier-policy", "bw-interleave", "--weights", "2:1", "--", "/no/such/program",
               fake_dir=fake.root)
    assert done.returncode == 2 and "command not found" in done.stderr
    assert any(c["call"] == "write" and c["value"] == "2" for c in fake.calls())  # it did change them
    assert fake.interleave_weights() == {0: 21, 1: 10} and fake.auto_weights() is True


def test_run_turns_numa_balancing_off_for_the_daemon_and_back_on_after(fake):
    done = cli("run", "--tier-policy", "bw-local", "--weights", "2:1",
               *reporter(fake.path("proc/sys/kernel/numa_balancing")), fake_dir=fake.root)
    assert done.returncode == 0, done.stderr
    assert list(json.loads(done.stdout)["files"].values()) == ["0"]
    assert fake.numa_balancing() == "1"
    assert "daemon:" in done.stderr


def test_run_starts_damon_schemes_and_removes_them_after(fake):
    ctx = fake.path("sys/kernel/mm/damon/admin/kdamonds/0")
    files = [f"{ctx}/state", f"{ctx}/contexts/0/operations", f"{ctx}/contexts/0/schemes/0/action",
             f"{ctx}/contexts/0/schemes/0/target_nid", f"{ctx}/contexts/0/schemes/1/action",
             f"{ctx}/contexts/0/schemes/1/target_nid"]
    done = cli("run", "--tier-policy", "damon", *reporter(*files), fake_dir=fake.root)
    assert done.returncode == 0, done.stderr
    assert list(json.loads(done.stdout)["files"].values()) == ["on", "paddr", "migrate_hot", "0", "migrate_cold", "1"]
    assert fake.read("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds") == "0" and not os.path.exists(ctx)


@pytest.mark.parametrize("args, words", [
    (["--weights", "2:0"], ["weight 0 for node1"]),
    (["--nodes", "0,3"], ["node 3 does not exist"]),
    (["--bandwidths", "0=20,1=0"], ["bandwidth 0 for node1"]),
    (["--colors", "0-3"], ["cannot be combined"]),
])
def test_cli_errors_name_the_value_and_exit_2(fake, args, words):
    done = cli("run", "--tier-policy", "bw-interleave", *args, "--", "true", fake_dir=fake.root)
    assert done.returncode == 2 and all(w in done.stderr for w in words), done.stderr
    assert fake.interleave_weights() == {0: 21, 1: 10}


def test_cli_refuses_weighted_interleave_on_an_old_kernel_and_without_root(tmp_path):
    old = FakeNuma.create(str(tmp_path / "old"), kernel=(6, 6), weighted_interleave=False)
    done = cli("run", "--tier-policy", "weighted-interleave", "--", "true", fake_dir=old.root)
    assert done.returncode == 2 and "Linux 6.9 or later" in done.stderr and "6.6" in done.stderr
    user = FakeNuma.create(str(tmp_path / "user"), as_root=False)
    done = cli("run", "--tier-policy", "bw-interleave", "--weights", "2:1", "--", "true", fake_dir=user.root)
    assert done.returncode == 2 and "needs root" in done.stderr


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_memtint_stops_the_program_and_restores_the_weights(fake, signum, status):
    env = dict(os.environ, MEMTINT_NUMA_FAKE=fake.root)
    proc = subprocess.Popen([*CLI, "run", "--tier-policy", "bw-interleave", "--weights", "3:1", "--", "sleep", "60"],
                            env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 20
        while fake.interleave_weights() != {0: 3, 1: 1} or not any(
                c["call"] == "set_mempolicy" and c["pid"] != proc.pid for c in fake.calls()):
            assert time.monotonic() < deadline and proc.poll() is None, "the run never started"
            time.sleep(0.05)
        proc.send_signal(signum)  # to memtint alone: it passes it on, then restores
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code == status, proc.stderr.read()
    assert fake.interleave_weights() == {0: 21, 1: 10} and fake.auto_weights() is True


# ---- the real machine (§6.3 test 12) -------------------------------------------------------

def real_weights_state() -> dict[str, str]:
    return {name: open(os.path.join(REAL_WEIGHTS, name)).read() for name in sorted(os.listdir(REAL_WEIGHTS))}


@pytest.mark.skipif(not os.path.isdir(REAL_WEIGHTS), reason="this kernel has no weighted interleave (6.9+)")
def test_real_mbind_and_move_pages_smoke():
    import ctypes
    import mmap

    system = LinuxNuma()
    node = system.memory_nodes()[0]
    buf = mmap.mmap(-1, 8 * PAGE_BYTES)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    system.mbind(address, 8 * PAGE_BYTES, MPOL_WEIGHTED_INTERLEAVE, [node])
    assert system.get_mempolicy(address) == MPOL_WEIGHTED_INTERLEAVE
    for i in range(8):
        buf[i * PAGE_BYTES] = 1
    pages = [address + i * PAGE_BYTES for i in range(8)]
    assert system.move_pages(0, pages, None) == [node] * 8
    assert system.move_pages(0, pages, [node] * 8) == [node] * 8
    with pytest.raises(NumaError) as error:
        system.move_pages(0, pages[:1], [max(system.memory_nodes()) + 7])
    assert error.value.errno == errno.ENODEV
    with pytest.raises(NumaError, match="EINVAL"):
        system.mbind(address, PAGE_BYTES, MPOL_BIND, [max(system.memory_nodes()) + 7])
    buf.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="the real sysfs weights can only change as root")
@pytest.mark.skipif(not os.path.isdir(REAL_WEIGHTS), reason=f"{REAL_WEIGHTS} is missing (kernel before 6.9)")
def test_real_weighted_interleave_run_reaches_the_child_and_leaves_the_weights_unchanged():
    before = real_weights_state()
    done = cli("run", "--tier-policy", "weighted-interleave", *reporter())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == MPOL_WEIGHTED_INTERLEAVE
    assert real_weights_state() == before
    if len(LinuxNuma().memory_nodes()) == 1:
        assert "nothing to place" in done.stderr


def test_real_numa_probe_measures_each_node_and_refuses_a_missing_one(tmp_path):
    done = cli("numa-probe", "--size", "16M", "--repeats", "2", "--json", str(tmp_path / "bw.json"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "bw.json").read_text())
    nodes = LinuxNuma().memory_nodes()
    assert [r["node"] for r in result["nodes"]] == nodes
    assert all(r["gbs"] > 0.1 and r["pages_on_node"] == 1.0 for r in result["nodes"])
    missing = max(nodes) + 3
    done = cli("numa-probe", "--nodes", str(missing))
    assert done.returncode == 2 and f"node {missing} does not exist" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="inspect reads frame numbers, which needs root")
def test_inspect_reports_pages_per_node():
    from memtint.linux.inspect import inspect_process

    report = inspect_process(os.getpid())
    nodes = {row["ids"][0] for row in report["by_node"]}
    assert nodes <= set(LinuxNuma().memory_nodes()) and nodes
    assert sum(row["heap"] for row in report["by_node"]) > 0
    assert report["numa_policies"]
    assert not any("memory nodes" in n for n in report["notes"])
    # A machine of several nodes says how it decodes pages (it decoded them as node 0's, silently).
    notes = inspect_process(os.getpid(), "opteron-6128")["notes"]
    assert any("opteron-6128 has 4 memory nodes" in n and "opteron-6128-node" in n for n in notes), notes


def test_numa_maps_give_pages_per_node_and_the_policy_set_before_exec():
    child = ("import json,os;from memtint.linux.inspect import pages_per_node;from memtint.linux.maps import read_maps;"
             "n,p=pages_per_node(os.getpid(),read_maps(os.getpid()));print(json.dumps([n,p]))")
    done = cli("run", "--tier-policy", "weighted-interleave", "--", sys.executable, "-c", child)
    if done.returncode == 2 and "MPOL_WEIGHTED_INTERLEAVE" in done.stderr:
        pytest.skip("this kernel has no weighted interleave (6.9+)")
    assert done.returncode == 0, done.stderr
    nodes, policies = json.loads(done.stdout)
    node = str(LinuxNuma().memory_nodes()[0])
    assert nodes[node]["heap"] > 0 and set(nodes) <= {str(n) for n in LinuxNuma().memory_nodes()}
    assert any(p.startswith("weighted interleave:") for p in policies), policies


def test_run_needs_colours_or_a_tier_policy_and_tier_options_need_a_policy():
    done = cli("run", "--", "true")
    assert done.returncode == 2 and "--colors SPEC" in done.stderr and "--tier-policy" in done.stderr
    done = cli("run", "--colors", "0", "--weights", "2:1", "--", "true")
    assert done.returncode == 2 and "--weights only apply with --tier-policy" in done.stderr


@pytest.mark.parametrize("policy, args, weighted", [("bw-interleave", ["--weights", "2:1"], True),
                                                    ("interleave", [], False), ("local", [], False)])
def test_the_summary_line_gives_weights_only_where_the_policy_has_them(fake, policy, args, weighted):
    # damon and local said "(weights 1:1, 1:1)", weights they never use.
    done = cli("run", "--tier-policy", policy, *args, "--", "true", fake_dir=fake.root)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if "program exit 0" in x)
    assert line.startswith(f"memtint: {policy} over node0, node1") and ("(weights " in line) == weighted, line


@pytest.mark.parametrize("relative, text, expected", [
    ("sys/devices/system/node/has_memory", "0-x", "a node list"),
    ("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: lots kB", "MemTotal: 16384 kB"),
    ("sys/devices/system/node/node0/cpulist", "0-1,?", "a CPU list"),
    ("sys/kernel/mm/mempolicy/weighted_interleave/node0", "", "an interleave weight"),
    ("sys/kernel/mm/mempolicy/weighted_interleave/auto", "tru", "true or false"),
    ("proc/sys/kernel/numa_balancing", "1\x00", "a mode 0-3"),
    ("sys/devices/system/node/has_memory", "", "a node list"),
    # What no kernel writes, refused before a range is expanded (this one once filled the memory).
    ("sys/devices/system/node/has_memory", "0,99999-19999999999999991", "a node list"),
    ("sys/devices/system/node/has_memory", "1-0", "a node list"),
    ("sys/devices/system/node/node0/cpulist", "0-4294967295", "a CPU list"),
])
def test_every_kernel_file_the_tools_parse_names_itself_when_unreadable(fake, relative, text, expected):
    with open(fake.path(relative), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    with pytest.raises(NumaError, match=expected) as error:
        fake.memory_nodes(), fake.node_memory_bytes(0), fake.node_cpus(0), fake.interleave_weights()
        fake.auto_weights(), fake.numa_balancing()
    assert relative in str(error.value)
