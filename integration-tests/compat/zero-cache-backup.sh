#!/usr/bin/env bash
# Backup compatibility: a real zero-cache 1.8.0 view-syncer restores the backup ZRM's litestream
# (v0.3.13) makes, after reserving it through ZRM's /snapshot, and serves in sync. Not part of the
# default build: it needs Node 22 + zero-cache from npm, litestream v0.3.13 (cached by the
# org.zrm.litestream tests, or $ZRM_LITESTREAM_EXECUTABLE) and the built runtime.
# See README.md in this folder. Exit status: 0 if every COMPAT check is ok, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
WORK=${ZRM_COMPAT_WORK:-$(mktemp -d /tmp/zrm-compat-backup.XXXXXX)}
LITESTREAM=${ZRM_LITESTREAM_EXECUTABLE:-$HOME/.cache/zrm/litestream-0.3.13/litestream}
[[ -x "$LITESTREAM" ]] || { echo "litestream v0.3.13 not at $LITESTREAM: run the tests of bundles/org.zrm.litestream once, or set ZRM_LITESTREAM_EXECUTABLE" >&2; exit 2; }

compat_installs
compat_runtime_jars
compat_classpath org.zrm.api org.zrm.protocol.json org.zrm.pgcluster
COMPAT_EXTRA_PROPS="-Dlitestream=$LITESTREAM" compat_run ZeroCacheBackupCheck
