#!/usr/bin/env bash
# Change-DB compatibility check between ZRM's storer and the real zero-cache 1.8.0 (both ways).
# Not part of the default build: it needs Node 22 + zero-cache from npm and takes ~1-2 minutes.
# See README.md in this folder. Exit status: 0 if every COMPAT check is ok, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
WORK=${ZRM_COMPAT_WORK:-$(mktemp -d /tmp/zrm-compat.XXXXXX)}

compat_installs
compat_classpath org.zrm.api org.zrm.protocol.json org.zrm.pgcluster org.zrm.storer
compat_run ZeroCacheChangeDbCheck
