// Command 10-conversion shows a conversion webhook, which Kopf does not
// have: Widgets are served as v1alpha1 (spec.size, a string) and v1
// (spec.replicas, a number), and the module converts between them, so
// kubectl reads and writes either version.
package main

import (
	"fmt"
	"strconv"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("conversion", "0.1.0")
	kopf.OnConvert("kopf.dev", "v1", "widgets", convert, kopf.ID("convert"), kopf.Versions("v1alpha1", "v1"))
}

// convert returns the widget in the desired version; the host sets its
// apiVersion and keeps its metadata.
func convert(ctx *kopf.Context) (any, error) {
	spec := ctx.Spec()
	switch to := ctx.Conversion().DesiredAPIVersion; to {
	case "kopf.dev/v1":
		size, _ := spec.Get("size")
		s, _ := size.(string)
		if s == "" {
			return map[string]any{"spec": map[string]any{}}, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, kopf.PermanentError{Message: fmt.Sprintf("spec.size %q is not a number", s)}
		}
		return map[string]any{"spec": map[string]any{"replicas": n}}, nil
	case "kopf.dev/v1alpha1":
		out := map[string]any{}
		if r, ok := spec.Get("replicas"); ok {
			if n, ok := kopf.IntOf(r); ok {
				out["size"] = strconv.FormatInt(n, 10)
			}
		}
		return map[string]any{"spec": out}, nil
	default:
		return nil, kopf.PermanentError{Message: "cannot convert to " + to}
	}
}

func main() {}
