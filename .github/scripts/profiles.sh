#!/usr/bin/env bash
# Which build-matrix profiles a workflow trigger builds (space-separated), so
# the choice lives in one place that tests/ci/test_workflows.py can run:
#   pull_request         -> default default-windows  (one row per platform: is the change sane?)
#   push to main         -> stable      (the newest torch releases, one wheel each per platform)
#   push of a tag v*     -> release sage3  (every wheel a release publishes: sageattention's,
#                           and sageattn3's, built from upstream SageAttention's tree)
#   workflow_dispatch    -> the `profile` input
# The build job checks upstream's tree out (the matrix's `upstream:` commit)
# for the rows built from it, so sage3 and sage3-all build on a manual run.
# upstream and upstream-all (upstream SageAttention 2.2's own wheels, which
# this project does not publish) are refused, and so are default-aarch64 and
# aarch64 (no ARM runner jobs yet: they are cross-built locally).
# Usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]
set -euo pipefail
event="${1:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
ref="${2:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
dispatch_profile="${3:-}"
case "$event" in
  pull_request) echo "default default-windows" ;;
  push)
    case "$ref" in
      refs/tags/v*) echo "release sage3" ;;
      refs/heads/main) echo "stable" ;;
      *) echo "profiles.sh: no profile for a push to $ref; expected refs/heads/main or refs/tags/v*" >&2; exit 2 ;;
    esac ;;
  workflow_dispatch)
    if [ -z "$dispatch_profile" ]; then
      echo "profiles.sh: workflow_dispatch needs the profile input (e.g. default, stable, pytorch211)" >&2; exit 2
    fi
    case "$dispatch_profile" in
      upstream*) echo "profiles.sh: profile '$dispatch_profile' holds upstream SageAttention 2.2's own wheels," \
                   "which this workflow neither builds nor publishes; build them where a checkout of it is:" \
                   "sagebuild --source-dir <checkout> --profile $dispatch_profile" >&2; exit 2 ;;
      *aarch64) echo "profiles.sh: profile '$dispatch_profile' holds Linux aarch64 rows, which the workflow" \
                  "has no ARM jobs for yet (issue 40); cross-build them on an x86_64 Linux machine:" \
                  "sagebuild --profile $dispatch_profile" >&2; exit 2 ;;
    esac
    echo "$dispatch_profile" ;;
  *) echo "profiles.sh: unexpected event '$event'; expected pull_request, push or workflow_dispatch" >&2; exit 2 ;;
esac
