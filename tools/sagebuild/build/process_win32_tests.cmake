# WindowsProcessRunner's test (process_win32_test.cc) and the child it runs
# (process_win32_child.cc), as Windows programs.
#
# On Windows: ordinary targets.  On Linux: compiled with mingw-w64 (so
# process_win32.cc gets a real compile on every build where mingw-w64 is
# installed) and run under wine by run_wine_test.sh.  Without mingw-w64 or
# wine the CTest test is reported as skipped, saying what is missing.
set(SB_WIN32_TEST_NAME "build: WindowsProcessRunner as a Windows program (process_win32_test.cc)")

if(WIN32)
  add_executable(sb_win_child process_win32_child.cc)
  target_link_libraries(sb_win_child PRIVATE shell32)
  if(MINGW)
    target_link_options(sb_win_child PRIVATE -municode)
  endif()
  add_executable(sb_process_win32_tests process_win32_test.cc)
  target_link_libraries(sb_process_win32_tests PRIVATE sb_build sb_test_main)
  add_dependencies(sb_process_win32_tests sb_win_child)
  # The test looks for the child beside itself.
  set_target_properties(sb_win_child sb_process_win32_tests PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/win32)
  add_test(NAME "${SB_WIN32_TEST_NAME}" COMMAND sb_process_win32_tests)
  return()
endif()

# The -posix variant first: std::thread needs GCC's posix thread model.
find_program(SAGEBUILD_MINGW_CXX NAMES x86_64-w64-mingw32-g++-posix x86_64-w64-mingw32-g++)
find_program(SAGEBUILD_WINE NAMES wine wine64 PATHS /usr/lib/wine)

if(NOT SAGEBUILD_MINGW_CXX)
  add_test(NAME "${SB_WIN32_TEST_NAME}"
           COMMAND sh -c "echo 'skipped: x86_64-w64-mingw32-g++ not found, so process_win32.cc was neither compiled nor run (Debian: apt-get install g++-mingw-w64-x86-64 wine64, then re-run cmake)'; exit 77")
  set_tests_properties("${SB_WIN32_TEST_NAME}" PROPERTIES SKIP_RETURN_CODE 77)
  return()
endif()

set(_win32_dir ${CMAKE_CURRENT_BINARY_DIR}/win32)
# Catch2's header alone on the include path: a symlink to its directory, so
# that no header of the Linux system reaches the Windows compile.
get_target_property(_catch_inc Catch2::Catch2 INTERFACE_INCLUDE_DIRECTORIES)
find_path(_catch_dir catch2/catch.hpp PATHS ${_catch_inc} NO_DEFAULT_PATH)
file(MAKE_DIRECTORY ${_win32_dir}/include)
file(CREATE_LINK ${_catch_dir}/catch2 ${_win32_dir}/include/catch2 SYMBOLIC)

set(_win32_flags -std=c++20 -O1 -Wall -Wextra -Wno-unused-parameter
    -I${PROJECT_SOURCE_DIR}/tools -isystem ${_win32_dir}/include)
set(_launcher ${CMAKE_CXX_COMPILER_LAUNCHER})
set(_root ${PROJECT_SOURCE_DIR}/tools/sagebuild)

# sb_win32_program(NAME SOURCES ... LIBS ...): one object per source, then the
# static link (no mingw DLLs to find at run time).
function(sb_win32_program name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS;FLAGS" ${ARGN})
  set(objects)
  foreach(src ${P_SOURCES})
    string(REPLACE "/" "_" obj_name ${src})
    set(obj ${_win32_dir}/obj/${name}/${obj_name}.o)
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${_launcher} ${SAGEBUILD_MINGW_CXX} ${_win32_flags} ${P_FLAGS} -MD -MF ${obj}.d
              -c ${_root}/${src} -o ${obj}
      DEPENDS ${_root}/${src}
      DEPFILE ${obj}.d
      COMMENT "mingw-w64: ${src}"
      VERBATIM)
    list(APPEND objects ${obj})
  endforeach()
  add_custom_command(
    OUTPUT ${_win32_dir}/${name}.exe
    COMMAND ${SAGEBUILD_MINGW_CXX} -static ${P_FLAGS} ${objects} -o ${_win32_dir}/${name}.exe ${P_LIBS}
    DEPENDS ${objects}
    COMMENT "mingw-w64: link ${name}.exe"
    VERBATIM)
  add_custom_target(${name}_exe ALL DEPENDS ${_win32_dir}/${name}.exe)
endfunction()

sb_win32_program(sb_win_child SOURCES build/process_win32_child.cc FLAGS -municode LIBS -lshell32)
sb_win32_program(process_win32_tests
  SOURCES common/test_main.cc common/error.cc platform/win_cmdline.cc platform/win_path.cc
          platform/win_env.cc build/process.cc build/process_win32.cc build/process_win32_test.cc)

add_test(NAME "${SB_WIN32_TEST_NAME}"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_wine_test.sh "${SAGEBUILD_WINE}" ${_win32_dir})
set_tests_properties("${SB_WIN32_TEST_NAME}" PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
