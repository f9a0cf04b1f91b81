# cmake -DNM=<nm> -DOBJECTS=<a.o;b.o> -P check_isa_objects.cmake
# Fails when an object compiled for one ISA level (its path contains edgefuse_kernels_<isa>)
# defines an external or weak function whose name lacks isa_<isa>: such a function (an inline
# function, a template instantiation) could be merged by the linker with a copy compiled for
# another level, and then run on a CPU without that level's instructions.
foreach(object IN LISTS OBJECTS)
  string(REGEX MATCH "edgefuse_kernels_([a-z0-9]+)" found "${object}")
  if(NOT found)
    message(FATAL_ERROR "check_isa_objects: cannot tell the ISA level of ${object}")
  endif()
  set(tag "isa_${CMAKE_MATCH_1}")
  execute_process(COMMAND "${NM}" --defined-only --extern-only --demangle "${object}"
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE nm_result)
  if(NOT nm_result EQUAL 0)
    message(FATAL_ERROR "check_isa_objects: ${NM} failed on ${object}")
  endif()
  # Brackets ([abi:cxx11]) would group list elements in CMake; they do not matter here.
  string(REPLACE "[" "(" symbols "${symbols}")
  string(REPLACE "]" ")" symbols "${symbols}")
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    # Code only (T, W, i); data such as DW.ref.__gxx_personality_v0 holds no instructions.
    if(NOT line MATCHES "^[0-9a-f]* [TWi] " OR line MATCHES "${tag}")
      continue()
    endif()
    message(FATAL_ERROR "check_isa_objects: ${object} defines a function outside namespace ${tag}: ${line}\n"
                        "Move it out of the per-ISA source or into EF_ISA_NAMESPACE (runtime/ops/isa_namespace.h).")
  endforeach()
endforeach()
