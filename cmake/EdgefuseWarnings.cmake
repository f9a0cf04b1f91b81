# edgefuse_target_warnings(target): the project's warning set on one of its own targets.
function(edgefuse_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
      -Wnull-dereference -Wimplicit-fallthrough -Wno-missing-field-initializers>)
  if(EDGEFUSE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
