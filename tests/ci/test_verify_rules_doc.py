"""docs/verify-rules.md lists every rule `sagebuild verify` can report, and
only those: the ids are read from the verifier's sources (each finding names
its rule as a string literal, "F3", "Z6", "B2", ...), so a new rule without a
line in the doc, or a doc line for a rule the code dropped, fails here."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tools" / "sagebuild"
DOC = ROOT / "docs" / "verify-rules.md"
ID = r"[FZDWMREPB][0-9]{1,2}"
# The readers and checkers whose findings verify reports (not the tests, not the fuzz corpus builder).
UNITS = ("wheel", "archive", "distinfo", "binary", "verify")


def emitted_ids():
    ids = {}
    for unit in UNITS:
        for path in sorted((SOURCES / unit).glob("*.cc")):
            if path.name.endswith("_test.cc"):
                continue
            for rule in re.findall(r'"(' + ID + r')"', path.read_text()):
                ids.setdefault(rule, path.relative_to(ROOT).as_posix())
    return ids


def documented_ids():
    """The ids in the first column of the doc's rule tables."""
    return set(re.findall(r"^\| (" + ID + r") \|", DOC.read_text(), flags=re.M))


def test_the_sources_emit_rules_of_every_family():
    ids = emitted_ids()
    assert {r[0] for r in ids} == set("FZDWMREPB"), sorted(ids)
    assert len(ids) > 60, sorted(ids)


def test_every_emitted_rule_is_documented():
    missing = {rule: where for rule, where in emitted_ids().items() if rule not in documented_ids()}
    assert not missing, f"rules the code reports but docs/verify-rules.md does not list: {missing}"


def test_every_documented_rule_is_emitted():
    stale = documented_ids() - set(emitted_ids())
    assert not stale, f"docs/verify-rules.md lists rules no source reports: {sorted(stale)}"


def test_each_rule_row_names_a_spec_and_a_severity():
    for line in DOC.read_text().splitlines():
        if re.match(r"^\| " + ID + r" \|", line):
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert len(cells) == 4 and all(cells), line
            assert re.search(r"\b(error|strict|warning)\b", cells[3]), line
