#!/usr/bin/env bash
# Change-streamer protocol compatibility between the ZRM runtime and the real zero-cache 1.8.0, both
# ways: a zero-cache view-syncer subscribed to ZRM's change streamer, and ZRM's replicator
# subscribed to zero-cache's. Not part of the default build: it needs Node 22 + zero-cache from npm
# and the built runtime (zrm-launcher.jar, zrm.jar), and takes ~2 minutes.
# See README.md in this folder. Exit status: 0 if every COMPAT check is ok, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
WORK=${ZRM_COMPAT_WORK:-$(mktemp -d /tmp/zrm-compat-streamer.XXXXXX)}

compat_installs
compat_runtime_jars
compat_classpath org.zrm.api org.zrm.protocol.json org.zrm.pgcluster
compat_run ZeroCacheStreamerCheck
