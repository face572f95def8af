// Windows path strings, handled as text so the Windows toolchain logic runs
// (and is tested) on Linux: std::filesystem::path on POSIX treats '\' as an
// ordinary character, so "C:\Program Files\x" would be one file name there.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::run {

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

// Whether `path` names a directory part (a '\\', a '/' or a drive "C:"),
// i.e. is not to be searched for on PATH.
bool win_has_directory(std::string_view path);

// Where the program `name` is for a child whose PATH is `path_value`
// (';'-separated; empty entries skipped): a name with a directory part is
// returned unchanged; otherwise each PATH directory in turn, with the name
// itself when its file name has an extension, else with each of
// `extensions` (".exe", ".com") appended.  The first candidate `exists`
// accepts wins; nullopt when none does.  CreateProcess would search the
// parent's PATH instead of the child's, so the runner asks here first.
std::optional<std::string> win_search_path(std::string_view name, std::string_view path_value,
                                           const std::vector<std::string>& extensions,
                                           const std::function<bool(const std::string&)>& exists);

}  // namespace sb::run
