package kube

import (
	"context"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election is one campaign of client-go's leader election for the
// coordination.k8s.io/v1 Lease Namespace/Name, held as Identity, with the
// Lease's durations. The callbacks are client-go's.
type Election struct {
	Namespace, Name, Identity                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnStarted is called when this identity starts to lead; OnStopped
	// when it stops (the Lease lost or released); OnNewLeader when
	// another identity (or this one) is seen leading.
	OnStarted, OnStopped func()
	OnNewLeader          func(identity string)
}

// Elect campaigns for the Lease until ctx ends or, having led, the Lease
// is lost; it releases the Lease when ctx ends while leading. Its requests
// go through the client's connection pool, rate limiter and request
// counter (electionClient); one that runs out of its time without an
// answer is reported as a retried request's attempt is (conns.go), so that
// a silent connection is closed before the next renewal. The caller
// campaigns again after a loss.
func (c *Client) Elect(ctx context.Context, e Election) error {
	cs, err := kubernetes.NewForConfigAndClient(c.cfg, c.electionClient(e.RenewDeadline))
	if err != nil {
		return fmt.Errorf("kube: %w: %v", ErrConfig, err)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: e.LeaseDuration, RenewDeadline: e.RenewDeadline, RetryPeriod: e.RetryPeriod,
		ReleaseOnCancel: true, Name: e.Namespace + "/" + e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { e.OnStarted() },
			OnStoppedLeading: e.OnStopped,
			OnNewLeader:      e.OnNewLeader,
		},
	})
	if err != nil {
		return fmt.Errorf("kube: lease %s/%s: %w", e.Namespace, e.Name, err)
	}
	le.Run(ctx)
	return nil
}

// electionClient is the HTTP client of the leader election's requests: the
// client's transport, whose timeouts are reported to the pool. client-go
// bounds renewals by the renew deadline but gives its attempts to acquire
// no deadline: a request without one gets the smaller of renewDeadline and
// kube.requestTimeout.
func (c *Client) electionClient(renewDeadline time.Duration) *http.Client {
	rt := timeoutReporter{rt: c.hc.Transport, pool: c.conns, timeout: min(renewDeadline, c.kube.RequestTimeout)}
	return &http.Client{Transport: rt, Timeout: c.hc.Timeout}
}
