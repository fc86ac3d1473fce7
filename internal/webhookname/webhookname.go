// Package webhookname names a module's admission handlers as the host
// serves them: the URL path of a handler ([Path]) and the name of its
// webhook in the configurations the host manages ([Name]). The admission
// engine (host/internal/engines/admission) serves and registers them under
// these names; `kopf-wasm inspect` and `kopf-wasm rbac` print the same ones
// for manifests written by hand.
package webhookname

import (
	"fmt"
	"net/url"
	"strings"
)

// Path is the path of one handler: "/<module>/<handler-id>", each element
// of the id escaped as a URL path segment.
func Path(module, id string) string {
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/" + url.PathEscape(module) + "/" + strings.Join(parts, "/")
}

// Name is a handler's webhook name, "<id>.<module>.<managed>": the id and
// module lower-cased, "/" turned into ".", "_" into "-", and any other
// character a DNS name cannot hold hex-encoded as "x<hex>".
func Name(module, id, managed string) string {
	return dnsPart(id) + "." + dnsPart(module) + "." + managed
}

func dnsPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		case r == '/':
			b.WriteByte('.')
		case r == '_':
			b.WriteByte('-')
		default:
			fmt.Fprintf(&b, "x%x", r)
		}
	}
	return strings.Trim(b.String(), "-.")
}
