#!/usr/bin/env bash
# Installs (or finds, in the cache) Node 22 and zero-cache 1.8.0 for the checks in this folder, and
# prints what it found. ZeroCacheCompatIT runs it first, so that an unreachable npm registry is told
# apart from a failing check. Exit status: 0 when both are ready, non-zero otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
compat_installs
