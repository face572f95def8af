"""Checks an installed SageAttention wheel on a GitHub runner (no GPU).

Run in a venv where the wheel was installed with --no-deps and the CPU build
of the pinned torch was installed next to it.  Checks, each failing the job:
  1. the package imports (its Python layer and its torch import work);
  2. its compiled extension (_C*.so / _C*.pyd) was installed in the package;
  3. build_info() exists and names the torch and CUDA versions this matrix row
     was built for.
Loading the extension itself needs the CUDA runtime and a driver, which the
runners lack: its load error is printed, not judged.
"""
import argparse
import pathlib
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--package", required=True)
    parser.add_argument("--torch", required=True)
    parser.add_argument("--cuda", required=True)
    args = parser.parse_args()

    module = __import__(args.package)
    package_dir = pathlib.Path(module.__file__).parent
    extensions = sorted(p.name for p in package_dir.glob("_C*") if p.suffix in (".so", ".pyd"))
    info = module.build_info() if hasattr(module, "build_info") else None

    problems = []
    if not extensions:
        problems.append(f"no compiled extension _C*.so/_C*.pyd in {package_dir}")
    if not info:
        problems.append(f"{args.package}.build_info() returned nothing: build_info.json missing")
    else:
        if info.get("torch", {}).get("version") != args.torch:
            problems.append(f"build_info torch.version is {info.get('torch')}, expected {args.torch}")
        if info.get("cuda", {}).get("version") != args.cuda:
            problems.append(f"build_info cuda.version is {info.get('cuda')}, expected {args.cuda}")

    print(f"{args.package} imported from {package_dir}; extension: {extensions}")
    error = module.extension_error() if hasattr(module, "extension_error") else None
    print(f"extension load (expected to fail without a GPU driver): {error!r}")
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
