#!/usr/bin/env bash
# `pip install ./clients/python` into an empty venv (no system site-packages, nothing
# preinstalled), then `import ctxd` there: the package brings its generated code and
# declares every dependency it imports. Needs PyPI for those dependencies.
# Usage: tests/python/clean_install.sh [python]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python=${1:-python3}
venv=$(mktemp -d "${TMPDIR:-/tmp}/ctxd-py-clean.XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input ./clients/python || {
    echo "python-sdk-install: pip install ./clients/python failed in an empty venv" >&2
    exit 1
}
# Run from the venv's directory so nothing in the tree is importable by accident.
(cd "$venv" && "$venv/bin/python" - <<'PY'
import ctxd
from ctxd.v1 import ctxd_pb2_grpc

client = ctxd.Client("127.0.0.1:1")
client.close()
assert ctxd.__file__.startswith(__import__("sys").prefix), ctxd.__file__
assert ctxd.pb.Message(role=ctxd.pb.ROLE_USER, content="x").content == "x"
assert hasattr(ctxd_pb2_grpc, "ContextServiceStub")
print("python-sdk-install: import ctxd works in an empty venv after pip install ./clients/python")
PY
)
