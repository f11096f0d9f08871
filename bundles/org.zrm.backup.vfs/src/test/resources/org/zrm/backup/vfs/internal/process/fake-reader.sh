#!/bin/sh
# A fake backup watermark reader child for ChildProcessWatermarkSourceTest: speaks the reader's
# JSON lines on stdin/stdout in the mode given as $1. Modes that must only die by SIGKILL ignore
# SIGTERM (the disposition survives exec).
mode="$1"
if [ "$mode" = ignore-term ]; then
  trap '' TERM
fi

request_id() {
  printf '%s\n' "$1" | sed -n 's/.*"requestID":"\([^"]*\)".*/\1/p'
}

result() {
  printf '["backupWatermarkResponse",{"requestID":"%s","result":{"watermark":"%s","writeTimeMs":123,"txid":"0000000000000004","lagSeconds":2,"observedAtMs":1000}}]\n' "$1" "$2"
}

ready() {
  printf '["ready",{"ready":true}]\n'
}

case "$mode" in
  exit-before-ready)
    echo "fake reader: exiting before ready" >&2
    exit 3 ;;
  never-ready)
    trap '' TERM
    exec sleep 600 ;;
  hang)
    trap '' TERM
    ready
    read -r line
    exec sleep 600 ;;
  huge-line)
    ready
    read -r line
    printf '%4000s' x
    exec sleep 600 ;;
esac

if [ "$mode" = noise ]; then
  echo "level=INFO msg=\"litestream vfs starting\""
  echo '["something",{"else":1}]'
fi
ready
n=0
while IFS= read -r line; do
  n=$((n + 1))
  id=$(request_id "$line")
  case "$mode" in
    respond|ignore-term) result "$id" "0$n" ;;
    error) printf '["backupWatermarkResponse",{"requestID":"%s","error":{"name":"Error","message":"boom"}}]\n' "$id" ;;
    missing-result) printf '["backupWatermarkResponse",{"requestID":"%s"}]\n' "$id" ;;
    malformed) printf '["backupWatermarkResponse",{"requestID":"%s","result":{"watermark":2,"writeTimeMs":null,"txid":"07","lagSeconds":4,"observedAtMs":1}}]\n' "$id" ;;
    mismatched)
      result "stale-$id" "99"
      result "$id" "0$n" ;;
    noise)
      echo "level=INFO msg=\"polled\""
      result "$id" "0$n" ;;
    exit-after-response)
      result "$id" "0$n"
      exit 0 ;;
    env)
      printf '["backupWatermarkResponse",{"requestID":"%s","error":{"name":"Env","message":"url=%s level=%s file=%s ext=%s"}}]\n' \
        "$id" "$LITESTREAM_REPLICA_URL" "$LITESTREAM_LOG_LEVEL" "${LITESTREAM_LOG_FILE-unset}" "$ZERO_LITESTREAM_VFS_EXTENSION_PATH" ;;
  esac
done
if [ "$mode" = ignore-term ]; then
  exec sleep 600 # ignores the end of stdin as well
fi
