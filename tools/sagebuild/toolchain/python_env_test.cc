// query_python_cached against a real python3 and a real venv of it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <string>

#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/python_env.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;
using sb::run::Command;
using sb::run::HostProcessRunner;

TEST_CASE("the Python query's cache tells a venv from the interpreter its bin/python links to") {
  HostProcessRunner runner;
  auto py = sb::run::find_program("python3");
  fs::path root = fs::temp_directory_path() / ("sb-python-cache-" + std::to_string(sb::process_id()));
  fs::remove_all(root);
  fs::create_directories(root);
  fs::path venv = root / "venv";
  if (!py || !runner.run(Command{{py->string(), "-m", "venv", "--without-pip", venv.string()}}).ok()) {
    std::cout << "SKIPPED: no python3 that makes a venv here\n";  // a skip to CTest
    fs::remove_all(root);
    return;
  }
  fs::path venv_python = venv / "bin" / "python";
  REQUIRE(fs::is_symlink(venv_python));  // what makes the two share one canonical path
  // A torch only the venv sees, of a version no real one has (the query reads these four names).
  auto site =
      runner.run(Command{{venv_python.string(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"}});
  REQUIRE(site.ok());
  fs::path torch = fs::path(last_line(site.out)) / "torch";
  fs::create_directories(torch);
  sb::write_file_atomic(torch / "__init__.py",
                        "__version__ = '9.9.9+venv'\n"
                        "class version:\n    cuda = '99.9'\n"
                        "class _C:\n    _GLIBCXX_USE_CXX11_ABI = True\n");
  fs::path cache = root / "cache";

  // The interpreter the venv links to first (what `--kernels-only` without --python queried in the
  // main job), then the venv (the row's --python), then both again from the cache.
  const fs::path base = fs::canonical(venv_python);
  PythonInfo system = query_python_cached(runner, base, cache);
  PythonInfo in_venv = query_python_cached(runner, venv_python, cache);
  REQUIRE(in_venv.torch.has_value());
  CHECK(in_venv.torch->version == "9.9.9+venv");
  CHECK(in_venv.torch->cuda == "99.9");
  PythonInfo in_venv_again = query_python_cached(runner, venv_python, cache);
  CHECK((in_venv_again.torch && in_venv_again.torch->version == "9.9.9+venv"));
  PythonInfo system_again = query_python_cached(runner, base, cache);
  // The base interpreter may have a torch of its own (this machine's has), never the venv's.
  CHECK((!system.torch || system.torch->version != "9.9.9+venv"));
  CHECK((!system_again.torch || system_again.torch->version != "9.9.9+venv"));
  CHECK(system_again.executable == system.executable);
  fs::remove_all(root);
}
