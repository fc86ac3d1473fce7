package kube

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Namespaces is the namespace scope of a watch: every namespace (cluster
// wide), or the namespaces matched by one or more of Kopf's patterns.
// The zero value is cluster wide.
type Namespaces struct {
	patterns []nsPattern
	raw      []string
}

// nsPattern is one -n value: comma-separated globs, the first decisive.
type nsPattern []nsGlob

type nsGlob struct {
	glob    string
	negated bool
}

// AllNamespaces is the cluster-wide scope (Kopf's -A).
func AllNamespaces() Namespaces { return Namespaces{} }

// ParseNamespaces reads Kopf's namespace patterns (one per -n flag). Each
// pattern is a comma-separated list of globs (* and ?, and [...] classes);
// a glob starting with ! excludes. Within a pattern the first glob is
// decisive (a name it does not match is out, whatever follows; a leading
// negated glob implies a * before it) and then the rightmost matching glob
// wins, so "myapp-*,!*-pr-*,*-pr-123" takes myapp-live and myapp-pr-123
// but not myapp-pr-456. A namespace is in the scope when any pattern takes
// it. No patterns at all means every namespace.
func ParseNamespaces(patterns ...string) (Namespaces, error) {
	var ns Namespaces
	for _, p := range patterns {
		parsed, err := parseNSPattern(p)
		if err != nil {
			return Namespaces{}, err
		}
		ns.patterns = append(ns.patterns, parsed)
		ns.raw = append(ns.raw, p)
	}
	return ns, nil
}

func parseNSPattern(p string) (nsPattern, error) {
	var out nsPattern
	for _, part := range strings.Split(p, ",") {
		g := nsGlob{glob: strings.TrimSpace(part)}
		if rest, ok := strings.CutPrefix(g.glob, "!"); ok {
			g.glob, g.negated = strings.TrimSpace(rest), true
		}
		if g.glob == "" {
			return nil, fmt.Errorf("namespace pattern %q: empty glob", p)
		}
		if _, err := path.Match(g.glob, ""); err != nil {
			return nil, fmt.Errorf("namespace pattern %q: glob %q: %w", p, g.glob, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// ClusterWide reports whether the scope is every namespace.
func (n Namespaces) ClusterWide() bool { return len(n.patterns) == 0 }

// Match reports whether the namespace name is in the scope.
func (n Namespaces) Match(name string) bool {
	if n.ClusterWide() {
		return true
	}
	for _, p := range n.patterns {
		if p.match(name) {
			return true
		}
	}
	return false
}

func (p nsPattern) match(name string) bool {
	first := p[0]
	if !first.negated && !globMatch(first.glob, name) {
		return false
	}
	in := true // a leading negation implies "*" before it
	for _, g := range p {
		if globMatch(g.glob, name) {
			in = !g.negated
		}
	}
	return in
}

func globMatch(glob, name string) bool {
	ok, _ := path.Match(glob, name) // patterns are checked when parsed
	return ok
}

// Names returns the namespaces of a scope made of plain names only (no
// globs, no negation, one name per pattern), sorted and deduplicated, and
// true; for any other scope it returns nil and false, and the namespaces
// must be watched to know which exist.
func (n Namespaces) Names() ([]string, bool) {
	names := n.plainNames()
	if n.ClusterWide() || len(names) == 0 || len(n.patterns) != countPlain(n.patterns) {
		return nil, false
	}
	return names, true
}

// plainNames returns the patterns that are plain names, sorted and
// deduplicated, ignoring the others: Kopf's fallback when namespaces cannot
// be listed.
func (n Namespaces) plainNames() []string {
	seen := map[string]bool{}
	for _, p := range n.patterns {
		if p.plain() {
			seen[p[0].glob] = true
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func countPlain(ps []nsPattern) int {
	n := 0
	for _, p := range ps {
		if p.plain() {
			n++
		}
	}
	return n
}

func (p nsPattern) plain() bool {
	return len(p) == 1 && !p[0].negated && !strings.ContainsAny(p[0].glob, `*?[\`)
}

// String gives the patterns back, comma-joined per pattern and separated
// by spaces, or "*" for cluster wide.
func (n Namespaces) String() string {
	if n.ClusterWide() {
		return "*"
	}
	return strings.Join(n.raw, " ")
}
