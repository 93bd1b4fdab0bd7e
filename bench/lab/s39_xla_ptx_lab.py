"""Session 39: XLA's own kernels launched as our custom call (bench/lab/s39_ptx_ffi.cc), timed beside ours and jnp's
under the benchmark's timer, for the cases where XLA stays ahead: float32 / int8 2048x512 transposes (0.94-0.98x) and
the 16-bit LayerNorm at 32 columns (0.90-0.94x). If XLA's PTX launched by us runs at XLA's time, the difference is
in the kernel's code; if at ours, it is in how the kernel is launched.

The process dumps its own compilations (--xla_dump_to), so the PTX timed is the kernel XLA chose in this process
(its transposes are autotuned). Launch dimensions come from the dump's thunk sequence (grid, threads, shared
memory); S39_GRID="case=gx,gy,gz;..." / S39_SMEM="case=bytes;..." override them; S39_PTX_OUT=DIR keeps each PTX; S39_ARGORDER="case=i,j,k;..." passes the operands to XLA's kernel in that order.

Method as bench/lab/s34_rowcopy_lab.py (CUPTI, median of 10 calls; best of rotated rounds; outputs compared with
jnp's, exactly: the same kernel must give the same bits).
  python bench/lab/s39_xla_ptx_lab.py LIB.so [CASE ...]
"""
import ctypes
import glob
import os
import re
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="s39dump_")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
                           f" --xla_dump_to={DUMP} --xla_dump_hlo_as_text --xla_dump_emitter_re=.* --xla_gpu_dump_llvmir")
os.environ.setdefault("JK_NORM_TIER_DYNAMIC", "1")  # JK_NORM_TIER re-read at every launch (the tokens below)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

try:  # S39_NO_PACKAGE=1: a call without the package build (jnp, XLA's kernel and the lab kernels only)
    if os.environ.get("S39_NO_PACKAGE") == "1":
        raise ImportError("S39_NO_PACKAGE")
    import jax_kernels as jk  # noqa: E402
    from jax_kernels import reference as ref  # noqa: E402
    from jax_kernels._bench.timing import Timer, copy_ceiling, describe_device  # noqa: E402
except ImportError:  # the package's reference and timer, loaded from the source tree without its extension
    import importlib.util
    _root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "jax_kernels")

    def _load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
        return mod
    jk = None
    ref = _load("s39_reference", os.path.join(_root, "reference.py"))
    _timing = _load("s39_timing", os.path.join(_root, "_bench", "timing.py"))
    Timer, describe_device, copy_ceiling = _timing.Timer, _timing.describe_device, _timing.copy_ceiling

ON_GPU = jax.default_backend() == "gpu"
# S39_ITERS (session 42): calls a median is taken over (the benchmark's 10 by default).
TIMER = Timer(describe_device(), iterations=int(os.environ.get("S39_ITERS", "10")), min_time_s=0.25, short_factor=1)
ROUNDS = int(os.environ.get("S39_ROUNDS", "5"))
key = jax.random.key(0)
LIB = ctypes.CDLL(sys.argv[1])
jax.ffi.register_ffi_target("s39_ptx", jax.ffi.pycapsule(LIB.S39PtxCall), platform="CUDA")


def overrides(var):
    out = {}
    for item in filter(None, os.environ.get(var, "").split(";")):
        k, v = item.split("=")
        out[k] = [int(t) for t in v.split(",")]
    return out


def arrays(kind, shape, dtype):
    if kind in ("softmax", "log_softmax"):  # session 41
        return (jax.random.normal(key, shape, dtype),)
    if kind == "transpose":
        if dtype == jnp.int8:
            return (jax.random.randint(key, shape, -128, 127, jnp.int8),)
        return (jax.random.normal(key, shape, dtype),)
    ks = jax.random.split(key, 3)
    n = shape[-1]
    out = (jax.random.normal(ks[0], shape, dtype), (1 + 0.1 * jax.random.normal(ks[1], (n,))).astype(dtype),
           (0.1 * jax.random.normal(ks[2], (n,))).astype(dtype))
    return out if kind == "layer_norm" else out[:2]


# name -> (kind, shape, dtype)
CASES = {
    "t_f32_2048x512": ("transpose", (2048, 512), jnp.float32),
    "t_i8_2048x512": ("transpose", (2048, 512), jnp.int8),
    "t_bf16_2048x512": ("transpose", (2048, 512), jnp.bfloat16),
    "t_f32_1024x1024": ("transpose", (1024, 1024), jnp.float32),
    "t_f32_512x2048": ("transpose", (512, 2048), jnp.float32),
    "t_f32_4096x256": ("transpose", (4096, 256), jnp.float32),
    "ln_bf16_32": ("layer_norm", (49152, 32), jnp.bfloat16),
    "ln_f16_32": ("layer_norm", (49152, 32), jnp.float16),
    "ln_bf16_128": ("layer_norm", (49152, 128), jnp.bfloat16),
    "ln_f16_128": ("layer_norm", (49152, 128), jnp.float16),
    "ln_f32_32": ("layer_norm", (49152, 32), jnp.float32),
    "rms_bf16_32": ("rms_norm", (49152, 32), jnp.bfloat16),
    "rms_f16_32": ("rms_norm", (49152, 32), jnp.float16),
    "rms_f32_32": ("rms_norm", (49152, 32), jnp.float32),
    "rms_bf16_128": ("rms_norm", (49152, 128), jnp.bfloat16),
    "rms_f16_128": ("rms_norm", (49152, 128), jnp.float16),
    # session 40: ragged grids (the one-pack lanes' last CTA moved back over its neighbour's rows)
    "ln_bf16_32r": ("layer_norm", (49087, 32), jnp.bfloat16),
    "ln_f32_32r": ("layer_norm", (49087, 32), jnp.float32),
    "rms_f16_32r": ("rms_norm", (49087, 32), jnp.float16),
    "ln_bf16_128r": ("layer_norm", (49087, 128), jnp.bfloat16),
    # session 41: RMSNorm's held words on a ragged grid
    "rms_f16_128r": ("rms_norm", (49087, 128), jnp.float16),
}
# session 42: 16-bit rows of 64 columns (the 8-lane one-pack layout's other rows)
CASES.update({"ln_bf16_64": ("layer_norm", (49152, 64), jnp.bfloat16), "ln_f16_64": ("layer_norm", (49152, 64), jnp.float16),
              "rms_bf16_64": ("rms_norm", (49152, 64), jnp.bfloat16),
              # call 11: float32 rows of 16 and 64 columns (off the sweep, 0.95-0.98x jnp in session 29)
              "ln_f32_16": ("layer_norm", (49152, 16), jnp.float32), "rms_f32_16": ("rms_norm", (49152, 16), jnp.float32),
              "ln_f32_64": ("layer_norm", (49152, 64), jnp.float32), "rms_f32_64": ("rms_norm", (49152, 64), jnp.float32),
              # x + 4 (|mean| = 4 std): rows kSumsFirst sends to the second pass
              "ln_f32_32m": ("layer_norm", (49152, 32), jnp.float32)})
SHIFTED = {"ln_f32_32m": 4.0}
# session 41: softmax / log-softmax short rows (sm_ / lsm_ + dtype + columns)
for _k, _p in (("softmax", "sm"), ("log_softmax", "lsm")):
    for _d, _t in (("bf16", jnp.bfloat16), ("f16", jnp.float16), ("f32", jnp.float32)):
        for _c in (32, 128):
            CASES[f"{_p}_{_d}_{_c}"] = (_k, (49152, _c), _t)
# session 41: LayerNorm rows over 100 MB at the 90%-of-copy line (bf16 2048 89.8-90.5%, float32 2048 90-91%)
for _d, _t in (("bf16", jnp.bfloat16), ("f16", jnp.float16), ("f32", jnp.float32)):
    CASES[f"ln_{_d}_2048"] = ("layer_norm", (49152, 2048), _t)


def functions(name, kind):
    if kind in ("softmax", "log_softmax"):
        xla = lambda x: getattr(ref, kind)(x)  # noqa: E731
        ours = lambda x: getattr(jk, kind)(x)  # noqa: E731
    elif kind == "transpose":
        xla = lambda x: jnp.transpose(x)  # noqa: E731
        ours = lambda x: jk.transpose(x, (1, 0))  # noqa: E731
    elif kind == "layer_norm":
        xla = lambda x, s, b: ref.layer_norm(x, s, b)  # noqa: E731
        ours = lambda x, s, b: jk.layer_norm(x, s, b)  # noqa: E731
    else:
        xla = lambda x, s: ref.rms_norm(x, s)  # noqa: E731
        ours = lambda x, s: jk.rms_norm(x, s)  # noqa: E731
    xla.__name__ = f"xla_{name}"
    return jax.jit(xla), jax.jit(ours)


def dump_files(fname, suffix):
    return sorted(f for f in glob.glob(os.path.join(DUMP, f"*jit_{fname}.*{suffix}")) if "autotun" not in f)


def entries(ptx):
    """(name, [param types], reqntid) of each .entry in the PTX text."""
    out = []
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)\s*(.*?)\{", ptx, re.S):
        params = re.findall(r"\.param\s+(\.\w+)", m.group(2))
        ntid = re.search(r"\.reqntid\s+(\d+)(?:,\s*(\d+))?(?:,\s*(\d+))?", m.group(3))
        block = [int(v) for v in ntid.groups(default="1")] if ntid else None
        out.append((m.group(1), params, block))
    return out


def thunks(fname):
    """(kernel, grid, block, dynamic shared bytes) of each kernel thunk XLA lists for the module."""
    out = []
    for f in dump_files(fname, "thunk_sequence.txt"):
        for m in re.finditer(r"(\w+) grid: \[(\d+), (\d+), (\d+)\] threads: \[(\d+), (\d+), (\d+)\]\s+"
                             r"shared_memory: (\d+) bytes", open(f).read()):
            v = [int(g) for g in m.groups()[1:]]
            out.append((m.group(1), v[0:3], v[3:6], v[6]))
    return out


def xla_kernel(name, fname):
    ptxs = dump_files(fname, ".ptx")
    ths = thunks(fname)
    if not ptxs or len(ths) != 1:
        raise RuntimeError(f"PTX {ptxs}, kernel thunks {ths} in {DUMP}")
    path = ptxs[-1]
    ptx = open(path).read()
    ents = entries(ptx)
    kernel, grid, block, smem = ths[0]
    print(f"  PTX {os.path.basename(path)}: entries " +
          "; ".join(f"{e[0]} params {len(e[1])} {set(e[1])} reqntid {e[2]}" for e in ents), flush=True)
    print(f"  thunk {kernel} grid {grid} block {block} shared {smem}", flush=True)
    for f in dump_files(fname, "after_optimizations.txt"):  # the fusion's operand order = the kernel's parameters
        for line in open(f):
            if " fusion(" in line and "ROOT" in line:
                print("  HLO", line.strip()[:160], flush=True)
    ent = [e for e in ents if e[0] == kernel]
    if len(ent) != 1:
        raise RuntimeError(f"no entry {kernel}")
    params = ent[0][1]
    if set(params) != {".u64"}:
        raise RuntimeError(f"non-pointer parameters {params}")
    grid = overrides("S39_GRID").get(name, grid)
    smem = overrides("S39_SMEM").get(name, [smem])[0]
    out = os.environ.get("S39_PTX_OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{name}.ptx"), "w") as f:
            f.write(ptx)
    return dict(path=path, kernel=kernel, grid=np.array(grid, np.int64), block=np.array(block, np.int64),
                smem=np.int64(smem), params=np.int64(len(params)), ints=np.zeros(1, np.int64))  # one unused int: an empty attribute array is avoided


# PTX files of lab kernels (comma-separated: s39_transpose_ptx_lab.cu, s39_norm_ptx_lab.cu compiled); each kernel is
# taken from the file that defines it.
LAB_PTX = [f for f in os.environ.get("S39_LAB_PTX", "").split(",") if f]


def lab_ptx_for(kernel):
    """The file defining `kernel`; "name@cubin" (session 40): the same entry from a .cubin in S39_LAB_PTX (nvcc's ptxas)
    rather than from PTX (the driver's JIT)."""
    name, _, kind = kernel.partition("@")
    for f in LAB_PTX:
        if kind == "cubin":
            if f.endswith(".cubin") and name.encode() + b"\0" in open(f, "rb").read():
                return f
        elif not f.endswith(".cubin") and re.search(r"\.entry\s+" + re.escape(name) + r"\(", open(f).read()):
            return f
    return None
T128, T256, T64 = (128, 1, 1), (256, 1, 1), (64, 1, 1)
# Call 2 timed xla_clone, xla_plain, xla_256, xla_64rows (1-D grids); call 3 xla_grid, reg_clone, xla_gridb,
# xla_grid64, xla64_grid, reg_b, xla_rt, reg_rt, reg_rt_check; call 4 xla_gridb, reg_clone, xla_rt, reg_rt, xla_rt_b,
# reg_rt_b, xla_rt_bytes, reg_rt_bytes, reg_rt_ofs; call 5 the two fastest as references for the package's lean tile.
LAB_KERNELS = {"t_f32_2048x512": {
    "xla_gridb": ((64, 16, 1), T128), "xla_rt_bytes": ((64, 16, 1), T128, (2048 * 4, 512 * 4))}}
EPS = int(np.float32(1e-5).view(np.uint32))  # the benchmark's LayerNorm epsilon, as the kernels' 32-bit parameter
# Call 9 timed ln{bf16,f16}_tri, _tri_early, _tri_checked, _tri4; call 12 lnbf16_e_clamp, _e_stats, _e_sel, _e_wide
# (steps towards the package's kernel, 6 pointer parameters); call 13 keeps the references for the package's kernel.
for _dt in ("bf16", "f16"):
    LAB_KERNELS[f"ln_{_dt}_32"] = {k: ((768, 1, 1), T128, (49152, EPS))
                                   for k in (f"ln{_dt}_tri_early", f"ln{_dt}_tri_early_checked")}
# Prepared for the next session (not run in session 39): the Triton layouts of the other short rows under jnp.
for _dt in ("bf16", "f16"):
    LAB_KERNELS[f"ln_{_dt}_128"] = {f"ln{_dt}_128_{c}": ((384, 1, 1), T256, (49152, EPS)) for c in ("tri", "tri3", "late")}
LAB_KERNELS["ln_f32_32"] = {f"lnf32_32_{c}": ((768, 1, 1), T128, (49152, EPS)) for c in ("tri", "late")}
# Session 40 (call 1 ran the prepared ones: 16-bit 128 columns tri 6.32, late 6.21 us against jnp 5.47 (2 CTAs an SM);
# float32 32 columns tri 2.82, late 2.85 against jnp 2.88): LnLanesB, 64-bit row bases (80 registers capped, no spill).
for _dt in ("bf16", "f16"):
    LAB_KERNELS[f"ln_{_dt}_128"] = {f"ln{_dt}_128_{c}": ((384, 1, 1), T256, (49152, EPS))
                                    for c in ("b", "b_late", "pk", "b3", "b3_late", "pk3", "pk3_late")}
    LAB_KERNELS[f"ln_{_dt}_128"][f"ln{_dt}_128_b4"] = ((768, 1, 1), T256, (49152, EPS))
LAB_KERNELS["ln_f32_32"].update({f"lnf32_32_{c}": ((768, 1, 1), T128, (49152, EPS)) for c in ("b", "b_late")})
# Session 40 call 3 (the package's one-pack lanes for every layout): only the best lab kernels as references.
if os.environ.get("S40_LAB_REFS") == "1":
    LAB_KERNELS = {"ln_bf16_32": {"lnbf16_tri_early": ((768, 1, 1), T128, (49152, EPS))},
                   "ln_f16_32": {"lnf16_tri_early": ((768, 1, 1), T128, (49152, EPS))},
                   "ln_bf16_128": {"lnbf16_128_b3_late": ((384, 1, 1), T256, (49152, EPS))},
                   "ln_f16_128": {"lnf16_128_b3_late": ((384, 1, 1), T256, (49152, EPS))},
                   "ln_f32_32": {"lnf32_32_b": ((768, 1, 1), T128, (49152, EPS))}}
# Session 40 call 12: the package's RMSNorm 16-bit 128 kernel (scale after the statistics) against scale first.
if os.environ.get("S40_OP_RMS") == "1":
    LAB_KERNELS = {f"rms_{d}_128": {f"op_rms{d}_128_{o}": ((384, 1, 1), T256, (49152, EPS)) for o in ("late", "early")}
                   for d in ("bf16", "f16")}
# Session 40 call 5: the package's device code behind the lab's parameters (bench/lab/s40_onepack_lab.cu), from PTX
# and from nvcc's cubin.
if os.environ.get("S40_OP_LAB") == "1":
    for _case, _k, _g, _t in (("ln_bf16_32", "op_lnbf16_32", 768, T128), ("ln_f32_32", "op_lnf32_32", 768, T128),
                              ("ln_bf16_128", "op_lnbf16_128", 384, T256)):
        for _v in (_k, _k + "@cubin"):
            LAB_KERNELS.setdefault(_case, {})[_v] = ((_g, 1, 1), _t, (49152, EPS))
# Session 41 call 1: RMSNorm 16-bit 128 columns, the package's kernel (s40_onepack_lab.cu) against the schedules of
# bench/lab/s41_rms128_lab.cu.
if os.environ.get("S41_RMS") == "1":
    LAB_KERNELS = {f"rms_{d}_128": {k: ((384, 1, 1), T256, (49152, EPS)) for k in
                                    [f"op_rms{d}_128_late"] + [f"rms41{d}_{v}" for v in
                                     ("stream", "hold", "hold_stream", "hold64", "pipe")]}
                   for d in ("bf16", "f16")}
# Session 41 call 2: the package's held-words layout (s40_onepack_lab.cu) for both norms against its previous layout
# and the lab's hold (s41_rms128_lab.cu).
if os.environ.get("S41_HOLD") == "1":
    LAB_KERNELS = {}
    for d in ("bf16", "f16"):
        LAB_KERNELS[f"ln_{d}_128"] = {k: ((384, 1, 1), T256, (49152, EPS)) for k in
                                      (f"op_ln{d}_128", f"op_ln{d}_128_hold", f"op_ln{d}_128_hold_late")}
        LAB_KERNELS[f"rms_{d}_128"] = {k: ((384, 1, 1), T256, (49152, EPS)) for k in
                                       (f"op_rms{d}_128_late", f"op_rms{d}_128_hold", f"rms41{d}_hold")}
# Session 41 call 3 (the package built with RMSNorm 16-bit 128 on held words): ours against the packed tier (the
# previous fallback), the held-words lab kernel as reference; held words at 16-bit 32 columns as lab kernels.
if os.environ.get("S41_CALL3") == "1":
    LAB_KERNELS = {}
    for d in ("bf16", "f16"):
        LAB_KERNELS[f"rms_{d}_128"] = {f"op_rms{d}_128_hold": ((384, 1, 1), T256, (49152, EPS))}
        LAB_KERNELS[f"rms_{d}_32"] = {k: ((768, 1, 1), T128, (49152, EPS)) for k in (f"op_rms{d}_32", f"op_rms{d}_32_hold")}
        LAB_KERNELS[f"ln_{d}_32"] = {k: ((768, 1, 1), T128, (49152, EPS)) for k in (f"op_ln{d}_32", f"op_ln{d}_32_hold")}
    TOKENS = {n: ["JK_NORM_TIER=packed 2 1"] for n in ("rms_bf16_128", "rms_f16_128", "rms_f16_128r")}
# Session 41 call 4: RMSNorm 16-bit 32 columns, CTA shapes of the 4-lane layout (s40_onepack_lab.cu) against the
# package's (op_rms*_32: 2 rows a thread, 128 threads, 768 CTAs).
if os.environ.get("S41_RMS32") == "1":
    LAB_KERNELS = {f"rms_{d}_32": {f"op_rms{d}_32{v}": ((g, 1, 1), (t, 1, 1), (49152, EPS)) for v, g, t in
                                   (("", 768, 128), ("_r1", 1536, 128), ("_r4", 384, 128), ("_t256", 384, 256),
                                    ("_t64", 1536, 64), ("_late", 768, 128))} for d in ("bf16", "f16")}
# Session 41 call 5: softmax / log-softmax on the one-pack lanes (bench/lab/s41_softmax_lab.cu), kernels (x, y, rows).
if os.environ.get("S41_SOFTMAX") == "1":
    LAB_KERNELS = {}
    for _p in ("sm", "lsm"):
        for _d in ("bf16", "f16"):
            LAB_KERNELS[f"{_p}_{_d}_32"] = {f"{_p}_{_d}_32": ((768, 1, 1), T128, (49152,))}
            LAB_KERNELS[f"{_p}_{_d}_128"] = {f"{_p}_{_d}_128{v}": ((g, 1, 1), T256, (49152,))
                                             for v, g in (("f", 384), ("h", 384), ("r4", 768))}
        LAB_KERNELS[f"{_p}_f32_32"] = {f"{_p}_f32_32": ((768, 1, 1), T128, (49152,))}
        LAB_KERNELS[f"{_p}_f32_128"] = {f"{_p}_f32_128{v}": ((g, 1, 1), T256, (49152,)) for v, g in (("r4", 1536), ("r8", 768))}
# Session 41 call 8: LayerNorm 2048 columns, the package's tiers under JK_NORM_TIER (no lab kernels); with
# S41_CEILING=1 the copy ceiling is measured first and each line gives GB/s and its share of it.
if os.environ.get("S41_WIDE") == "1":
    LAB_KERNELS = {}
    _half = ["JK_NORM_TIER=pblock 16", "JK_NORM_TIER=pblock 64", "JK_NORM_TIER=block 4 64 1",
             "JK_NORM_TIER=block 8 32 1", "JK_NORM_TIER=legacy"]
    S41_WIDE_TOKENS = {"ln_bf16_2048": _half, "ln_f16_2048": _half,
                       "ln_f32_2048": ["JK_NORM_TIER=block 4 128 1", "JK_NORM_TIER=block 8 64 1",
                                       "JK_NORM_TIER=block2 8 64", "JK_NORM_TIER=tworeads 256", "JK_NORM_TIER=bulk 0 0 0"]}
# Session 42 call 1: float32 LayerNorm 32 columns, bench/lab/s42_ln32_lab.cu's floors, statistics and layouts beside the
# package's device code (op_lnf32_32, s40_onepack_lab.cu). Grid: 49152 rows / (threads / lanes x rows a thread).
if os.environ.get("S42_LN32") == "1":
    LAB_KERNELS = {"ln_f32_32": {k: ((g, 1, 1), (t, 1, 1), (49152, EPS)) for k, g, t in (
        ("op_lnf32_32", 768, 128), ("s42_copy", 768, 128), ("s42_affine", 768, 128), ("s42_two", 768, 128),
        ("s42_one", 768, 128), ("s42_chan", 768, 128), ("s42_chan_r2", 1536, 128), ("s42_chan_r8", 384, 128),
        ("s42_chan_t256", 384, 256), ("s42_chan_t64", 1536, 64), ("s42_chan_w4", 768, 128),
        ("s42_chan_w4r4", 384, 128), ("s42_two_w4", 768, 128), ("s42_chan_w2", 768, 128),
        ("s42_chan_w2r2", 384, 128))}}
# Call 2: the package's device code on other CTA shapes of the 8-lane layout (s40_onepack_lab.cu) and the lab's at 2
# rows a thread; RMSNorm float32 32 at 4 and 2 rows a thread.
if os.environ.get("S42_LN32") == "2":
    LAB_KERNELS = {"ln_f32_32": {k: ((g, 1, 1), (t, 1, 1), (49152, EPS)) for k, g, t in (
        ("op_lnf32_32", 768, 128), ("op_lnf32_32_r2", 1536, 128), ("op_lnf32_32_r1", 3072, 128),
        ("op_lnf32_32_r2t256", 768, 256), ("op_lnf32_32_r2t64", 3072, 64), ("op_lnf32_32_r2late", 1536, 128),
        ("s42_copy_r2", 1536, 128), ("s42_two_r2", 1536, 128), ("s42_one_r2", 1536, 128), ("s42_chan_r2", 1536, 128),
        ("s42_chan_r1", 3072, 128), ("s42_chan_r2t256", 768, 256), ("s42_chan_r2t64", 3072, 64))},
        "rms_f32_32": {k: ((g, 1, 1), T128, (49152, EPS)) for k, g in (("op_rmsf32_32", 768), ("op_rmsf32_32_r2", 1536))}}
# Call 3: the rows reduced two at a time (kPairReduce, s40_onepack_lab.cu's *_p kernels) on every one-pack layout,
# against the same layouts row by row (the package's, and float32 32 at 2 rows a thread).
if os.environ.get("S42_LN32") == "3":
    LAB_KERNELS = {}
    for _case, _kern, _g, _t in (
            ("ln_f32_32", "op_lnf32_32", 768, T128), ("ln_f32_32", "op_lnf32_32_r2", 1536, T128),
            ("rms_f32_32", "op_rmsf32_32", 768, T128), ("rms_f32_32", "op_rmsf32_32_r2", 1536, T128),
            ("ln_bf16_32", "op_lnbf16_32", 768, T128), ("ln_f16_32", "op_lnf16_32", 768, T128),
            ("rms_bf16_32", "op_rmsbf16_32", 768, T128), ("rms_f16_32", "op_rmsf16_32", 768, T128),
            ("ln_bf16_128", "op_lnbf16_128", 384, T256), ("ln_f16_128", "op_lnf16_128", 384, T256),
            ("rms_bf16_128", "op_rmsbf16_128_hold", 384, T256), ("rms_f16_128", "op_rmsf16_128_hold", 384, T256)):
        for _v in (_kern, _kern + ("p" if _kern.endswith("_r2") else "_p")):  # row by row, by pairs
            LAB_KERNELS.setdefault(_case, {})[_v] = ((_g, 1, 1), _t, (49152, EPS))
# Call 4: float32 LayerNorm 32 columns with the statistics of the row shifted by its first element (Chan's merges, or
# the sum and sum of squares side by side; s42_ln32_lab.cu) at 2 and 4 rows a thread; 2 rows a thread for RMSNorm
# float32 32 and for the 16-bit rows of 64 columns.
if os.environ.get("S42_LN32") == "4":
    LAB_KERNELS = {"ln_f32_32": {k: ((g, 1, 1), T128, (49152, EPS)) for k, g in (
        ("op_lnf32_32", 768), ("op_lnf32_32_r2", 1536), ("s42_chan_r2", 1536), ("s42_chanshift_r2", 1536),
        ("s42_chanshift", 768), ("s42_sums_r2", 1536), ("s42_sums", 768), ("s42_one_r2", 1536))},
        "rms_f32_32": {k: ((g, 1, 1), T128, (49152, EPS)) for k, g in (("op_rmsf32_32", 768), ("op_rmsf32_32_r2", 1536))}}
    for _case, _k in (("ln_bf16_64", "op_lnbf16_64"), ("ln_f16_64", "op_lnf16_64"), ("rms_bf16_64", "op_rmsbf16_64")):
        LAB_KERNELS[_case] = {_k: ((768, 1, 1), T128, (49152, EPS)), _k + "_r2": ((1536, 1, 1), T128, (49152, EPS))}
# Call 5: LayerNorm's sums of x and x^2 reduced together (kSumsFirst, s40_onepack_lab.cu's *_s kernels) against the
# two passes, on the 32-column layouts (float32 at 4 and 2 rows a thread) and bf16 64; ln_f32_32m: every warp takes the
# second pass.
if os.environ.get("S42_LN32") == "5":
    LAB_KERNELS = {}
    for _case, _kern, _g in (("ln_f32_32", "op_lnf32_32", 768), ("ln_f32_32", "op_lnf32_32_s", 768),
                             ("ln_f32_32", "op_lnf32_32_r2", 1536), ("ln_f32_32", "op_lnf32_32_r2s", 1536),
                             ("ln_f32_32m", "op_lnf32_32_r2", 1536), ("ln_f32_32m", "op_lnf32_32_r2s", 1536),
                             ("ln_bf16_32", "op_lnbf16_32", 768), ("ln_bf16_32", "op_lnbf16_32_s", 768),
                             ("ln_f16_32", "op_lnf16_32", 768), ("ln_f16_32", "op_lnf16_32_s", 768),
                             ("ln_bf16_64", "op_lnbf16_64_r2", 1536), ("ln_bf16_64", "op_lnbf16_64_r2s", 1536)):
        LAB_KERNELS.setdefault(_case, {})[_kern] = ((_g, 1, 1), T128, (49152, EPS))
# Call 6 (Nsight Compute, one launch each): float32 32-column LayerNorm at 4 and 2 rows a thread, its 4-lane form, the
# copy and one reduction in the same layout; RMSNorm at 2 rows a thread.
if os.environ.get("S42_LN32") == "6":
    LAB_KERNELS = {"ln_f32_32": {k: ((g, 1, 1), T128, (49152, EPS)) for k, g in (
        ("op_lnf32_32", 768), ("op_lnf32_32_r2", 1536), ("s42_copy_r2", 1536), ("s42_one_r2", 1536),
        ("s42_two_w4", 768), ("s42_two_r2", 1536))},
        "rms_f32_32": {"op_rmsf32_32_r2": ((1536, 1, 1), T128, (49152, EPS))}}
# Call 12: the 16-lane layout (float32 64, 16-bit 128 columns) at 2 and 4 rows a thread against the package's 8 rows
# x 256 threads (s40_onepack_lab.cu's S42_W16 kernels).
if os.environ.get("S42_LN32") == "12":
    LAB_KERNELS = {}
    for _case, _base, _pkg in (("ln_f32_64", "op_lnf32_64", "op_lnf32_64"), ("rms_f32_64", "op_rmsf32_64", "op_rmsf32_64"),
                               ("ln_bf16_128", "op_lnbf16_128", "op_lnbf16_128"), ("ln_f16_128", "op_lnf16_128", "op_lnf16_128"),
                               ("rms_bf16_128", "op_rmsbf16_128", "op_rmsbf16_128_hold"),
                               ("rms_f16_128", "op_rmsf16_128", "op_rmsf16_128_hold")):
        LAB_KERNELS[_case] = {_pkg: ((384, 1, 1), T256, (49152, EPS))}
        for _v, _g, _t in (("r2t128", 3072, T128), ("r2t256", 1536, T256), ("r4t128", 1536, T128), ("r4t256", 768, T256)):
            LAB_KERNELS[_case][f"{_base}_{_v}"] = ((_g, 1, 1), _t, (49152, EPS))
LAB_POINTERS = {k: 6 for k in ("lnbf16_e_clamp", "lnbf16_e_stats", "lnbf16_e_sel", "lnbf16_e_wide")}
# Call 2: {"t_f32_2048x512": ["xla32"]} (2.50 us against 2.21: lost). Call 5: the register blocks ("nolean") against
# the lean tile (the default since it).
TOKENS = {n: ["nolean"] for n in ("t_f32_2048x512", "t_f32_1024x1024", "t_f32_512x2048", "t_f32_4096x256")}
# Call 10: the one-pack lanes (the 16-bit 32-column default since it) against the packed tier's default there.
TOKENS.update({n: ["JK_NORM_TIER=packed 2 1"] for n in ("ln_bf16_32", "ln_f16_32", "rms_bf16_32", "rms_f16_32")})
# Session 40: the one-pack lanes for every layout (call 3-4 also timed the other order of the parameters' loads and
# session 39's kernel, since removed): against the packed tier's previous defaults, and forced where they are not the
# default (RMSNorm 16-bit 128).
if os.environ.get("S40_TOKENS") == "1":
    _pk = lambda c: f"JK_NORM_TIER=packed {c}"  # noqa: E731
    TOKENS = {n: [_pk("2 1")] for n in ("ln_bf16_32", "ln_f16_32", "rms_bf16_32", "rms_f16_32", "ln_bf16_32r",
                                         "rms_f16_32r")}
    TOKENS.update({"ln_bf16_128": [_pk("4 1")], "ln_f16_128": [_pk("2 2")], "rms_bf16_128": ["JK_NORM_TIER=onepack"],
                   "rms_f16_128": ["JK_NORM_TIER=onepack"], "ln_f32_32": [_pk("2 2")], "ln_f32_32r": [_pk("2 2")],
                   "rms_f32_32": [_pk("2 1")], "ln_bf16_128r": [_pk("4 1")]})
    if os.environ.get("S40_RMS128") == "1":  # call 11: RMSNorm 16-bit 128 on the one-pack lanes by default
        TOKENS.update({"rms_bf16_128": [_pk("2 1")], "rms_f16_128": [_pk("2 1")]})


if os.environ.get("S42_TOKENS") == "1":  # session 42 call 7: the 16-bit 64-column rows on the one-pack lanes (forced)
    TOKENS = {n: ["JK_NORM_TIER=onepack"] for n in ("ln_bf16_64", "ln_f16_64", "rms_bf16_64")}
if os.environ.get("S42_TOKENS") == "2":  # call 11: float32 16 and 64 columns on the one-pack lanes (forced)
    TOKENS = {n: ["JK_NORM_TIER=onepack"] for n in ("ln_f32_16", "rms_f32_16", "ln_f32_64", "rms_f32_64")}


if os.environ.get("S41_WIDE") == "1":  # after the TOKENS above (call 8's first run lost them to them)
    TOKENS = S41_WIDE_TOKENS
    if os.environ.get("S41_WIDE2") == "1":  # call 9: a warp per row with 64 elements a lane (XLA's layout there)
        _half = ["JK_NORM_TIER=pblock 64", "JK_NORM_TIER=pwarp 64 256", "JK_NORM_TIER=pwarp 64 128",
                 "JK_NORM_TIER=pwarp 64 512"]
        TOKENS = {"ln_bf16_2048": _half, "ln_f16_2048": _half,
                  "ln_f32_2048": ["JK_NORM_TIER=block 8 64 1", "JK_NORM_TIER=block 8 64 2"]}


def with_env(tok, f):
    """f() with JK_TRANSPOSE_TIERS=tok, or VAR=value for a token of that form (both re-read by the launchers at every
    launch), or as is for tok None."""
    if tok is None:
        return f()
    var, val = tok.split("=", 1) if "=" in tok else ("JK_TRANSPOSE_TIERS", tok)
    os.environ[var] = val
    try:
        return f()
    finally:
        os.environ.pop(var, None)


def main(names):
    print(f"device: {jax.devices()[0].device_kind}; CUPTI median of 10 calls, best of {ROUNDS} rotated rounds; "
          f"dump {DUMP}", flush=True)
    ceiling = copy_ceiling(TIMER)[0] if os.environ.get("S41_CEILING") == "1" else None
    if ceiling:
        print(f"copy ceiling {ceiling:.0f} GB/s", flush=True)
    for name in names:
        kind, shape, dtype = CASES[name]
        args = arrays(kind, shape, dtype)
        if name in SHIFTED:
            args = (args[0] + jnp.asarray(SHIFTED[name], dtype),) + args[1:]
        xla, ours = functions(name, kind)
        want = jax.block_until_ready(xla(*args))
        out_struct = jax.ShapeDtypeStruct(want.shape, want.dtype)
        print(f"{name}: {kind} {shape} {jnp.dtype(dtype).name}", flush=True)
        try:
            if name in os.environ.get("S41_NO_XLA", "").split(","):  # call 8: XLA's float32 2048 kernel faulted
                raise RuntimeError("S41_NO_XLA")
            k = xla_kernel(name, f"xla_{name}")
        except Exception as e:  # noqa: BLE001 - the other kernels still run (session 41; before: the case skipped)
            print(f"  no xla_ptx: {type(e).__name__}: {e}", flush=True)
            k = None
        if k is not None:
            print(f"  launch grid {k['grid'].tolist()} block {k['block'].tolist()} smem {int(k['smem'])}", flush=True)
        # The kernel's operand order, if not the call's: XLA's LayerNorm fusion takes (x, bias, scale) (call 1's PTX: the
        # last parameter read before the add is the bias's).
        order = overrides("S39_ARGORDER").get(name, [0, 2, 1] if kind == "layer_norm" else None)

        def ptx_call(*a, k=k, order=order):
            return jax.ffi.ffi_call("s39_ptx", out_struct)(*([a[i] for i in order] if order else a), **k)
        ptx_call = jax.jit(ptx_call)
        fs = {"jnp": xla, "ours": ours, "xla_ptx": ptx_call} if jk is not None else {"jnp": xla, "xla_ptx": ptx_call}
        if k is None:
            fs.pop("xla_ptx")
        envs = {}
        for tok in TOKENS.get(name, []) if jk is not None else []:  # ours under a lab token
            fs[f"ours:{tok}"], envs[f"ours:{tok}"] = ours, tok
        for kern, (grid, block, *ints) in LAB_KERNELS.get(name, {}).items():
            path = lab_ptx_for(kern)
            if path is None:
                continue
            kk = dict(path=path, kernel=kern.partition("@")[0], grid=np.array(grid, np.int64), block=np.array(block, np.int64),
                      smem=np.int64(0), params=np.int64(LAB_POINTERS.get(kern, len(args) + 1)), ints=np.array(ints[0] if ints else [0], np.int64))
            fs[kern] = jax.jit(lambda *a, kk=kk: jax.ffi.ffi_call("s39_ptx", out_struct)(*a, **kk))

        w64 = np.asarray(want).astype(np.float64)
        oks = {}
        for n in fs:
            out = np.asarray(with_env(envs.get(n), lambda: fs[n](*args)))
            oks[n] = float(np.max(np.abs(out.astype(np.float64) - w64)))
        t = {n: [] for n in fs}
        nbytes = sum(a.size * a.dtype.itemsize for a in args) + want.size * want.dtype.itemsize
        order = list(fs)
        for rnd in range(ROUNDS):
            for n in order[rnd % len(order):] + order[:rnd % len(order)]:
                ms = with_env(envs.get(n), lambda: TIMER.time(fs[n], args, out_bytes=nbytes)[0])
                t[n].append(ms * 1e3)
        for n in fs:
            if not t[n]:  # S39_ROUNDS=0 (a profiler's run): outputs checked, nothing timed
                print(f"  {n:12s} max |diff| to jnp {oks[n]:.3g}", flush=True)
                continue
            bw = f"  {nbytes / min(t[n]) / 1e3:.0f} GB/s {nbytes / min(t[n]) / 1e3 / ceiling:.1%}" if ceiling else ""
            print(f"  {n:12s} best {min(t[n]):7.2f} us{bw}  max |diff| to jnp {oks[n]:.3g}  rounds " +
                  " ".join(f"{v:.2f}" for v in t[n]), flush=True)


if __name__ == "__main__":
    main(sys.argv[2:] or list(CASES))
