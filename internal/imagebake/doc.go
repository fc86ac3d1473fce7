// Package imagebake builds the container images of the host without a
// Docker daemon, with go-containerregistry, for the CLI's `kopf-wasm image`
// (cmd/kopf-wasm/internal/app calls [BuildHost] and [BakeModule]):
//
//   - [Build] assembles the host's image for several platforms from
//     statically linked binaries built beforehand (`make image`): on an
//     empty base, a layer with CA certificates and a non-root user
//     (65532, "nonroot") and a layer with the binary at /kopf-wasm, which
//     is the entrypoint. Every timestamp is SOURCE_DATE_EPOCH's (or zero),
//     every file owned by root with fixed modes, the tar entries sorted, so
//     the same inputs give the same digest. OCI labels say what it is.
//   - [Bake] adds a handler module to an existing host image (every
//     platform of it) at /modules/NAME.wasm, with a command that serves it:
//     Kopf's "a Dockerfile and a Python file" for kopf-wasm.
//   - [Push] writes an index to a registry; [Pull] reads one back.
package imagebake
