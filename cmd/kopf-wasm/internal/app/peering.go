package app

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

// peerFlags are the flags freeze and resume share (Kopf's).
type peerFlags struct {
	option.Kube
	option.Namespaces
	peering string
	id      string
}

func (p *peerFlags) apply(cmd *cobra.Command) {
	fs := cmd.Flags()
	p.Kube.ApplyFlags(fs)
	p.Namespaces.ApplyFlags(fs)
	fs.StringVarP(&p.peering, "peering", "P", "", "the peering object's name (required)")
	fs.StringVarP(&p.id, "id", "i", "", "the identity of the record (default: <user>@<host>)")
}

func (p *peerFlags) options() (host.PeerOptions, error) {
	if err := p.Namespaces.Validate(); err != nil {
		return host.PeerOptions{}, err
	}
	if p.peering == "" {
		return host.PeerOptions{}, clierr.Usagef(fmt.Errorf("no peering given"), "pass --peering NAME")
	}
	return host.PeerOptions{Kubeconfig: p.Kubeconfig, KubeContext: p.Context, Peering: p.peering,
		Namespaces: p.Patterns, AllNamespaces: p.All, ID: p.id}, nil
}

const freezeLong = `Pause the operators of a peering, as Kopf's freeze: write a peer record of
--priority (default 100) and --lifetime seconds into the peering object
(the KopfPeering of each -n namespace, or the ClusterKopfPeering with -A or
no -n). Every host (kopf-wasm or Kopf) of that peering with a lower priority
pauses until the lifetime has passed or 'kopf-wasm resume' removes the
record; hosts of the same priority pause too. --message is written with the
record, and paused kopf-wasm hosts log it and report it on their liveness
endpoint (Kopf ignores it).

Example - Pause the operators of the peering "default" for 10 minutes:
  kopf-wasm freeze -A --peering default --lifetime 600 --message "cluster upgrade"`

func freezeCmd(g *globals) *cobra.Command {
	var p peerFlags
	var lifetime, priority int
	var message string
	var dev bool
	cmd := &cobra.Command{
		Use:   "freeze --peering NAME --lifetime SECONDS",
		Short: "Pause the operators of a peering for a while (Kopf's freeze)",
		Long:  freezeLong,
		Args:  args(0, 0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := p.options()
			if err != nil {
				return err
			}
			if lifetime < 1 {
				return clierr.Usagef(fmt.Errorf("no lifetime given"), "pass --lifetime SECONDS (at least 1)")
			}
			o.Lifetime, o.Priority, o.Message = time.Duration(lifetime)*time.Second, priority, message
			if dev && !cmd.Flags().Changed("priority") {
				o.Priority = option.DevPriority
			}
			if err := host.Freeze(cmd.Context(), o); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Frozen peering %q for %ds at priority %d.\n", o.Peering, lifetime, o.Priority)
			return err
		},
	}
	p.apply(cmd)
	fs := cmd.Flags()
	fs.IntVarP(&lifetime, "lifetime", "t", 0, "how long the record holds, in seconds (required)")
	fs.IntVarP(&priority, "priority", "p", 100, "the record's priority: hosts below it pause")
	fs.StringVarP(&message, "message", "m", "", "why (written with the record, logged by the paused hosts)")
	fs.BoolVar(&dev, "dev", false, "priority 666, as run --dev")
	return cmd
}

func resumeCmd(g *globals) *cobra.Command {
	var p peerFlags
	cmd := &cobra.Command{
		Use:   "resume --peering NAME",
		Short: "Remove a freeze record, so paused operators resume (Kopf's resume)",
		Long: `Remove the record that 'kopf-wasm freeze' wrote under the same --id from the
peering object (same -n/-A as the freeze); the hosts it paused resume at once.

Example - Resume the operators of the peering "default":
  kopf-wasm resume -A --peering default`,
		Args: args(0, 0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := p.options()
			if err != nil {
				return err
			}
			if err := host.Unfreeze(cmd.Context(), o); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Resumed peering %q.\n", o.Peering)
			return err
		},
	}
	p.apply(cmd)
	return cmd
}
