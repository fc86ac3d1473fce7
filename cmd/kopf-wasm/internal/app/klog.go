package app

import (
	"log/slog"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// routeKlog sends what client-go writes to klog's global logger (its
// reflectors', leader election's and a few other messages; the host logs
// the API server's warnings itself, at warn) to log, so the command's log
// has one format. klog's own verbosity (0) still drops client-go's V(n)
// lines, and klog passes no severity on: its warnings arrive at info, its
// errors at error. It changes klog for the whole process, which is the
// command's: the host library leaves klog alone for embedders. The
// returned function gives klog its own output back (when the command
// ends).
func routeKlog(log *slog.Logger) (restore func()) {
	klog.SetLogger(logr.FromSlogHandler(log.Handler()))
	return klog.ClearLogger
}
