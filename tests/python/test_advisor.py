"""HVR's rules (memtint.hvr_rules), rule mining (memtint.rule_mining) and the advisor
(`memtint advise`, `memtint mine-rules`): exact decisions, exact mining on known records,
clear errors for rules files that do not parse and class vectors no rule covers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memtint import hvr_rules, rule_mining
from memtint.api import MemtintError


@pytest.fixture(scope="module")
def paper():
    return hvr_rules.load()


@pytest.mark.parametrize("classes,policy,rule", [
    (["LLCT", "LLCH", "LLCM", "CCF"], "a-vp", "R1"),
    (["LLCT"] * 5 + ["LLCH"] * 2 + ["LLCM"], "c-vp", "R1"),
    (["LLCH", "LLCM", "CCF", "CCF"], "bank-only", "R2"),
    (["LLCH", "CCF", "CCF", "CCF"], "bank-only", "R2"),
    (["LLCH"] * 2 + ["CCF"] * 6, "bank-only-8", "R2"),
    (["LLCM", "CCF", "CCF", "CCF"], "a-vp", "R3"),
    (["LLCM"] * 2 + ["CCF"] * 6, "b-vp", "R3"),
])
def test_the_papers_rules_pick_as_its_decision_tree(paper, classes, policy, rule):
    advice = hvr_rules.decide(paper, classes)
    assert (advice.policy, advice.rule, advice.warnings) == (policy, rule, [])


def test_multithreaded_workloads_get_random_interleaving(paper):
    advice = hvr_rules.decide(paper, ["LLCT", "LLCH"], multithreaded=True)
    assert (advice.policy, advice.rule) == ("random-interleave", "R4")
    assert advice.groups == [[0], [1]], "random interleaving colours nothing to share"


@pytest.mark.parametrize("classes", [["CCF"] * 4, ["LLCT"] * 4])
def test_a_class_vector_no_rule_covers_gets_the_default_with_a_warning_naming_it(paper, classes):
    advice = hvr_rules.decide(paper, classes)
    assert (advice.policy, advice.rule) == ("bank-only", None)
    assert len(advice.warnings) == 1 and f"4 {classes[0]}" in advice.warnings[0], advice.warnings


def test_coalescing_puts_five_thrashers_in_an_eighth_and_the_rest_together(paper):
    # The paper's workload 22': 5 LLCT, 2 LLCH, 1 LLCM under C-VP (8 colours).
    advice = hvr_rules.decide(paper, ["LLCT"] * 5 + ["LLCH"] * 2 + ["LLCM"])
    assert advice.groups == [[0, 1, 2, 3, 4], [5, 6, 7]] and advice.group_rules == ["R6", "R5"]
    assert hvr_rules.os_options(advice, 8) == {"colours": [[0], [1, 2, 3, 4, 5, 6, 7]], "groups": [0] * 5 + [1] * 3}
    # More groups than colours: no coalescing settings (each program its policy's own set).
    assert hvr_rules.colour_sets([[0], [1], [2]], [None] * 3, 2) is None


def test_colour_sets_give_shares_then_split_the_rest_evenly():
    assert hvr_rules.colour_sets([[0], [1], [2]], [0.125, None, None], 8) == [[0], [1, 2, 3, 4], [5, 6, 7]]
    assert hvr_rules.colour_sets([[0], [1]], [None, None], 4) == [[0, 1], [2, 3]]
    # A share that would take every colour leaves one to each other group (it used to give no
    # sets, and advise dropped the coalescing without a word), as the engine's rule does.
    assert hvr_rules.colour_sets([[0], [1]], [0.9, None], 4) == [[0, 1, 2], [3]]
    assert hvr_rules.colour_sets([[0], [1], [2]], [1.0, 1.0, None], 4) == [[0, 1], [2], [3]]


def test_coalescing_gives_the_colour_sets_the_engine_gives():
    # hvr-online's sub_sets rounds halves up and puts groups with a share first: a share of
    # 0.625 of A-VP's 4 colours is 3 (Python's round gave 2), and the thrasher's group comes
    # first even when a program of its own is listed before it.
    rules = hvr_rules.parse({"default": "a-vp", "partition": [{"when": {}, "policy": "a-vp"}],
                             "coalesce": [{"name": "C1", "classes": ["LLCT"], "share": 0.625}]}, "r625")
    advice = hvr_rules.decide(rules, ["LLCT", "CCF"])
    assert (advice.groups, advice.shares) == ([[0], [1]], [0.625, None])
    assert hvr_rules.os_options(advice, 4) == {"colours": [[0, 1, 2], [3]], "groups": [0, 1]}
    advice = hvr_rules.decide(rules, ["CCF", "LLCT"])
    assert (advice.groups, advice.group_rules) == ([[1], [0]], ["C1", None])
    assert hvr_rules.os_options(advice, 4) == {"colours": [[0, 1, 2], [3]], "groups": [1, 0]}
    assert hvr_rules.colour_sets([[0], [1]], [0.375, None], 4) == [[0, 1], [2, 3]]  # 1.5 -> 2
    with pytest.raises(ValueError, match="share come first"):
        hvr_rules.colour_sets([[0], [1]], [None, 0.5], 4)


@pytest.mark.parametrize("text,needles", [
    ("[[partition]]\nname = 'X'\nwhen = { LLCX = 1 }\npolicy = 'a-vp'\n", ["rules.toml:3", "when.LLCX", "unknown count"]),
    ("[[partition]]\nwhen = { LLCT = '>1' }\npolicy = 'a-vp'\n", ["when.LLCT", "'>1'"]),
    ("[[partition]]\nwhen = { LLCT = 1 }\n", ["rules.toml:1", "policy"]),
    ("[[partition]]\npolicy = { four = 'a-vp' }\n", ["policy", "program counts"]),
    ("[[partition]]\npolicy = 'a-vp'\nconfidence = 1.5\n", ["rules.toml:3", "confidence", "1.5"]),
    ("[[partition]]\npolicy = 'a-vp'\ncolour = 1\n", ["unknown key(s) colour"]),
    ("[[partition]]\npolicy = 'a-vp'\n[[coalesce]]\nclasses = ['LLCX']\n", ["[[coalesce]] #1 classes"]),
    ("default = 'a-vp'\n", ["at least one [[partition]]"]),
    ("[[partition]\npolicy = 'a-vp'\n", ["rules.toml"]),
    ("[[partition]]\nwhen = { multithreaded = 1 }\npolicy = 'a-vp'\n", ["when.multithreaded", "true or false"]),
    ("[[partition]]\npolicy = { 4 = 'a-vpp' }\n", ["rules.toml:2", "policy.4", "unknown placement policy 'a-vpp'"]),
    ("default = 'bank'\n[[partition]]\npolicy = 'a-vp'\n", ["rules.toml:1: default", "'bank'"]),
    # A rule no mix can reach: counts no mix has, or an earlier rule's conditions it implies.
    ("[[partition]]\nname = 'X'\nwhen = { LLCT = '>=1', not_LLCT = '>=1', programs = 1 }\npolicy = 'a-vp'\n",
     ["rules.toml:3", "(X) when", "no mix has these counts", "programs = 1"]),
    ("[[partition]]\nwhen = { LLCT = '>=5', programs = '<=4' }\npolicy = 'a-vp'\n", ["no mix has these counts"]),
    ("[[partition]]\nwhen = { programs = 0 }\npolicy = 'a-vp'\n", ["no mix has these counts"]),
    ("[[partition]]\nname = 'A'\nwhen = { LLCT = '>=1' }\npolicy = 'a-vp'\n"
     "[[partition]]\nname = 'B'\nwhen = { LLCT = '>=1' }\npolicy = 'c-vp'\n",
     ["rules.toml:7", "#2 (B) when", "never applies", "#1 (A)"]),
    ("[[partition]]\nwhen = { LLCT = '>=1' }\npolicy = 'a-vp'\n"
     "[[partition]]\nwhen = { LLCT = '>=2', LLCH = 0 }\npolicy = 'c-vp'\n", ["rules.toml:5", "never applies"]),
    ("[[partition]]\npolicy = 'a-vp'\n[[partition]]\nwhen = { LLCT = 1 }\npolicy = 'c-vp'\n",
     ["#2", "never applies", "(none)"]),
    # ... or several earlier rules together (all thrashers: each mix has LLCT >= 1 or is empty).
    ("[[partition]]\nname = 'A'\nwhen = { LLCT = '>=1', LLCH = 0 }\npolicy = 'a-vp'\n"
     "[[partition]]\nname = 'B'\nwhen = { LLCH = '>=1' }\npolicy = 'c-vp'\n"
     "[[partition]]\nwhen = { not_LLCT = 0 }\npolicy = 'bank-only'\n", ["rules.toml:10", "never applies", "#1 (A)"]),
    # Names and reasons are text: a name of 5 or "" used to show as "rule 5" or "no rule".
    ("[[partition]]\nname = 5\npolicy = 'a-vp'\n", ["rules.toml:2", "name", "non-empty string"]),
    ("[[partition]]\nname = ''\npolicy = 'a-vp'\n", ["rules.toml:2", "name", "non-empty string"]),
    ("[[partition]]\npolicy = 'a-vp'\nreason = 5\n", ["rules.toml:3", "reason", "string"]),
    ("[[partition]]\npolicy = 'a-vp'\n[[coalesce]]\nname = ['R5']\nclasses = ['LLCH']\n",
     ["rules.toml:4", "[[coalesce]] #1 name"]),
    # A rule with a name is named by it too.
    ("[[partition]]\npolicy = 'a-vp'\n[[partition]]\nname = 'R1'\npolicy = 'frob'\n",
     ["rules.toml:5: [[partition]] #2 (R1) policy", "'frob'"]),
])
def test_a_rules_file_that_does_not_parse_names_the_file_rule_and_key(tmp_path, text, needles):
    path = tmp_path / "rules.toml"
    path.write_text(text)
    with pytest.raises(MemtintError) as error:
        hvr_rules.load(path)
    for needle in needles:
        assert needle in str(error.value), str(error.value)


def test_rules_that_overlap_without_one_taking_the_others_mixes_load(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text("[[partition]]\nwhen = { LLCT = '>=1', LLCH = 0 }\npolicy = 'a-vp'\n"
                    "[[partition]]\nwhen = { LLCT = '>=1', programs = '<=8' }\npolicy = 'c-vp'\n"
                    "[[partition]]\nwhen = { not_CCF = '>=1' }\npolicy = 'bank-only'\n"
                    "[[partition]]\npolicy = 'buddy'\n")
    rules = hvr_rules.load(path)
    picks = (["LLCT", "CCF"], ["LLCT", "LLCH"], ["LLCT"] * 8 + ["LLCH"], ["LLCH"], ["CCF"])
    assert [hvr_rules.decide(rules, c).policy for c in picks] == ["a-vp", "c-vp", "bank-only", "bank-only", "buddy"]


def _rec(mix, classes, **ws):
    return rule_mining.MixRecord(mix, classes, classes, ws)


def test_mining_finds_each_leafs_best_policy_with_its_support_and_confidence():
    train = (
        [_rec(f"t{i}", ["LLCT", "CCF"], buddy=1.0, **{"a-vp": 1.2, "bank-only": 1.1}) for i in range(6)]
        + [_rec("t6", ["LLCT", "CCF"], buddy=1.0, **{"a-vp": 1.0, "bank-only": 1.1})]
        + [_rec(f"h{i}", ["LLCH", "CCF"], buddy=1.0, **{"a-vp": 0.9, "bank-only": 1.05}) for i in range(3)]
    )
    rules, leaves = rule_mining.mine(train, ["a-vp", "bank-only", "buddy"])
    first = leaves[0]
    assert (first["mixes"], first["policy"], first["support"]) == (7, "a-vp", 0.7)
    assert first["confidence"] == pytest.approx(6 / 7)
    assert (leaves[2]["policy"], leaves[2]["confidence"]) == ("bank-only", 1.0)
    assert [leaf["mixes"] for leaf in leaves[3:]] == [0, 0]
    assert rules.default == "a-vp"
    # The rules file round-trips.
    again = hvr_rules.parse(__import__("tomllib").loads(rule_mining.to_toml(rules, "x")), "mined")
    assert [(r.when, r.policy) for r in again.partition] == [(r.when, r.policy) for r in rules.partition]
    # Measured on held-out mixes: one hit, one miss losing 1 - 1.1/1.2.
    test = [_rec("x", ["LLCT", "LLCM"], buddy=1.0, **{"a-vp": 1.2, "bank-only": 1.1}),
            _rec("y", ["LLCH", "LLCM"], buddy=1.0, **{"a-vp": 1.2, "bank-only": 1.1})]
    m = rule_mining.evaluate(rules, test)
    assert (m["judged"], m["accuracy"]) == (2, 0.5)
    assert m["worst_loss_pct"] == pytest.approx(100 * (1 - 1.1 / 1.2))
    assert rule_mining.fixed_policy("a-vp", test)["accuracy"] == 1.0


def test_the_split_is_seeded_and_holds_out_the_asked_share():
    recs = [_rec(f"m{i}", ["CCF"], buddy=1.0) for i in range(400)]
    train, test = rule_mining.split(recs, 0.5, 1)
    assert (train, test) == rule_mining.split(recs, 0.5, 1)
    assert (len(train), len(test)) == (200, 200)
    assert {r.mix for r in rule_mining.split(list(reversed(recs)), 0.5, 1)[1]} == {r.mix for r in test}
    assert rule_mining.split(recs, 0.5, 2)[1] != test


def test_cross_validation_judges_each_mix_by_rules_mined_without_it():
    recs = [_rec(f"m{i}", ["CCF"], buddy=1.0, **{"a-vp": 1.2 if i < 3 else 1.1, "bank-only": 1.1 if i < 3 else 1.2})
            for i in range(5)]
    policies = ["buddy", "cache-only", "bank-only", "a-vp"]
    parts = rule_mining.folds(recs, 3, 7)
    assert sorted(r.mix for f in parts for r in f) == sorted(r.mix for r in recs)
    assert sorted(len(f) for f in parts) == [1, 2, 2] and parts == rule_mining.folds(list(reversed(recs)), 3, 7)
    # Mined from all five, a-vp wins 3 to 2 and is right on the three where it is best; with one
    # mix out each time, the left-out mix's own vote is missing: an a-vp mix leaves a 2-2 tie
    # (bank-only, first in the policy order) and a bank-only mix leaves a-vp ahead, so none is hit.
    rules, _ = rule_mining.mine(recs, policies)
    assert rule_mining.evaluate(rules, recs)["accuracy"] == pytest.approx(0.6)
    loo = rule_mining.cross_validate(recs, policies, 5, 7)
    assert (loo["judged"], loo["accuracy"]) == (5, 0.0)
    with pytest.raises(ValueError, match="at least 2 folds"):
        rule_mining.folds(recs, 1, 7)


def _store(rows):
    """A result store's frame: one row per run (machine, mix, policy, WS, and setup changes)."""
    import pandas as pd

    base = {"status": "ok", "baseline": "buddy", "instructions": 1_000_000, "seed": 1, "os": "{}",
            "sampled": False, "setup": "warmup=0"}
    return pd.DataFrame([{**base, "config_hash": f"h{i}", **r} for i, r in enumerate(rows)])


def test_mining_pairs_a_machine_variants_runs_with_its_base_machine():
    # bpm-plus runs on i7-860-bpm-plus in a product of machines = ["i7-860"]: each mix used to
    # make two records, one per machine, each with its only policy "best".
    rows = []
    for mix, buddy, plus in (("stream|light", 1.0, 1.2), ("light|light", 2.0, 1.9)):
        rows += [{"machine": "i7-860", "mix": mix, "policy": "buddy", "weighted_speedup": buddy},
                 {"machine": "i7-860-bpm-plus", "mix": mix, "policy": "bpm-plus", "weighted_speedup": plus}]
    seen = []
    recs = rule_mining.records(_store(rows), lambda p, m: seen.append((p, m)) or "CCF")
    assert [(r.mix, r.ws) for r in recs] == [("light|light", {"bpm-plus": 1.9, "buddy": 2.0}),
                                             ("stream|light", {"bpm-plus": 1.2, "buddy": 1.0})]
    assert {m for _, m in seen} == {"i7-860"}, "programs are classified on the base machine, once"


@pytest.mark.parametrize("change,needle", [
    ({"instructions": 2_000_000}, "instructions=2000000"),
    ({"setup": "warmup=5"}, "setup=warmup=5"),
    ({"os": '{"hugepages": true}'}, "os="),
    ({"baseline": "bpm"}, "baseline=bpm"),
])
def test_mining_refuses_a_store_of_several_setups_naming_them(change, needle):
    # Runs of other settings used to be averaged into one WS per policy.
    rows = [{"machine": "i7-860", "mix": "stream|light", "policy": p, "weighted_speedup": 1.0} for p in ("buddy", "a-vp")]
    rows.append({**rows[0], **change})
    with pytest.raises(MemtintError, match="2 setups") as error:
        rule_mining.runs(_store(rows))
    assert needle in str(error.value)
    # A policy+scheduler entry's own scheduler is its policy's, not another setup.
    tcm = {"machine": "i7-860", "mix": "stream|light", "policy": "bank-only+tcm", "weighted_speedup": 1.1,
           "setup": "scheduler=tcm, warmup=0"}
    assert len(rule_mining.runs(_store(rows[:2] + [tcm]))) == 3


def test_a_pick_tied_with_the_best_is_best():
    recs = [_rec(f"t{i}", ["LLCT", "CCF"], **{"a-vp": 1.2, "bank-only": 1.2}) for i in range(3)]
    rules = hvr_rules.Rules("x", [hvr_rules.PartitionRule("always", [], {0: "bank-only"})])
    assert rule_mining.evaluate(rules, recs)["accuracy"] == 1.0  # it used to be 0: a-vp came first
    _, leaves = rule_mining.mine(recs, ["a-vp", "bank-only"])
    assert leaves[0]["confidence"] == 1.0 and leaves[0]["runner_up_confidence"] == 1.0


def test_mined_rules_never_name_a_policy_with_its_own_scheduler(tmp_path):
    # bank-only+tcm (a sweep's policy+scheduler entry) used to become the default, which
    # advise then refused as an unknown placement policy.
    recs = [_rec("a|b", ["LLCT", "CCF"], **{"bank-only": 1.0, "bank-only+tcm": 1.1})]
    assert rule_mining.rule_policies(["bank-only", "bank-only+tcm"]) == (["bank-only"], ["bank-only+tcm"])
    rules, _ = rule_mining.mine(recs, ["bank-only", "bank-only+tcm"])
    path = tmp_path / "m.toml"
    path.write_text(rule_mining.to_toml(rules))
    loaded = hvr_rules.load(path)
    assert loaded.default == "bank-only" and {r.policy_for(2) for r in loaded.partition} == {"bank-only"}


@pytest.mark.engine
def test_advise_classifies_picks_and_verifies(memtint):
    code, out, err = memtint("advise", "stream", "random:footprint_bytes=3145728", "light", "light", "--verify",
                             "--instructions", "300000", "--warmup", "0", "--json", "-")
    assert code == 0, err
    r = json.loads(out)
    assert [p["class"] for p in r["programs"]] == ["LLCT", "LLCM", "CCF", "CCF"]
    assert (r["policy"], r["rule"]) == ("a-vp", "R1")
    # R6 puts the thrasher in one of A-VP's four colours; R5 and R6 give the others theirs.
    assert r["os"] == {"colours": [[0], [1, 2], [3]], "groups": [0, 1, 2, 2]}
    policies = [v["policy"] for v in r["verified"]]
    assert policies[0] == "buddy" and "a-vp + coalescing" in policies and "bank-only" in policies
    assert sum(v["best"] for v in r["verified"]) == 1
    assert all(v["ws"] > 0 for v in r["verified"])


@pytest.mark.engine
def test_advise_warns_when_a_class_rests_on_one_sampling_window(memtint):
    # One window: DIFF was never measured, yet the reason said "at a steady N pages per window"
    # and nothing warned.
    code, out, err = memtint("advise", "stream", "--classify-instructions", "3000000", "--warmup", "0", "--json", "-")
    assert code == 0, err
    r = json.loads(out)
    stream = r["programs"][0]
    assert stream["features"]["windows"] == 1 and "steady" not in stream["reason"], stream["reason"]
    assert any("stream: classified from 1 sampling window" in w and "--classify-instructions" in w
               for w in r["warnings"]), r["warnings"]
    assert "classified from 1 sampling window" in err


@pytest.mark.engine
def test_a_run_too_short_for_its_windows_is_told_a_length_that_fills_them():
    # The warning said "10M fills several" to a run of the default 10M that had filled one.
    import re

    from memtint import advisor

    one = advisor.classify("light", instructions=3_000_000, warmup=0)
    assert one.hvr_class is None
    asked = int(re.search(r"--classify-instructions (\d+)\)", one.reason).group(1))
    assert re.search(r"they ran [\d,]+ µs of simulated time, the windows are 500 µs", one.reason), one.reason
    assert asked > 3_000_000
    enough = advisor.classify("light", instructions=asked, warmup=0)
    assert enough.features["windows"] >= advisor.WINDOWS_WANTED and not enough.warnings, enough.features


@pytest.mark.engine
def test_advise_verify_measures_the_candidates_that_can_run(memtint, tmp_path):
    # A candidate the machine cannot run (bpm-plus on the i7-860's mapping) used to end the
    # command with the engine's error alone: the classes and the advice were lost.
    rules = tmp_path / "rbp.toml"
    rules.write_text('default = "bank-only"\n[[partition]]\nname = "P"\nwhen = {}\npolicy = "bpm-plus"\n')
    code, out, err = memtint("advise", "stream", "bfs", "--classify-instructions", "5000000", "--warmup", "0",
                             "--rules", rules, "--verify", "--instructions", "300000", "--json", "-")
    assert code == 0, err
    r = json.loads(out)
    assert r["policy"] == "bpm-plus" and [p["class"] for p in r["programs"]] == ["LLCT", "LLCH"]
    assert [v["policy"] for v in r["verified"]] == ["buddy", "bank-only"]
    assert any(w.startswith("--verify: bpm-plus cannot run") for w in r["warnings"]), r["warnings"]


@pytest.mark.engine
def test_advise_errors_are_clear(memtint, clean_error, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[partition]]\npolicy = 'a-vp'\nsupport = 2\n")
    clean_error(memtint("advise", "stream", "--rules", bad), "bad.toml:3", "support")
    # An unknown key at its own line (it used to be the rule's header line), a top-level one too.
    bad.write_text("default = 'a-vp'\n[[partition]]\nname = 'X'\npolicy = 'a-vp'\n\nfoo = 1\n")
    clean_error(memtint("advise", "stream", "--rules", bad), "bad.toml:6", "foo")
    bad.write_text("default = 'a-vp'\nbar = 2\n[[partition]]\npolicy = 'a-vp'\n")
    clean_error(memtint("advise", "stream", "--rules", bad), "bad.toml:2", "bar")
    clean_error(memtint("advise", "stream", "--classify-instructions", "20000", "--warmup", "0"),
                "cannot classify stream", "sampling window", "--classify-instructions")
    clean_error(memtint("advise", "no-such-program"), "program no-such-program", "suite: bfs")
    # A named mix among other programs: said so (it used to be "--mix ...: not a named mix").
    clean_error(memtint("advise", "real-intensive-4", "light"), "program real-intensive-4", "stands alone")
    # More programs than cores: refused before any classification run.
    # ... with a way out advise has (the engine's hint, processes, is not one of its options).
    message = clean_error(memtint("advise", *["light"] * 5, "--warmup", "0"), "5 programs", "4 cores", "--machine")
    assert "processes" not in message


@pytest.mark.engine
@pytest.mark.parametrize("command", ["advise", "compare"])
def test_a_mix_file_is_an_input_its_json_never_overwrites(memtint, clean_error, tmp_path, command):
    # The check saw only the programs the mix file names, and the JSON went over the file.
    mix = tmp_path / "mix.toml"
    mix.write_text('programs = ["light", "light"]\n')
    before = mix.read_bytes()
    argv = (["advise", mix] if command == "advise" else
            ["compare", "--machine", "i7-860", "--mix", mix, "--policies", "buddy"])
    clean_error(memtint(*argv, "--warmup", "0", "--json", mix), f"--json {mix}: is an input of this command")
    assert mix.read_bytes() == before


@pytest.mark.engine
def test_advise_says_whose_support_and_confidence_it_shows(memtint, tmp_path):
    # They were printed bare, as if measured for this mix, and a rule with a support and no
    # confidence ended in a traceback.
    short = ["--classify-instructions", "5000000", "--warmup", "0"]
    code, out, err = memtint("advise", "stream", "light", *short)
    assert code == 0, err
    assert "by rule R1 (the paper's support 37.1%, confidence 94.4%)" in " ".join(out.split()), out
    rules = tmp_path / "mine.toml"
    rules.write_text("[[partition]]\nname = 'M'\npolicy = 'bank-only'\nsupport = 0.25\n")
    code, out, err = memtint("advise", "light", "--rules", rules, *short)
    assert code == 0 and "Traceback" not in err, err
    assert "by rule M (mine.toml's support 25.0%)" in " ".join(out.split()), out


@pytest.mark.engine
def test_advise_warns_when_its_pick_cannot_run_on_the_machine(memtint):
    # The paper's rules pick a-vp, whose O-bits the ccps machine's mapping lacks: it used to be
    # recommended in silence, and only --verify found out.
    code, out, err = memtint("advise", "stream", "bfs", "--machine", "ccps-4c-64b", "--classify-instructions",
                             "6000000", "--warmup", "0", "--json", "-")
    assert code == 0, err
    r = json.loads(out)
    assert any("cannot run this mix on ccps-4c-64b" in w for w in r["warnings"]), r["warnings"]


@pytest.mark.engine
def test_advise_warns_once_per_program_and_never_blames_colours_for_a_pick_that_cannot_run(memtint):
    # Each copy of light warned of its one window (16 lines for 16 copies), and beside "a-vp cannot
    # run this mix" the table said "coalescing not applied: the policy has fewer colours".
    code, out, err = memtint("advise", "stream", "light", "light", "light", "--machine", "ccps-4c-64b",
                             "--classify-instructions", "6000000", "--warmup", "0")
    assert code == 0, err
    text = " ".join(out.split())
    assert text.count("light: classified from 1 sampling window") == 1, text
    assert "(as were the 2 other copies of light in the mix)" in text, text
    assert "cannot run this mix on ccps-4c-64b" in text and "fewer colours" not in text, text


@pytest.mark.engine
def test_mine_rules_writes_rules_advise_reads_and_refuses_to_overwrite_its_input(memtint, clean_error, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "m"\nmachines = ["i7-860"]\npolicies = ["buddy", "a-vp"]\ninstructions = 200000\n'
                    'warmup = 0\n[[mixes]]\nrandom = ["stream", "light", "random:footprint_bytes=3145728"]\n'
                    'size = 2\ncount = 8\nseed = 5\n')
    code, _, err = memtint("sweep", spec, "--out", tmp_path / "out", "--jobs", "2", timeout=600)
    assert code == 0, err
    code, out, err = memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "mined.toml", "--json", "-",
                             "--holdout", "0.3")
    assert code == 0, err
    study = json.loads(out)
    assert study["training"] >= 1 and study["held_out"] >= 1 and study["training"] + study["held_out"] <= 8
    assert set(study["measured"]) == {"paper", "mined", "always a-vp", "always buddy"}
    mined = hvr_rules.load(tmp_path / "mined.toml")
    assert mined.partition and {r.policy_for(2) for r in mined.partition} <= {"a-vp", "buddy"}
    # Cross-validated: mined from every mix, and every mix measures.
    code, out, err = memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "cv.toml", "--json", "-",
                             "--folds", "2")
    assert code == 0, err
    cv = json.loads(out)
    assert cv["training"] == cv["held_out"] == cv["measured"]["paper"]["mixes"] == cv["measured"]["mined"]["mixes"]
    assert cv["folds"] == 2 and "cross-validation" in (tmp_path / "cv.toml").read_text()
    clean_error(memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "cv1.toml", "--folds", "1"), "--folds")
    # The classification runs' length is the user's, as advise's is: too short to fill a window is said.
    clean_error(memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "short.toml", "--classify-instructions",
                        "1000"), "1,000 instructions did not fill one sampling window", "--classify-instructions")
    assert not (tmp_path / "short.toml").exists()
    clean_error(memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "cv9.toml", "--folds", "99"), "--folds 99")
    code, out, err = memtint("advise", "stream", "light", "--rules", tmp_path / "mined.toml", "--warmup", "0",
                             "--json", "-")
    assert code == 0, err
    assert json.loads(out)["rules"].endswith("mined.toml")
    mined_text = (tmp_path / "mined.toml").read_text()
    clean_error(memtint("mine-rules", tmp_path / "out", "--rules", tmp_path / "mined.toml", "--out",
                        tmp_path / "mined.toml"), "mined.toml")
    assert (tmp_path / "mined.toml").read_text() == mined_text


@pytest.mark.engine
def test_mine_rules_json_is_strict_json_and_its_table_shows_no_nan(memtint, tmp_path):
    # A rule set that judged no mix (its picks never run in the store) used to write
    # "accuracy": NaN, which strict readers refuse, and print nan% in the table.
    spec = tmp_path / "s.toml"
    spec.write_text('machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 200000\nwarmup = 0\n'
                    'mixes = [["stream", "light"], ["stream", "light", "light"], ["light", "light"]]\n')
    code, _, err = memtint("sweep", spec, "--out", tmp_path / "out", "--jobs", "1", timeout=600)
    assert code == 0, err
    code, out, err = memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "m.toml", "--json",
                             tmp_path / "mr.json", "--holdout", "0.4")
    assert code == 0, err

    def strict(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    study = json.loads((tmp_path / "mr.json").read_text(), parse_constant=strict)
    paper = study["measured"]["paper"]
    assert paper["judged"] == 0 and paper["accuracy"] is None and paper["mean_loss_pct"] is None
    code, out, err = memtint("mine-rules", tmp_path / "out", "--out", tmp_path / "m2.toml", "--holdout", "0.4")
    assert code == 0, err
    assert "nan" not in out.lower() and f"0 of {paper['mixes']}" in out
    # Rules that pick buddy: advise reads them, hvr-online refuses them, and mine-rules says so.
    assert "hvr-online cannot" in out and 'policy "buddy"' in " ".join(out.split())


@pytest.mark.engine
def test_hvr_online_runs_a_coalescing_share_that_would_take_every_colour(memtint, tmp_path):
    # share = 0.9 of A-VP's 4 sub-colours used to end in "os.dynamic: colour 3 is in two colour
    # sets (0 and 1)", naming neither the rules file nor the share.
    rules = tmp_path / "nc.toml"
    rules.write_text('default = "a-vp"\n[[partition]]\nname = "X"\nwhen = {LLCT = ">=1"}\npolicy = "a-vp"\n'
                     '[[coalesce]]\nname = "C"\nclasses = ["LLCT"]\nshare = 0.9\n')
    run = tmp_path / "dyn.toml"
    run.write_text('machine = "i7-860"\nprograms = ["stream", "random:footprint_bytes=3145728", "light", "light"]\n'
                   'instructions = 500_000\n[os]\npolicy = "hvr"\ndynamic = "hvr-online"\n[os.hvr-online]\n'
                   'epoch_ns = 100_000\nrules = "nc.toml"\n')
    code, _, err = memtint("sim", run, "--json", tmp_path / "o.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "o.json").read_text())
    assert stats["dynamic"]["repartitions"] >= 1
    for adj in stats["dynamic"]["adjustments"]:
        sets = [frozenset(c) for c in adj["colours"]]
        assert all(a == b or not a & b for a in sets for b in sets), adj["colours"]


@pytest.mark.engine
def test_an_empty_rules_path_is_named_by_its_key_and_line(memtint, tmp_path):
    # "" is the run file's directory: the error named the directory, not the key that gave it.
    run = tmp_path / "dyn.toml"
    run.write_text('machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 1000\n[os]\npolicy = "hvr"\n'
                   'dynamic = "hvr-online"\n[os.hvr-online]\nrules = ""\n')
    code, _, err = memtint("sim", run)
    assert code != 0 and "Traceback" not in err, err
    assert f"{run}:8: " in err and "os.hvr-online.rules: " in err and "is a directory, not a rules file" in err, err


def _swept_with_fixed_classes(memtint, tmp_path, monkeypatch, head: str) -> None:
    """A sweep of two small mixes into tmp_path/out (``head``: its machines and policies), with
    stream classed LLCT and light CCF: the classes are not these tests' subject."""
    from memtint import advisor

    spec = tmp_path / "s.toml"
    spec.write_text(head + 'instructions = 20000\nwarmup = 0\nmixes = [["stream", "light"], ["light", "light"]]\n')
    code, _, err = memtint("sweep", spec, "--out", tmp_path / "out", "--jobs", "1", timeout=600)
    assert code == 0, err

    def classify(program, machine, instructions=advisor.CLASSIFY_INSTRUCTIONS):
        return advisor.ProgramClass(program, "LLCT" if program == "stream" else "CCF", "", {}, 1.0, 0.0)

    monkeypatch.setattr(advisor, "classify", classify)


@pytest.mark.engine
def test_mine_rules_names_the_machine_of_each_class_line_when_a_store_has_several(memtint, tmp_path, monkeypatch,
                                                                                  capsys):
    # One program has a class per machine; with two machines the lines used to read
    # "stream: LLCT" twice, with nothing to tell them apart.
    from memtint import cli

    _swept_with_fixed_classes(memtint, tmp_path, monkeypatch, 'machines = ["i7-860", "ddr3-1333"]\npolicies = ["buddy"]\n')
    assert cli.main(["mine-rules", str(tmp_path / "out"), "--out", str(tmp_path / "m.toml"), "--folds", "2"]) == 0
    lines = [line.strip() for line in capsys.readouterr().err.splitlines() if line.strip().endswith(("LLCT", "CCF"))]
    assert sorted(lines) == ["light on ddr3-1333: CCF", "light on i7-860: CCF", "stream on ddr3-1333: LLCT",
                             "stream on i7-860: LLCT"]


@pytest.mark.engine
def test_mine_rules_pairs_machine_variants_and_leaves_out_policies_with_a_scheduler(memtint, tmp_path, monkeypatch,
                                                                                 capsys):
    # bpm-plus runs on i7-860-bpm-plus: each mix used to be two records (one per machine), and
    # bank-only+tcm could be written as a rule advise then refused.
    from memtint import cli

    _swept_with_fixed_classes(memtint, tmp_path, monkeypatch,
                              'machines = ["i7-860"]\npolicies = ["buddy", "bpm-plus", "bank-only+tcm"]\n')
    assert cli.main(["mine-rules", str(tmp_path / "out"), "--out", str(tmp_path / "m.toml"), "--folds", "2",
                     "--json", str(tmp_path / "m.json")]) == 0
    study = json.loads((tmp_path / "m.json").read_text())
    assert (study["training"], study["policies"]) == (2, ["bpm-plus", "buddy"])
    assert set(study["classes"]) == {"i7-860:stream", "i7-860:light"}
    assert set(study["measured"]) == {"paper", "mined", "always bpm-plus", "always buddy", "always bank-only+tcm"}
    assert any("bank-only+tcm is left out" in w for w in study["warnings"]), study["warnings"]
    printed = capsys.readouterr()
    assert "bank-only+tcm is left out" in " ".join((printed.out + printed.err).split())
    hvr_rules.load(tmp_path / "m.toml")


@pytest.mark.engine
def test_mine_rules_on_a_store_whose_runs_all_failed_says_so_with_the_first_error(memtint, clean_error, tmp_path):
    (tmp_path / "bad.trace").write_text("0 0x1000 R\n")
    (tmp_path / "s.toml").write_text('machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 20000\nwarmup = 0\n'
                                     'mixes = [["stream", "bad.trace"]]\n')
    code, _, err = memtint("sweep", "s.toml", "--out", "res", "--jobs", "1")
    assert code == 1, err
    clean_error(memtint("mine-rules", "res", "--out", "m.toml"),
                "res: none of its 1 run(s) succeeded", "bad.trace:1")


@pytest.mark.engine
def test_advise_on_a_machine_of_several_nodes_names_the_machine_option(memtint, clean_error):
    clean_error(memtint("advise", "stream", "light", "--machine", "opteron-6128", "--classify-instructions", "20000",
                        "--warmup", "0"), "--machine opteron-6128: has 4 memory nodes", "i7-860")


@pytest.mark.parametrize("option", [["--policies", "bpm,nosuch"], ["--baseline", "nosuch"]])
def test_compare_names_the_option_of_an_unknown_policy(memtint, clean_error, option):
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", "stream,light", *option, "--instructions", "20000",
                        "--warmup", "0"), f"{option[0]} {option[1]}: unknown placement policy 'nosuch'")


@pytest.mark.parametrize("args,kwargs,needle", [
    # "stream" was split into its characters: "6 programs but machine 'i7-860' has 4 cores".
    (["stream"], {}, "programs: expected a list of programs (traces or profiles), got 'stream'"),
    ([[]], {}, "programs: expected a list of traces or profiles"),
    ([["stream", 3]], {}, "programs: expected a list of traces or profiles"),
    ([["stream"], 4], {}, "machine: expected a machine preset's name"),
    ([["stream"]], {"rules": "rules.toml"}, "rules: expected memtint.hvr_rules.load(PATH)'s rules"),
    ([["stream"]], {"multithreaded": "no"}, "multithreaded: expected True or False"),
    ([["stream"]], {"instructions": 1e6}, "instructions: expected a whole number"),
    ([["stream"]], {"warmup": -1}, "warmup: expected a whole number of at least 0"),
    ([["stream"]], {"progress": "yes"}, "progress: expected a function"),
])
def test_advise_names_an_argument_of_the_wrong_kind(args, kwargs, needle):
    import re

    from memtint import advisor

    with pytest.raises(MemtintError, match=re.escape(needle)):
        advisor.advise(*args, **kwargs)


def test_hvr_online_refuses_a_rules_file_with_a_rule_no_mix_can_reach_as_advise_does(tmp_path):
    (tmp_path / "rules.toml").write_text("default = 'a-vp'\n[[partition]]\nname = 'A'\nwhen = { LLCT = '>=1' }\n"
                                         "policy = 'a-vp'\n[[partition]]\nname = 'B'\nwhen = { LLCT = '>=1' }\n"
                                         "policy = 'c-vp'\n")
    run = tmp_path / "hvr.toml"
    run.write_text("machine = 'i7-860'\nprograms = ['stream', 'random']\ninstructions = 20_000\n[os]\npolicy = 'hvr'\n"
                   "dynamic = 'hvr-online'\n[os.hvr-online]\nrules = 'rules.toml'\n")
    done = subprocess.run([sys.executable, "-m", "memtint.cli", "sim", str(run)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert f"{tmp_path / 'rules.toml'}:8: [[partition]] #2 (B) when: never applies" in done.stderr
    # The same rules without the duplicate run.
    (tmp_path / "rules.toml").write_text("default = 'a-vp'\n[[partition]]\nname = 'A'\nwhen = { LLCT = '>=1' }\n"
                                         "policy = 'a-vp'\n")
    done = subprocess.run([sys.executable, "-m", "memtint.cli", "sim", str(run)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_apis_run_sim_checks_hvr_onlines_rules_file_too(tmp_path):
    from memtint import api

    rules = tmp_path / "rules.toml"
    rules.write_text("default = 'a-vp'\n[[partition]]\nwhen = { LLCT = '>=5', programs = '<=4' }\npolicy = 'a-vp'\n")
    with pytest.raises(MemtintError, match="rules.toml:3.*no mix has these counts"):
        api.run_sim("i7-860", ["stream", "random"], instructions=20_000, policy="hvr",
                    os_options={"dynamic": "hvr-online", "hvr-online": {"rules": str(rules)}})
