#!/usr/bin/env bash
# Schema-change compatibility between the ZRM runtime and the real zero-cache 1.8.0 (issue 10): one
# upstream, zero-cache as shard 0 and ZRM as shard 1, a workload that mixes DML and DDL; identical
# change-log rows, a zero-cache view-syncer following ZRM, and each side taking over the other's
# change DB. Not part of the default build: it needs Node 22 + zero-cache from npm and the built
# runtime (zrm-launcher.jar, zrm.jar), and takes ~3-4 minutes.
# See README.md in this folder. Exit status: 0 if every COMPAT check is ok, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
WORK=${ZRM_COMPAT_WORK:-$(mktemp -d /tmp/zrm-compat-ddl.XXXXXX)}

compat_installs
compat_runtime_jars
compat_classpath org.zrm.api org.zrm.protocol.json org.zrm.pgcluster
compat_run ZeroCacheDdlCheck
