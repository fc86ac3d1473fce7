package oci

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Classes of the errors of Push and Pull, for errors.Is. Every error
// returned wraps exactly one of them.
var (
	// ErrReference: the reference cannot be parsed, or lacks the tag or
	// digest the operation needs.
	ErrReference = errors.New("invalid reference")
	// ErrUnreachable: the registry did not answer (no connection, DNS,
	// TLS, a timeout, a server error).
	ErrUnreachable = errors.New("registry unreachable")
	// ErrUnauthorized: the registry refused the credentials, or there were
	// none.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotFound: the repository, tag or digest does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNoWasmLayer: the artifact is not a wasm module artifact (an index,
	// no wasm layer, several wasm layers).
	ErrNoWasmLayer = errors.New("no wasm layer")
	// ErrDigestMismatch: content read does not match its digest or size.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrNotWasm: the bytes are not a WebAssembly binary.
	ErrNotWasm = errors.New("not a WebAssembly module")
	// ErrCache: the disk cache cannot be written.
	ErrCache = errors.New("module cache")
)

// classify wraps an error of oras-go (or of the network under it) in the
// class it belongs to; errors already classified pass unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, class := range []error{ErrReference, ErrUnreachable, ErrUnauthorized, ErrNotFound,
		ErrNoWasmLayer, ErrDigestMismatch, ErrNotWasm, ErrCache} {
		if errors.Is(err, class) {
			return err
		}
	}
	var resp *errcode.ErrorResponse
	var netErr net.Error
	switch {
	case errors.Is(err, content.ErrMismatchedDigest), errors.Is(err, content.ErrTrailingData),
		errors.Is(err, content.ErrInvalidDescriptorSize), errors.Is(err, io.ErrUnexpectedEOF):
		return &classified{class: ErrDigestMismatch, err: err,
			text: "digest mismatch: the registry served content that does not match its digest or size (" + err.Error() + ")"}
	case errors.Is(err, errdef.ErrNotFound):
		return &classified{class: ErrNotFound, err: err, text: "not found: the registry has no such repository, tag or digest"}
	case errors.As(err, &resp):
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return fmt.Errorf("%w: %w", ErrUnauthorized, err)
		case resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%w: %w", ErrNotFound, err)
		case resp.StatusCode >= 500:
			return fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
	case errors.As(err, &netErr):
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// classified is an error of a class whose text replaces the underlying
// error's (which repeats what the caller's context already says).
type classified struct {
	class, err error
	text       string
}

func (c *classified) Error() string   { return c.text }
func (c *classified) Unwrap() []error { return []error{c.class, c.err} }
