# Writes a C++ source that holds a data file's bytes, so that a binary carries
# its data instead of reading it from the source tree at run time:
#   cmake -DIN=file.json -DOUT=file_data.cc -DNAMESPACE=sb::verify -DSYMBOL=kData -P embed_file.cmake
# defines `extern const char SYMBOL[]` (NUL-terminated) and
# `extern const std::size_t SYMBOL_size` (without the NUL) in NAMESPACE.
# A byte array, not a string literal: MSVC caps string literals at 16 KiB.
foreach(var IN ITEMS IN OUT NAMESPACE SYMBOL)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_file.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${IN}" hex HEX)
file(SIZE "${IN}" size)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
# 16 bytes a line (CMake's regex has no {n}: the group is spelt out).
string(REPEAT "'[^']+'," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n  " bytes "${bytes}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}.tmp"
  "// Generated from ${name} by embed_file.cmake; do not edit.\n"
  "#include <cstddef>\n\n"
  "namespace ${NAMESPACE} {\n"
  "extern const char ${SYMBOL}[];\n"
  "extern const std::size_t ${SYMBOL}_size;\n"
  "const char ${SYMBOL}[] = {\n  ${bytes}'\\0'};\n"
  "const std::size_t ${SYMBOL}_size = ${size};\n"
  "}  // namespace ${NAMESPACE}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
