package operator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// fakeReviews answers token reviews from a table and counts them.
type fakeReviews struct {
	users   map[string]string // token: user
	readers map[string]bool   // users that may get /metrics
	down    bool              // every review fails
	asked   int
}

func (f *fakeReviews) Authenticate(_ context.Context, token string) (kube.Reviewer, bool, error) {
	f.asked++
	if f.down {
		return kube.Reviewer{}, false, errors.New("connection refused")
	}
	u, ok := f.users[token]
	return kube.Reviewer{User: u}, ok, nil
}

func (f *fakeReviews) Authorize(_ context.Context, who kube.Reviewer, _, _ string) (bool, string, error) {
	return f.readers[who.User], "", nil
}

// fakeNow is a clock the test moves.
type fakeNow struct{ t time.Time }

func (c *fakeNow) Now() time.Time { return c.t }

func TestMetricsAuth(t *testing.T) {
	type scrape struct {
		token    string
		advance  time.Duration // before the scrape
		down     bool          // the API server does not answer
		wantCode int
		asks     bool // a review goes to the API server
	}
	cases := []struct {
		name    string
		size    int
		ttl     time.Duration
		scrapes []scrape
	}{
		{"decisions are reused within the TTL", 4, time.Minute, []scrape{
			{token: "reader", wantCode: 200, asks: true},
			{token: "reader", advance: 59 * time.Second, wantCode: 200},
			{token: "other", wantCode: 403, asks: true},
			{token: "other", wantCode: 403},
			{token: "bad", wantCode: 401, asks: true},
			{token: "bad", wantCode: 401},
			{token: "", wantCode: 401},
		}},
		{"past the TTL the API server is asked again", 4, time.Minute, []scrape{
			{token: "reader", wantCode: 200, asks: true},
			{token: "reader", advance: 61 * time.Second, wantCode: 200, asks: true},
			{token: "reader", advance: 30 * time.Second, wantCode: 200},
		}},
		{"the least recently used decision goes past the size", 2, time.Hour, []scrape{
			{token: "reader", wantCode: 200, asks: true},
			{token: "bad-1", wantCode: 401, asks: true},
			{token: "reader", wantCode: 200}, // used: bad-1 is now the oldest
			{token: "bad-2", wantCode: 401, asks: true},
			{token: "reader", wantCode: 200},
			{token: "bad-1", wantCode: 401, asks: true}, // evicted by bad-2
			{token: "bad-3", wantCode: 401, asks: true},
			{token: "bad-4", wantCode: 401, asks: true},
			{token: "reader", wantCode: 200, asks: true}, // evicted by bad-3 and bad-4
		}},
		{"a failed review is not kept", 4, time.Minute, []scrape{
			{token: "reader", down: true, wantCode: 500, asks: true},
			{token: "reader", wantCode: 200, asks: true},
		}},
		{"TTL 0 keeps nothing", 4, 0, []scrape{
			{token: "reader", wantCode: 200, asks: true},
			{token: "reader", wantCode: 200, asks: true},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rv := &fakeReviews{users: map[string]string{"reader": "prometheus", "other": "someone"}, readers: map[string]bool{"prometheus": true}}
			clock := &fakeNow{t: time.Unix(1_700_000_000, 0)}
			set := settings.Observability{AuthCacheTTL: tc.ttl, AuthCacheSize: tc.size}
			ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) })
			a := newMetricsAuth(rv, ok, set, slog.New(slog.NewTextHandler(io.Discard, nil)), clock)
			for i, s := range tc.scrapes {
				clock.t = clock.t.Add(s.advance)
				rv.down = s.down
				before := rv.asked
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				if s.token != "" {
					req.Header.Set("Authorization", "Bearer "+s.token)
				}
				rec := httptest.NewRecorder()
				a.ServeHTTP(rec, req)
				if rec.Code != s.wantCode {
					t.Errorf("scrape %d (%s): %d %s, want %d", i, s.token, rec.Code, rec.Body, s.wantCode)
				}
				if asked := rv.asked > before; asked != s.asks {
					t.Errorf("scrape %d (%s): asked the API server %v, want %v", i, s.token, asked, s.asks)
				}
			}
			if n := len(a.cache.Keys()); n > tc.size {
				t.Errorf("%d decisions kept, want at most %d", n, tc.size)
			}
		})
	}
}
