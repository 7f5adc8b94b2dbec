"""The protocol's messages and service as grpcio-tools generates them from
proto/ctxd/v1/ctxd.proto (regenerate with clients/python/generate.py)."""
