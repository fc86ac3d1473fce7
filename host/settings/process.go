package settings

import "time"

// Process tunes the host's stop.
type Process struct {
	// ShutdownTimeout bounds the whole stop after SIGTERM or SIGINT: the
	// in-flight processing cycles, the daemons' stop and the cleanup
	// activities. Past it the host exits with an error and abandons them
	// (their objects are processed again at the next start). Below
	// Kubernetes' default terminationGracePeriodSeconds (30), so that the
	// host, not the kubelet's SIGKILL, decides.
	ShutdownTimeout time.Duration `json:"shutdownTimeout"`
	// CleanupTimeout bounds the daemons' stop, and then the cleanup
	// activities, once the processing cycles have finished. At most
	// ShutdownTimeout.
	CleanupTimeout time.Duration `json:"cleanupTimeout"`
}

// defaultProcess stops within Kubernetes' default grace period.
func defaultProcess() Process {
	return Process{ShutdownTimeout: 25 * time.Second, CleanupTimeout: 10 * time.Second}
}

// validate reports a cleanup that could outlast the stop.
func (pr Process) validate(v *validator) {
	v.positive("process.shutdownTimeout", pr.ShutdownTimeout)
	v.positive("process.cleanupTimeout", pr.CleanupTimeout)
	if pr.CleanupTimeout > pr.ShutdownTimeout && pr.ShutdownTimeout > 0 {
		v.fail("process.cleanupTimeout", "must not exceed process.shutdownTimeout (%s), which bounds the whole stop; got %s",
			pr.ShutdownTimeout, pr.CleanupTimeout)
	}
}
