# Locate the XLA FFI headers (xla/ffi/api/ffi.h). Order: -DXLA_FFI_INCLUDE_DIR, the environment variable
# of the same name, then the installed jaxlib (pinned to the oldest supported version in pyproject.toml).
set(XLA_FFI_INCLUDE_DIR "$ENV{XLA_FFI_INCLUDE_DIR}" CACHE PATH "Directory holding xla/ffi/api/ffi.h")
if(NOT XLA_FFI_INCLUDE_DIR)
  # Ask jaxlib directly rather than jax.ffi.include_dir(): only jaxlib is a build requirement.
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
            "import os, jaxlib; print(os.path.join(os.path.dirname(jaxlib.__file__), 'include'))"
    OUTPUT_VARIABLE _jk_xla_dir OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  set(XLA_FFI_INCLUDE_DIR "${_jk_xla_dir}" CACHE PATH "" FORCE)
endif()
if(NOT EXISTS "${XLA_FFI_INCLUDE_DIR}/xla/ffi/api/ffi.h")
  message(FATAL_ERROR "XLA FFI headers not found under '${XLA_FFI_INCLUDE_DIR}'")
endif()
message(STATUS "jax-kernels: XLA FFI headers from ${XLA_FFI_INCLUDE_DIR}")
