package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// Election is one campaign of leader election for the coordination.k8s.io/v1
// Lease Namespace/Name, held as Identity, with the Lease's durations, as
// client-go's tools/leaderelection runs it (elector.go).
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
// is lost; it releases the Lease when ctx ends while leading (after
// OnStopped returned). Its requests go through the client's connection
// pool, rate limiter and request counter, one attempt each, bounded by the
// smaller of settings.Kube.RequestTimeout and what is left of the renew
// deadline; one that runs out of its time without an answer is reported as
// a retried request's attempt is (conns.go), so that a silent connection
// is closed before the next renewal. The callbacks are called on Elect's
// goroutine, in order. The caller campaigns again after a loss.
func (c *Client) Elect(ctx context.Context, e Election) error {
	if err := e.check(); err != nil {
		return fmt.Errorf("kube: lease %s/%s: %w", e.Namespace, e.Name, err)
	}
	api := leaseAPI{c: c, namespace: e.Namespace, name: e.Name, retry: c.retry.single()}
	el := newElector(e, api, clock.RealClock{}, c.log.With("lease", e.Namespace+"/"+e.Name))
	el.run(ctx)
	return nil
}

// check refuses what client-go's NewLeaderElector refuses.
func (e Election) check() error {
	switch {
	case e.LeaseDuration <= 0 || e.RenewDeadline <= 0 || e.RetryPeriod <= 0:
		return errors.New("leaseDuration, renewDeadline and retryPeriod must be above 0")
	case e.LeaseDuration <= e.RenewDeadline:
		return errors.New("leaseDuration must be greater than renewDeadline")
	case float64(e.RenewDeadline) <= jitterFactor*float64(e.RetryPeriod):
		return fmt.Errorf("renewDeadline must be greater than retryPeriod × %g", jitterFactor)
	case e.OnStarted == nil || e.OnStopped == nil:
		return errors.New("OnStarted and OnStopped are required")
	}
	return nil
}

// newElector builds the elector of one campaign, with client-go's jitter.
func newElector(e Election, api leaseStore, clk clock.Clock, log *slog.Logger) *elector {
	return &elector{e: e, api: api, clock: clk, log: log, jitter: rand.Float64}
}

// leaseStore is what the elector asks of the API server about its one
// Lease; each call is one request whose attempt limit bounds. A Lease that
// does not exist is [ErrGone]; an update at a stale resourceVersion
// [ErrConflict]; a create that finds one [ErrExists].
type leaseStore interface {
	get(ctx context.Context, limit time.Duration) (*coordinationv1.Lease, error)
	create(ctx context.Context, l *coordinationv1.Lease, limit time.Duration) (*coordinationv1.Lease, error)
	update(ctx context.Context, l *coordinationv1.Lease, limit time.Duration) (*coordinationv1.Lease, error)
}

// leaseAPI is the [leaseStore] of a Client: typed Leases sent and read as
// JSON by the raw REST client (client-go's typed clientset would link every
// built-in API group), with the retrier's attempt tracking (retry.single).
type leaseAPI struct {
	c               *Client
	namespace, name string
	retry           retrier
}

func (a leaseAPI) get(ctx context.Context, limit time.Duration) (*coordinationv1.Lease, error) {
	return a.send(ctx, "get", limit, func() *rest.Request {
		return a.c.raw.Get().AbsPath(objectPath(leasesGVR, a.namespace, a.name, "")...)
	})
}

func (a leaseAPI) create(ctx context.Context, l *coordinationv1.Lease, limit time.Duration) (*coordinationv1.Lease, error) {
	body, err := leaseJSON(l)
	if err != nil {
		return nil, err
	}
	return a.send(ctx, "create", limit, func() *rest.Request {
		return a.c.raw.Post().AbsPath(objectPath(leasesGVR, a.namespace, "", "")...).
			Param("fieldManager", a.c.kube.FieldManager).Body(body)
	})
}

func (a leaseAPI) update(ctx context.Context, l *coordinationv1.Lease, limit time.Duration) (*coordinationv1.Lease, error) {
	body, err := leaseJSON(l)
	if err != nil {
		return nil, err
	}
	return a.send(ctx, "update", limit, func() *rest.Request {
		return a.c.raw.Put().AbsPath(objectPath(leasesGVR, a.namespace, a.name, "")...).
			Param("fieldManager", a.c.kube.FieldManager).Body(body)
	})
}

// send makes one request, its attempt bounded by limit too, and decodes
// the Lease it answers with.
func (a leaseAPI) send(ctx context.Context, verb string, limit time.Duration, req func() *rest.Request) (*coordinationv1.Lease, error) {
	info := reqInfo{verb: verb, resource: gvrString(leasesGVR), namespace: a.namespace, name: a.name}
	r := a.retry
	if limit > 0 && (r.timeout <= 0 || limit < r.timeout) {
		r.timeout = limit
	}
	var raw []byte
	err := r.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		res := req().Do(ctx)
		if err := res.Error(); err != nil { // Error, not Raw: it decodes the API status
			return err
		}
		raw, _ = res.Raw()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	out := &coordinationv1.Lease{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("kube: %s lease %s/%s: the response is not a Lease: %w", verb, a.namespace, a.name, err)
	}
	return out, nil
}

func leaseJSON(l *coordinationv1.Lease) ([]byte, error) {
	l = l.DeepCopy()
	l.TypeMeta = metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
	body, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("kube: lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	return body, nil
}
