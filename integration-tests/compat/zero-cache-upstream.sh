#!/usr/bin/env bash
# Upstream and replica-file compatibility check between ZRM's Postgres change source and the real
# zero-cache 1.8.0: upstream catalog, either setup order on one upstream, replica file written by ZRM.
# Not part of the default build: it needs Node 22 + zero-cache from npm and takes ~2 minutes.
# See README.md in this folder. Exit status: 0 if every COMPAT check is ok, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
WORK=${ZRM_COMPAT_WORK:-$(mktemp -d /tmp/zrm-compat-upstream.XXXXXX)}

compat_installs
compat_classpath org.zrm.api org.zrm.protocol.json org.zrm.replica org.zrm.pgcluster org.zrm.changesource.pg
CP=$CP:$(m2_jar org/xerial sqlite-jdbc "$(pom_prop sqlite.version)")
compat_run ZeroCacheUpstreamCheck
