package option

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// DevPriority is the priority of --dev (Kopf's 666): a host on a laptop
// pauses the deployed ones (priority 0) of the same peering.
const DevPriority = 666

// Peering holds run's flags of Kopf's peering (--standalone, --dev,
// -P/--peering, -p/--priority) and of Lease leader election
// (--leader-elect, --leader-elect-namespace).
type Peering struct {
	Standalone bool
	Dev        bool
	Name       string
	Priority   int

	LeaderElect          bool
	LeaderElectNamespace string

	fs *pflag.FlagSet
}

// ApplyFlags declares the flags.
func (o *Peering) ApplyFlags(fs *pflag.FlagSet) {
	o.fs = fs
	fs.BoolVar(&o.Standalone, "standalone", false, "run without peering: no keep-alives, never paused by other operators")
	fs.BoolVar(&o.Dev, "dev", false, "development mode: priority 666, so this host pauses the deployed operators (priority 0) of its peering")
	fs.StringVarP(&o.Name, "peering", "P", "", "the peering object (KopfPeering/ClusterKopfPeering) to coordinate with; "+
		"makes peering mandatory: paused until it exists (default: \"default\" if it exists)")
	fs.IntVarP(&o.Priority, "priority", "p", 0, "this host's priority among its peers: the highest handles, the others pause")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "handle only while holding a coordination.k8s.io/v1 Lease (replicas: one leads, "+
		"the others wait with warm caches); webhooks are served by every replica")
	fs.StringVar(&o.LeaderElectNamespace, "leader-elect-namespace", "", "namespace of the Lease (default: $POD_NAMESPACE, else \"default\"; "+
		"the Lease is named as the peering, settings leaderElection.leaseName)")
}

// Validate refuses flags that exclude each other.
func (o *Peering) Validate() error {
	if o.Standalone && o.changed("peering") {
		return clierr.Usagef(errors.New("--standalone and -P/--peering exclude each other"), "pass one of them")
	}
	if o.changed("leader-elect-namespace") && !o.LeaderElect {
		return clierr.Usagef(errors.New("--leader-elect-namespace needs --leader-elect"), "add --leader-elect")
	}
	return nil
}

// Apply puts the flags that were given over the settings.
func (o *Peering) Apply(s *settings.Settings) {
	if o.changed("peering") {
		s.Peering.Name, s.Peering.Mandatory = o.Name, true
	}
	if o.Standalone {
		s.Peering.Standalone = true
	}
	if o.Dev {
		s.Peering.Priority = DevPriority
	}
	if o.changed("priority") {
		s.Peering.Priority = o.Priority
	}
	if o.LeaderElect {
		s.LeaderElection.Enabled = true
	}
	if o.changed("leader-elect-namespace") {
		s.LeaderElection.Namespace = o.LeaderElectNamespace
	}
}

func (o *Peering) changed(flag string) bool { return o.fs != nil && o.fs.Changed(flag) }
