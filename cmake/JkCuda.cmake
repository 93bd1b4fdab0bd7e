# Decide whether the CUDA kernels are built, and how.
#   JK_CUDA        AUTO (default: build if a CUDA compiler is found), ON (required) or OFF.
#   JK_CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES list; default sm_80 (+PTX) and sm_90a. The "a" target is
#                  what unlocks Hopper-only instructions (wgmma, setmaxnreg).
#   JK_DEBUG_BOUNDS adds bounds assertions inside kernels (for compute-sanitizer runs).
set(JK_CUDA "AUTO" CACHE STRING "Build the CUDA kernels: AUTO, ON or OFF")
set(JK_CUDA_ARCHS "80;90a-real" CACHE STRING "CUDA architectures for the kernels")
option(JK_DEBUG_BOUNDS "Bounds assertions in CUDA kernels" OFF)

set(JK_WITH_CUDA OFF)
if(NOT JK_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(JK_WITH_CUDA ON)
  elseif(JK_CUDA STREQUAL "ON")
    message(FATAL_ERROR "JK_CUDA=ON but no CUDA compiler was found (set CUDACXX or put nvcc on PATH)")
  else()
    message(STATUS "jax-kernels: no CUDA compiler found, building the CPU kernels only")
  endif()
endif()

if(JK_WITH_CUDA)
  set(CMAKE_CUDA_ARCHITECTURES "${JK_CUDA_ARCHS}")
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "jax-kernels: CUDA kernels for architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()

# jk_add_cuda_kernels(<target>): every cuda/<op>/*.cu into one static library.
function(jk_add_cuda_kernels target)
  file(GLOB _srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cuda/*/*.cu)
  add_library(${target} STATIC ${_srcs})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cuda)
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                             POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  if(JK_DEBUG_BOUNDS)
    target_compile_definitions(${target} PRIVATE JK_DEBUG_BOUNDS=1)
  endif()
endfunction()
