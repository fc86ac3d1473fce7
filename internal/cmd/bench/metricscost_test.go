package main

import (
	"math"
	"strings"
	"testing"
)

func TestMetricsCost(t *testing.T) {
	pass := func(name string, round int, cpuMs float64) result {
		return result{Contender: name, Round: round, CPUPerChangeMs: cpuMs,
			Phases: []phaseResult{{Name: "create", CPU: cpuSample{Operator: cpuMs}}}}
	}
	rep := report{
		Results: []result{
			pass(metricsOn, 1, 1.10), pass(metricsOff, 1, 1.00),
			pass(metricsOff, 2, 2.00), pass(metricsOn, 2, 1.90),
			pass(metricsOn, 3, 1.00), // a round without its other pass: left out
		},
		Summary: []result{{Contender: metricsOn, CPUPerChangeMs: 1.5}, {Contender: metricsOff, CPUPerChangeMs: 1.5}},
	}
	c := metricsCost(rep)
	if len(c.Rounds) != 2 {
		t.Fatalf("rounds %+v, want 2", c.Rounds)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if r := c.Rounds[1]; r.Round != 2 || r.First != metricsOff || !near(r.Ratio, 0.95) || !near(r.PhaseRatios[0], 0.95) {
		t.Errorf("round 2: %+v, want ratio 0.95, %s first", r, metricsOff)
	}
	if !near(c.Combined, 1) || !near(c.Mean, 1.025) || !near(c.Min, 0.95) || !near(c.Max, 1.1) || !near(c.SD, math.Sqrt(2*0.075*0.075)) {
		t.Errorf("combined %v mean %v SD %v min %v max %v", c.Combined, c.Mean, c.SD, c.Min, c.Max)
	}
	if got := c.verdict(); !strings.Contains(got, "spread more than 3 %") {
		t.Errorf("verdict %q, want the spread named", got)
	}
}

func TestCostVerdict(t *testing.T) {
	cases := []struct {
		c    costReport
		want string
	}{
		{costReport{}, "no complete round"},
		{costReport{Rounds: make([]roundCost, 3), Mean: 1.01, SD: 0.01, Max: 1.02}, "met in every round"},
		{costReport{Rounds: make([]roundCost, 3), Mean: 1.01, SD: 0.01, Max: 1.04}, "met on average"},
		{costReport{Rounds: make([]roundCost, 3), Mean: 1.05, SD: 0.01, Max: 1.06}, "NOT met"},
	}
	for _, tc := range cases {
		if got := tc.c.verdict(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}
