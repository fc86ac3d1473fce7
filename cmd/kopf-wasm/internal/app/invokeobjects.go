package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/host"
)

// readStoredObjects reads the objects of invoke --objects: each path is a
// YAML or JSON file (several documents, Lists included) or a folder whose
// .yaml, .yml and .json files are read, in name order.
func readStoredObjects(paths []string) ([]map[string]any, error) {
	var out []map[string]any
	for _, p := range paths {
		files, err := objectFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			objs, err := readDocuments(f)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func objectFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, clierr.Usagef(fmt.Errorf("invoke --objects: %w", err), "pass YAML or JSON files, or folders of them")
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, clierr.New(fmt.Errorf("invoke --objects: %w", err), "")
	}
	var files []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	sort.Strings(files)
	return files, nil
}

// readDocuments decodes every YAML or JSON document of a file; empty
// documents are skipped.
func readDocuments(path string) ([]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, clierr.Usagef(fmt.Errorf("invoke --objects: %w", err), "")
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []map[string]any
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, clierr.Usagef(fmt.Errorf("invoke --objects: %s: %w", path, err), "give Kubernetes objects as YAML or JSON")
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

// writeKubeCalls prints the module's Kubernetes requests and who answered.
func writeKubeCalls(w io.Writer, calls []host.KubeCall) error {
	if len(calls) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Kubernetes requests:\n")
	for _, c := range calls {
		line := fmt.Sprintf("  %s\t%d\t%s", c.Call(), c.Code, c.Source)
		if c.Message != "" {
			line += "\t" + c.Message
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
