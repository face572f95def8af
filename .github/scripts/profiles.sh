#!/usr/bin/env bash
# Which build-matrix profiles a workflow trigger builds (space-separated), so
# the choice lives in one place that tests/ci/test_workflows.py can run:
#   pull_request         -> default default-windows  (one row per platform: is the change sane?)
#   push to main         -> stable      (the newest torch releases, one wheel each per platform)
#   push of a tag v*     -> release sage3 aarch64  (every wheel a release publishes:
#                           sageattention's for x86_64 and Windows, sageattn3's, built from
#                           upstream SageAttention's tree, and sageattention's for Linux
#                           aarch64, built natively on GitHub's ARM runners)
#   workflow_dispatch    -> the `profile` input
# The build job checks upstream's tree out (the matrix's `upstream:` commit)
# for the rows built from it, so sage3 and sage3-all build on a manual run.
# upstream and upstream-all (upstream SageAttention 2.2's own wheels, which
# this project does not publish) are refused.
# Usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]
set -euo pipefail
event="${1:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
ref="${2:?usage: profiles.sh EVENT_NAME REF [DISPATCH_PROFILE]}"
dispatch_profile="${3:-}"
case "$event" in
  pull_request) echo "default default-windows" ;;
  push)
    case "$ref" in
      refs/tags/v*) echo "release sage3 aarch64" ;;
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
    esac
    echo "$dispatch_profile" ;;
  *) echo "profiles.sh: unexpected event '$event'; expected pull_request, push or workflow_dispatch" >&2; exit 2 ;;
esac
