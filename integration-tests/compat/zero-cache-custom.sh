#!/usr/bin/env bash
# Zero's custom change-source protocol between the ZRM runtime and the real zero-cache 1.8.0
# (issue 12): zero-cache with ZERO_UPSTREAM_TYPE=custom replicates through ZRM's endpoint, and a
# ZRM custom client consuming the same endpoint stores the same change log. Needs Node 22 +
# zero-cache from npm and the built runtime (zrm-launcher.jar, zrm.jar); about 1-2 minutes.
# See README.md in this folder. Exit status: 0 if every COMPAT check is ok, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
WORK=${ZRM_COMPAT_WORK:-$(mktemp -d /tmp/zrm-compat-custom.XXXXXX)}

compat_installs
compat_runtime_jars
compat_classpath org.zrm.api org.zrm.protocol.json org.zrm.pgcluster
compat_run ZeroCacheCustomCheck
