#!/bin/sh
# Show the project's LCM traffic (robot state, commands, mocap poses, planner telemetry) in
# lcm-spy: builds Java classes of hardware/lcm/lcm_types/*.lcm with lcm-gen and javac (a JDK is
# needed), then starts the lcm-spy of the lcm wheel with them on its class path.
#   scripts/lcm_spy.sh [--lcm-url=udpm://239.255.76.67:7667?ttl=0]
# Set BUILD_ONLY=1 to only build the jar (its path is printed).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
bin=$(dirname "$python")
lcm_jar=$("$python" -c "import lcm, os; print(os.path.normpath(os.path.join(
    os.path.dirname(lcm.__file__), '..', 'share', 'java', 'lcm.jar')))")
build=${BUILD_DIR:-${TMPDIR:-/tmp}/legged_mpc_lcm_java}
rm -rf "$build" && mkdir -p "$build/src" "$build/classes"
"$bin/lcm-gen" --java --jpath "$build/src" "$root"/hardware/lcm/lcm_types/*.lcm
javac -nowarn -cp "$lcm_jar" -d "$build/classes" $(find "$build/src" -name '*.java')
jar cf "$build/legged_mpc_lcm_types.jar" -C "$build/classes" .
echo "$build/legged_mpc_lcm_types.jar"
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0
CLASSPATH="$build/legged_mpc_lcm_types.jar" exec "$bin/lcm-spy" "$@"
