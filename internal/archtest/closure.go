package archtest

import (
	"fmt"
	"sort"
)

// ClosureRule forbids packages in the dependency closure of its roots:
// what the binaries built from them link.
type ClosureRule struct {
	Name string
	Why  string
	// Roots are the packages whose closure is checked (patterns that
	// `go list` accepts, such as ".../host/...").
	Roots []string
	// Deny lists the packages the closure may not hold (the patterns of
	// the package comment).
	Deny []string
}

// CheckClosure returns the violations of r in pkgs, the closure of its
// roots as `go list -deps` reports it: the ways in, each a package reached
// from the roots without passing through a denied package that imports a
// denied one, sorted. (What a denied package imports in turn is not
// listed: that is one violation, not hundreds.)
func CheckClosure(r ClosureRule, pkgs []Package) []Violation {
	byPath := map[string]Package{}
	var queue []string
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
		if matchAny(r.Roots, p.ImportPath) && !matchAny(r.Deny, p.ImportPath) {
			queue = append(queue, p.ImportPath)
		}
	}
	seen := map[string]bool{}
	var out []Violation
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		for _, imp := range byPath[path].Imports {
			if matchAny(r.Deny, imp) {
				out = append(out, Violation{Rule: r.Name, Package: path, Import: imp})
			} else {
				queue = append(queue, imp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Validate reports a rule without roots or denials, or with a malformed
// pattern.
func (r ClosureRule) Validate() error {
	if len(r.Roots) == 0 || len(r.Deny) == 0 {
		return fmt.Errorf("closure rule %q: Roots and Deny are required", r.Name)
	}
	return Rule{Name: r.Name, Why: r.Why, From: r.Roots, Deny: r.Deny}.Validate()
}
