# The host's image with Docker, for teams who prefer a Dockerfile. `make image`
# builds the same without a daemon, for linux/amd64 and linux/arm64, reproducibly.
FROM golang:1.25 AS build
WORKDIR /src
COPY . .
ARG TARGETOS=linux TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -buildid=" -o /out/kopf-wasm ./cmd/kopf-wasm

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/kopf-wasm /kopf-wasm
USER 65532:65532
ENTRYPOINT ["/kopf-wasm"]
