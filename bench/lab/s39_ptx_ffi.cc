// Session 39 lab: an XLA FFI handler that launches a kernel from a PTX file (XLA's own, from --xla_dump_to) on the
// call's buffers, so XLA's kernel runs as one of our custom calls under the benchmark's CUPTI timer. It answers
// whether the 0.1 us between our 2048x512 float32 transpose and XLA's lies in the kernel's code or in how XLA
// launches it. Lab only: never part of the package.
//
// Attributes: path (the PTX file), kernel (its .entry), grid and block (3 ints each), smem (dynamic shared bytes),
// params (the entry's pointer parameters: the call's buffers in order, inputs then outputs, then null pointers, e.g.
// Triton's scratch pointers), ints (32-bit integer parameters after the pointers). The driver API is reached through dlopen, so the library links nothing of CUDA.
//
//   nvcc -O2 -std=c++17 -shared -Xcompiler -fPIC -I.ffi_headers/include bench/lab/s39_ptx_ffi.cc -o .dev/s39ptx.so -ldl
#include <cuda.h>
#include <dlfcn.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

struct Driver {
  CUresult (*load)(CUmodule*, const void*) = nullptr;
  CUresult (*function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void**, void**) = nullptr;
  CUresult (*attr)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*stream_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*error)(CUresult, const char**) = nullptr;
  bool ok = false;
};

Driver& GetDriver() {
  static Driver d = [] {
    Driver r;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return r;
    r.load = reinterpret_cast<decltype(r.load)>(dlsym(h, "cuModuleLoadData"));
    r.function = reinterpret_cast<decltype(r.function)>(dlsym(h, "cuModuleGetFunction"));
    r.launch = reinterpret_cast<decltype(r.launch)>(dlsym(h, "cuLaunchKernel"));
    r.attr = reinterpret_cast<decltype(r.attr)>(dlsym(h, "cuFuncSetAttribute"));
    r.stream_ctx = reinterpret_cast<decltype(r.stream_ctx)>(dlsym(h, "cuStreamGetCtx"));
    r.push = reinterpret_cast<decltype(r.push)>(dlsym(h, "cuCtxPushCurrent_v2"));
    r.pop = reinterpret_cast<decltype(r.pop)>(dlsym(h, "cuCtxPopCurrent_v2"));
    r.error = reinterpret_cast<decltype(r.error)>(dlsym(h, "cuGetErrorString"));
    r.ok = r.load && r.function && r.launch && r.attr && r.stream_ctx && r.push && r.pop && r.error;
    return r;
  }();
  return d;
}

ffi::Error DriverError(const char* what, CUresult e) {
  const char* s = "?";
  GetDriver().error(e, &s);
  return ffi::Error(ffi::ErrorCode::kInternal, std::string("s39_ptx: ") + what + ": " + s);
}

// One loaded function per (path, kernel, smem); loaded in the stream's context on first use.
ffi::ErrorOr<CUfunction> Function(const std::string& path, const std::string& kernel, int smem) {
  static std::mutex mu;
  static std::map<std::string, CUfunction> cache;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = path + "|" + kernel + "|" + std::to_string(smem);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::ifstream f(path);
  if (!f) return ffi::Unexpected(ffi::Error(ffi::ErrorCode::kNotFound, "s39_ptx: cannot read " + path));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string ptx = ss.str();
  CUmodule m;
  if (CUresult e = GetDriver().load(&m, ptx.c_str()); e != CUDA_SUCCESS)
    return ffi::Unexpected(DriverError("cuModuleLoadData", e));
  CUfunction fn;
  if (CUresult e = GetDriver().function(&fn, m, kernel.c_str()); e != CUDA_SUCCESS)
    return ffi::Unexpected(DriverError("cuModuleGetFunction", e));
  if (smem > 48 * 1024) {
    if (CUresult e = GetDriver().attr(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
        e != CUDA_SUCCESS)
      return ffi::Unexpected(DriverError("cuFuncSetAttribute", e));
  }
  cache[key] = fn;
  return fn;
}

ffi::Error PtxCall(CUstream stream, ffi::RemainingArgs args, ffi::RemainingRets rets, std::string_view path,
                   std::string_view kernel, ffi::Span<const int64_t> grid, ffi::Span<const int64_t> block,
                   int64_t smem, int64_t params, ffi::Span<const int64_t> ints) {
  if (!GetDriver().ok) return ffi::Error(ffi::ErrorCode::kUnavailable, "s39_ptx: no libcuda.so.1");
  if (grid.size() != 3 || block.size() != 3)
    return ffi::Error::InvalidArgument("s39_ptx: grid and block take 3 ints each");
  std::vector<void*> ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    ptrs.push_back(b->untyped_data());
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto b = rets.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    ptrs.push_back((*b)->untyped_data());
  }
  if (params < static_cast<int64_t>(ptrs.size()))
    return ffi::Error::InvalidArgument("s39_ptx: the kernel takes fewer pointers than the call has buffers");
  ptrs.resize(params, nullptr);
  std::vector<uint32_t> words(ints.begin(), ints.end());  // 32-bit integer parameters after the pointers
  std::vector<void*> slots(ptrs.size() + words.size());
  for (size_t i = 0; i < ptrs.size(); ++i) slots[i] = &ptrs[i];
  for (size_t i = 0; i < words.size(); ++i) slots[ptrs.size() + i] = &words[i];
  CUcontext ctx;
  if (CUresult e = GetDriver().stream_ctx(stream, &ctx); e != CUDA_SUCCESS) return DriverError("cuStreamGetCtx", e);
  if (CUresult e = GetDriver().push(ctx); e != CUDA_SUCCESS) return DriverError("cuCtxPushCurrent", e);
  auto fn = Function(std::string(path), std::string(kernel), static_cast<int>(smem));
  ffi::Error out = ffi::Error::Success();
  if (fn.has_error()) {
    out = fn.error();
  } else if (CUresult e = GetDriver().launch(*fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                             static_cast<unsigned>(smem), stream, slots.data(), nullptr);
             e != CUDA_SUCCESS) {
    out = DriverError("cuLaunchKernel", e);
  }
  CUcontext popped;
  GetDriver().pop(&popped);
  return out;
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(S39PtxCall, PtxCall,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<CUstream>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<std::string_view>("path")
                                  .Attr<std::string_view>("kernel")
                                  .Attr<ffi::Span<const int64_t>>("grid")
                                  .Attr<ffi::Span<const int64_t>>("block")
                                  .Attr<int64_t>("smem")
                                  .Attr<int64_t>("params")
                                  .Attr<ffi::Span<const int64_t>>("ints"));
