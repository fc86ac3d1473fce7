// Package signing signs and verifies kopf-wasm modules with Sigstore bundles.
//
// A signature is a cosign-v3-style bundle (media type
// application/vnd.dev.sigstore.bundle.v0.3+json): a DSSE envelope holding an
// in-toto statement whose subject is the module's sha256 digest (the digest of
// the module file, or of the OCI manifest for a pushed module), signed with an
// ECDSA P-256 key. Verification is offline: sigstore-go checks the bundle
// against public keys, or against a trusted root read from a file together
// with the certificate identities a keyless bundle must carry; nothing is
// fetched from the network.
//
// The CLI's sign and verify commands call Sign and Verify; the host calls a
// Policy's Check before it loads a module (at start, on hot reload and for a
// Module resource). Storing bundles in a registry lives in package oci.
package signing
