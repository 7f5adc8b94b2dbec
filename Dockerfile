# syntax=docker/dockerfile:1
#
# ctxd container image: a Rust builder stage and a slim Debian runtime.
#
#   docker build -t ctxd .
#   docker run --rm -p 127.0.0.1:50051:50051 \
#       -e DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DB ctxd
#
# The image contains no PostgreSQL server, so DATABASE_URL must be set (without it ctxd
# tries to start a private PostgreSQL from locally installed binaries, which fails here).
# docker-compose.yml runs it next to a postgres:16 container.
#
# Needs BuildKit (the default builder since Docker 23) for the cache mounts below.

ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm

FROM rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS builder
WORKDIR /src

# Only what the build reads: crates/server/build.rs compiles proto/ with protox (no
# protoc needed), sqlx::migrate!("../../migrations") embeds migrations/ into the binary at
# compile time, and Cargo.toml names benches/core.rs (cargo checks that the file exists)
# and the workspace's member crates (core, localpg, server, tools).
COPY Cargo.toml Cargo.lock ./
COPY benches/ benches/
COPY proto/ proto/
COPY migrations/ migrations/
COPY src/ src/
COPY crates/ crates/

# The crate registry and target/ live in cache mounts, so a rebuild after a source change
# recompiles only ctxd itself. The cache mount is not part of the image, so the binary is
# copied out of it in the same step.
RUN --mount=type=cache,id=ctxd-cargo-registry,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,id=ctxd-cargo-git,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,id=ctxd-target,target=/src/target,sharing=locked \
    cargo build --release --locked --bin ctxd \
    && install -D -m 0755 target/release/ctxd /out/ctxd


FROM debian:${DEBIAN_RELEASE}-slim AS runtime

# ca-certificates: the system trust store, for TLS to an https model endpoint (the gRPC
# port's own TLS, --tls-cert, uses the files it is given, not this store). Unpinned: the bookworm suite already fixes the version line, and
# pins would break on security updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# An unprivileged user with a fixed uid/gid (10001), so volume permissions and
# Kubernetes runAsNonRoot checks are predictable.
RUN groupadd --system --gid 10001 ctxd \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
        --home-dir /var/lib/ctxd --shell /usr/sbin/nologin ctxd \
    && install -d -o 10001 -g 10001 -m 0750 /var/lib/ctxd

COPY --from=builder /out/ctxd /usr/local/bin/ctxd

# In a container ctxd must listen on all interfaces to be reachable through a published
# port. There, and with DATABASE_URL set anywhere, every call needs an API key
# (`ctxd tenant create NAME`, then `authorization: Bearer <key>`); serving calls without
# one takes CTXD_ANONYMOUS_ACCESS=allow and, off loopback, CTXD_INSECURE=true.
ENV CTXD_LISTEN=0.0.0.0:50051 \
    CTXD_DATA_DIR=/var/lib/ctxd

WORKDIR /var/lib/ctxd
USER 10001:10001
EXPOSE 50051
# Prometheus metrics, when CTXD_METRICS_LISTEN is set (docker-compose.yml sets 0.0.0.0:9464).
EXPOSE 9464

# Asks the gRPC health service on the port CTXD_LISTEN names (exit 0 only when SERVING).
# Shell form on purpose, so the port follows CTXD_LISTEN when it is overridden.
# hadolint ignore=DL3025
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ctxd healthcheck --addr "127.0.0.1:${CTXD_LISTEN##*:}"

ENTRYPOINT ["ctxd"]
CMD ["serve"]
