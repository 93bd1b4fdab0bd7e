"""The benchmark command: argument parsing, a --quick run in-process, its JSON, markdown and plots.

Runs on whichever backend JAX has (a few seconds on CPU: two ops, small shapes).
"""
from __future__ import annotations

import json
import math
import types

import pytest

from jax_kernels import bench, reference
from jax_kernels._bench import cases, report, runner, timing

ROW_KEYS = {"op", "impl", "dtype", "shape", "case", "group", "params", "timer", "time_ms", "iterations",
            "bytes", "flops", "gbps", "tflops", "frac_ceiling", "ratio", "max_rel_err", "l2_warm", "error",
            "device"}


def test_cli_arguments_parse():
    p = bench.build_parser()
    a = p.parse_args(["--quick", "--ops", "softmax,layer_norm", "--dtypes", "bf16,float32", "--json", "x.json",
                      "--plot-dir", "plots", "--iterations", "3"])
    assert a.quick and a.json == "x.json" and a.plot_dir == "plots" and a.iterations == 3
    assert cases.parse_ops(a.ops) == ("softmax", "layer_norm")
    assert cases.parse_dtypes(a.dtypes) == ("bfloat16", "float32")
    m = p.parse_args(["--model", "--layers", "2", "--width", "64", "--heads", "4", "--batch", "1", "--seq", "8"])
    assert m.model and (m.layers, m.width, m.heads, m.batch, m.seq) == (2, 64, 4, 1, 8)


@pytest.mark.parametrize("flag,value", [("--ops", "softmax,nope"), ("--dtypes", "float64")])
def test_cli_rejects_unknown_names(flag, value, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--quick", flag, value, "--list"])
    assert e.value.code == 2
    assert value.split(",")[-1] in capsys.readouterr().err


def test_default_sweep_is_the_issues_sweep():
    cs = cases.default_cases()
    sweep = [c for c in cs if "sweep" in c.tags]
    assert len(sweep) == 4 * 3 * len(cases.SWEEP_COLS)
    assert {c.shape for c in sweep if c.op == "softmax" and c.dtype == "float32"} == {
        (24576 if n == 65536 else 49152, n) for n in cases.SWEEP_COLS}
    assert any("masked" in c.tags and c.shape == (16, 2048, 2048) and c.dtype == "bfloat16" for c in cs)
    assert any("non-last-axis" in c.tags for c in cs)
    assert sum(c.op == "transpose" and "ragged" not in c.tags for c in cs) == 13  # issue 5's cases
    assert sum(c.op == "transpose" and "ragged" in c.tags for c in cs) == 4
    assert sum(c.group == "matmul" for c in cs) == 12
    assert all(c.flops == 0 for c in cs if c.group != "matmul")


def test_filters_select_cases():
    cs = bench.select_cases(bench.build_parser().parse_args(["--quick", "--ops", "transpose", "--dtypes", "int8"]))
    assert cs and all(c.op == "transpose" and c.dtype == "int8" for c in cs)


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "quick.json"
    rc = bench.main(["--quick", "--ops", "rms_norm,transpose", "--dtypes", "float32,int8", "--json", str(path),
                     "--no-progress", "--iterations", "3"])
    return rc, json.loads(path.read_text()), path


def test_quick_run_writes_well_formed_json(quick_results):
    rc, res, _ = quick_results
    meta, rows = res["meta"], res["rows"]
    assert rc == 0, [r["error"] for r in rows if r["error"]]
    assert meta["device"]["backend"] and meta["versions"]["jax"] and meta["method"]
    assert meta["copy_ceiling_gbps"] > 0 and meta["timer"] in ("cupti", "host")
    assert {r["op"] for r in rows} == {"rms_norm", "transpose"}
    assert {r["dtype"] for r in rows} <= {"float32", "int8"}
    assert len(rows) % 2 == 0 and {r["impl"] for r in rows} == set(runner.IMPLS)
    for r in rows:
        assert ROW_KEYS <= set(r), ROW_KEYS - set(r)
        assert r["error"] is None
        assert r["time_ms"] > 0 and r["iterations"] >= 3 and r["bytes"] > 0
        assert r["gbps"] == pytest.approx(r["bytes"] / (r["time_ms"] * 1e-3) / 1e9)
        assert r["frac_ceiling"] == pytest.approx(r["gbps"] / meta["copy_ceiling_gbps"])
        if r["impl"] == "jax_kernels":
            assert r["ratio"] > 0 and math.isfinite(r["ratio"])
            assert r["max_rel_err"] <= (0.0 if r["op"] == "transpose" else 1e-5)
        else:
            assert r["ratio"] is None


def test_markdown_and_rerender(quick_results, tmp_path):
    _, res, path = quick_results
    md = report.to_markdown(res)
    assert "| op | dtype | case |" in md and "rms_norm" in md and "transpose" in md
    out = tmp_path / "out.md"
    assert bench.main(["--from-json", str(path), "--markdown", str(out)]) == 0
    assert out.read_text().strip() == md.strip()


def test_plots(quick_results, tmp_path):
    pytest.importorskip("matplotlib")
    from jax_kernels._bench import plots
    _, res, _ = quick_results
    written = plots.write_plots(res, str(tmp_path))
    names = {p.rsplit("/", 1)[-1] for p in written}
    assert {"bandwidth_rms_norm.png", "transpose_bandwidth.png"} <= names
    assert all((tmp_path / n).stat().st_size > 10_000 for n in names)


def test_a_failing_case_is_recorded_and_the_run_goes_on():
    def broken(*args, **kwargs):
        raise RuntimeError("kernel exploded\nsecond line")

    ours = types.SimpleNamespace(softmax=broken, rms_norm=reference.rms_norm)
    device = timing.describe_device()
    timer = timing.Timer(device, 3, min_time_s=0.0)
    cs = [cases.norm_softmax_case("softmax", "float32", (8, 32)), cases.norm_softmax_case("rms_norm", "float32", (8, 32))]
    rows = runner.run_cases(cs, ours, reference, timer, ceiling_gbps=1.0, device=device.kind, progress=False)
    mine = {r["op"]: r for r in rows if r["impl"] == "jax_kernels"}
    base = {r["op"]: r for r in rows if r["impl"] == "jnp"}
    assert mine["softmax"]["error"] == "RuntimeError: kernel exploded" and mine["softmax"]["time_ms"] is None
    assert base["softmax"]["error"] is None and base["softmax"]["time_ms"] > 0
    assert mine["rms_norm"]["error"] is None and mine["rms_norm"]["max_rel_err"] == 0.0
    assert "kernel exploded" in report.format_table(rows, {"device": {}, "versions": {}})


def test_max_rel_err_handles_masked_infinities():
    import jax.numpy as jnp
    a = jnp.array([0.0, -jnp.inf, 1.0])
    assert runner.max_rel_err(a, a) == 0.0
    assert runner.max_rel_err(a.at[2].set(1.5), a) == pytest.approx(0.5)
    assert math.isnan(runner.max_rel_err(a.at[0].set(jnp.nan), a))


# ---- --sharded: the multi-device cases (structure only; CI times nothing meaningful) -------------------

@pytest.fixture(scope="module")
def sharded_results(tmp_path_factory):
    """--sharded --quick on the default backend's devices when there are several (the 8 host devices
    conftest asks for on CPU), else on those 8 host devices through the same code path."""
    import jax
    d = tmp_path_factory.mktemp("sharded")
    path, md = d / "sharded.json", d / "sharded.md"
    argv = ["--sharded", "--quick", "--iterations", "1", "--json", str(path), "--markdown", str(md)]
    if len(jax.devices()) >= 2:
        rc = bench.main(argv)
    else:
        args = bench.build_parser().parse_args(argv)
        args.argv = argv
        results = bench.run_sharded_cli(args, devices=jax.devices("cpu"))
        report.write_json(str(path), results)
        md.write_text(report.to_markdown(results) + "\n")
        rc = 0
    return rc, json.loads(path.read_text()), path, md


def test_sharded_run_writes_well_formed_json(sharded_results):
    from jax_kernels._bench import sharded
    rc, res, _, _ = sharded_results
    meta, rows = res["meta"], res["sharded"]
    assert rc == 0, [r["error"] for r in rows if r["error"]]
    assert meta["mode"] == "sharded-quick" and meta["timer"] == "wall" and meta["method"] == sharded.METHOD
    assert meta["n_devices"] >= 2 and meta["mesh"] == {sharded.AXIS: meta["n_devices"]}
    cases = sharded.quick_cases()
    assert len(rows) == 2 * len(cases) and [r["impl"] for r in rows] == list(sharded.IMPLS) * len(cases)
    assert {(r["op"], r["layout"]) for r in rows} == {
        ("layer_norm", "hidden"), ("rms_norm", "hidden"), ("layer_norm", "rows"), ("softmax", "rows"),
        ("log_softmax", "rows"), ("softmax", "hidden")}
    for r in rows:
        assert r["error"] is None, r
        assert r["time_ms"] > 0 and r["pipelined_ms"] > 0 and r["iterations"] == 1 and r["bytes"] > 0
        assert set(r["collectives"]) == set(sharded.COLLECTIVES)
        assert r["max_rel_err"] <= (1e-5 if r["dtype"] == "float32" else 1.6e-2)
        if r["impl"] != "jax_kernels":
            assert r["ratio"] is None
            continue
        # Ours never gathers the data: rows sharded -> no collective; the op's axis sharded -> a few
        # all-reduces of per-row statistics. The output keeps the input's sharding.
        assert r["all_gathers"] == 0 and r["gathers_data"] is False
        want = {"layer_norm": 2, "rms_norm": 1, "softmax": 2}[r["op"]] if r["layout"] == "hidden" else 0
        assert r["collectives"] == dict.fromkeys(sharded.COLLECTIVES, 0) | {"all-reduce": want}
        assert r["out_spec"] == r["x_spec"]
        assert r["ratio"] > 0 and r["ratio_pipelined"] > 0


def test_sharded_markdown_and_rerender(sharded_results, tmp_path):
    _, res, path, md = sharded_results
    text = md.read_text()
    assert "| op | dtype | shape | x sharding |" in text and "ours: 0 all-gather(s)" in text
    out = tmp_path / "out.md"
    assert bench.main(["--from-json", str(path), "--markdown", str(out)]) == 0
    assert out.read_text().strip() == text.strip()


def test_sharded_needs_two_devices(monkeypatch, tmp_path, capsys):
    import jax
    one = jax.devices()[:1]
    monkeypatch.setattr(jax, "devices", lambda *a, **k: one)
    path = tmp_path / "s.json"
    assert bench.main(["--sharded", "--quick", "--json", str(path)]) == 0
    assert "needs >= 2 devices" in capsys.readouterr().err and not path.exists()


def test_summary_keeps_ragged_cases_apart():
    # The issues' figures per op leave out the cases beyond their lists (tagged "ragged", session 37).
    def row(impl, case, ratio, tags, frac):
        return dict(op="transpose", impl=impl, dtype="int8", case=case, tags=tags, ratio=ratio,
                    frac_ceiling=frac, bytes=200e6, error=None)
    rows = [row("jax_kernels", "a", 1.2, [], 0.95), row("jnp", "a", None, [], 0.8),
            row("jax_kernels", "b", 0.5, ["ragged"], 0.4), row("jnp", "b", None, ["ragged"], 0.6)]
    s = report.summary(rows)
    assert list(s) == ["transpose", "transpose (ragged)"]
    assert s["transpose"]["min_ratio"] == 1.2 and s["transpose"]["min_frac_ceiling_over_100MB"] == 0.95
    assert s["transpose (ragged)"]["min_ratio"] == 0.5 and s["transpose (ragged)"]["cases"] == 1


def test_short_gpu_calls_are_timed_more_often():
    """GPU timer: `iterations` calls, up to 10x as many for calls short enough (50 ms of host-timed calls), always
    within half the free device memory (the profiler keeps every output alive)."""
    gpu = timing.DeviceInfo("gpu", "test", "", None, None)
    timer = timing.Timer(gpu, 10)  # on a machine without CUPTI this falls back to the host timer: calls_for is the same
    assert timer.calls_for(0) == 10
    assert timer.calls_for(0, call_s=30e-6) == 100     # a few-us kernel behind ~30 us of dispatch
    assert timer.calls_for(0, call_s=2e-3) == 25
    assert timer.calls_for(0, call_s=20e-3) == 10
    small = timing.DeviceInfo("gpu", "test", "", 1000 + timing._bytes_in_use(), None)
    assert timing.Timer(small, 10).calls_for(100, call_s=30e-6) == 5
    cpu = timing.DeviceInfo("cpu", "test", "", None, None)
    assert timing.Timer(cpu, 10).calls_for(0, call_s=30e-6) == 10
