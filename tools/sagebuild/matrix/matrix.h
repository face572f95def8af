// The build matrix: which SageAttention wheels exist, for which Python,
// PyTorch, CUDA and platform, and the named profiles that select among them.
//
// matrix/build-matrix.yaml holds the facts (what each torch release ships
// for, what each CUDA can compile) and the policy (packages, exclusions,
// profiles). load_matrix() validates all of it, pointing at file:line:column,
// and computes every valid row once; expand() then only filters.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/matrix/version.h"
#include "sagebuild/wheel/tags.h"
#include "sagebuild/wheel/torch_requirement.h"

namespace sb::matrix {

// One abi3 wheel serves every CPython >= its minimum; per-interpreter wheels
// (cpXY-cpXY) are built once per Python (wheel/tags.h).
using wheel::AbiMode;

// How the wheel records the torch/CUDA it was built for (wheel/build_tag.h):
// a build tag ("280.129", PyPI-compatible) or a local version
// ("+cu128torch2.9.0", own index only).
enum class NamingScheme { build_tag, local_version };

std::string_view to_string(NamingScheme scheme);  // "build-tag", "local-version"

// One wheel to build.
struct Row {
  std::string id;       // "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64"; stable
  std::string package;  // the matrix's package: "sageattention", "upstream-sageattention"
  std::string project;  // the wheel's project name: "sageattention" (the package's unless it names one)
  // The kind of source tree the row is built from: "ours" (this repository,
  // kernels/families.json) or an upstream tree that sources/<kind>.yaml
  // describes ("upstream-sageattention", "upstream-sageattn3").
  std::string source = "ours";
  std::string version;  // "2.2.0" (the package's release)
  AbiMode abi_mode = AbiMode::abi3;
  std::vector<PythonVersion> pythons;  // Pythons the wheel serves, ascending (3.10, ...)
  // The interpreter to build with. abi3: the newest served Python the profile
  // pins, else the oldest served (the tag fixes the limited API either way).
  PythonVersion build_python;
  std::string python_tag;        // "cp310"
  std::string abi_tag;           // "abi3" or "cp312"
  TorchVersion torch;            // 2.11.0
  CudaVersion cuda;              // 13.0
  std::string cuda_tag;          // "cu130" (cuda.tag())
  std::string platform;          // platform tag: "linux_x86_64", "win_amd64"
  std::string runner_os;         // CI runner image: "ubuntu-22.04", "windows-2022"
  bool platform_opt_in = false;  // the platform's rows are only in profiles that name it
  std::vector<Arch> archs;       // ascending; what the wheel's kernels are compiled for
  std::optional<Arch> ptx_arch;  // the newest non-arch-specific arch, also embedded as PTX
  NamingScheme naming = NamingScheme::build_tag;
  std::string build_tag;        // "21100.130" (build-tag scheme), else empty
  std::string local_version;    // "cu128torch2.9.0" (local-version scheme), else empty
  std::string wheel_version;    // "2.2.0" or "1.0.0+cu128torch2.9.0"
  std::string wheel_filename;   // predicted
  std::string requires_python;  // ">=3.10"
  // How the extension links torch (the package's stable_abi): which torch
  // releases it loads in, hence torch_requirement (wheel/torch_requirement.h).
  wheel::TorchBinding torch_binding = wheel::TorchBinding::classic;
  std::string torch_requirement;  // "torch>=2.10,<3" (stable ABI) or "torch==2.8.*" (classic)
  // The torch variant is the one PyPI serves for this platform, so a machine
  // that reaches only PyPI can provision it.
  bool pypi_buildable = false;
  // This CUDA is the one PyPI's torch release is built for (on Linux): the
  // variant `pip install torch` gives, whatever the platform.
  bool pypi_variant = false;
  // Where the row's torch comes from: "" for PyPI (pypi_buildable), else
  // PyTorch's index for the row's CUDA ("https://download.pytorch.org/whl/cu130").
  std::string torch_index;
  std::string kernels_manifest;  // "kernels/families.json" (repository-relative); empty for upstream sources
  // An upstream source's tree: the GitHub repository and the full commit a
  // workflow checks out for `--source-dir` (the matrix's `upstream:`); empty
  // for our own tree.
  std::string upstream_repository;  // "thu-ml/SageAttention"
  std::string upstream_commit;      // 40 lower-case hex digits

  // "3.12", or "3.10-3.14" for an abi3 row serving a run of Pythons.
  std::string python_span() const;
};

// The rows a profile selects, in a stable order (package, torch, CUDA,
// Python, platform), independent of the order of the YAML file.
struct Plan {
  std::string profile;
  std::vector<Row> rows;
};

// ---- The model, as read from the YAML file --------------------------------

// A CUDA release as the matrix knows it (toolchain/cuda.h's CudaToolkit is an
// installed one).
struct CudaRelease {
  CudaVersion version;      // 12.8
  std::vector<Arch> archs;  // every arch this nvcc can compile
  SourceLocation where;
};

struct TorchVariant {
  CudaVersion cuda;   // 12.8
  bool pypi = false;  // the variant PyPI serves (Linux); the others need PyTorch's index
  SourceLocation where;
};

struct TorchRelease {
  TorchVersion version;                // 2.11.0
  std::vector<PythonVersion> pythons;  // ascending
  std::vector<TorchVariant> variants;
  SourceLocation where;
};

struct Platform {
  std::string tag;                   // "linux_x86_64"
  std::string runner;                // "ubuntu-22.04"
  bool pypi_torch_has_cuda = false;  // PyPI's torch for this platform is a CUDA build
  // The index with the CUDA builds PyPI does not serve, with "{cuda_tag}"
  // for the variant: "https://download.pytorch.org/whl/{cuda_tag}".
  std::string torch_index;
  // `opt_in: true`: its rows are only in profiles whose `platforms:` names it
  // (or that list their row ids), so a new platform adds no row to the
  // profiles written before it.
  bool opt_in = false;
  SourceLocation where;
};

// The source kind of this repository's own tree (kernels/families.json).
inline constexpr const char* kOurSource = "ours";

// Upstream SageAttention's repository and the commit the packages built from
// its tree (`source:` other than ours) are built at: what the release
// workflow checks out and passes as --source-dir.  A full commit, never a
// branch or tag (which move) or an abbreviation (which can become ambiguous).
struct UpstreamTree {
  std::string repository;  // GitHub "owner/name": "thu-ml/SageAttention"
  std::string commit;      // "d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5"
  SourceLocation where;
};

struct Package {
  std::string name;     // the matrix's key, which starts every row id
  std::string project;  // the wheel's project name (`project:`, default: name)
  std::string version;
  std::string source = kOurSource;  // `source:`: "ours" or an upstream kind (sources/<kind>.yaml)
  SourceLocation source_where;      // where `source:` is written (or the package, when it is not)
  std::string kernels;              // our tree's manifest path, repository-relative; empty for an upstream source
  AbiMode abi_mode = AbiMode::abi3;
  NamingScheme naming = NamingScheme::build_tag;
  std::vector<Arch> archs;                  // always built; every row's CUDA must build them
  std::vector<SourceLocation> arch_where;   // where each of `archs` is written
  std::vector<Arch> optional_archs;         // built where the row's CUDA can
  std::optional<PythonVersion> min_python;  // none = no minimum
  std::optional<TorchVersion> min_torch;
  std::optional<CudaVersion> min_cuda;
  // Rows on torch >= stable_abi_min_torch build the binding against the
  // PyTorch stable ABI of torch stable_abi_target (kernels/families.json,
  // binding.stable_abi); empty: every row uses the classic binding.
  std::optional<TorchVersion> stable_abi_min_torch, stable_abi_target;
  std::vector<std::string> platforms;  // empty = every platform
  // `platform_archs: {linux_aarch64: {archs: [...], optional_archs: [...]}}`:
  // on that platform these replace archs / optional_archs (the GPUs behind
  // that CPU are others: GH200, GB200, DGX Spark behind ARM).
  struct PlatformArchs {
    std::vector<Arch> archs;
    std::vector<SourceLocation> arch_where;
    std::vector<Arch> optional_archs;
  };
  std::map<std::string, PlatformArchs> platform_archs;
  SourceLocation where;
};

// A combination not built, and why. Empty lists match everything.
struct Exclusion {
  std::vector<std::string> packages, platforms;
  std::vector<TorchVersion> torch;
  std::vector<PythonVersion> pythons;
  std::vector<CudaVersion> cuda;
  std::string reason;
  SourceLocation where;
};

// A named selection of rows: filters (empty = any), or explicit row ids.
struct Profile {
  std::string name;
  std::string description;
  std::vector<std::string> packages, platforms;
  std::vector<TorchVersion> torch;
  std::vector<PythonVersion> pythons;
  std::vector<CudaVersion> cuda;
  // Narrows each row's archs, for quick local builds (empty = the package's).
  // The row keeps its id: `sagebuild --row ID` builds the full row.
  std::vector<std::string> archs;
  bool newest_python = false;     // per (package, torch, CUDA, platform), keep the newest Python
  bool pypi_only = false;         // only rows whose torch variant PyPI serves
  bool default_cuda = false;      // only each torch release's PyPI CUDA variant, on every platform
  int newest_torch = 0;           // > 0: only the N newest torch releases among the rows selected
  std::vector<std::string> rows;  // explicit row ids (exclusive with the filters)
  SourceLocation where;
};

struct Matrix {
  std::filesystem::path path;  // as given to load_matrix (or parse_matrix's file_name)
  std::vector<PythonVersion> pythons;
  std::vector<Platform> platforms;
  std::vector<CudaRelease> cuda;
  std::vector<TorchRelease> torch;
  std::optional<UpstreamTree> upstream;  // `upstream:`; required once a package is built from upstream's tree
  std::vector<Package> packages;
  std::vector<Exclusion> exclusions;
  std::vector<Profile> profiles;  // in file order
  std::vector<Row> rows;          // every valid row of every package, in plan order
};

// ---- API --------------------------------------------------------------------

// Reads and validates the matrix; throws ConfigError ("file:line:col: error:
// ...") for bad YAML, unknown keys, wrong types, impossible combinations and
// profiles that select nothing; IoError when the file cannot be read.
Matrix load_matrix(const std::filesystem::path& path);

// The same from text already read; `file_name` is what messages (and
// Matrix::path) call the file.
Matrix parse_matrix(const std::string& text, const std::string& file_name);

// Profile names in file order.
std::vector<std::string> profile_names(const Matrix& matrix);

// The rows of a profile; throws ConfigError (listing the valid names) for an
// unknown profile.
Plan expand(const Matrix& matrix, std::string_view profile);

// Any valid row, by id, whether or not a profile selects it; nullptr if none.
const Row* find_row(const Matrix& matrix, std::string_view id);

}  // namespace sb::matrix
