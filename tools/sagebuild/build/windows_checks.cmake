# The Windows-only code, checked where it can be.
#
# 1. WindowsProcessRunner's test (process_win32_test.cc) and the child it runs
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
# The header-only dependencies alone on the include path (Catch2, and for
# the syntax check nlohmann/json and CLI11): symlinks to their directories,
# so that no other header of the Linux system reaches the Windows compile.
file(MAKE_DIRECTORY ${_win32_dir}/include)
foreach(dep "Catch2::Catch2;catch2/catch.hpp;catch2" "nlohmann_json::nlohmann_json;nlohmann/json.hpp;nlohmann"
            "CLI11::CLI11;CLI/CLI.hpp;CLI")
  list(GET dep 0 _target)
  list(GET dep 1 _header)
  list(GET dep 2 _subdir)
  get_target_property(_inc ${_target} INTERFACE_INCLUDE_DIRECTORIES)
  find_path(_dir_${_subdir} ${_header} PATHS ${_inc} /usr/include NO_DEFAULT_PATH)
  file(CREATE_LINK ${_dir_${_subdir}}/${_subdir} ${_win32_dir}/include/${_subdir} SYMBOLIC)
endforeach()

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

# 2. The _WIN32 branches of the build glue (builder.cc's Windows rows,
# command.cc's runner, windows_build.cc's paths) through mingw-w64's
# front end, on every build: they compile for Windows at least with GCC.
# libzip, yaml-cpp and OpenSSL have no mingw-w64 build here, so nothing of
# sagebuild itself is linked for Windows.
set(_syntax_stamps)
foreach(src build/builder.cc build/command.cc build/windows_build.cc build/windows_plan.cc build/windows_python.cc)
  string(REPLACE "/" "_" stamp_name ${src})
  set(stamp ${_win32_dir}/syntax/${stamp_name}.ok)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${SAGEBUILD_MINGW_CXX} ${_win32_flags} -fsyntax-only -MD -MF ${stamp}.d -MT ${stamp} ${_root}/${src}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${_root}/${src}
    DEPFILE ${stamp}.d
    COMMENT "mingw-w64 -fsyntax-only: ${src}"
    VERBATIM)
  list(APPEND _syntax_stamps ${stamp})
endforeach()
add_custom_target(sb_win32_syntax ALL DEPENDS ${_syntax_stamps})

add_test(NAME "${SB_WIN32_TEST_NAME}"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_wine_test.sh "${SAGEBUILD_WINE}" ${_win32_dir})
set_tests_properties("${SB_WIN32_TEST_NAME}" PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
