"""GitHub Actions' expression syntax, as .github/workflows/wheels.yml uses it:
literals, contexts (github, inputs, needs, matrix, runner, steps, secrets),
! == != && || and parentheses, and the functions startsWith, contains,
fromJSON, hashFiles and the status checks.  Anything else fails, naming it,
rather than being guessed at.  Used by tests/ci/test_workflows.py (the
simulator) and scripts/ci_jobs.py (the Linux jobs run in the clean room)."""
import glob
import json
import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]

_TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(==|!=|&&|\|\||!|\(|\)|,)|([A-Za-z_][A-Za-z0-9_.-]*)|([0-9]+))")
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")


def _tokens(expr):
    pos, out = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        assert m and m.end() > pos, f"expression syntax the test does not know at {expr[pos:]!r} in {expr!r}"
        string, op, name, number = m.groups()
        out.append(("str", string[1:-1].replace("''", "'")) if string else ("op", op) if op else
                   ("name", name) if name else ("num", int(number)))
        pos = m.end()
    return out


def hash_files(workspace, patterns):
    """GitHub's hashFiles(): the files under the workspace that the glob
    patterns match (`**` spans directories), in path order; the SHA-256 of
    their SHA-256s, or '' when none matches."""
    import hashlib
    files = set()
    for pattern in patterns:
        for f in glob.glob(str(workspace / pattern), recursive=True):
            if os.path.isfile(f):
                files.add(os.path.relpath(f, workspace))
    if not files:
        return ""
    total = hashlib.sha256()
    for f in sorted(files):
        total.update(hashlib.sha256((workspace / f).read_bytes()).digest())
    return total.hexdigest()


def _truthy(v):
    return v not in (None, False, "", 0)


def _text(v):
    return "" if v is None else ("true" if v is True else "false" if v is False else str(v))


def evaluate(expr, ctx):
    toks = _tokens(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else (None, None)

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def call(name):
        args = []
        if peek() != ("op", ")"):
            args.append(or_expr())
            while peek() == ("op", ","):
                take()
                args.append(or_expr())
        assert take() == ("op", ")"), f"unbalanced call of {name} in {expr!r}"
        if name in STATUS_FUNCTIONS:
            assert not args, f"{name}() takes no arguments"
            return ctx["status"][name]
        if name == "startsWith":
            return _text(args[0]).casefold().startswith(_text(args[1]).casefold())
        if name == "endsWith":
            return _text(args[0]).casefold().endswith(_text(args[1]).casefold())
        if name == "contains":
            return _text(args[1]).casefold() in _text(args[0]).casefold()
        if name == "fromJSON":
            return json.loads(args[0])
        if name == "hashFiles":
            return hash_files(pathlib.Path((ctx.get("github") or {}).get("workspace") or ROOT), args)
        raise AssertionError(f"function the test does not model: {name}() in {expr!r}")

    def primary():
        kind, value = take()
        if kind == "op" and value == "(":
            v = or_expr()
            assert take() == ("op", ")"), f"unbalanced parentheses in {expr!r}"
            return v
        if kind in ("str", "num"):
            return value
        if kind == "name":
            if value in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[value]
            if peek() == ("op", "("):
                take()
                return call(value)
            obj = ctx
            for part in value.split("."):
                assert isinstance(obj, dict) and (obj is not ctx or part in ctx), \
                    f"context the test does not model: {value} in {expr!r}"
                obj = obj.get(part)  # a missing property is null, as on GitHub
            return obj
        raise AssertionError(f"unexpected {value!r} in {expr!r}")

    def unary():
        if peek() == ("op", "!"):
            take()
            return not _truthy(unary())
        return primary()

    def comparison():
        left = unary()
        if peek() in (("op", "=="), ("op", "!=")):
            op = take()[1]
            right = unary()
            if isinstance(left, str) and isinstance(right, str):  # GitHub ignores case
                left, right = left.casefold(), right.casefold()
            return (left == right) == (op == "==")
        return left

    def and_expr():
        v = comparison()
        while peek() == ("op", "&&"):
            take()
            rhs = comparison()
            v = rhs if _truthy(v) else v
        return v

    def or_expr():
        v = and_expr()
        while peek() == ("op", "||"):
            take()
            rhs = and_expr()
            v = v if _truthy(v) else rhs
        return v

    value = or_expr()
    assert pos == len(toks), f"trailing tokens in {expr!r}"
    return value


def render(template, ctx):
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _text(evaluate(m.group(1), ctx)), str(template))


def condition_holds(cond, ctx):
    """An `if:` as GitHub reads it: a bare expression or one ${{ }}, with an
    implicit success() && unless it calls a status function itself."""
    if cond is None:
        cond = "success()"
    if isinstance(cond, bool):
        return cond
    m = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", cond)
    expr = m.group(1) if m else cond
    if not re.search(r"\b(%s)\(" % "|".join(STATUS_FUNCTIONS), expr):
        expr = f"success() && ({expr})"
    return _truthy(evaluate(expr, ctx))
