package option

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
)

// Namespaces is the namespace scope, as Kopf's -n and -A.
type Namespaces struct {
	// Patterns are the -n values: globs (*, ?), ! to exclude, comma lists.
	Patterns []string
	// All is -A: the whole cluster.
	All bool
}

// ApplyFlags declares -n/--namespace (repeatable) and -A/--all-namespaces.
func (o *Namespaces) ApplyFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Patterns, "namespace", "n", nil,
		"serve namespaces matching this pattern: globs (* and ?), ! to exclude, comma lists (repeatable)")
	fs.BoolVarP(&o.All, "all-namespaces", "A", false, "serve the whole cluster")
}

// Validate refuses -n together with -A.
func (o *Namespaces) Validate() error {
	if o.All && len(o.Patterns) > 0 {
		return clierr.Usagef(errors.New("-n/--namespace and -A/--all-namespaces exclude each other"),
			"pass either -n PATTERN (repeatable) or -A")
	}
	return nil
}
