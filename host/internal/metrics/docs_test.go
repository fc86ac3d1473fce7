package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestDocsListEveryMetric checks that docs/metrics.md names every metric
// of the registry (but the Go runtime's and the process's), and no metric
// the registry lacks.
func TestDocsListEveryMetric(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *prometheus.Desc, 100)
	go func() {
		Registry.Describe(ch)
		close(ch)
	}()
	registered := map[string]bool{}
	for d := range ch {
		s := d.String() // Desc{fqName: "name", ...}
		name := s[strings.Index(s, `"`)+1:]
		name = name[:strings.Index(name, `"`)]
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		registered[name] = true
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/metrics.md does not name %s", name)
		}
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		name := strings.Trim(strings.Fields(line)[1], "`")
		if strings.HasPrefix(name, "--") {
			continue // a flag
		}
		if !registered[name] {
			t.Errorf("docs/metrics.md names %s, which is not registered", name)
		}
	}
}
