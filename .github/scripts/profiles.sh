#!/usr/bin/env bash
# Which build-matrix profiles a workflow trigger builds (space-separated), so
# the choice lives in one place that tests/ci/test_workflows.py can run:
#   pull_request         -> default default-windows  (one row per platform: is the change sane?)
#   push to main         -> stable      (the newest torch releases, one wheel each per platform)
#   push of a tag v*     -> release     (every wheel a release publishes)
#   workflow_dispatch    -> the `profile` input
# The profiles of upstream's trees (upstream*, sage3*: upstream-sageattention
# and sageattn3) build from a checkout of upstream SageAttention, which the
# workflow does not fetch: no trigger builds them, and a manual run refuses them.
# Usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]
set -euo pipefail
event="${1:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
ref="${2:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
dispatch_profile="${3:-}"
case "$event" in
  pull_request) echo "default default-windows" ;;
  push)
    case "$ref" in
      refs/tags/v*) echo "release" ;;
      refs/heads/main) echo "stable" ;;
      *) echo "profiles.sh: no profile for a push to $ref; expected refs/heads/main or refs/tags/v*" >&2; exit 2 ;;
    esac ;;
  workflow_dispatch)
    if [ -z "$dispatch_profile" ]; then
      echo "profiles.sh: workflow_dispatch needs the profile input (e.g. default, stable, pytorch211)" >&2; exit 2
    fi
    case "$dispatch_profile" in
      sage3*|upstream*) echo "profiles.sh: profile '$dispatch_profile' holds rows built from upstream" \
                   "SageAttention's own tree, which this workflow does not check out; build them where a checkout" \
                   "is: sagebuild --source-dir <checkout> --profile $dispatch_profile" >&2; exit 2 ;;
    esac
    echo "$dispatch_profile" ;;
  *) echo "profiles.sh: unexpected event '$event'; expected pull_request, push or workflow_dispatch" >&2; exit 2 ;;
esac
