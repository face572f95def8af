#!/usr/bin/env bash
# Prints one GitHub Actions matrix ({"include":[...]}, one line) holding the
# rows of every profile given, each row once (a row id names one wheel, so
# profiles that overlap must not build it twice).
# Each row's kernel_group (sagebuild: our tree's rows of one platform, CUDA
# release and arch set) is kept where two or more rows share it, else emptied:
# a row alone in its group compiles its own kernels.  The rows of a group must
# agree on runner and CUDA provisioning (the kernels job runs once for all).
# Usage: plan.sh SAGEBUILD PROFILE...
set -euo pipefail
sagebuild="${1:?usage: plan.sh SAGEBUILD PROFILE...}"
shift
[ "$#" -gt 0 ] || { echo "plan.sh: no profile given" >&2; exit 2; }
merged='{"include":[]}'
for profile in "$@"; do
  rows=$("$sagebuild" matrix --profile "$profile" --format github)
  merged=$(jq -c --argjson add "$rows" \
    '.include = (.include + $add.include | unique_by(.id))' <<<"$merged")
done
mixed=$(jq -r '[.include[] | select(.kernel_group != "")] | group_by(.kernel_group)[]
  | select((map(.os) | unique | length) > 1 or (map(.cuda_provision) | unique | length) > 1)
  | .[0].kernel_group' <<<"$merged")
if [ -n "$mixed" ]; then
  echo "plan.sh: kernel group(s) whose rows differ in os or cuda_provision: $mixed;" \
    "sagebuild's kernel_group must name the runner and CUDA provisioning too" >&2
  exit 1
fi
jq -c '([.include[] | select(.kernel_group != "") | .kernel_group] | group_by(.) | map(select(length > 1) | .[0]))
  as $shared | .include |= map(if (.kernel_group | IN($shared[])) then . else .kernel_group = "" end)' <<<"$merged"
