# FORESIGHT_CUDA: AUTO builds the CUDA device when nvcc is found, ON requires
# it, OFF never builds it. FORESIGHT_HAVE_CUDA is what the code checks.
set(FORESIGHT_HAVE_CUDA OFF)
if(NOT FORESIGHT_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # One architecture keeps CI's compile short; set more for a release.
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(FORESIGHT_HAVE_CUDA ON)
  elseif(FORESIGHT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FORESIGHT_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
# Say what the switch means today: the runtime seam (device memory, streams,
# copies, pinned host memory through cudart) and every op's CUDA kernel
# compile; `train --device cuda` runs full-graph GNN node classification on a
# GPU, and every other run on the CPU (a CUDA request for those is refused).
if(FORESIGHT_HAVE_CUDA)
  message(STATUS "foresight: CUDA runtime seam and every op's CUDA kernel compiled (nvcc found); train "
                 "--device cuda runs full-graph GNN node classification, the rest runs on the CPU")
else()
  message(STATUS "foresight: CUDA runtime seam not compiled; every op runs on the CPU")
endif()
