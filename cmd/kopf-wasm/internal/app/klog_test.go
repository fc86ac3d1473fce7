package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// What client-go writes to klog (beyond the API server's warnings, which
// the host logs itself) reaches the command's logger, in its format.
func TestKlogThroughTheLogger(t *testing.T) {
	var out bytes.Buffer
	restore := routeKlog(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(restore)
	klog.Warning("reflector: something odd")
	klog.Flush()
	if got := out.String(); !strings.Contains(got, `msg="reflector: something odd"`) {
		t.Errorf("klog's line reached the logger as %q", got)
	}
}
