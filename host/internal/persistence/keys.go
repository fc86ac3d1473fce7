package persistence

import (
	"encoding/base64"
	"strings"

	"golang.org/x/crypto/blake2b"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// maxNameLength is the longest name part of an annotation key in Kubernetes.
const maxNameLength = 63

// managedMarker is the annotation name that marks a prefix as Kopf-managed.
const managedMarker = "kopf-managed"

// kopfPrefix is the prefix every Kopf-based operator is assumed to own.
const kopfPrefix = "kopf.zalando.org"

// keyConvention forms annotation keys as Kopf's StorageKeyFormingConvention:
// "<prefix>/<safe-name>", cut and hash-suffixed when too long, in the V2 form
// and (while v1 is on) the legacy V1 form.
type keyConvention struct {
	prefix string
	v1     bool
}

// keys returns the annotation keys of a storage key for body: the V2 key
// first, then the V1 key if it differs. body may be nil.
func (c keyConvention) keys(key string, body map[string]any) []string {
	key = markKey(key, body)
	v2 := c.v2Key(key)
	if !c.v1 {
		return []string{v2}
	}
	if v1 := c.v1Key(key); v1 != v2 {
		return []string{v2, v1}
	}
	return []string{v2}
}

// markKey suffixes keys on ReplicaSets owned by a Deployment with "-ofDRS":
// Kubernetes copies a Deployment's annotations onto its ReplicaSets, and the
// copies must not be taken for the ReplicaSet's own state.
func markKey(key string, body map[string]any) string {
	if objects.GetString(body, objects.Path{"kind"}) != "ReplicaSet" {
		return key
	}
	owners, _ := objects.Get(body, objects.Path{"metadata", "ownerReferences"})
	list, _ := owners.([]any)
	for _, owner := range list {
		if objects.GetString(owner, objects.Path{"kind"}) == "Deployment" {
			return key + "-ofDRS"
		}
	}
	return key
}

// safeName replaces the characters that handler ids have but annotation
// names may not: "/" becomes ".", "<" and ">" become "_".
func safeName(key string) string { return unsafeChars.Replace(key) }

// unsafeChars is built once: a Replacer is costly to build and safe to share.
var unsafeChars = strings.NewReplacer("/", ".", "<", "_", ">", "_")

// v1Key applies the 63-character limit to the whole key, prefix included
// (Kopf's legacy form). The hash is of the safe name.
func (c keyConvention) v1Key(key string) string {
	safe := []rune(safeName(key))
	prefix := c.prefix + "/"
	room := maxNameLength - len([]rune(prefix))
	suffix := ""
	if len(safe) > room {
		suffix = hashSuffix(string(safe))
	}
	return prefix + string(pyHead(safe, room-len([]rune(suffix)))) + suffix
}

// v2Key applies the 63-character limit to the name only. The hash is of the
// original (unsafe) key, and the length checked is the original key's.
func (c keyConvention) v2Key(key string) string {
	suffix := ""
	if len([]rune(key)) > maxNameLength {
		suffix = hashSuffix(key)
	}
	limit := max(0, maxNameLength-len([]rune(suffix)))
	return c.prefix + "/" + string(pyHead([]rune(safeName(key)), limit)) + suffix
}

// pyHead is Python's s[:n]: a negative n counts from the end.
func pyHead(s []rune, n int) []rune {
	if n < 0 {
		n = max(0, len(s)+n)
	}
	return s[:min(n, len(s))]
}

// hashSuffix is "-" and the unpadded base64 (with "-" and "." for "+" and
// "/") of the 4-byte BLAKE2b digest of key, with trailing "=", "-" and "."
// stripped so that the name ends with an alphanumeric character.
func hashSuffix(key string) string {
	h, err := blake2b.New(4, nil)
	if err != nil {
		panic(err) // a constant, valid size
	}
	h.Write([]byte(key))
	enc := base64.StdEncoding.EncodeToString(h.Sum(nil))
	enc = strings.NewReplacer("+", "-", "/", ".").Replace(enc)
	return strings.TrimRight("-"+enc, "=-.")
}

// markerKey returns the "<prefix>/kopf-managed" annotation a prefix needs, or
// "" for prefixes under "kopf." which are recognised without it.
func (c keyConvention) markerKey() string {
	if strings.HasPrefix(c.prefix, "kopf.") {
		return ""
	}
	return c.prefix + "/" + managedMarker
}

// managedPrefixes detects the annotation prefixes owned by Kopf-like
// operators, whose annotations never count as essential: those with a
// "kopf-managed" marker, "kopf.zalando.org" and its subdomains.
func managedPrefixes(annotations map[string]any) map[string]bool {
	out := map[string]bool{}
	for key := range annotations {
		prefix, name, ok := strings.Cut(key, "/")
		if !ok {
			continue
		}
		if name == managedMarker || prefix == kopfPrefix || strings.HasSuffix(prefix, "."+kopfPrefix) {
			out[prefix] = true
		}
	}
	return out
}
