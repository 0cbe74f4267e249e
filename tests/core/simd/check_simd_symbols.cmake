# The AVX2 build of the hot kernels (core/simd/KernelsAvx2.cpp) must define no external symbol that a
# baseline object could also define: the linker would keep one copy of such a weak symbol for both, and a
# baseline caller could run AVX2 code on a CPU without it. Every global, weak or unique symbol it defines
# must name wfs::simd::avx2 or the renamed Eigen (wfs_eigen_avx2); the one exception is the personality
# routine's data reference DW.ref.__gxx_personality_v0, which points to the same function in every object.
# Nor may it have a static initialiser (it would run before any CPU check).
# Usage: cmake -DNM=nm -DOBJECTS=a.o;b.o [-DNS=avx512] -P check_simd_symbols.cmake (NS names the build's
# namespaces, wfs::simd::NS and wfs_eigen_NS; default avx2).
if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "check_simd_symbols: NM and OBJECTS are required")
endif()
if(NOT NS)
  set(NS avx2)
endif()
set(checked 0)
set(bad "")
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} -C --defined-only ${object} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_simd_symbols: ${NM} failed on ${object}")
  endif()
  string(REPLACE ";" "," out "${out}")
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]+ ([A-Za-z]) (.*)$")
      set(type "${CMAKE_MATCH_1}")
      set(name "${CMAKE_MATCH_2}")
      # A static initialiser would run at start-up on every CPU, AVX2 or not: none is allowed.
      if(name MATCHES "_GLOBAL__sub_I")
        string(APPEND bad "\n  ${type} ${name} (static initialiser)")
      endif()
      # Lower case is local (no other object can see it) except u, a GNU unique global.
      if(type MATCHES "^[A-Z]$" OR type STREQUAL "u")
        math(EXPR checked "${checked} + 1")
        string(FIND "${name}" "wfs::simd::${NS}::" ours)
        string(FIND "${name}" "wfs_eigen_${NS}::" eigen)
        if(ours EQUAL -1 AND eigen EQUAL -1 AND NOT name STREQUAL "DW.ref.__gxx_personality_v0")
          string(APPEND bad "\n  ${type} ${name}")
        endif()
      endif()
    endif()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "check_simd_symbols: no external symbols found in ${OBJECTS} (wrong object?)")
endif()
if(bad)
  message(FATAL_ERROR "check_simd_symbols: the ${NS} object defines symbols a baseline object could share:${bad}")
endif()
message(STATUS "check_simd_symbols: ${checked} external symbols, all in wfs::simd::${NS} or wfs_eigen_${NS}")
