"""The benchmark harness behind `jax-kernels-bench` (jax_kernels/bench.py is the command line).

cases.py   what is timed (the sweeps of the speed issues, and --quick)
timing.py  CUPTI (GPU) / host (CPU) timers, copy ceiling, device and versions
runner.py  inputs, ours vs jnp back to back per case, errors recorded per row
report.py  JSON, terminal table, README markdown
plots.py   PNG figures (matplotlib, lazily)
model_bench.py  the GPT forward pass, jax-kernels vs jnp
sharded.py      norms and softmax on a 1-D mesh over all devices (>= 2), ours vs jnp, wall clock
"""
