package option

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
)

// Output is the -o flag of commands that print a document.
type Output struct {
	// Format is "table" (the default) or "json".
	Format string
}

// ApplyFlags declares -o/--output.
func (o *Output) ApplyFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Format, "output", "o", "table", "output format: table or json")
}

// Validate refuses formats other than table and json.
func (o *Output) Validate() error {
	if o.Format != "table" && o.Format != "json" {
		return clierr.Usagef(fmt.Errorf("unknown output format %q", o.Format), "use -o table or -o json")
	}
	return nil
}
