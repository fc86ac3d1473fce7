package chaostest

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// TestWatchGone makes the host's watch fall behind while etcd is compacted:
// the host process is paused (SIGSTOP) and its connections, which go
// through a proxy, silently frozen; objects are created, changed and
// deleted, one is created and deleted unseen, and etcd's history is
// compacted past the host's last resourceVersion. Resumed, the host finds
// its watch silent, watches again from that resourceVersion, is answered
// 410 Gone (the API server's watch cache is off, so the watch reaches
// etcd), lists again and handles every change exactly once.
func TestWatchGone(t *testing.T) {
	kopfWasm(t)
	c := newCluster(t, testenv.Options{APIServerFlags: map[string]string{"watch-cache": "false"}},
		"watching:\n  inactivityTimeout: 5s\n")
	tr := track(t, c)
	o := objects{t: t, c: c, tr: tr}
	proxy := e2etest.NewProxy(t, hostPort(t, c.env.Config.Host))
	host := c.startHost(0, proxiedKubeconfig(t, c.env.Kubeconfig, proxy.Addr()), "-v")

	settled, updated, deleted, created := span(0, 10), span(10, 20), span(20, 30), span(100, 110)
	const unseen = 200
	before := append(append(append([]int{}, settled...), updated...), deleted...)
	o.do("create", before, c.create)
	o.handled(before, 0, 2*time.Minute)

	host.signal(t, syscall.SIGSTOP)
	resumed := false
	defer func() {
		if !resumed {
			host.signal(t, syscall.SIGCONT)
		}
	}()
	t.Logf("froze %d connections of the paused host", proxy.Freeze())
	o.do("create", created, c.create)
	o.do("update", updated, func(ctx context.Context, name string) error { return c.setStep(ctx, name, 1) })
	o.do("delete", deleted, c.remove)
	o.do("create", []int{unseen}, c.create)
	o.do("delete", []int{unseen}, c.remove)
	rev, err := c.env.CompactEtcd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d", rev)

	lists := listCount(t, c)
	host.signal(t, syscall.SIGCONT)
	resumed = true
	cont := time.Now()
	last := latest(o.handled(created, 0, 2*time.Minute), o.handled(updated, 1, 2*time.Minute), o.gone(deleted, 2*time.Minute))
	t.Logf("every change handled %s after the host resumed; its warnings (seconds from the resumption):\n%s",
		last.Sub(cont).Round(10*time.Millisecond), warnings(host.records(), cont))
	// client-go's reflector takes the 410 in the stream quietly (klog level
	// 4) and lists again: the API server counts that listing, or, when the
	// host streams its listings (watching.watchList), the host logs it.
	if relists := listCount(t, c) - lists + streamedLists(host.logText(), cont); relists < 1 {
		t.Errorf("the host did not list kopfexamples again after its watch resumed from a compacted resourceVersion; its watch records:\n%s",
			grepLog(host.logText(), "watch"))
	} else {
		t.Logf("the host listed again %d times", relists)
	}
	if !host.running() {
		t.Fatalf("the host ended (%v); its log's end:\n%s", host.err, host.tail(40))
	}
	if err := host.stop(30 * time.Second); err != nil {
		t.Errorf("the host, stopped with SIGTERM: %v", err)
	}
	want := keys("create_fn", -1, before, created)
	want = append(want, keys("update_fn", 1, updated)...)
	want = append(want, keys("delete_fn", -1, deleted)...)
	exactlyOnce(t, calls(0, host.records()), want)
}

// hostPort is the host:port of a URL.
func hostPort(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// proxiedKubeconfig writes a copy of a kubeconfig whose server is the
// proxy's address.
func proxiedKubeconfig(t testing.TB, path, addr string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = "https://" + addr
	}
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// grepLog is the lines of a log that contain text.
func grepLog(log, text string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, text) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// streamedLists is how many listings of kopfexamples the host streamed
// (a watch with sendInitialEvents, which the API server counts as a WATCH)
// after since, by its debug log.
func streamedLists(log string, since time.Time) int {
	n := 0
	for _, line := range strings.Split(grepLog(log, `"msg":"listed the objects"`), "\n") {
		var r struct {
			Time     time.Time `json:"time"`
			Resource string    `json:"resource"`
			Streamed bool      `json:"streamed"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Streamed && r.Time.After(since) &&
			strings.HasPrefix(r.Resource, "kopfexamples.") {
			n++
		}
	}
	return n
}

// listCount is how many LIST requests of kopfexamples the API server
// answered so far (apiserver_request_total, any code).
func listCount(t testing.TB, c *cluster) int {
	t.Helper()
	raw, err := kubernetes.NewForConfigOrDie(c.env.Config).RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="kopfexamples"`) ||
			!strings.Contains(line, `verb="LIST"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		n += int(v)
	}
	return n
}
