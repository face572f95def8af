#!/usr/bin/env bash
# Refuses a tag whose version is not the sageattention package's version in
# matrix/build-matrix.yaml (what every wheel of the release is named with),
# saying which file to change.  Any other ref passes: nothing to check.
# Usage: check-version.sh SAGEBUILD REF      (REF: refs/tags/v2.2.0, refs/heads/main, ...)
set -euo pipefail
sagebuild="${1:?usage: check-version.sh SAGEBUILD REF}"
ref="${2:?usage: check-version.sh SAGEBUILD REF}"
case "$ref" in
  refs/tags/v*) tag="${ref#refs/tags/}" ;;
  *) echo "$ref is no release tag: no version to check"; exit 0 ;;
esac
# The versions the release profile's rows are built with, per package.
versions=$("$sagebuild" matrix --profile release --format json |
  jq -r '[.rows[] | select(.package == "sageattention") | .version] | unique | .[]')
if [ "$versions" != "${tag#v}" ]; then
  echo "check-version.sh: the tag $tag says version ${tag#v}, but matrix/build-matrix.yaml gives the" \
    "sageattention package version ${versions:-none} (packages: sageattention: version); change the" \
    "version there and tag that commit, or tag v$versions" >&2
  exit 1
fi
echo "tag $tag: matrix/build-matrix.yaml's sageattention version is ${tag#v}"
