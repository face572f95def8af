"""scripts/aarch64-smoke.sh refuses bad arguments in one line, before any
work (no root needed for that): no wheel, a wheel that is not an aarch64
sageattention wheel, a missing file, an unknown option.  The emulated run
itself (debootstrap, qemu, pip under emulation: tens of minutes) is not run
here; BENCHMARKS.md holds its figures."""
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/aarch64-smoke.sh"


def smoke(*args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args, says", [
    ((), "usage: scripts/aarch64-smoke.sh WHEEL"),
    (("--frobnicate",), "unknown option --frobnicate"),
    (("/nonexistent/sageattention-2.2.0-21100.130-cp310-abi3-manylinux_2_34_aarch64.whl",), "no such file"),
])
def test_bad_arguments_are_refused_in_one_line(args, says):
    r = smoke(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    err = r.stderr.strip()
    assert "\n" not in err and err.startswith("aarch64-smoke: ") and says in err, err
    assert r.stdout == ""


def test_an_x86_64_wheel_is_refused_naming_it(tmp_path):
    wheel = tmp_path / "sageattention-2.2.0-21100.130-cp310-abi3-manylinux_2_34_x86_64.whl"
    wheel.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    r = smoke(wheel)
    assert r.returncode == 2
    assert str(wheel) in r.stderr and "not a sageattention aarch64 wheel" in r.stderr, r.stderr


def test_help_describes_the_run():
    r = smoke("--help")
    assert r.returncode == 0 and "under emulation" in r.stdout and "--torch-wheel" in r.stdout, r.stdout
