package operator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// metricsAuth lets a request through when its bearer token is one the API
// server accepts (TokenReview) and whose user may get the path
// (SubjectAccessReview of the non-resource URL), as kubebuilder's
// scaffold does since v4.1. Decisions are kept by token and path for
// settings.Observability.AuthCacheTTL, at most AuthCacheSize of them (the
// least recently used go first), so that tokens sent by anyone cannot
// grow the host's memory.
type metricsAuth struct {
	reviews reviews
	next    http.Handler
	log     *slog.Logger
	ttl     time.Duration // how long a decision is reused; 0: never
	cache   *cache.LRUExpireCache
}

// reviews asks the API server about a token: *kube.Client.
type reviews interface {
	Authenticate(ctx context.Context, token string) (who kube.Reviewer, ok bool, err error)
	Authorize(ctx context.Context, who kube.Reviewer, verb, path string) (allowed bool, reason string, err error)
}

// authDecision is the answer to a request: a status code (0: allowed) and
// the message of a refusal.
type authDecision struct {
	code    int
	message string
}

// newMetricsAuth guards next with the reviews of rv; clock is the
// cache's (nil: the real one).
func newMetricsAuth(rv reviews, next http.Handler, set settings.Observability, log *slog.Logger, clock cache.Clock) *metricsAuth {
	size := max(set.AuthCacheSize, 1)
	c := cache.NewLRUExpireCache(size)
	if clock != nil {
		c = cache.NewLRUExpireCacheWithClock(size, clock)
	}
	return &metricsAuth{reviews: rv, next: next, log: log, ttl: set.AuthCacheTTL, cache: c}
}

func (a *metricsAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		http.Error(w, "Unauthorized: send a bearer token of a user allowed to get "+r.URL.Path, http.StatusUnauthorized)
		return
	}
	d := a.decide(r.Context(), token, r.URL.Path)
	if d.code != 0 {
		http.Error(w, d.message, d.code)
		return
	}
	a.next.ServeHTTP(w, r)
}

// decide answers from the cache, or asks the API server and keeps the
// answer (but a failure to ask: the server may answer next time).
func (a *metricsAuth) decide(ctx context.Context, token, path string) authDecision {
	key := sha256.Sum256([]byte(path + "\x00" + token))
	if d, ok := a.cache.Get(key); ok {
		return d.(authDecision)
	}
	d := a.review(ctx, token, path)
	if d.code != http.StatusInternalServerError && a.ttl > 0 {
		a.cache.Add(key, d, a.ttl)
	}
	return d
}

func (a *metricsAuth) review(ctx context.Context, token, path string) authDecision {
	who, ok, err := a.reviews.Authenticate(ctx, token)
	if err != nil {
		a.log.Warn("metrics: the token review failed", "error", err)
		return authDecision{code: http.StatusInternalServerError, message: "authentication failed: " + err.Error()}
	}
	if !ok {
		return authDecision{code: http.StatusUnauthorized, message: "Unauthorized: the API server does not accept the token"}
	}
	allowed, reason, err := a.reviews.Authorize(ctx, who, "get", path)
	if err != nil {
		a.log.Warn("metrics: the access review failed", "error", err)
		return authDecision{code: http.StatusInternalServerError, message: "authorization failed: " + err.Error()}
	}
	if !allowed {
		msg := fmt.Sprintf("Forbidden: user %q may not get %s (grant the nonResourceURL in a ClusterRole)", who.User, path)
		if reason != "" {
			msg += ": " + reason
		}
		return authDecision{code: http.StatusForbidden, message: msg}
	}
	return authDecision{}
}
