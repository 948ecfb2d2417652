# Java 17 and Maven, for the lambda example's ElasticMQ (an SQS-compatible server its tests fetch
# with Maven and start themselves: examples/lambda-dynamo/test/elasticmq.ts). Not a server.
# Sourced by scripts/services.sh (`services.sh up java`, part of `all`).
# shellcheck shell=bash

java_missing_packages() {
  command -v java >/dev/null || echo openjdk-17-jre-headless
  command -v mvn >/dev/null || echo maven
}

# Not a server: "up" means installed.
java_up() {
  local t0=$EPOCHREALTIME missing
  missing=$(java_missing_packages)
  # shellcheck disable=SC2086 # a list of package names, split on purpose
  [[ -z $missing ]] || apt_install $missing
  [[ -z $(java_missing_packages) ]] || die "java or mvn is still missing after apt-get install"
  # mvn -v colours its first line even when piped; the sed drops the escape codes.
  say "ready: $(java -version 2>&1 | head -n1), $(mvn -v 2>/dev/null | head -n1 | sed 's/\x1b\[[0-9;]*m//g') ($(elapsed "$t0"))"
}

java_stop() { say "nothing to stop (the tests start and stop ElasticMQ themselves)"; }

java_status() {
  if [[ -z $(java_missing_packages) ]]; then echo "installed (java, mvn)"; else
    echo "missing (bash scripts/services.sh up java installs them)"
    return 1
  fi
}
