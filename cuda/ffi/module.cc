// The Python extension: registrations() -> {"cpu": {name: capsule}, "CUDA": {name: capsule}}.
// jax_kernels/_registry.py registers every entry once, at import.
#include <nanobind/nanobind.h>

#include "ffi/targets.h"
#ifdef JK_WITH_CUDA
#include "common/ffi_helpers.h"
#endif
#include "xla/ffi/api/c_api.h"

namespace nb = nanobind;

namespace {

jk::TargetList AllTargets() {
  jk::TargetList t;
  jk::AddNormTargets(t);
  jk::AddSoftmaxTargets(t);
  jk::AddTransposeTargets(t);
  jk::AddMatmulTargets(t);
  return t;
}

nb::dict Registrations() {
  nb::dict cpu, cuda, out;
  for (const jk::Target& t : AllTargets()) {
    cpu[t.name] = nb::capsule(reinterpret_cast<void*>(t.cpu));
    if (t.cuda != nullptr) cuda[t.name] = nb::capsule(reinterpret_cast<void*>(t.cuda));
  }
  out["cpu"] = cpu;
  out["CUDA"] = cuda;
  return out;
}

}  // namespace

NB_MODULE(_jax_kernels, m) {
  m.def("registrations", &Registrations);
#ifdef JK_WITH_CUDA
  m.attr("with_cuda") = true;
  // Test hook: enable (or not) the count of launches made under CUDA-graph capture; returns the count.
  m.def("capture_probe", [](bool enable) {
    jk::g_capture_probe.store(enable);
    return jk::g_captured_launches.load();
  });
#else
  m.attr("with_cuda") = false;
#endif
  // The XLA FFI API version the handlers were compiled against; a jaxlib older than this rejects them.
  m.attr("ffi_api_version") = nb::make_tuple(XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
}
