"""Generates ctxd/v1/ctxd_pb2{.py,.pyi,_grpc.py} from proto/ with grpcio-tools.

    python clients/python/generate.py          # rewrite the shipped files
    python clients/python/generate.py --check  # exit 1 when they differ from proto/

The generator is pinned: grpcio-tools GENERATOR writes protobuf gencode 5.26.1, which the
protobuf runtime accepts from 5.26.1 through 7.x (a runtime refuses only gencode newer than
itself), so the package supports protobuf 5, 6 and 7 — and its gRPC module asks for
grpcio >= GENERATOR. Run it in a venv with tests/python/requirements-oldest.txt.

The generated gRPC module imports the messages as `from ctxd.v1 import ctxd_pb2`; that
line is made relative so the package imports as itself wherever it is installed (a
directory of other stubs named `ctxd` on sys.path cannot shadow it).
"""

import argparse
import pathlib
import sys
import tempfile

from grpc_tools import protoc

HERE = pathlib.Path(__file__).resolve().parent
PROTO_ROOT = HERE.parent.parent / "proto"
PACKAGE = HERE / "src" / "ctxd" / "v1"
FILES = ("ctxd_pb2.py", "ctxd_pb2.pyi", "ctxd_pb2_grpc.py")
ABSOLUTE = "from ctxd.v1 import ctxd_pb2 as"
RELATIVE = "from . import ctxd_pb2 as"
# The grpcio-tools whose output is shipped (tests/python/requirements-oldest.txt pins it).
GENERATOR = "1.64.1"


def generator_version() -> str:
    from importlib.metadata import version

    return version("grpcio-tools")


def generate() -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="ctxd-py-gen-") as out:
        include = pathlib.Path(protoc.__file__).resolve().parent / "_proto"
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{PROTO_ROOT}",
                f"-I{include}",
                f"--python_out={out}",
                f"--pyi_out={out}",
                f"--grpc_python_out={out}",
                "ctxd/v1/ctxd.proto",
            ]
        )
        if code != 0:
            raise SystemExit(f"protoc failed with {code}")
        generated = {name: (pathlib.Path(out) / "ctxd" / "v1" / name).read_text() for name in FILES}
    grpc_module = generated["ctxd_pb2_grpc.py"]
    if ABSOLUTE not in grpc_module:
        raise SystemExit(f"ctxd_pb2_grpc.py no longer contains {ABSOLUTE!r}: update generate.py")
    generated["ctxd_pb2_grpc.py"] = grpc_module.replace(ABSOLUTE, RELATIVE)
    return generated


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    if generator_version() != GENERATOR:
        print(
            f"generate.py: grpcio-tools {generator_version()} is installed; the shipped code is "
            f"grpcio-tools {GENERATOR}'s (see the docstring): run it in a venv with "
            "tests/python/requirements-oldest.txt",
            file=sys.stderr,
        )
        return 2
    generated = generate()
    if args.check:
        stale = [name for name, text in generated.items() if (PACKAGE / name).read_text() != text]
        if stale:
            print(
                f"clients/python/src/ctxd/v1: {', '.join(stale)} differ from what grpcio-tools "
                "generates from proto/ now; run clients/python/generate.py",
                file=sys.stderr,
            )
            return 1
        print(f"clients/python/src/ctxd/v1: {len(generated)} generated files match proto/")
        return 0
    for name, text in generated.items():
        (PACKAGE / name).write_text(text)
    print(f"wrote {', '.join(FILES)} to {PACKAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
