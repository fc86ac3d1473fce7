package host_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkLeaderFailover measures the failover of leader election with the
// default durations (lease 15 s, renew deadline 10 s, retry 2 s): three
// replicas; the leader is SIGKILLed, an object is created at once, and the
// time until the new leader's first handler call completes is one sample.
// A new replica replaces the killed one before the next kill. b.N is
// ignored beyond the first run: run it with -benchtime 1x; BENCH_KILLS
// samples (default 10).
//
//	go test ./host/ -run '^$' -bench LeaderFailover -benchtime 1x
func BenchmarkLeaderFailover(b *testing.B) {
	kills := 10
	if v, err := strconv.Atoi(os.Getenv("BENCH_KILLS")); err == nil && v > 0 {
		kills = v
	}
	e := newPeerEnv(b)
	r := newReplicas(e, 3)
	var samples, afterAcquire []time.Duration
	for k := range kills {
		old := r.leader()
		for id, p := range r.procs {
			if id != old && p.cmd.ProcessState == nil {
				e2eWait(b, 120*time.Second, id+" follows", func() bool { return strings.Contains(p.logs(), "is held by "+old) })
			}
		}
		r.procs[old].kill()
		killed := time.Now()
		name := fmt.Sprintf("probe-%02d", k)
		e.create(name)
		e2eWait(e.t, 60*time.Second, name+" handled", func() bool { return e.version(name, "create_fn") == "v1" })
		runs := r.handled()[name]
		if len(runs) != 1 {
			b.Fatalf("%s: create_fn calls %v", name, runs)
		}
		samples = append(samples, runs[0].at.Sub(killed))
		acquired := leadingSince(b, r.procs[runs[0].replica].logs())
		afterAcquire = append(afterAcquire, runs[0].at.Sub(acquired))
		b.Logf("kill %d: %s -> %s in %s (Lease acquired %s after the kill, first handler %s after that)", k+1, old,
			runs[0].replica, samples[k].Round(time.Millisecond), acquired.Sub(killed).Round(time.Millisecond),
			afterAcquire[k].Round(time.Millisecond))
		delete(r.procs, old)
		r.add()
	}
	slices.Sort(samples)
	b.ReportMetric(samples[len(samples)/2].Seconds(), "failover-p50-s")
	b.ReportMetric(samples[len(samples)-1].Seconds(), "failover-max-s")
	b.ReportMetric(samples[0].Seconds(), "failover-min-s")
	slices.Sort(afterAcquire)
	b.ReportMetric(afterAcquire[len(afterAcquire)/2].Seconds(), "acquired-to-handler-p50-s")
	b.ReportMetric(afterAcquire[len(afterAcquire)-1].Seconds(), "acquired-to-handler-max-s")
}

var leadingLine = regexp.MustCompile(`time=(\S+) level=\S+ msg="Leading: this replica`)

// leadingSince is when a replica's log says it took the Lease.
func leadingSince(b *testing.B, logs string) time.Time {
	m := leadingLine.FindStringSubmatch(logs)
	if m == nil {
		b.Fatalf("the new leader's log has no \"Leading:\" line")
	}
	at, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		b.Fatal(err)
	}
	return at
}
