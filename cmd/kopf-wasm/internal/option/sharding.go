package option

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Sharding holds run's flags of sharding (--shards, --shard-group,
// --shard-namespace).
type Sharding struct {
	Enabled   bool
	Group     string
	Namespace string

	fs *pflag.FlagSet
}

// ApplyFlags declares the flags.
func (o *Sharding) ApplyFlags(fs *pflag.FlagSet) {
	o.fs = fs
	fs.BoolVar(&o.Enabled, "shards", false, "share the objects with the other replicas run with --shards: each object is "+
		"handled by exactly one live replica, and objects move when replicas come and go (docs/sharding.md)")
	fs.StringVar(&o.Group, "shard-group", "", "the replicas that share the objects (default \"kopf-wasm\", settings sharding.group)")
	fs.StringVar(&o.Namespace, "shard-namespace", "", "namespace of the replicas' membership Leases "+
		"(default: $POD_NAMESPACE, else \"default\"; settings sharding.namespace)")
}

// Validate refuses sharding flags without --shards.
func (o *Sharding) Validate() error {
	for _, flag := range []string{"shard-group", "shard-namespace"} {
		if o.changed(flag) && !o.Enabled {
			return clierr.Usagef(errors.New("--"+flag+" needs --shards"), "add --shards")
		}
	}
	return nil
}

// Apply puts the flags that were given over the settings.
func (o *Sharding) Apply(s *settings.Settings) {
	if o.Enabled {
		s.Sharding.Enabled = true
	}
	if o.changed("shard-group") {
		s.Sharding.Group = o.Group
	}
	if o.changed("shard-namespace") {
		s.Sharding.Namespace = o.Namespace
	}
}

func (o *Sharding) changed(flag string) bool { return o.fs != nil && o.fs.Changed(flag) }
