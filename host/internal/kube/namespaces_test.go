package kube

import (
	"slices"
	"testing"
)

func TestNamespacesMatch(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		in       []string
		out      []string
	}{
		{"cluster wide", nil, []string{"default", "kube-system", "x"}, nil},
		{"plain names", []string{"ns1", "ns2"}, []string{"ns1", "ns2"}, []string{"ns", "ns12", "default"}},
		{"star glob", []string{"*-pr-123-*"}, []string{"a-pr-123-b"}, []string{"a-pr-124-b", "pr-123"}},
		{"question mark", []string{"ns?"}, []string{"ns1", "nsx"}, []string{"ns", "ns12"}},
		{"class", []string{"ns[0-2]"}, []string{"ns0", "ns2"}, []string{"ns3"}},
		{"leading negation implies star", []string{"!*-pr-123-*"}, []string{"default", "a-pr-124-b"}, []string{"a-pr-123-b"}},
		{"rightmost wins, first decisive", []string{"myapp-*,!*-pr-*,*-pr-123"},
			[]string{"myapp-live", "myapp-pr-123"}, []string{"myapp-pr-456", "otherapp-live", "otherapp-pr-123"}},
		{"spaces around globs", []string{" app-* , !app-test "}, []string{"app-live"}, []string{"app-test", "other"}},
		{"any pattern may take it", []string{"a-*", "!*"}, []string{"a-1"}, []string{"b-1"}},
		{"negation then re-include", []string{"!kube-*,kube-public"}, []string{"default", "kube-public"}, []string{"kube-system"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, err := ParseNamespaces(tt.patterns...)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tt.in {
				if !ns.Match(name) {
					t.Errorf("%q: Match(%q) = false, want true", tt.patterns, name)
				}
			}
			for _, name := range tt.out {
				if ns.Match(name) {
					t.Errorf("%q: Match(%q) = true, want false", tt.patterns, name)
				}
			}
		})
	}
}

func TestNamespacesNames(t *testing.T) {
	tests := []struct {
		patterns []string
		want     []string
		plain    bool
	}{
		{nil, nil, false},
		{[]string{"b", "a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b-*"}, nil, false},
		{[]string{"a,b"}, nil, false},
		{[]string{"!a"}, nil, false},
	}
	for _, tt := range tests {
		ns, err := ParseNamespaces(tt.patterns...)
		if err != nil {
			t.Fatal(err)
		}
		got, plain := ns.Names()
		if plain != tt.plain || !slices.Equal(got, tt.want) {
			t.Errorf("%q: Names() = %q, %v; want %q, %v", tt.patterns, got, plain, tt.want, tt.plain)
		}
	}
}

func TestParseNamespacesErrors(t *testing.T) {
	for _, p := range []string{"", "a,,b", "!", "ns[", "a,!"} {
		if _, err := ParseNamespaces(p); err == nil {
			t.Errorf("ParseNamespaces(%q): no error", p)
		}
	}
}

func TestNamespacesPlainNames(t *testing.T) {
	ns, err := ParseNamespaces("a", "b-*", "!c", "d,e", "a", "f")
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.plainNames(); !slices.Equal(got, []string{"a", "f"}) {
		t.Errorf("plainNames() = %q, want [a f]", got)
	}
}
