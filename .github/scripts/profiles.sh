#!/usr/bin/env bash
# Which build-matrix profiles a workflow trigger builds (space-separated), so
# the choice lives in one place that tests/ci/test_workflows.py can run:
#   pull_request         -> default     (one quick row: is the change sane?)
#   push to main         -> stable      (newest Python per supported torch)
#   push of a tag v*     -> sage2-all sage3   (everything we release)
#   workflow_dispatch    -> the `profile` input
# Usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]
set -euo pipefail
event="${1:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
ref="${2:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
dispatch_profile="${3:-}"
case "$event" in
  pull_request) echo "default" ;;
  push)
    case "$ref" in
      refs/tags/v*) echo "sage2-all sage3" ;;
      refs/heads/main) echo "stable" ;;
      *) echo "profiles.sh: no profile for a push to $ref; expected refs/heads/main or refs/tags/v*" >&2; exit 2 ;;
    esac ;;
  workflow_dispatch)
    if [ -z "$dispatch_profile" ]; then
      echo "profiles.sh: workflow_dispatch needs the profile input (e.g. default, stable, hopper)" >&2; exit 2
    fi
    echo "$dispatch_profile" ;;
  *) echo "profiles.sh: unexpected event '$event'; expected pull_request, push or workflow_dispatch" >&2; exit 2 ;;
esac
