// Package oci ships handler modules as OCI artifacts: it pushes a module to a
// registry and pulls it back, keeping what it pulled in a disk cache keyed by
// digest. It is the only package that imports oras-go (internal/archtest
// enforces it). Invoked from package host (host.Push, host.Pull, and Run for
// module arguments that are references); calls oras-go's remote repository.
//
// # Layout
//
// An artifact follows the CNCF TAG Runtime wasm layout: an OCI image
// manifest whose config has the media type [MediaTypeConfig] (a small JSON
// document: created, architecture "wasm", os "wasip1", the layer digests)
// and exactly one layer of media type [MediaTypeWasm] holding the module's
// bytes. Pulling also accepts the older [MediaTypeWasmLegacy] layers. The
// module's handler summary ([Summary]: name, version, ABI version, handler
// ids and kinds) travels in the manifest's annotations, so registries and
// tools can show it without downloading the module.
//
// # Digests
//
// Every blob read is checked against its descriptor (oras-go does, and Pull
// checks the layer again itself); a tag is resolved to a manifest digest, and
// the result names both that digest and the module's (the layer's) digest,
// which is the digest the wasm runtime reports for the same bytes.
//
// # Signatures
//
// [Client.AttachSignature] stores a Sigstore bundle as cosign v3 does: an
// OCI 1.1 referrer manifest of artifact type [MediaTypeSigstoreBundle] whose
// subject is the module's manifest and whose one layer is the bundle; on a
// registry without the referrers API, oras-go keeps the referrers index under
// the tag sha256-<hex of the manifest digest>. [Client.Signatures] finds them
// again either way. Checking them is package signing's.
//
// # Cache
//
// Under Options.CacheDir:
//
//	sha256/<hex>.wasm             modules, by layer digest
//	manifests/sha256/<hex>.json   manifests, by manifest digest
//	tags/<hex of sha256(ref)>     the manifest digest a tag last resolved to
//
// Files are written atomically (a temporary file renamed into place) and
// their digest is checked again when read, so a damaged entry is a miss, not
// a wrong module. Pull by digest is served from the cache without a registry;
// pull by tag asks the registry and, when the registry is unreachable, falls
// back to the digest last recorded for the tag, with a warning.
//
// # Credentials and transport
//
// Credentials come from the Docker config file (Options.DockerConfig, else
// $DOCKER_CONFIG/config.json or ~/.docker/config.json) and its credential
// helpers. Registries on localhost, 127.0.0.1 or [::1] are spoken to over
// plain HTTP; others over HTTPS unless Options.PlainHTTP is set.
package oci
