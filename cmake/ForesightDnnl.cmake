# oneDNN (Debian libdnnl-dev) as the imported target foresight::dnnl: the
# CPU GEMMs call its sgemm (kernels/src/cpu/sgemm.h). Found by header and
# library, not through oneDNN's own CMake package: Debian's needs the
# OpenCL headers of the GPU runtime it was built with, which foresight does
# not use. Included by the build and by the installed foresightConfig.cmake.
if(NOT TARGET foresight::dnnl)
  find_path(FORESIGHT_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h)
  find_library(FORESIGHT_DNNL_LIBRARY dnnl)
  if(NOT FORESIGHT_DNNL_INCLUDE_DIR OR NOT FORESIGHT_DNNL_LIBRARY)
    message(FATAL_ERROR "foresight needs oneDNN for its CPU GEMMs: install Debian's libdnnl-dev "
                        "(header oneapi/dnnl/dnnl.h and libdnnl.so)")
  endif()
  # Debian builds oneDNN on OpenMP; the kernels set each calling thread's
  # OpenMP team to one thread, so they call libgomp themselves.
  find_library(FORESIGHT_GOMP_LIBRARY NAMES gomp libgomp.so.1 REQUIRED)
  add_library(foresight::dnnl UNKNOWN IMPORTED)
  set_target_properties(foresight::dnnl PROPERTIES
    IMPORTED_LOCATION ${FORESIGHT_DNNL_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${FORESIGHT_DNNL_INCLUDE_DIR}
    INTERFACE_LINK_LIBRARIES ${FORESIGHT_GOMP_LIBRARY})
endif()
