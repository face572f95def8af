#!/usr/bin/env bash
# The release workflow's Linux jobs, run as GitHub would run them, each in a
# fresh clean room (scripts/cleanroom.sh), from a fresh clone of HEAD:
#
#   bash scripts/ci-jobs.sh {pull_request|push|tag} [scripts/ci_jobs.py options]
#
# pull_request: the tests job, the plan job (both tool wheels), and the build
#               job's steps for the plan's Linux row (the default profile's),
#               compiled for real.
# push:         tests, plan, and each Linux row of the stable profile to its
#               preflight (`sagebuild doctor --preprocess`).
# tag:          tests, plan, every Linux row of release and sage3 to its
#               preflight, the default row compiled for real and sageattn3's
#               first Linux row for one arch (10.0).
# The steps come from .github/workflows/wheels.yml itself (scripts/ci_jobs.py
# says how, and what is stood in for where the room is not the job's machine).
# Needs: root, git, python3 with PyYAML, and what scripts/cleanroom.sh needs.
# Logs, clones and artifacts: build/ci-jobs/<trigger>/; the tool-wheel cache
# (actions/cache) build/ci-jobs/cache/, kept between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash scripts/ci-jobs.sh {pull_request|push|tag} [scripts/ci_jobs.py options]"
trigger="${1:?$usage}"
shift
case "$trigger" in
  pull_request) defaults=(--compile-profile default) ;;
  push) defaults=() ;;
  tag) defaults=(--compile-profile default --compile-profile sage3=10.0) ;;
  *) echo "ci-jobs.sh: expected pull_request, push or tag, got '$trigger'" >&2; exit 2 ;;
esac
exec python3 scripts/ci_jobs.py "$trigger" "${defaults[@]}" "$@"
