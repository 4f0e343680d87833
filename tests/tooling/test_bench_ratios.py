"""exov_testing/bench_report.py's (the benchmark's report) round-by-round ratios (issue 36): a goal is met, missed or undecided from the
middle half of the per-round ratios, so that a busy machine cannot make a row look met or missed."""

from __future__ import annotations

import pytest
from exov_testing.bench_report import goals, paired_ratio


def _engine(median_ms, rounds):
    return {"engine": "x", "median_ms": median_ms, "round_median_ms": rounds}


def test_a_ratio_is_taken_round_by_round():
    # A slow round (the machine busy) slows both engines: per round the ratio stays 1.10.
    ours = _engine(2.2, [1.1, 2.2, 1.1, 11.0, 1.1, 2.2])
    theirs = _engine(1.0, [1.0, 2.0, 1.0, 10.0, 1.0, 2.0])
    ratio = paired_ratio(ours, theirs)
    assert ratio["median"] == pytest.approx(1.1) and ratio["rounds"] == 6
    assert ratio["low"] == pytest.approx(1.1) and ratio["high"] == pytest.approx(1.1)


def test_rounds_missing_on_one_side_are_left_out_and_too_few_give_no_spread():
    ours = _engine(3.0, [3.0, None, 3.0, 3.0])
    theirs = _engine(2.0, [2.0, 2.0, None, 2.0])
    ratio = paired_ratio(ours, theirs)  # two rounds hold both: the medians' ratio
    assert ratio == {"median": 1.5, "low": None, "high": None, "rounds": 2}
    assert paired_ratio(_engine(1.0, None), theirs)["low"] is None  # a single cold call has no rounds
    assert paired_ratio({"engine": "x", "error": "failed"}, theirs) is None


def _run(ours_rounds, theirs_rounds):
    models = {"mlp": {"engines": {"delegate": _engine(1.0, ours_rounds), "openvino": _engine(1.0, theirs_rounds)}}}
    return next(g for g in goals({"models": models}) if "own conversion" in g[0])


def test_a_goal_is_met_missed_or_undecided_from_the_middle_half_of_the_rounds():
    same = [1.0] * 8
    assert _run([1.02, 1.03, 1.01, 1.04, 1.0, 1.03, 1.02, 1.01], same)[2] is True
    assert _run([1.12, 1.08, 1.1, 1.2, 1.09, 1.11, 1.07, 1.1], same)[2] is False
    measured, met = _run([1.0, 1.1, 1.02, 1.12, 0.98, 1.09, 1.01, 1.08], same)[1:]
    assert met is None and "middle half of 8 rounds" in measured


def _throughput_goal(ours_rounds, theirs_rounds):
    from exov_testing.bench_report import ratio_of_rounds

    ratio = ratio_of_rounds([a / b for a, b in zip(ours_rounds, theirs_rounds)], 1.0)
    concurrency = {"case": "mlp", "speedup": None, "throughput_vs_openvino": {"2": ratio}}
    return next(g for g in goals({"models": {}, "concurrency": concurrency}) if "same IR" in g[0])


def test_the_throughput_goal_is_calls_per_second_at_least_nine_tenths_of_openvinos():
    # calls/s, higher is better: 0.95x of OpenVINO's API in every round meets >= 0.9x, 0.8x misses it.
    theirs = [10.0, 20.0, 10.0, 5.0, 10.0]
    assert _throughput_goal([9.5, 19.0, 9.5, 4.75, 9.5], theirs)[2] is True
    assert _throughput_goal([8.0, 16.0, 8.0, 4.0, 8.0], theirs)[2] is False
    assert _throughput_goal([8.0, 19.6, 8.8, 4.75, 9.6], theirs)[2] is None  # 0.8x to 0.98x: straddles


def test_a_missed_goal_says_what_this_runs_figures_show():
    from exov_testing.bench_report import why_not

    def engine(types):
        return {"ir_operations": {"types": types}}

    results = {"models": {"cnn": {"engines": {
        "delegate": engine({"Convolution": 3, "MaxPool": 4, "IsNaN": 2, "Select": 2}),
        "delegate_fast": engine({"Convolution": 3, "MaxPool": 2}),
        "openvino": engine({"Convolution": 3, "MaxPool": 2})}}},
        "overhead_cpp": {"openvino_infer_only": {"median_us": 6.2}, "delegate_same_buffers": {"median_us": 6.4}}}
    assert "IsNaN +2, MaxPool +2, Select +2" in why_not("cnn: numerics=exact over numerics=fast <= 3%", results)
    assert "MaxPool 2/4" in why_not("cnn: delegate (default) over OpenVINO's own conversion <= 5%", results)
    assert "6.2 us" in why_not("tiny_add: per call <= 1.5x XNNPACK's", results)
    results["models"]["cnn"]["engines"]["delegate"] = engine({"Convolution": 3, "MaxPool": 2})
    assert "at run time" in why_not("cnn: delegate (default) over OpenVINO's own conversion <= 5%", results)
    assert why_not("mlp: numerics=exact over numerics=fast <= 3%", results) == ""
    # Timed: how far fast mode is from convert_model; XNNPACK against OpenVINO's own conversion.
    for key, ms in (("delegate", 1.2), ("delegate_fast", 0.9), ("openvino", 1.0), ("xnnpack", 1.1)):
        results["models"]["cnn"]["engines"].setdefault(key, {}).update(_engine(ms, [ms] * 4))
    results["models"]["cnn"]["engines"]["delegate"]["ir_operations"] = {"types": {"Convolution": 3, "Select": 2}}
    assert "numerics=fast is -10.0%" in why_not("cnn: delegate (default) over OpenVINO's own conversion <= 5%", results)
    assert "OpenVINO's own conversion 0.91x" in why_not("cnn: faster than XNNPACK (float32)", results)
    # Loading and THROUGHPUT: OpenVINO's API in the same run as the yardstick.
    load = {"load_s": 0.1, "peak_above_imports_mib": 30.0, "after_calls_above_imports_mib": 30.0}
    results["loading"] = {"cases": {"cnn": {"weights_bytes": 2**20, **{k: dict(load) for k in (
        "delegate_no_cache", "delegate_cache_second", "openvino_no_cache", "openvino_cache_second", "xnnpack")}}}}
    results["loading"]["cases"]["cnn"]["openvino_no_cache"]["peak_above_imports_mib"] = 20.0
    assert "peaks at 30.0 MiB (30.00x)" in why_not(
        "cnn: peak RSS above imports <= 1.2x the weights, with and without cache", results)
    calls = {hint: {"threads": {"1": {"calls_per_s": c}, "2": {"calls_per_s": c2}}}
             for hint, c, c2 in (("LATENCY", 10.0, 10.0), ("THROUGHPUT", 5.0, 10.5))}
    results["concurrency"] = {"engines": {"openvino": calls}}
    assert "reaches 1.05x" in why_not("THROUGHPUT 2 threads >= 1.5x LATENCY calls/s, minilm_b8", results)


def test_tiny_adds_time_per_call_is_held_to_one_and_a_half_xnnpacks():
    rounds = [0.012] * 4
    models = {"tiny_add": {"engines": {"delegate": _engine(0.012, rounds), "xnnpack": _engine(0.006, [0.006] * 4)}}}
    goal, measured, met = next(g for g in goals({"models": models}) if "XNNPACK's" in g[0])
    assert goal == "tiny_add: per call <= 1.5x XNNPACK's" and measured.startswith("2.00x") and met is False


def test_int8_and_bf16_rows_are_held_to_openvinos_own_at_the_same_precision():
    # Issue 36: every INT8 model within 10% of NNCF on convert_model (MiniLM keeps issue 22's 5%), and the
    # bf16 hint within 5% of convert_model compiled at bf16; a missed row names its IR difference.
    from exov_testing.bench_report import why_not

    def timed(rounds, types):
        return {**_engine(1.0, rounds), "ir_operations": {"types": types}}

    same = [1.0] * 8
    models = {"cnn": {"engines": {
        "delegate_int8": timed([1.08] * 8, {"Convolution": 3}), "openvino_int8": timed(same, {"Convolution": 3}),
        "delegate_bf16": timed([1.2] * 8, {"Convolution": 3, "Select": 2}),
        "openvino_bf16": timed(same, {"Convolution": 3})}}}
    found = {g[0]: g[2] for g in goals({"models": models})}
    assert found["cnn: INT8 over OpenVINO's own INT8 (NNCF on convert_model) <= 10%"] is True
    assert found["cnn: bf16 hint over OpenVINO's own conversion at bf16 <= 5%"] is False
    why = why_not("cnn: bf16 hint over OpenVINO's own conversion at bf16 <= 5%", {"models": models})
    assert why.endswith("Select 0/2"), why
    assert "at run time" in why_not("cnn: INT8 over OpenVINO's own INT8 (NNCF on convert_model) <= 10%",
                                    {"models": models})
