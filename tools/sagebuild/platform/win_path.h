// Windows path strings, handled as text so the Windows toolchain logic runs
// (and is tested) on Linux: std::filesystem::path on POSIX treats '\' as an
// ordinary character, so "C:\Program Files\x" would be one file name there.
#pragma once

#include <string>
#include <string_view>

namespace sb::platform {

// Joins with exactly one '\' between the parts; '/' in either part becomes
// '\' (cl.exe and link.exe accept both, but mixed separators make logs and
// tests harder to read).  An empty `base` yields `rest` unchanged otherwise.
std::string win_join(std::string_view base, std::string_view rest);

// The directory part: "C:\VS\bin\cl.exe" -> "C:\VS\bin"; "C:\x" -> "C:\";
// a bare name -> "".
std::string win_parent(std::string_view path);

// The last component: "C:\VS\bin\cl.exe" -> "cl.exe".
std::string win_filename(std::string_view path);

// Every '/' becomes '\'.
std::string to_backslashes(std::string_view path);

// ASCII case-insensitive equality, as Windows compares environment variable
// names and (for our purposes) paths.
bool win_iequals(std::string_view a, std::string_view b);

}  // namespace sb::platform
