"""jax-kernels-bench: every op against its jax.numpy equivalent on this machine, and a GPT forward pass.

    jax-kernels-bench                                  # the sweeps of the speed issues (GPU: ~5 min on an H100)
    jax-kernels-bench --quick                          # a few small shapes per op (seconds on a CPU)
    jax-kernels-bench --ops softmax,layer_norm --dtypes bf16 --json out.json --plot-dir plots
    jax-kernels-bench --model [--layers 12 --width 768 --heads 12 --batch 8 --seq 1024]
    jax-kernels-bench --sharded --json sharded.json --markdown sharded.md   # >= 2 devices, 1-D mesh
    jax-kernels-bench --from-json out.json --plot-dir plots --markdown out.md   # re-render saved results

GPU: CUPTI kernel time (median of N calls); CPU: host timer. The copy ceiling (x * c over 1 GiB) is
measured in the same run; memory-bound cases are reported as a fraction of it. Method: `--method`.
Exit status 1 if any case failed (the failure is recorded in its row; the run goes on).
"""
from __future__ import annotations

import argparse
import datetime
import sys

from ._bench import cases as _cases
from ._bench import report


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jax-kernels-bench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--quick", action="store_true", help="a handful of small shapes per op (CI, smoke tests)")
    p.add_argument("--full", action="store_true",
                   help="the full GPU sweeps (or GPT-2 small) even without a GPU (default there: --quick)")
    p.add_argument("--ops", help=f"comma-separated subset of: {','.join(_cases.OPS)}")
    p.add_argument("--dtypes", help="comma-separated subset of: float32,bfloat16,float16,int8 (aliases f32,bf16,f16)")
    p.add_argument("--json", metavar="PATH", help="write every row and the metadata to PATH")
    p.add_argument("--plot-dir", metavar="DIR", help="write PNG figures to DIR (needs matplotlib)")
    p.add_argument("--markdown", metavar="PATH", help="write the README markdown tables to PATH")
    p.add_argument("--from-json", metavar="PATH", help="re-render table/plots/markdown from a saved results file")
    p.add_argument("--iterations", type=int,
                   help="timed calls per case (default: 10 GPU, up to 10x that for short calls; 20 CPU; 5 --quick)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--list", action="store_true", help="list the cases that would run, and exit")
    p.add_argument("--method", action="store_true", help="print the timing method and exit")
    p.add_argument("--debug", action="store_true", help="print the traceback of every failing case")
    m = p.add_argument_group("end-to-end model (GPT decoder forward, jax-kernels vs jnp)")
    m.add_argument("--model", action="store_true", help="run the GPT forward pass instead of the op sweeps")
    from ._bench.model_bench import GPT2_SMALL, TINY
    for name in GPT2_SMALL:
        m.add_argument(f"--{name}", type=int,
                       help=f"default {GPT2_SMALL[name]} (GPT-2 small), {TINY[name]} with --quick")
    m.add_argument("--model-dtype", default="bfloat16", choices=_cases.FLOAT_DTYPES)
    m.add_argument("--model-precision", choices=("default", "high", "highest"),
                   help="matmul precision on both sides (default: JAX's; float32 may use TF32 on GPUs)")
    s = p.add_argument_group("sharded (norms and softmax on a 1-D mesh over all devices, ours vs jnp)")
    s.add_argument("--sharded", action="store_true",
                   help="run the sharded cases instead of the op sweeps (needs >= 2 devices; on fewer it "
                        "says so and exits 0); wall-clock timing; --ops/--dtypes filter them")
    return p


def select_cases(args) -> list:
    ops, dtypes = _cases.parse_ops(args.ops), _cases.parse_dtypes(args.dtypes)
    return (_cases.quick_cases if args.quick else _cases.default_cases)(ops, dtypes)


def _meta(args, device, timer, ceiling, copy_bytes, mode):
    from ._bench import timing
    return dict(mode=mode, date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                device=device.as_dict(), versions=timing.versions(), timer=timer.name,
                copy_ceiling_gbps=ceiling, copy_bytes=copy_bytes,
                method=timing.METHOD_GPU if timer.name == "cupti" else timing.METHOD_CPU,
                argv=sys.argv[1:] if args.argv is None else args.argv)


def _emit(results, args):
    if args.json:
        report.write_json(args.json, results)
        print(f"wrote {args.json}", file=sys.stderr)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report.to_markdown(results) + "\n")
        print(f"wrote {args.markdown}", file=sys.stderr)
    if args.plot_dir:
        from ._bench import plots
        try:
            for path in plots.write_plots(results, args.plot_dir):
                print(f"wrote {path}", file=sys.stderr)
        except RuntimeError as e:
            print(f"plots skipped: {e}", file=sys.stderr)


def run_benchmark(args, ours=None) -> dict:
    """Runs the op sweeps selected by `args`; `ours` defaults to the jax_kernels package."""
    from . import reference
    from ._bench import runner, timing
    if ours is None:
        import jax_kernels as ours
    device = timing.describe_device()
    if not device.on_gpu:
        timing.warn("no GPU: timing on CPU with a host timer; figures are not GPU figures")
    elif not getattr(ours, "WITH_CUDA", True):
        timing.warn("this jax-kernels build has no CUDA kernels (built without nvcc): the jax-kernels cases "
                    "will fail on this GPU; reinstall with a CUDA compiler on PATH")
    iterations = args.iterations or (5 if args.quick else (10 if device.on_gpu else 20))
    timer = timing.Timer(device, iterations, min_time_s=0.05 if args.quick else 0.25)
    selected = select_cases(args)
    rows: list = []
    results = dict(meta=None, rows=rows)
    ceiling, copy_bytes = timing.copy_ceiling(timer, quick=args.quick)
    results["meta"] = _meta(args, device, timer, ceiling, copy_bytes, "quick" if args.quick else "default")
    timing.warn(f"{device.kind}: copy ceiling {ceiling:.0f} GB/s; {len(selected)} cases x 2 implementations, "
                f"timer {timer.name}, up to {iterations} calls each")

    def save_partial(_rows):  # a run killed by a time limit still leaves its finished cases
        if args.json:
            results["meta"]["partial"] = True
            report.write_json(args.json, results)

    try:
        runner.run_cases(selected, ours, reference, timer, ceiling_gbps=ceiling, device=device.kind,
                         seed=args.seed, progress=not args.no_progress, debug=args.debug, rows_out=rows,
                         on_case=save_partial)
    except KeyboardInterrupt:
        timing.warn(f"interrupted: keeping the {len(rows) // 2} of {len(selected)} cases done")
        results["meta"]["interrupted"] = True
    results["meta"].pop("partial", None)
    ceiling_end, _ = timing.copy_ceiling(timer, quick=args.quick)
    results["meta"]["copy_ceiling_gbps_start_end"] = [ceiling, ceiling_end]
    if ceiling_end > ceiling:  # report the best of the two, and re-derive the fractions from it
        results["meta"]["copy_ceiling_gbps"] = ceiling_end
        for r in rows:
            if r.get("frac_ceiling") is not None:
                r["frac_ceiling"] = r["gbps"] / ceiling_end
    return results


def run_model_cli(args) -> dict:
    from ._bench import model_bench, timing
    from .models import gpt
    device = timing.describe_device()
    if not device.on_gpu:
        timing.warn("no GPU: timing on CPU with a host timer; figures are not GPU figures")
    preset = model_bench.TINY if args.quick else model_bench.GPT2_SMALL
    if not device.on_gpu and not args.quick:
        timing.warn("GPT-2 small (batch 8 x seq 1024) takes minutes on a CPU; --quick runs a tiny model")
    pick = {k: getattr(args, k) if getattr(args, k) is not None else v for k, v in preset.items()}
    cfg = gpt.GPTConfig(layers=pick["layers"], width=pick["width"], heads=pick["heads"], vocab=pick["vocab"],
                        max_seq=max(1024, pick["seq"]), dtype=args.model_dtype, precision=args.model_precision)
    timer = timing.Timer(device, args.iterations or 10)
    timing.warn(f"{device.kind}: GPT forward, {cfg.layers} layers x {cfg.width} wide, batch {pick['batch']} "
                f"x seq {pick['seq']}")
    m = model_bench.run_model(cfg, pick["batch"], pick["seq"], timer, seed=args.seed,
                              wall_calls=3 if args.quick else 10, log=timing.warn)
    meta = _meta(args, device, timer, None, 0, "model")
    meta["method"] = model_bench.__doc__.strip()
    return dict(meta=meta, rows=[], model=m)


def select_sharded(args) -> list:
    from ._bench import sharded
    ops = _cases.parse_ops(args.ops) if args.ops else None
    dtypes = _cases.parse_dtypes(args.dtypes) if args.dtypes else None
    return sharded.select(args.quick, ops, dtypes)


def run_sharded_cli(args, devices=None) -> dict | None:
    """The sharded cases on `devices` (default: every device of the default backend); None when there are
    fewer than two."""
    import jax

    from ._bench import sharded, timing
    devices = list(devices or jax.devices())
    if len(devices) < 2:
        print(f"jax-kernels-bench --sharded: needs >= 2 devices, found {len(devices)} "
              f"({jax.default_backend()}); no results written. On a CPU, JAX_NUM_CPU_DEVICES=8 gives 8 host "
              "devices.", file=sys.stderr)
        return None
    device = timing.describe_device()
    if not device.on_gpu:
        timing.warn("no GPU: timing host devices with a wall clock; figures are not GPU figures")
    iterations = max(args.iterations or (5 if args.quick else 30), 1)
    selected = select_sharded(args)
    timing.warn(f"{device.kind}: {len(selected)} sharded cases x 2 implementations on {len(devices)} devices, "
                f"{iterations} calls each (wall clock)")
    meta = _meta(args, device, argparse.Namespace(name="wall"), None, 0, "sharded-quick" if args.quick else "sharded")
    meta.update(method=sharded.METHOD, n_devices=len(devices), mesh={sharded.AXIS: len(devices)},
                device_kinds=sorted({d.device_kind for d in devices}))
    results = dict(meta=meta, rows=[], sharded=[])

    def save_partial(_rows):  # a run killed by a time limit still leaves its finished cases
        if args.json:
            report.write_json(args.json, dict(results, meta=dict(meta, partial=True)))

    try:
        sharded.run(selected, devices, iterations, seed=args.seed, debug=args.debug, log=timing.warn,
                    rows=results["sharded"], on_case=save_partial)
    except KeyboardInterrupt:
        timing.warn(f"interrupted: keeping the {len(results['sharded']) // 2} of {len(selected)} cases done")
        meta["interrupted"] = True
    return results


def _interrupt_on_sigterm():
    """`timeout` sends SIGTERM: end like Ctrl-C, so the finished cases are still reported and saved."""
    import signal
    import threading
    if threading.current_thread() is threading.main_thread():
        def handler(signum, frame):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, handler)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = argv
    if not (args.quick or args.full or args.method or args.list or args.from_json):
        import jax
        if jax.default_backend() == "cpu":
            # The GPU sweeps hold tensors of several GB (49152 x 65536) and would take hours on a CPU.
            print("jax-kernels-bench: no GPU, running the --quick sizes (pass --full for the GPU sweeps)",
                  file=sys.stderr)
            args.quick = True
    if args.method:
        from ._bench import timing
        print(timing.METHOD_GPU + "\n\nOn CPU: " + timing.METHOD_CPU)
        return 0
    try:
        if args.sharded:
            selected = select_sharded(args)
        else:
            selected = None if (args.model or args.from_json) else select_cases(args)
    except ValueError as e:
        build_parser().error(str(e))
    if selected is not None and not selected:
        build_parser().error("no benchmark case matches --ops/--dtypes (see --list without filters)")
    if args.list:
        for c in selected or []:
            print(f"{c.op:12s} {c.dtype:9s} {c.label}" + ("  (sharded)" if args.sharded else ""))
        return 0
    if args.from_json:
        results = report.read_json(args.from_json)
    elif args.model:
        results = run_model_cli(args)
    elif args.sharded:
        _interrupt_on_sigterm()
        results = run_sharded_cli(args)
        if results is None:
            return 0
    else:
        _interrupt_on_sigterm()
        results = run_benchmark(args)
    if results.get("rows"):
        print(report.format_table(results["rows"], results["meta"]))
    if results.get("model"):
        from ._bench.model_bench import format_model
        print(format_model(results["model"]))
    if results.get("sharded"):
        from ._bench.sharded import format_table
        print(format_table(results))
    _emit(results, args)
    failed = any(r.get("error") for r in results.get("rows", []))
    failed |= any(r.get("error") for r in (results.get("model") or {}).get("impls", {}).values())
    failed |= any(r.get("error") for r in results.get("sharded") or [])
    failed |= bool(results.get("meta", {}).get("interrupted"))
    return 1 if failed and not args.from_json else 0


if __name__ == "__main__":
    sys.exit(main())
