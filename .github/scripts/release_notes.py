"""Writes a release's notes and SHA256SUMS from the wheels that passed.

The release job of .github/workflows/wheels.yml downloads the wheels its
rows attached to the (draft) release, drops any that fail `sagebuild verify`,
and runs this: the notes list every wheel with its SHA-256 and size, and
every planned row that has no wheel (its build or test failed), so a partial
release says what it lacks.  Exit 1 when no wheel is there: nothing to
publish.

Usage: release_notes.py --tag v2.2.0 --wheels dist --plan MATRIX_JSON
                        --notes notes.md --sums dist/SHA256SUMS [--index-url URL]
MATRIX_JSON is the plan job's {"include": [...]} (sagebuild matrix --format github).
"""
import argparse
import hashlib
import json
import pathlib
import re
import sys


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_rows_wheel(planned, built):
    """Whether `built` is the wheel `planned` names (sagebuild matrix's
    prediction), up to the platform tag of a Linux row: linux_<arch> is
    predicted, the build tags the manylinux level its binary earns."""
    planned_rest, planned_platform = planned[:-len(".whl")].rsplit("-", 1)
    built_rest, built_platform = built[:-len(".whl")].rsplit("-", 1)
    if planned_rest != built_rest:
        return False
    if planned_platform.startswith("linux_"):
        arch = planned_platform[len("linux_"):]
        return built_platform == planned_platform or re.fullmatch(rf"manylinux_\d+_\d+_{re.escape(arch)}",
                                                                  built_platform) is not None
    return built_platform == planned_platform


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tag", required=True)
    p.add_argument("--wheels", required=True, type=pathlib.Path)
    p.add_argument("--plan", required=True, help="the plan job's matrix JSON")
    p.add_argument("--notes", required=True, type=pathlib.Path)
    p.add_argument("--sums", required=True, type=pathlib.Path)
    p.add_argument("--index-url", default="", help="the package index (GitHub Pages) to point users at")
    args = p.parse_args(argv)

    try:
        rows = json.loads(args.plan)["include"]
    except (ValueError, KeyError, TypeError) as e:
        print(f"release_notes.py: --plan is not the plan job's matrix JSON ({e})", file=sys.stderr)
        return 2
    wheels = sorted(args.wheels.glob("*.whl"))
    if not wheels:
        print(f"release_notes.py: no wheel in {args.wheels}: every row failed, nothing to publish "
              f"(the draft release {args.tag} stays a draft)", file=sys.stderr)
        return 1
    sums = [(sha256(w), w.name, w.stat().st_size) for w in wheels]
    args.sums.write_text("".join(f"{digest}  {name}\n" for digest, name, _ in sums))

    names = [name for _, name, _ in sums]
    missing = [row for row in rows if not any(is_rows_wheel(row["wheel"], n) for n in names)]
    lines = [f"SageAttention wheels for {args.tag}: {len(rows) - len(missing)} of {len(rows)} planned "
             f"wheel{'s' if len(rows) != 1 else ''}.", ""]
    if args.index_url:
        lines += [f"Install from the index for your torch and CUDA: {args.index_url} "
                  "(its first line prints the URL for the torch you have).", ""]
    lines += ["| wheel | SHA-256 | size |", "|---|---|---|"]
    lines += [f"| `{name}` | `{digest}` | {size / 1e6:.1f} MB |" for digest, name, size in sums]
    lines += ["", "`SHA256SUMS` holds the same digests: `sha256sum -c SHA256SUMS --ignore-missing`."]
    if missing:
        lines += ["", f"Not in this release ({len(missing)}: the row's build or test failed; "
                      "its job log says why):", ""]
        lines += [f"- `{row['id']}`" for row in missing]
    args.notes.write_text("\n".join(lines) + "\n")
    print(f"{len(sums)} wheel(s) listed, {len(missing)} planned row(s) without a wheel")
    return 0


if __name__ == "__main__":
    sys.exit(main())
