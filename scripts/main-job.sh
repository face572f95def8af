#!/usr/bin/env bash
# The main job: on a fresh machine, install what is needed, build sagebuild,
# then build, verify and smoke-test the `default` profile's wheel into dist/.
# Extra arguments go to sagebuild (e.g. --profile stable, --row ID, --jobs 16).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
TARGET=sagebuild bash scripts/build-sagebuild.sh
SAGEBUILD=build/tools/sagebuild/cli/sagebuild
echo "==> sagebuild --profile default $*"
"$SAGEBUILD" --profile default --out dist "$@"
echo "==> sagebuild verify dist/*.whl"
"$SAGEBUILD" verify dist/*.whl
