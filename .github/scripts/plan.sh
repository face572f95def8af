#!/usr/bin/env bash
# Prints one GitHub Actions matrix ({"include":[...]}, one line) holding the
# rows of every profile given, each row once (a row id names one wheel, so
# profiles that overlap must not build it twice).
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
echo "$merged"
