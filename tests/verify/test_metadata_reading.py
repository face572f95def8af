"""sagebuild reads METADATA as pip and packaging do (Python's email parser,
compat32 policy): generated texts, mixing line breaks, continuations, blank
and malformed lines, are read by both and compared field by field, body
included; a repeated Name or Version is flagged by both.

Needs the `sb_email_header_dump` helper from a CMake build (found under
SAGEBUILD_BUILD_DIR, else <repo>/build*/) and the `packaging` module; skips,
saying why, without them.
"""
import email.parser
import email.policy
import json
import os
import random
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
packaging_metadata = pytest.importorskip("packaging.metadata")


def _find(name: str, subdir: str):
    roots = ([Path(os.environ["SAGEBUILD_BUILD_DIR"])] if os.environ.get("SAGEBUILD_BUILD_DIR")
             else list(REPO.glob("build*")))
    found = [r / "tools" / "sagebuild" / subdir / name for r in roots]
    found = [c for c in found if c.is_file() and os.access(c, os.X_OK)]
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


DUMP = _find("sb_email_header_dump", "distinfo")
pytestmark = pytest.mark.skipif(DUMP is None, reason="sb_email_header_dump not built (build sagebuild's tests)")

# The pieces texts are made of.  Line breaks: the three the email parser
# honours and the ones str.splitlines() would but it does not.
BREAKS = ["\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028"]
LINES = [
    "Metadata-Version: 2.4", "Name: sageattention", "Name: other", "Version: 2.2.0", "Version: 9",
    "Requires-Dist: torch>=2.10,<3", "Requires-Dist: numpy", "Summary:   spaced  ", "X-Custom:",
    "  continued", "\tcontinued with a tab", "   ", "", "not a field", "Name : spaced name", ":no name",
    "From someone", "Requires-Dist: torch\rRequires-Dist: hidden", "Name:no-space",
]


def generated_texts(n=600, seed=25):
    rng = random.Random(seed)
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 8)):
            parts.append(rng.choice(LINES))
            parts.append(rng.choice(BREAKS) if rng.random() < 0.4 else "\n")
        yield "".join(parts)


def normalized(value: str) -> str:
    """A value's lines, each stripped, blank ones dropped: how the two readings
    may differ (folding whitespace) without meaning anything else."""
    return "\n".join(s for s in (ln.strip(" \t") for ln in re.split(r"\r\n|\r|\n", value)) if s)


def python_reading(text: str):
    msg = email.parser.Parser(policy=email.policy.compat32).parsestr(text)
    return [(k, normalized(v)) for k, v in msg.items()], msg.get_payload()


def sagebuild_readings(texts):
    out = []
    for t in texts:
        r = subprocess.run([str(DUMP)], input=t.encode("utf-8"), capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
        out.append(json.loads(r.stdout))
    return out


def test_fields_and_body_as_pythons_email_parser():
    texts = list(generated_texts())
    mismatches = []
    for text, ours in zip(texts, sagebuild_readings(texts)):
        fields, body = python_reading(text)
        mine = [(k, normalized(v)) for k, v in ours["fields"]]
        if mine != fields or ours["body"] != body:
            mismatches.append((text, fields, body, mine, ours["body"]))
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ; first: {mismatches[0]!r}"


def test_a_bare_cr_ends_a_line_and_other_breaks_do_not():
    texts = ["Name: a\rRequires-Dist: torch\n", "Name: a\u2028Requires-Dist: torch\n", "Name: a\n   \nVersion: 1\n"]
    ours = sagebuild_readings(texts)
    assert [k for k, _ in ours[0]["fields"]] == ["Name", "Requires-Dist"]
    assert [k for k, _ in ours[1]["fields"]] == ["Name"]
    assert [k for k, _ in ours[2]["fields"]] == ["Name", "Version"]


def test_repeated_name_or_version_is_what_packaging_refuses():
    texts = list(generated_texts(300, seed=7))
    for text, ours in zip(texts, sagebuild_readings(texts)):
        _, unparsed = packaging_metadata.parse_email(text)
        for field in ("Name", "Version"):
            count = sum(1 for k, _ in ours["fields"] if k.lower() == field.lower())
            assert (count > 1) == (field.lower() in unparsed), (text, field, count, unparsed)
