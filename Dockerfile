# kibitz: build with the Rust toolchain, run on a small Debian image as a non-root user.
#   docker build -t kibitz .
#   docker run --rm -p 8080:8080 kibitz

FROM rust:1-bookworm AS build
WORKDIR /src
# Dependencies first, so source edits do not rebuild them.
COPY Cargo.toml Cargo.lock ./
RUN mkdir src && echo 'fn main() {}' > src/main.rs && touch src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src
COPY src ./src
COPY openapi.yaml ./
RUN touch src/main.rs src/lib.rs && cargo build --release --locked

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin kibitz
COPY --from=build /src/target/release/kibitz /usr/local/bin/kibitz
USER 10001
ENV KIBITZ_ADDR=0.0.0.0:8080 \
    KIBITZ_LOG_FORMAT=json
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/kibitz"]
