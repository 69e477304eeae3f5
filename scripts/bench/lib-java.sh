# scripts/bench/lib-java.sh: what the Java-client benchmarks (bench-sql92.sh,
# bench-pop.sh) share, sourced: builds build/'s name server, broker and
# mqadmin, and sources tests/java/java_lib.sh on that build (its temp dir,
# cleanup, java_build, start_namesrv, start_broker); sets $repo.
# shellcheck shell=bash
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$repo/scripts/build.sh" build -- namesrv/mqnamesrv broker/mqbroker tools/mqadmin
export RMQ_BUILD_ROOT=$repo/build
# shellcheck source=tests/java/java_lib.sh
. "$repo/tests/java/java_lib.sh"
