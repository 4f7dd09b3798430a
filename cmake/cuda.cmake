# CUDA for the CUDA module (kernels/cuda): optional, so that the tool builds and runs anywhere.
#
# The compiler, first found of: $CUDACXX, -DCMAKE_CUDA_COMPILER, nvcc on PATH, <CUDAToolkit_ROOT>/bin/nvcc
# (-D or environment), /usr/local/cuda/bin/nvcc. Below CUDA 12.0 (the code needs cudaGraphInstantiate's
# three-argument form) the configure stops in one line.
#
# Architectures, unless -DCMAKE_CUDA_ARCHITECTURES says otherwise: a cubin for every major architecture
# the toolkit supports from sm_80 up (sm_80 runs on 8.6 and 8.9, sm_90 on 9.0, ...) and PTX of the newest
# for GPUs after it. `native` builds for this machine's GPUs; the CI presets build one to save time.
# The module checks at start-up that the GPU is covered (kernels/cuda/architectures.h).

set(IB_HAVE_CUDA OFF)
if(NOT IB_WITH_CUDA)
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(IB_NVCC_ON_PATH nvcc NO_CACHE)
  set(ib_toolkit_root "${CUDAToolkit_ROOT}")
  if(NOT ib_toolkit_root AND DEFINED ENV{CUDAToolkit_ROOT})
    set(ib_toolkit_root "$ENV{CUDAToolkit_ROOT}")
  endif()
  if(IB_NVCC_ON_PATH)
    set(CMAKE_CUDA_COMPILER "${IB_NVCC_ON_PATH}")
  elseif(ib_toolkit_root AND EXISTS "${ib_toolkit_root}/bin/nvcc")
    set(CMAKE_CUDA_COMPILER "${ib_toolkit_root}/bin/nvcc")
  elseif(EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
endif()

include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(WARNING "nvcc not found ($CUDACXX, PATH, CUDAToolkit_ROOT, /usr/local/cuda): building without the "
                  "CUDA module (host backend only)")
  return()
endif()

# The toolkit's version and architectures, asked of the compiler before the language is enabled (an
# architecture it does not know would fail the configure with a page of CMake's output instead).
execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --version OUTPUT_VARIABLE ib_nvcc_version RESULT_VARIABLE ib_rc)
string(REGEX MATCH "release ([0-9]+)\\.([0-9]+)" ib_match "${ib_nvcc_version}")
if(NOT ib_rc EQUAL 0 OR NOT ib_match)
  message(FATAL_ERROR "${CMAKE_CUDA_COMPILER} --version did not say its release: is it nvcc?")
endif()
set(IB_CUDA_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
if(IB_CUDA_VERSION VERSION_LESS 12.0)
  message(FATAL_ERROR "CUDA ${IB_CUDA_VERSION} (${CMAKE_CUDA_COMPILER}) is older than the 12.0 this code needs: "
                      "point CUDACXX at a CUDA 12 or newer nvcc, or configure with -DIB_WITH_CUDA=OFF")
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch OUTPUT_VARIABLE ib_arch_list RESULT_VARIABLE ib_rc)
  string(REGEX MATCHALL "compute_([0-9]+)" ib_computes "${ib_arch_list}")
  set(ib_majors "")
  foreach(entry IN LISTS ib_computes)
    string(REGEX REPLACE "compute_" "" arch "${entry}")
    math(EXPR major "${arch} / 10")
    math(EXPR minor "${arch} % 10")
    # The lowest minor of each major from 8 up: its cubin runs on the whole major.
    if(arch GREATER_EQUAL 80 AND minor EQUAL 0)
      list(APPEND ib_majors ${arch})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES ib_majors)
  list(SORT ib_majors COMPARE NATURAL)
  if(NOT ib_rc EQUAL 0 OR NOT ib_majors)
    message(FATAL_ERROR "${CMAKE_CUDA_COMPILER} --list-gpu-arch named no architecture from sm_80 up: set "
                        "-DCMAKE_CUDA_ARCHITECTURES (e.g. 90 for an H100/H200, 80 for an A100)")
  endif()
  list(POP_BACK ib_majors ib_newest)
  set(ib_archs "")
  foreach(arch IN LISTS ib_majors)
    list(APPEND ib_archs "${arch}-real")
  endforeach()
  list(APPEND ib_archs "${ib_newest}")  # cubin and PTX: the driver compiles the PTX for later GPUs
  set(CMAKE_CUDA_ARCHITECTURES "${ib_archs}" CACHE STRING "CUDA architectures (default: every major from sm_80, PTX of the newest)")
endif()

enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(IB_HAVE_CUDA ON)
message(STATUS "CUDA ${IB_CUDA_VERSION} (${CMAKE_CUDA_COMPILER}), architectures ${CMAKE_CUDA_ARCHITECTURES}")
