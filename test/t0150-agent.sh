#!/bin/sh
# The target side on its own: the agent and the tracer NIF driven by an
# Erlang node instead of beamscope (test/erl/agent_check.sh prints TAP).
TOP=$(cd "$(dirname "$0")/.." && pwd)
exec "$TOP/test/erl/agent_check.sh" "${BUILD:-$TOP/build}"
