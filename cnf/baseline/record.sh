#!/usr/bin/env bash
# Records the current build of every bundle that exports packages as the API baseline
# (cnf/baseline/org/zrm/<bundle>/<version>/), which the build then compares each new build with.
# Run after `mvn -B -ntp install -DskipTests`, when an API state is released on purpose; commit
# the result. Usage: cnf/baseline/record.sh [version]   (default: the zrm.baseline.version of bundles/pom.xml)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=${1:-$(sed -n 's:.*<zrm.baseline.version>\(.*\)</zrm.baseline.version>.*:\1:p' "$root/bundles/pom.xml")}
for pom in "$root"/bundles/*/pom.xml; do
  grep -q '<zrm.baseline.skip>false</zrm.baseline.skip>' "$pom" || continue
  dir=$(dirname "$pom"); bundle=$(basename "$dir")
  jar=$(ls "$dir"/target/"$bundle"-*.jar | grep -v -e sources -e tests | head -1)
  out="$root/cnf/baseline/org/zrm/$bundle/$version"
  mkdir -p "$out"
  cp "$jar" "$out/$bundle-$version.jar"
  cat > "$out/$bundle-$version.pom" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>org.zrm</groupId><artifactId>$bundle</artifactId><version>$version</version></project>
POM
  echo "baseline: $bundle $version <- ${jar#$root/}"
done
