"""python/sageattention/_routes.py is the C routing table (kernels/src/route_table.h) as data, written by
kernels/tools/gen_routes.py from a host build of kernels/src/abi.cu: the module must be the generator's
output, and the generator must see a change of the C table."""
import importlib.util
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = ROOT / "kernels" / "tools" / "gen_routes.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_routes", GEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def gen():
    mod = load_generator()
    if mod.compiler() is None:
        pytest.skip("no host C++ compiler (g++ / clang++) to build the routing table's exporter")
    return mod


def test_module_is_the_generators_output(gen):
    assert gen.MODULE.read_text() == gen.generate(), (
        "python/sageattention/_routes.py differs from the C routing table; run: python3 kernels/tools/gen_routes.py "
        "--update")


def test_generator_sees_a_changed_bound(gen, tmp_path, monkeypatch):
    # A copy of the sources with the sm90 FP8 P.V's head-dim bound changed: the output changes with it.
    for rel in ("kernels/include/sageattn/abi.h", "kernels/src/abi.cu", "kernels/src/route_table.h",
                "kernels/tools/route_export.cc"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    table = tmp_path / "kernels/src/route_table.h"
    text = table.read_text()
    row = "{SA_KERNEL_SM90_PV_FP8,         SA_FAMILY_SM90,    SA_PV_FP8,   0,     90,    90,        1,     128},"
    assert row in text
    table.write_text(text.replace(row, row.replace("128}", "64}")))
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "SOURCES", [tmp_path / "kernels/tools/route_export.cc", tmp_path / "kernels/src/abi.cu"])
    changed = gen.generate()
    assert changed != gen.MODULE.read_text()
    assert "(4, 4, 1, 0, 90, 90, 1, 64)," in changed
