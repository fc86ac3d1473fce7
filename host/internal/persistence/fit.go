package persistence

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// Form is how a diff-base is stored on an object. A diff-base larger than
// the room the object has for it (Kubernetes refuses the write otherwise,
// and Kopf loops: its issue #1087) is stored reduced, and the reduced forms
// are strings no JSON document starts with, so the three never mix up.
type Form int

const (
	// FormNone: the object holds no diff-base (it was never handled).
	FormNone Form = iota
	// FormJSON is Kopf's form: the essence as compact JSON (plus a
	// trailing newline in the annotation).
	FormJSON
	// FormGzip is [GzipPrefix] and the base64 of the gzip-compressed
	// compact JSON. The host reads it back whole; Kopf cannot.
	FormGzip
	// FormDigest is [DigestPrefix] and the hex SHA-256 of the compact
	// JSON. The object counts as handled and a change is still detected,
	// but what the essence was is lost: update handlers get old=null (see
	// [Storage.FetchDiffBase]).
	FormDigest
)

// The reduced forms' prefixes. Kopf reads a diff-base with json.loads, so
// both make Kopf fail on the object (a JSONDecodeError, retried with
// backoff for ever) until the value is removed; nothing else is affected.
const (
	GzipPrefix   = "gzip+base64:"
	DigestPrefix = "sha256:"
)

// String names the form as the messages do.
func (f Form) String() string {
	switch f {
	case FormJSON:
		return "json"
	case FormGzip:
		return "gzip"
	case FormDigest:
		return "digest"
	}
	return "none"
}

// annotationsLimit is the API server's limit on the size of all of an
// object's annotations, keys plus values (apimachinery's
// TotalAnnotationSizeLimitB): a write past it is refused with 422. It is
// Kubernetes', not a setting.
const annotationsLimit = 256 << 10

// fit is the one place that decides how a diff-base is stored: as compact
// JSON (Kopf's form; suffix is what Kopf appends there) when it fits in
// room as measure counts a value; else gzip-compressed when that fits;
// else its digest, which always goes (some 70 bytes).
func fit(json, suffix string, room int, measure func(string) int) (string, Form) {
	if v := json + suffix; measure(v) <= room {
		return v, FormJSON
	}
	if v := GzipPrefix + deflate(json); measure(v) <= room {
		return v, FormGzip
	}
	return DigestPrefix + digest(json), FormDigest
}

// digest is the hex SHA-256 of an essence's compact JSON.
func digest(json string) string {
	sum := sha256.Sum256([]byte(json))
	return hex.EncodeToString(sum[:])
}

func deflate(json string) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(json)) // a bytes.Buffer does not fail
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// inflate reads a FormGzip value (without its prefix), refusing more than
// limit bytes of JSON (0: no limit), so that a hostile value cannot make
// the host allocate without bound.
func inflate(value string, limit int) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("base64: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	var r io.Reader = zr
	if limit > 0 {
		r = io.LimitReader(zr, int64(limit)+1)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if limit > 0 && len(out) > limit {
		return nil, fmt.Errorf("gzip: inflates to more than %d bytes", limit)
	}
	return out, nil
}

// parseDigest reads a FormDigest value without its prefix.
func parseDigest(value string) (string, error) {
	if len(value) != sha256.Size*2 || strings.Trim(value, "0123456789abcdef") != "" {
		return "", fmt.Errorf("not a hex SHA-256: %q", value)
	}
	return value, nil
}

// Reduced describes a diff-base that a [Patch] stores reduced, because as
// JSON it does not fit where it goes. The reactor logs [Reduced.Message]
// and posts it as a Warning Event.
type Reduced struct {
	// Form is FormGzip or FormDigest.
	Form Form
	// InStatus: the diff-base goes to status.kopf (else to an annotation).
	InStatus bool
	// Size is the essence's compact JSON in bytes, Stored the stored
	// value's, Room the bytes it could take, Limit the bound that left
	// that room (the annotations' or the object's).
	Size, Stored, Room, Limit int
	// Refused: the API server refused the object's last write as too
	// large, so the digest form was used whatever the room ([Patch.DigestOnly]).
	Refused bool
}

// room is what fit may use: none after a refused write, so that only the
// digest goes.
func (r *Reduced) room() int {
	if r.Refused {
		return 0
	}
	return r.Room
}

// Message says what happened and what to do, for a log line and an Event.
func (r *Reduced) Message() string {
	var where, fix string
	if r.InStatus {
		where = fmt.Sprintf("the status (%s left of the %s the object may reach with it: settings "+
			"persistence.diffBaseObjectBytes, under etcd's default limit of 1.5 MiB per object)", kib(r.Room), kib(r.Limit))
		fix = "Keep large data out of the object (e.g. in a ConfigMap it names), or raise diffBaseObjectBytes " +
			"if etcd's --max-request-bytes allows."
	} else {
		where = fmt.Sprintf("its annotation (%s left of %s: settings persistence.diffBaseAnnotationBytes, "+
			"and the API server's 256 KiB for all annotations)", kib(r.Room), kib(r.Limit))
		fix = "To keep it whole, keep the diff-base in the status (persistence.diffBaseInStatus, the default) " +
			"and let the status keep it: add x-kubernetes-preserve-unknown-fields: true to the CRD's status schema."
	}
	what := fmt.Sprintf("stored gzip-compressed (%s, %q), which Kopf cannot read", kib(r.Stored), GzipPrefix)
	if r.Form == FormDigest {
		what = fmt.Sprintf("even compressed it does not fit: only its SHA-256 digest is stored (%q): the object "+
			"counts as handled and a change is still detected, but update handlers get old=null and a diff of "+
			"the whole object from null", DigestPrefix)
	}
	if r.Refused {
		return fmt.Sprintf("The API server refused the object's last write as too large, though the diff-base (the last "+
			"handled essence, %s as JSON) seemed to fit in %s (metadata.managedFields, which the host does not keep, "+
			"count toward etcd's limit too): only its SHA-256 digest is stored now (%q), until the host restarts: "+
			"update handlers get old=null and a diff of the whole object from null. %s (kopf-wasm's docs/diff-base.md)",
			kib(r.Size), where, DigestPrefix, fix)
	}
	return fmt.Sprintf("The diff-base (the last handled essence, %s as JSON) does not fit in %s: %s. %s "+
		"(kopf-wasm's docs/diff-base.md)", kib(r.Size), where, what, fix)
}

func kib(n int) string {
	n = max(n, 0)
	if n < 10<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
