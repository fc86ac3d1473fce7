package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Client talks to one cluster. It is safe for concurrent use.
type Client struct {
	// kube, watching and posting are the settings' groups the client
	// follows; instance is the reportingInstance of its Events.
	kube     settings.Kube
	watching settings.Watching
	posting  settings.Posting
	instance string

	log  *slog.Logger
	host string
	dyn  dynamic.Interface
	disc *discoveryCache
	raw  rest.Interface // requests whose responses the host decodes itself (Patch)
	// watchRaw carries the watch streams, one HTTP/1.1 connection each
	// (stall.go).
	watchRaw rest.Interface
	watchRT  http.RoundTripper // watchRaw's transport, whose idle connections Close closes
	stalls   *stallTracker
	conns    *connPool // the connections of requests other than watch streams
	skips    skipLog   // watch events skipped for their size or depth (watchskip.go)
	stats    *counters
	retry    retrier

	nsInf *nsTracker

	mu      sync.RWMutex
	watches map[schema.GroupVersionResource][]*Watch
}

// New builds a Client for the cluster that cfg points at. cfg is copied;
// its rate limit and user agent are replaced by those of the settings. New
// makes no request: see [Client.Ping].
func New(cfg *rest.Config, opts Options) (*Client, error) {
	if cfg == nil {
		return nil, fmt.Errorf("kube: %w: no rest config", ErrConfig)
	}
	opts = opts.withDefaults()
	c := &Client{
		kube:     opts.Settings.Kube,
		watching: opts.Settings.Watching,
		posting:  opts.Settings.Posting,
		instance: opts.Settings.Posting.ReportingInstance,
		log:      opts.Logger,
		host:     cfg.Host,
		stats:    &counters{},
		watches:  map[schema.GroupVersionResource][]*Watch{},
	}
	if err := c.connect(cfg); err != nil {
		return nil, fmt.Errorf("kube: %w: %v", ErrConfig, err)
	}
	// Discovery and pings are plain requests, bounded by a context timeout
	// each (a watch must not be, which is why the shared config has none).
	c.disc = newDiscoveryCache(c.raw, c.kube.RequestTimeout, c.kube.DiscoveryRefresh)
	c.nsInf = &nsTracker{c: c}
	c.retry = retrier{backoffs: c.kube.ErrorBackoffs, timeout: c.kube.RequestTimeout, onRetry: c.logRetry,
		track: c.conns.attempt}
	if c.instance == "" {
		c.instance, _ = os.Hostname()
	}
	return c, nil
}

// connect builds the clients of cfg: the dynamic and raw clients share one
// transport, whose connections the client can close all at once (stall.go),
// and watch streams have a transport of their own.
func (c *Client) connect(cfg *rest.Config) error {
	watchDial := cfg.Dial
	cfg = c.restConfig(cfg)
	c.conns = newConnPool(cfg.Dial, c.kube.RequestTimeout, c.log)
	cfg.Dial = c.conns.dial
	hc, err := rest.HTTPClientFor(cfg) // one connection pool for both clients
	if err != nil {
		return err
	}
	if c.conns.probe, err = healthProbe(cfg, hc); err != nil {
		return err
	}
	c.conns.probeTimeout = c.kube.ConnProbeTimeout
	if c.dyn, err = dynamic.NewForConfigAndClient(cfg, hc); err != nil {
		return err
	}
	if c.raw, err = rawClient(cfg, hc); err != nil {
		return err
	}
	wc, whc, err := watchClient(cfg, watchDial)
	if err != nil {
		return err
	}
	c.watchRaw, c.watchRT, c.stalls = wc, whc.Transport, newStallTracker()
	c.stalls.onStall = []func(){func() { utilnet.CloseIdleConnectionsFor(whc.Transport) }}
	return nil
}

// Close closes the client's connections: every pooled one, busy or idle,
// and the watch streams' idle ones. The client has a transport of its own
// (its dialer closes connections after a timeout), so nobody else would:
// call it when every request and watch of the client has ended (the host
// does when it stops).
func (c *Client) Close() {
	c.conns.close()
	utilnet.CloseIdleConnectionsFor(c.watchRT)
}

// healthProbe asks the API server's /livez on hc, past the client's rate
// limiter, and reports whether it answered, with any HTTP status (the
// "probes" flow schema exempts /livez from priority and fairness, and it
// does not wait for etcd as /healthz does).
func healthProbe(cfg *rest.Config, hc *http.Client) (func(ctx context.Context) bool, error) {
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, err
	}
	url := base.JoinPath("livez").String()
	return func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		_ = resp.Body.Close()
		return true
	}, nil
}

// restConfig copies cfg with the client's limiter, user agent and request
// counter, and, unless cfg has a handler of its own, the API server's
// warnings logged to the client's logger.
func (c *Client) restConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = c.kube.UserAgent
	if c.kube.QPS <= 0 {
		cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	} else {
		cfg.QPS, cfg.Burst = c.kube.QPS, max(1, c.kube.Burst)
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	cfg.Wrap(c.stats.wrap)
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		cfg.WarningHandlerWithContext = &warnings{log: c.log, seen: map[string]bool{}}
	}
	return cfg
}

// Ping asks the API server for its version, once, and says whether it
// answered: an error wrapping [ErrUnreachable] names the server and why.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.kube.RequestTimeout)
	defer cancel()
	err := c.raw.Get().AbsPath("/version").Do(ctx).Error()
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return nil
	case errors.As(err, &status):
		return wrapAPI(reqInfo{verb: "get", resource: "/version"}, err)
	default:
		return fmt.Errorf("kube: %w: %s: %v", ErrUnreachable, c.host, oneLine(err.Error()))
	}
}

// Resolve finds the resource a handler's selector names (see the package
// comment). The discovery documents are cached; a selector that matches
// nothing refreshes them (at most once per settings.Kube.DiscoveryRefresh) and
// is tried again, so CRDs installed after the start are found.
func (c *Client) Resolve(ctx context.Context, sel abi.ResourceSelector) (Resource, error) {
	res, err := c.disc.resolve(ctx, sel)
	if err != nil {
		return Resource{}, fmt.Errorf("kube: %w", err)
	}
	return res, nil
}

// Lookup finds a resource by group, version and plural, with the same
// caching as [Client.Resolve]. The error wraps [ErrNotServed] when the
// cluster does not serve it.
func (c *Client) Lookup(ctx context.Context, gvr schema.GroupVersionResource) (Resource, error) {
	res, err := c.disc.lookup(ctx, gvr)
	if err != nil {
		return Resource{}, fmt.Errorf("kube: %w", err)
	}
	return res, nil
}

func (c *Client) logRetry(err error, wait time.Duration, attempt int) {
	c.log.Warn("kubernetes request failed, retrying", "error", err, "wait", wait, "attempt", attempt)
}
