package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const renderLong = `Print what a module would do to objects, offline, with no cluster: for each
object (YAML or JSON files or folders of them; several documents and Lists
are read), the handlers the operator would call on first seeing it - the
create cause, as invoke chooses it without --old: create handlers, and
field handlers, whose filters match - and each call's outcome, result and
patch. Nothing is written anywhere.

Kubernetes requests are served from the rendered objects and --objects,
as invoke serves them (writes change them in memory only). With --record
the calls are also written to a recording, a baseline that kopf-wasm replay
runs against another version of the module. The exit code is 0 whatever
the outcomes; 2 when the input is bad.

Example - What the example module does to an object:
  kopf-wasm render --module bin/wasm/kopfexample.wasm examples/kopfexample/obj.yaml

Example - Record a baseline with this version, then compare the next one:
  kopf-wasm render --module v1/handlers.wasm objects/ --record base.jsonl
  kopf-wasm replay base.jsonl --module v2/handlers.wasm`

type renderOptions struct {
	option.Output
	module, record string
	objects        []string
}

func renderCmd(g *globals) *cobra.Command {
	var o renderOptions
	cmd := &cobra.Command{
		Use:   "render --module FILE OBJECT...",
		Short: "Print the outcomes, results and patches a module's handlers would give objects",
		Long:  renderLong,
		Args:  args(1, -1, "OBJECT (a YAML or JSON file or folder)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if o.module == "" {
				return clierr.Usagef(errors.New("render: no module given"), "pass --module FILE (a .wasm file)")
			}
			objs, err := renderObjects(a)
			if err != nil {
				return err
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
			s := offlineSettings()
			s.Recording.Path = o.record
			out, err := host.Render(cmd.Context(), host.Rendering{Module: o.module, Objects: objs, Stored: stored, Settings: s, Logger: log})
			switch {
			case errors.Is(err, host.ErrUsage):
				return clierr.Usagef(err, "")
			case err != nil:
				return err
			}
			if o.Format == "json" {
				return writeJSON(g.streams.Out, out)
			}
			return writeRender(g.streams.Out, out)
		},
	}
	fs := cmd.Flags()
	o.Output.ApplyFlags(fs)
	fs.StringVar(&o.module, "module", "", "the module (a .wasm file)")
	fs.StringArrayVar(&o.objects, "objects", nil, "more stored objects that serve the module's Kubernetes requests: a YAML or JSON file or a folder of them (repeatable)")
	fs.StringVar(&o.record, "record", "", "also append the calls to this recording (for kopf-wasm replay)")
	return cmd
}

// renderObjects reads the objects to render as JSON, Lists expanded.
func renderObjects(paths []string) ([][]byte, error) {
	docs, err := readStoredObjects(paths)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	var add func(m map[string]any)
	add = func(m map[string]any) {
		kind, _ := m["kind"].(string)
		if items, ok := m["items"].([]any); ok && strings.HasSuffix(kind, "List") {
			for _, it := range items {
				if obj, ok := it.(map[string]any); ok {
					add(obj)
				}
			}
			return
		}
		raw, _ := json.Marshal(m)
		out = append(out, raw)
	}
	for _, d := range docs {
		add(d)
	}
	if len(out) == 0 {
		return nil, clierr.Usagef(fmt.Errorf("render: no objects in %s", strings.Join(paths, ", ")), "give YAML or JSON files of Kubernetes objects")
	}
	return out, nil
}

// writeRender prints each object's handler calls as invoke prints one.
func writeRender(w io.Writer, out []host.Rendered) error {
	for i, r := range out {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s:\n", r.Object)
		if len(r.Handlers) == 0 {
			fmt.Fprintln(w, "  (no handler is due)")
		}
		for _, h := range r.Handlers {
			fmt.Fprintf(w, "  %s (%s):\n", h.Handler, h.Kind)
			var b strings.Builder
			if h.Error != "" {
				fmt.Fprintf(&b, "Error:  %s\n", h.Error)
			} else if err := writeResponse(&b, h.Response); err != nil {
				return err
			}
			var calls []host.KubeCall
			for _, c := range h.Kube {
				calls = append(calls, host.KubeCall(c))
			}
			if err := writeKubeCalls(&b, calls); err != nil {
				return err
			}
			for _, line := range strings.SplitAfter(strings.TrimRight(b.String(), "\n"), "\n") {
				fmt.Fprintf(w, "    %s", line)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}
