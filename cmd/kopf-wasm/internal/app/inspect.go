package app

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/internal/webhookname"
)

const inspectLong = `Print a module's manifest, offline: its name and version, its digest, its
handlers (id, kind, resource, filters, options) and the permissions it
declares, and for validating and mutating handlers the webhook the host
serves: its path, its name in managed configurations ("<managed>" stands
for --webhook-managed), operations, failure policy and side effects.
Nothing is run but the module's manifest export.

Example - Show the handlers of the example module:
  kopf-wasm inspect bin/wasm/kopfexample.wasm

Example - The manifest as JSON, for scripts:
  kopf-wasm inspect -o json bin/wasm/kopfexample.wasm`

// inspection is the JSON output of inspect.
type inspection struct {
	File     string       `json:"file"`
	Digest   string       `json:"digest"`
	Manifest abi.Manifest `json:"manifest"`
	Webhooks []webhook    `json:"webhooks,omitempty"`
}

// webhook is what the host serves and configures for a webhook handler.
type webhook struct {
	Handler       string   `json:"handler"`
	Kind          string   `json:"kind"`
	Path          string   `json:"path"`
	Name          string   `json:"name"`
	Operations    []string `json:"operations"`
	Subresource   string   `json:"subresource,omitempty"`
	FailurePolicy string   `json:"failurePolicy"`
	SideEffects   string   `json:"sideEffects"`
	Persistent    bool     `json:"persistent,omitempty"`
}

// webhooks lists the webhooks of a manifest's validating and mutating
// handlers, as the host serves and configures them, and the paths of its
// convert handlers.
func webhooks(m abi.Manifest) []webhook {
	var out []webhook
	for _, h := range m.Handlers {
		if h.Kind == abi.KindConvert {
			out = append(out, webhook{Handler: h.ID, Kind: string(h.Kind), Path: webhookname.Path(m.Module.Name, h.ID),
				Name: "-", Operations: []string{"-"}, FailurePolicy: "-", SideEffects: "-"})
			continue
		}
		if !h.Kind.IsWebhook() {
			continue
		}
		w := webhook{Handler: h.ID, Kind: string(h.Kind), Path: webhookname.Path(m.Module.Name, h.ID),
			Name: webhookname.Name(m.Module.Name, h.ID, "<managed>"), Operations: h.Options.Operations,
			Subresource: h.Options.Subresource, FailurePolicy: "Fail", SideEffects: "None", Persistent: h.Options.Persistent}
		if len(w.Operations) == 0 {
			w.Operations = []string{"*"}
		}
		if h.Options.IgnoreFailures {
			w.FailurePolicy = "Ignore"
		}
		if h.Options.SideEffects {
			w.SideEffects = "NoneOnDryRun"
		}
		out = append(out, w)
	}
	return out
}

func inspectCmd(g *globals) *cobra.Command {
	var out option.Output
	cmd := &cobra.Command{
		Use:   "inspect [flags] MODULE",
		Short: "Show a module's handlers and permissions",
		Long:  inspectLong,
		Args:  args(1, 1, "MODULE (a .wasm file)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := out.Validate(); err != nil {
				return err
			}
			m, digest, err := host.Inspect(cmd.Context(), a[0], offlineSettings())
			if err != nil {
				return err
			}
			in := inspection{File: a[0], Digest: digest, Manifest: m, Webhooks: webhooks(m)}
			if out.Format == "json" {
				return writeJSON(g.streams.Out, in)
			}
			return writeManifest(g.streams.Out, in)
		},
	}
	out.ApplyFlags(cmd.Flags())
	return cmd
}

// writeManifest renders an inspection as text tables.
func writeManifest(w io.Writer, in inspection) error {
	m := in.Manifest
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Module:\t%s\n", strings.TrimSpace(m.Module.Name+" "+m.Module.Version))
	fmt.Fprintf(tw, "File:\t%s\n", in.File)
	fmt.Fprintf(tw, "Digest:\t%s\n", in.Digest)
	fmt.Fprintf(tw, "ABI:\tv%d\n\n", m.ABIVersion)
	fmt.Fprintln(tw, "HANDLER\tKIND\tRESOURCE\tFILTERS\tOPTIONS")
	for _, h := range m.Handlers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.ID, h.Kind, resourceName(h.Resource), fields(h.Filters), fields(h.Options))
	}
	fmt.Fprintln(tw)
	if len(in.Webhooks) > 0 {
		fmt.Fprintln(tw, "WEBHOOK\tPATH\tNAME\tOPERATIONS\tFAILURE POLICY\tSIDE EFFECTS")
		for _, w := range in.Webhooks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", w.Handler, w.Path, w.Name, strings.Join(w.Operations, ","), w.FailurePolicy, w.SideEffects)
		}
		fmt.Fprintln(tw)
	}
	if len(m.Permissions.Kubernetes) == 0 {
		fmt.Fprintln(tw, "Kubernetes permissions:\tnone (only the resources it handles)")
	} else {
		fmt.Fprintln(tw, "GROUP\tRESOURCE\tVERBS")
		for _, p := range m.Permissions.Kubernetes {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", orDash(p.Group), p.Resource, strings.Join(p.Verbs, ","))
		}
	}
	if len(m.Permissions.Hosts) > 0 {
		fmt.Fprintf(tw, "\nOutbound hosts:\t%s\n", strings.Join(m.Permissions.Hosts, ", "))
	}
	return tw.Flush()
}

// resourceName renders a selector as kubectl names resources:
// plural.version.group, with the parts that are set.
func resourceName(sel *abi.ResourceSelector) string {
	if sel == nil {
		return "-"
	}
	name := sel.Name
	switch {
	case sel.Everything:
		name = "(everything)"
	case sel.Category != "":
		name = "(category " + sel.Category + ")"
	}
	parts := []string{name}
	for _, p := range []string{sel.Version, sel.Group} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// fields renders the set fields of a JSON-tagged struct as sorted
// key=value pairs, values as compact JSON (strings bare); "-" when none.
func fields(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, 0, len(keys))
	for _, k := range keys {
		val := string(m[k])
		var s string
		if json.Unmarshal(m[k], &s) == nil {
			val = s
		}
		pairs = append(pairs, k+"="+val)
	}
	return strings.Join(pairs, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
