"""`sagebuild matrix --format bake`: the docker-bake.hcl for the fork's users
(Docker Bake builds the Linux rows; Windows stays native), read back with an
HCL parser from PyPI (python-hcl2), checked against the rows of the profile
and the Dockerfile the repository ships.  Docker itself is not run here."""
import json
import os
import pathlib
import re
import subprocess

import pytest

hcl2 = pytest.importorskip("hcl2", reason="python-hcl2 not installed (scripts/install-deps.sh installs it)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAGEBUILD = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))
pytestmark = pytest.mark.skipif(not SAGEBUILD.exists(), reason=f"sagebuild not built at {SAGEBUILD}")


def sagebuild(*args):
    out = subprocess.run([str(SAGEBUILD), *args], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


def unquote(value):
    """python-hcl2 (8.x) keeps string literals' quotes: the values as HCL means them."""
    if isinstance(value, str):
        return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    if isinstance(value, list):
        return [unquote(v) for v in value]
    if isinstance(value, dict):
        return {unquote(k): unquote(v) for k, v in value.items() if not k.startswith("__")}
    return value


def bake(profile):
    parsed = unquote(hcl2.loads(sagebuild("matrix", "--profile", profile, "--format", "bake")))
    targets = {}
    for block in parsed.get("target", []):
        for name, body in block.items():
            targets[name] = body
    groups = {}
    for block in parsed.get("group", []):
        for name, body in block.items():
            groups[name] = body["targets"]
    return targets, groups


def seeds_name(row):
    torch = "".join(row["torch"].split(".")[:2])
    py = "abi3" if row["abi_mode"] == "abi3" else "python" + row["python_tag"][2:]
    prefix = "" if row["source"] == "ours" else row["package"] + "-"
    return f"{prefix}linux-pytorch{torch}-{row['cuda_tag']}-{py}"


@pytest.mark.parametrize("profile", ["release", "stable", "sage3-all"])
def test_one_target_per_linux_row_with_the_seeds_names(profile):
    rows = json.loads(sagebuild("matrix", "--profile", profile, "--format", "json"))["rows"]
    linux = [r for r in rows if r["platform"].startswith("linux_")]
    targets, groups = bake(profile)
    assert sorted(targets) == sorted(seeds_name(r) for r in linux)
    assert len(targets) == len(linux), "two rows share a target name"
    by_id = {r["id"]: r for r in linux}
    for name, t in targets.items():
        row = by_id[t["args"]["ROW"]]
        assert seeds_name(row) == name
        assert t["dockerfile"] == "docker/Dockerfile" and t["context"] == "."
        assert t["args"]["PYTHON"] == row["build_python"] and t["args"]["CUDA"] == row["cuda"]
        assert t["args"]["TORCH_INDEX"] == (row["torch_index"] or "")
        assert t["args"]["CUDA_PROVISION"] == ("pypi" if row["cuda"].startswith("13.") else "install")
        assert t["output"] == ["type=local,dest=dist"]
    assert sorted(groups["default"]) == sorted(targets) == sorted(groups["linux"])
    torch_groups = {g: ts for g, ts in groups.items() if g.startswith("pytorch")}
    assert sorted(sum(torch_groups.values(), [])) == sorted(targets)
    for g, ts in torch_groups.items():
        assert all(f"-{g}-" in "-" + t.split("linux-", 1)[1] for t in ts), (g, ts)


def test_the_dockerfile_builds_a_row_with_the_tool_wheel_in_manylinux_2_28():
    text = (ROOT / "docker/Dockerfile").read_text()
    assert re.search(r"^FROM quay\.io/pypa/manylinux_2_28_x86_64 AS build$", text, re.M)
    for arg in ("ROW", "PYTHON", "CUDA", "CUDA_PROVISION", "TORCH_INDEX"):
        assert re.search(rf"^ARG {arg}\b", text, re.M), arg
    assert "dist-tool/sagebuild-*-manylinux_*_x86_64.whl" in text
    assert 'sagebuild" --row "$ROW" --out /out' in text
    assert ".github/scripts/install-cuda.sh" in text
