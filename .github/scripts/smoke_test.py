"""Checks an installed wheel of the release on a GitHub runner (no GPU).

Run in a venv where the wheel was installed with --no-deps and the CPU build
of the pinned torch was installed next to it.  Checks, each failing the job:
  1. the package is installed (found without importing it);
  2. its build_info.json (every wheel sagebuild packs has one) names the torch
     and CUDA versions this matrix row was built for;
  3. the distribution installed compiled extensions (.so / .pyd in its
     RECORD: sageattention's _C inside the package, sageattn3's modules
     beside it);
  4. the package imports (its Python layer and its torch import work), and
     build_info(), where it has one, agrees with the file.
Loading the extension itself needs the CUDA runtime and a driver, which the
runners lack: its load error is printed, not judged.  --eager-extensions is
for a package whose import loads its extensions (sageattn3: `import
fp4attn_cuda`, linked to the driver): its import is tried and its error
printed, not judged, so checks 1-3 are what the job judges for it.
"""
import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import pathlib
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--package", required=True)
    parser.add_argument("--torch", required=True)
    parser.add_argument("--cuda", required=True)
    parser.add_argument("--eager-extensions", action="store_true",
                        help="the package's import loads its extensions: try it, do not judge it")
    args = parser.parse_args()

    spec = importlib.util.find_spec(args.package)
    if spec is None or not spec.submodule_search_locations:
        print(f"error: package {args.package} is not installed", file=sys.stderr)
        return 1
    package_dir = pathlib.Path(list(spec.submodule_search_locations)[0])
    problems = []

    info = None
    info_path = package_dir / "build_info.json"
    try:
        info = json.loads(info_path.read_text())
    except (OSError, ValueError) as e:
        problems.append(f"{info_path}: {e}")
    if info is not None:
        if info.get("torch", {}).get("version") != args.torch:
            problems.append(f"build_info torch.version is {info.get('torch')}, expected {args.torch}")
        if info.get("cuda", {}).get("version") != args.cuda:
            problems.append(f"build_info cuda.version is {info.get('cuda')}, expected {args.cuda}")

    try:
        files = importlib.metadata.files(args.package) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    extensions = sorted(str(f) for f in files if f.suffix in (".so", ".pyd"))
    if not extensions:
        problems.append(f"the distribution {args.package} installed no compiled extension (.so/.pyd)")
    print(f"{args.package} installed in {package_dir}; extensions: {extensions}")

    try:
        module = importlib.import_module(args.package)
    except Exception as e:  # noqa: BLE001 - any import failure is reported
        if args.eager_extensions:
            print(f"import {args.package} (loads its extensions; expected to fail without a GPU driver): {e!r}")
        else:
            problems.append(f"import {args.package} failed: {e!r}")
    else:
        if hasattr(module, "build_info") and module.build_info() != info:
            problems.append(f"{args.package}.build_info() is not {info_path}'s contents: {module.build_info()!r}")
        error = module.extension_error() if hasattr(module, "extension_error") else None
        print(f"extension load (expected to fail without a GPU driver): {error!r}")

    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
