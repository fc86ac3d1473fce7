package settings

import (
	"strings"
	"time"
)

// Persistence says where the host keeps its state on the objects. The
// defaults are Kopf's, so that objects handled by Kopf are not seen as new.
type Persistence struct {
	// Prefix of every annotation the host writes: progress records
	// ("<prefix>/<handler-id>") and the diff-base. A prefix not starting
	// with "kopf." also gets a "<prefix>/kopf-managed" marker, so other
	// Kopf-like operators ignore its annotations. Kopf's.
	Prefix string `json:"prefix"`
	// Finalizer added to objects that have non-optional delete handlers,
	// timers or daemons. Not derived from Prefix, as in Kopf. Kopf's.
	Finalizer string `json:"finalizer"`
	// DiffBaseKey is the name, under Prefix, of the annotation holding the
	// last handled essence. Kopf's.
	DiffBaseKey string `json:"diffBaseKey"`
	// V1Keys also writes Kopf's legacy V1 annotation keys when they differ
	// from the V2 ones (only for long handler ids), as Kopf does by default,
	// so an operator can move back to Kopf.
	V1Keys bool `json:"v1Keys"`
	// DiffBaseInStatus keeps the diff-base in the status (at
	// status.kopf.last-handled-configuration, Kopf's StatusDiffBaseStorage)
	// instead of the annotation. On resources with the status subresource an update then
	// costs one request instead of two (the diff-base goes with the
	// results). The annotation is still read, so objects Kopf handled are
	// not seen as new, but Kopf's default storage does not read the status:
	// set it to false before moving objects back to Kopf. On by default: the
	// host's own API load comes first.
	DiffBaseInStatus bool `json:"diffBaseInStatus"`
	// DiffBaseAnnotationBytes bounds the diff-base annotation (key plus
	// value; twice where a V1 key differs), and never more than the
	// object's other annotations leave of the API server's 256 KiB for them
	// all. A larger diff-base is stored gzip-compressed, or as its SHA-256
	// digest when even that is too large (update handlers then get
	// old=null), with a Warning Event: docs/diff-base.md. 128 KiB: half the
	// limit, the rest left to others' annotations.
	DiffBaseAnnotationBytes int `json:"diffBaseAnnotationBytes"`
	// DiffBaseObjectBytes bounds, with the diff-base in the status, the
	// object's size as JSON with it; a diff-base that would pass it is
	// stored reduced as above. 1280 KiB: etcd refuses objects over 1.5 MiB
	// by default (--max-request-bytes), and the rest is room for what the
	// host does not count (managedFields) and later status writes.
	DiffBaseObjectBytes int `json:"diffBaseObjectBytes"`
	// ConsistencyTimeout is the longest wait, after the host patched an
	// object, for the watch to deliver the patched version before the
	// object is processed again regardless. Kopf's.
	ConsistencyTimeout time.Duration `json:"consistencyTimeout"`
	// DeleteResultsOnRelease writes the results of delete handlers that
	// finish in the cycle that releases the object (removes the finalizer)
	// even when they are all that cycle would write to /status: one PATCH
	// more per deletion, for an object about to disappear (only its last
	// state, the watch's DELETED event, carries them). Kopf writes them.
	// false: such results are dropped; results of delete handlers are
	// stored whenever the object stays (another delete handler retrying,
	// a daemon stopping) or the write costs no extra request, as Kopf's.
	DeleteResultsOnRelease bool `json:"deleteResultsOnRelease"`
}

// defaultPersistence is Kopf's storage, with the diff-base in the status.
func defaultPersistence() Persistence {
	return Persistence{
		Prefix:             "kopf.zalando.org",
		Finalizer:          "kopf.zalando.org/KopfFinalizerMarker",
		DiffBaseKey:        "last-handled-configuration",
		V1Keys:             true,
		DiffBaseInStatus:   true,
		ConsistencyTimeout: 5 * time.Second,

		DiffBaseAnnotationBytes: 128 << 10,
		DiffBaseObjectBytes:     1280 << 10,
	}
}

// maxPrefixLength keeps "<prefix>/<63-char name>" within the 253 characters
// Kubernetes allows for an annotation key.
const maxPrefixLength = 253 - 63 - 1

// validate reports annotation names and sizes the API server would refuse.
func (p Persistence) validate(v *validator) {
	switch {
	case p.Prefix == "":
		v.fail("persistence.prefix", "must not be empty")
	case len(p.Prefix) > maxPrefixLength || !dnsSubdomain.MatchString(p.Prefix):
		v.fail("persistence.prefix", "must be a DNS subdomain (lower case, digits, '-' and '.') of at most %d characters, got %q",
			maxPrefixLength, p.Prefix)
	}
	if i := strings.Index(p.Finalizer, "/"); i <= 0 || i == len(p.Finalizer)-1 || strings.Count(p.Finalizer, "/") > 1 {
		v.fail("persistence.finalizer", "must be a qualified name (domain/name), got %q", p.Finalizer)
	}
	if p.DiffBaseKey == "" || strings.Contains(p.DiffBaseKey, "/") || len(p.DiffBaseKey) > 63 {
		v.fail("persistence.diffBaseKey", "must be an annotation name of 1 to 63 characters without '/', got %q", p.DiffBaseKey)
	}
	v.positive("persistence.consistencyTimeout", p.ConsistencyTimeout)
	v.atLeast("persistence.diffBaseAnnotationBytes", p.DiffBaseAnnotationBytes, 1024)
	v.atLeast("persistence.diffBaseObjectBytes", p.DiffBaseObjectBytes, 64<<10)
}
