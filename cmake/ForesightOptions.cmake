# Compiler flags shared by every module, and the helper that declares one.
include(GNUInstallDirs)

set(FORESIGHT_WARNINGS -Wall -Wextra -Wno-unused-parameter)
set(FORESIGHT_OPT_FLAGS)
if(FORESIGHT_NATIVE)
  list(APPEND FORESIGHT_OPT_FLAGS -march=native)
else()
  # x86-64-v3 (AVX2 + FMA) is what every server CPU of the last decade has;
  # kernels that need more check at run time.
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    list(APPEND FORESIGHT_OPT_FLAGS -mavx2 -mfma -mf16c)
  endif()
endif()

if(FORESIGHT_SANITIZE)
  # -fno-sanitize-recover: a UBSan report aborts the process, so the test
  # that triggered it fails (by default UBSan prints and carries on, and the
  # test passes). CUDA sources keep nvcc's own flags.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()
# libFuzzer targets (tests/fuzz): the whole build gets coverage and ASan +
# UBSan instrumentation (UB aborts, so the fuzzer sees it as a crash).
option(FORESIGHT_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)
if(FORESIGHT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FORESIGHT_FUZZ=ON needs clang (libFuzzer), but the C++ compiler is "
      "${CMAKE_CXX_COMPILER_ID}: configure a fresh build dir with "
      "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link,address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()
if(FORESIGHT_TSAN)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=thread>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=thread)
endif()
if(FORESIGHT_SANITIZE AND FORESIGHT_TSAN)
  message(FATAL_ERROR "FORESIGHT_SANITIZE (ASan + UBSan) and FORESIGHT_TSAN cannot share a build: "
    "configure one build directory for each")
endif()

# foresight_add_module(NAME SOURCES ... DEPS ...): a static library
# foresight_NAME with alias foresight::NAME whose public headers live in
# NAME/include/foresight/NAME/.
function(foresight_add_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target foresight_${name})
  add_library(${target} STATIC ${M_SOURCES})
  add_library(foresight::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${FORESIGHT_WARNINGS} ${FORESIGHT_OPT_FLAGS}>)
  target_link_libraries(${target} PUBLIC ${M_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  install(TARGETS ${target} EXPORT foresightTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
