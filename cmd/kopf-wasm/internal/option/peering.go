package option

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
)

// Peering holds Kopf's peering flags. The host does not implement peering
// yet: it always runs standalone, so --standalone and --dev are accepted
// and -P/--peering and -p/--priority are refused rather than ignored.
type Peering struct {
	Standalone bool
	Dev        bool
	Name       string
	Priority   int

	fs *pflag.FlagSet
}

// ApplyFlags declares --standalone, --dev, -P/--peering and -p/--priority.
func (o *Peering) ApplyFlags(fs *pflag.FlagSet) {
	o.fs = fs
	fs.BoolVar(&o.Standalone, "standalone", false, "run without peering (what the host always does for now)")
	fs.BoolVar(&o.Dev, "dev", false, "development mode (Kopf: priority 666); without peering it changes nothing yet")
	fs.StringVarP(&o.Name, "peering", "P", "", "the peering object to coordinate with (not supported yet)")
	fs.IntVarP(&o.Priority, "priority", "p", 0, "the priority among peers (not supported yet)")
}

// Validate refuses -P and -p, given on the command line or in the
// environment.
func (o *Peering) Validate() error {
	if o.fs != nil && (o.fs.Changed("peering") || o.fs.Changed("priority")) {
		return clierr.Usagef(errors.New("peering is not supported yet"), "run with --standalone")
	}
	return nil
}
