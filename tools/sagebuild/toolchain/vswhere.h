// Finding Visual Studio's C++ toolset with vswhere.exe (installed with every
// Visual Studio 2017+ and on GitHub's Windows runners): the command to run and
// the reading of its JSON answer, kept apart from running it so both are
// tested on Linux against recorded output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::toolchain {

// The component that provides cl.exe / link.exe for x64 hosts and targets.
inline constexpr std::string_view kVcToolsComponent = "Microsoft.VisualStudio.Component.VC.Tools.x86.x64";

// Where the Visual Studio Installer puts vswhere.exe, given the value of
// %ProgramFiles(x86)% (it is never on PATH by default).
std::string default_vswhere_path(std::string_view program_files_x86);

// argv for vswhere: -latest -products * -requires <VC tools> -format json -utf8.
// -products * also finds Build Tools installs, which have no IDE.
std::vector<std::string> vswhere_argv(std::string_view vswhere_exe);

struct VsInstall {
  std::string installation_path;     // "C:\Program Files\Microsoft Visual Studio\2022\Enterprise"
  std::string installation_version;  // "17.14.36301.6"
  std::string display_name;          // "Visual Studio Enterprise 2022"
  bool is_prerelease = false;
  bool is_complete = true;  // false while an install or update is unfinished
};

// Parses vswhere's JSON array.  Throws sb::ConfigError (located at `origin`)
// when the text is not a JSON array of objects; entries without an
// installationPath are skipped, since nothing can be done with them.
std::vector<VsInstall> parse_vswhere_json(std::string_view json, std::string_view origin = "vswhere.exe output");

// Compares dotted numeric versions ("17.9.34622.214" < "17.14.36301.6");
// non-numeric parts compare as 0.
int compare_dotted_versions(std::string_view a, std::string_view b);

// The newest complete, non-prerelease install (prereleases only when
// allowed), or nullopt.
std::optional<VsInstall> choose_install(const std::vector<VsInstall>& installs, bool allow_prerelease = false);

}  // namespace sb::toolchain
