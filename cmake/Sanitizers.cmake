# Sanitizer builds, for tests only (never released): included by the wheel's
# CMakeLists.txt and by tests/CMakeLists.txt.
#
# exov_target_sanitize(<target> SANITIZERS <list> [NO_RECOVER <list>] [FRAME_POINTERS])
#   Compiles and links <target> with -fsanitize=<list> (nothing when it is
#   empty), with debug information. NO_RECOVER: the checks whose first
#   finding stops the process (-fno-sanitize-recover=), so a test run with
#   one fails. FRAME_POINTERS: kept, for whole stack traces.
function(exov_target_sanitize target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "FRAME_POINTERS" "" "SANITIZERS;NO_RECOVER")
  if(NOT arg_SANITIZERS)
    return()
  endif()
  list(JOIN arg_SANITIZERS "," sanitizers)
  set(options -fsanitize=${sanitizers})
  if(arg_NO_RECOVER)
    list(JOIN arg_NO_RECOVER "," no_recover)
    list(APPEND options -fno-sanitize-recover=${no_recover})
  endif()
  if(arg_FRAME_POINTERS)
    list(APPEND options -fno-omit-frame-pointer)
  endif()
  target_compile_options(${target} PRIVATE ${options} -g)
  target_link_options(${target} PRIVATE -fsanitize=${sanitizers})
endfunction()
