package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const invokeLong = `Call one handler of a module offline, with no cluster, on an object from a
YAML or JSON file, and print the outcome, the result (what the host would
store under status.<handler-id>) and the patch.

The request is the one the operator would build: for create, update,
delete, resume and field handlers the reason of the handler's kind (field
handlers: create, or update with --old), the old and new diff-base essences
and their diff; ADDED or MODIFIED events; CREATE or UPDATE admission
requests; for convert handlers, a conversion to --to. Retry is 0 and there
is no memo.

The handler's filters (labels, annotations, field, value, old, new, when)
are applied as the operator applies them: when it would not call the
handler for this object, invoke says why and exits with 1; --force calls
it anyway (with a warning).

Kubernetes requests are served from --objects (files or folders of YAML or
JSON objects; the object itself is among them): gets and lists read them,
writes change them in memory only, and every request is listed after the
patch. With --kubeconfig (or --context) the reads the stored objects do
not answer go to that cluster; nothing is ever written to it. Without
either, Kubernetes requests answer 501, as Events and indices always do.
The module's log lines go to the error stream. The exit code is 0 whatever
the outcome; it is non-zero only when the call itself fails or is not
made.

Example - Call the create handler of the example module:
  kopf-wasm invoke bin/wasm/kopfexample.wasm --handler create_fn --object examples/kopfexample/obj.yaml

Example - Convert a widget to v1 with the conversion example:
  kopf-wasm invoke bin/wasm/10-conversion.wasm --handler convert --object widget.yaml --to kopf.dev/v1

Example - Serve the module's reads from stored objects, and then from a cluster:
  kopf-wasm invoke bin/wasm/05-database.wasm --handler reconcile --object db.yaml --objects cluster-state/
  kopf-wasm invoke bin/wasm/05-database.wasm --handler reconcile --object db.yaml --kubeconfig ~/.kube/config

Example - Call a handler whose label filter does not match the object:
  kopf-wasm invoke bin/wasm/03-fields-filters.wasm --handler gold --object silver.yaml --force

Example - Call an update handler with the previous state, as JSON:
  kopf-wasm invoke handlers.wasm --handler update_fn --object new.yaml --old old.yaml -o json`

type invokeOptions struct {
	option.Output
	handler, object, old, to string
	force                    bool
	objects                  []string
	kubeconfig, context      string
}

// invocation is the JSON output of invoke.
type invocation struct {
	Handler  string        `json:"handler"`
	Request  *abi.Request  `json:"request"`
	Response *abi.Response `json:"response"`
	// Kube lists the module's Kubernetes requests.
	Kube []host.KubeCall `json:"kube,omitempty"`
}

func invokeCmd(g *globals) *cobra.Command {
	var o invokeOptions
	cmd := &cobra.Command{
		Use:   "invoke [flags] MODULE --handler ID --object FILE [--old FILE]",
		Short: "Call one handler offline on an object and print its outcome",
		Long:  invokeLong,
		Args:  args(1, 1, "MODULE (a .wasm file)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if o.object == "" {
				return clierr.Usagef(errors.New("invoke: no object given"), "pass --object FILE (YAML or JSON, - for the standard input)")
			}
			obj, err := readObject(g.streams.In, o.object)
			if err != nil {
				return err
			}
			var old []byte
			if o.old != "" {
				if old, err = readObject(g.streams.In, o.old); err != nil {
					return err
				}
			}
			stored, err := readStoredObjects(o.objects)
			if err != nil {
				return err
			}
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			defer routeKlog(log)()
			var calls []host.KubeCall
			req, resp, err := host.Invoke(cmd.Context(), host.Invocation{
				Module: a[0], Handler: o.handler, Object: obj, Old: old, ConvertTo: o.to, Logger: log, Settings: offlineSettings(),
				Force: o.force, Objects: stored, Kubeconfig: o.kubeconfig, KubeContext: o.context,
				KubeCalls: func(c host.KubeCall) { calls = append(calls, c) },
			})
			switch {
			case errors.Is(err, host.ErrNoHandler) && o.handler == "":
				return clierr.Usagef(err, "name one with --handler")
			case errors.Is(err, host.ErrNoHandler):
				return clierr.Usagef(err, "")
			case errors.Is(err, host.ErrUsage) && o.to == "" && strings.Contains(err.Error(), "apiVersion to convert to"):
				return clierr.Usagef(err, "pass it with --to GROUP/VERSION")
			case errors.Is(err, host.ErrUsage):
				return clierr.Usagef(err, "")
			case errors.Is(err, host.ErrNotCalled):
				return fmt.Errorf("%w (--force calls it anyway)", err)
			}
			if err != nil {
				return err
			}
			if o.Format == "json" {
				return writeJSON(g.streams.Out, invocation{Handler: o.handler, Request: req, Response: resp, Kube: calls})
			}
			if err := writeResponse(g.streams.Out, resp); err != nil {
				return err
			}
			return writeKubeCalls(g.streams.Out, calls)
		},
	}
	fs := cmd.Flags()
	o.Output.ApplyFlags(fs)
	fs.StringVar(&o.handler, "handler", "", "the id of the handler to call (see kopf-wasm inspect)")
	fs.StringVar(&o.object, "object", "", "the object: a YAML or JSON file, - for the standard input")
	fs.StringVar(&o.old, "old", "", "the object's previous state (YAML or JSON file): an update")
	fs.StringVar(&o.to, "to", "", "for a convert handler: the apiVersion to convert the object to, e.g. kopf.dev/v1")
	fs.BoolVar(&o.force, "force", false, "call the handler even if its filters do not match the object")
	fs.StringArrayVar(&o.objects, "objects", nil, "stored objects that serve the module's Kubernetes requests: a YAML or JSON file or a folder of them (repeatable)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "a kubeconfig whose cluster answers the module's reads (get, list); nothing is written to it")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context for --kubeconfig (alone: the default kubeconfig's context)")
	return cmd
}

// readObject reads a YAML or JSON object from a file (or "-") as JSON.
func readObject(stdin io.Reader, path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, clierr.New(fmt.Errorf("read the object: %w", err), "pass an existing YAML or JSON file")
	}
	js, err := yaml.YAMLToJSON(data)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(js, &m)
	}
	if err != nil || m == nil {
		return nil, clierr.New(fmt.Errorf("%s is not a YAML or JSON object", path), "give one Kubernetes object (apiVersion, kind, metadata, spec)")
	}
	return js, nil
}

// writeResponse prints the outcome, the result and the patch.
func writeResponse(w io.Writer, resp *abi.Response) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	out := resp.Outcome
	line := string(out.Status)
	if out.Message != "" {
		line += ": " + out.Message
	}
	if out.Delay != nil {
		line += fmt.Sprintf(" (retry in %gs)", *out.Delay)
	}
	fmt.Fprintf(tw, "Outcome:\t%s\n", line)
	fmt.Fprintf(tw, "Result:\t%s\n", orNone(resp.Result))
	var merge json.RawMessage
	var ops []abi.JSONPatchOp
	if resp.Patch != nil {
		merge, ops = resp.Patch.Merge, resp.Patch.JSON
	}
	fmt.Fprintf(tw, "Patch:\t%s\n", orNone(merge))
	if len(ops) > 0 {
		raw, _ := json.Marshal(ops)
		fmt.Fprintf(tw, "JSON patch:\t%s\n", raw)
	}
	if resp.Admission != nil {
		raw, _ := json.Marshal(resp.Admission)
		fmt.Fprintf(tw, "Admission:\t%s\n", raw)
	}
	if resp.Memo != nil {
		fmt.Fprintf(tw, "Memo:\t%s\n", resp.Memo)
	}
	return tw.Flush()
}

func orNone(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "(none)"
	}
	return string(raw)
}
