# kibitz: build with the Rust toolchain, run on a small Debian image as a non-root user.
#   docker build -t kibitz .
#   docker run --rm -p 8080:8080 kibitz
#
# The two base images are build arguments so that a machine without a registry can substitute
# images it made itself (.ci/container does, with `--pull=never`); the defaults are the public
# images any Docker pulls.
ARG BUILDER_IMAGE=docker.io/library/rust:1-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS build
WORKDIR /src
# Dependencies first, so that source edits do not rebuild them. Cargo.toml declares the
# benches as targets, so cargo needs their files to read the manifest; they are small and only
# read here (a release build compiles no bench).
COPY Cargo.toml Cargo.lock ./
COPY benches ./benches
RUN mkdir src && echo 'fn main() {}' > src/main.rs && touch src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src
COPY src ./src
COPY openapi.yaml ./
# COPY keeps the context's modification times, which may be older than the stub build's.
# The release profile keeps line tables for local profiling; the image needs only symbols.
RUN touch src/main.rs src/lib.rs && cargo build --release --locked \
    && strip --strip-debug -o /kibitz target/release/kibitz

FROM ${RUNTIME_IMAGE}
# A fixed uid so that Kubernetes' runAsNonRoot can check it without a name lookup.
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin kibitz
COPY --from=build /kibitz /usr/local/bin/kibitz
USER 10001:10001
ENV KIBITZ_ADDR=0.0.0.0:8080 \
    KIBITZ_LOG_FORMAT=json
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/kibitz"]
