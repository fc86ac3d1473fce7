package option

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func TestShardingFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantErr   bool
		enabled   bool
		group, ns string
	}{
		{args: nil, group: "kopf-wasm"},
		{args: []string{"--shards"}, enabled: true, group: "kopf-wasm"},
		{args: []string{"--shards", "--shard-group", "billing", "--shard-namespace", "ops"}, enabled: true, group: "billing", ns: "ops"},
		{args: []string{"--shard-group", "billing"}, wantErr: true},
		{args: []string{"--shard-namespace", "ops"}, wantErr: true},
	} {
		var o Sharding
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.ApplyFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := o.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: Validate() = %v, want an error: %v", tc.args, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		s := settings.Default()
		o.Apply(&s)
		if s.Sharding.Enabled != tc.enabled || s.Sharding.Group != tc.group || s.Sharding.Namespace != tc.ns {
			t.Errorf("%v: settings %+v, want enabled %v, group %q, namespace %q", tc.args, s.Sharding, tc.enabled, tc.group, tc.ns)
		}
	}
}
