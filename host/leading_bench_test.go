package host_test

import (
	"fmt"
	"os"
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
	var samples []time.Duration
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
		b.Logf("kill %d: %s -> %s in %s", k+1, old, runs[0].replica, samples[k].Round(time.Millisecond))
		delete(r.procs, old)
		r.add()
	}
	slices.Sort(samples)
	b.ReportMetric(samples[len(samples)/2].Seconds(), "failover-p50-s")
	b.ReportMetric(samples[len(samples)-1].Seconds(), "failover-max-s")
	b.ReportMetric(samples[0].Seconds(), "failover-min-s")
}
