package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func auditLine(stage, verb, agent, ns, resource, sub string, code int, at string) string {
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"` + stage +
		`","verb":"` + verb + `","userAgent":"` + agent + `","objectRef":{"resource":"` + resource +
		`","namespace":"` + ns + `","name":"x","subresource":"` + sub + `","apiGroup":"kopf.dev"},` +
		`"responseStatus":{"metadata":{},"code":` + strconv.Itoa(code) + `},"requestReceivedTimestamp":"` + at + `"}`
}

func TestCountWrites(t *testing.T) {
	const (
		before = "2026-01-01T10:00:00.000000Z"
		after  = "2026-01-01T10:00:01.500000Z"
	)
	lines := []string{
		auditLine("ResponseComplete", "patch", "kopf-wasm-bench", "ns1", "kopfexamples", "", 200, after),
		auditLine("ResponseComplete", "patch", "kopf-wasm-bench", "ns1", "kopfexamples", "status", 200, after),
		auditLine("ResponseComplete", "patch", "kopf-wasm-bench", "ns1", "kopfexamples", "status", 409, after),
		auditLine("ResponseComplete", "create", "kopf-wasm-bench", "ns1", "events", "", 201, after),
		auditLine("ResponseComplete", "create", driverAgent+"/v0.0.0", "ns1", "kopfexamples", "", 201, after),
		auditLine("ResponseComplete", "delete", driverAgent, "ns1", "kopfexamples", "", 200, after),
		"",
		// Left out: before the phases, another namespace, not a write, not complete.
		auditLine("ResponseComplete", "patch", "kopf-wasm-bench", "ns1", "kopfexamples", "", 200, before),
		auditLine("ResponseComplete", "patch", "kopf-wasm-bench", "ns2", "kopfexamples", "", 200, after),
		auditLine("ResponseComplete", "get", "kopf-wasm-bench", "ns1", "kopfexamples", "", 200, after),
		auditLine("ResponseStarted", "patch", "kopf-wasm-bench", "ns1", "kopfexamples", "", 200, after),
	}
	since, _ := time.Parse(time.RFC3339, "2026-01-01T10:00:01Z")
	ops, drv, err := countWrites(strings.NewReader(strings.Join(lines, "\n")),
		writeFilter{Namespace: "ns1", Since: since, Driver: driverAgent})
	if err != nil {
		t.Fatal(err)
	}
	if ops.Total != 4 || ops.Failed != 1 || drv.Total != 2 {
		t.Errorf("operator %+v, driver %+v; want 4 operator writes (1 failed) and 2 driver writes", ops, drv)
	}
	want := map[string]int{"patch kopfexamples": 1, "patch kopfexamples/status": 2, "create events": 1}
	for k, v := range want {
		if ops.ByRequest[k] != v {
			t.Errorf("ByRequest[%q] = %d, want %d (all: %v)", k, ops.ByRequest[k], v, ops.ByRequest)
		}
	}
	if got, want := ops.String(), "patch kopfexamples/status 2, create events 1, patch kopfexamples 1 (1 failed)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCountWritesBadLine(t *testing.T) {
	_, _, err := countWrites(strings.NewReader("{\"verb\":\n"), writeFilter{})
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want one naming line 1", err)
	}
}

func TestParseMetrics(t *testing.T) {
	const text = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kopf.dev",resource="kopfexamples",scope="resource",subresource="status",verb="PATCH",version="v1"} 1200
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kopf.dev",resource="kopfexamples",scope="resource",subresource="",verb="POST",version="v1"} 300
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kopf.dev",resource="kopfexamples",scope="namespace",subresource="",verb="LIST",version="v1"} 7
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 40
go_goroutines 321
weird{msg="a \"quoted\" } value, with\\ escapes"} 1.5e+03 1700000000000
`
	samples, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 7 {
		t.Fatalf("%d samples, want 7", len(samples))
	}
	if got := writeRequests(samples, "kopfexamples", "events"); got != 1505 {
		t.Errorf("writes = %v, want 1505 (PATCH, POST and the event; not LIST, not leases)", got)
	}
	last := samples[6]
	if last.Name != "weird" || last.Value != 1500 || last.Labels["msg"] != `a "quoted" } value, with\ escapes` {
		t.Errorf("last sample = %+v", last)
	}
	if samples[5].Name != "go_goroutines" || samples[5].Value != 321 || len(samples[5].Labels) != 0 {
		t.Errorf("go_goroutines = %+v", samples[5])
	}
	if got := metricValue(samples, "go_goroutines"); got != 321 {
		t.Errorf("metricValue(go_goroutines) = %v, want 321", got)
	}
	if got := metricValue(samples, "process_cpu_seconds_total"); got != 0 {
		t.Errorf("metricValue of a missing metric = %v, want 0", got)
	}
}

func TestParseMetricsErrors(t *testing.T) {
	for _, text := range []string{
		`m{a="1"`,
		`m{a=1} 2`,
		`m{a="1"} x`,
		`m`,
		`m 1 2 3`,
	} {
		if _, err := parseMetrics(strings.NewReader(text)); err == nil {
			t.Errorf("parseMetrics(%q) succeeded, want an error", text)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 50.
	stat := "4242 (bench op) R 1 4242 4242 0 -1 4194304 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(stat)
	if err != nil || got != 3*time.Second {
		t.Errorf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	if _, err := parseStatCPU("4242 (x) R 1"); err == nil {
		t.Error("a short stat parsed")
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tbench\nVmPeak:\t  900000 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   80000 kB\n"
	if got, err := parseStatusKB(status, "VmHWM"); err != nil || got != 81234 {
		t.Errorf("VmHWM = %d, %v; want 81234", got, err)
	}
	if _, err := parseStatusKB(status, "VmSwap"); err == nil {
		t.Error("a missing field parsed")
	}
}
