package app

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/cachedir"
)

const cacheLong = `Show or bound kopf-wasm's caches: compiled modules (wasm/: what makes a
module load in milliseconds the second time, for run, build, inspect and
invoke) and modules pulled from OCI registries (modules/). Both live in
$KOPF_WASM_CACHE, by default ~/.cache/kopf-wasm. Entries are keyed by
content: a removed one is rebuilt or pulled again when next needed.

The host bounds the compiled-module cache itself when it starts (the
wasm.cacheMaxBytes setting, 1 GiB by default); prune applies a bound now,
to both caches.

Example - How much the caches hold:
  kopf-wasm cache

Example - Keep at most 200 MB in each cache, removing the oldest entries:
  kopf-wasm cache prune --max-size 200Mi

Example - Empty both caches:
  kopf-wasm cache prune --max-size 0`

func cacheCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Show the caches of compiled and pulled modules",
		Long:  cacheLong,
		Args:  args(0, 0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var usages []cachedir.Usage
			for _, dir := range cacheDirs() {
				u, err := cachedir.UsageOf(dir)
				if err != nil {
					return err
				}
				usages = append(usages, u)
			}
			return printUsage(g, usages)
		},
	}
	cmd.AddCommand(cachePruneCmd(g))
	return cmd
}

func cachePruneCmd(g *globals) *cobra.Command {
	maxSize := resource.NewQuantity(settings.Default().Wasm.CacheMaxBytes, resource.BinarySI).String()
	cmd := &cobra.Command{
		Use:   "prune [--max-size SIZE]",
		Short: "Remove the oldest cached modules until each cache fits a size",
		Long:  cacheLong,
		Args:  args(0, 0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := resource.ParseQuantity(maxSize)
			if err != nil || q.Sign() < 0 {
				return clierr.Usagef(fmt.Errorf("cache prune: --max-size %q is not a size", maxSize), "give bytes or a quantity such as 500Mi or 1Gi; 0 empties the caches")
			}
			max := q.Value()
			var usages []cachedir.Usage
			for _, dir := range cacheDirs() {
				left, removed, err := cachedir.Prune(dir, max)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.streams.Err, "%s: removed %s, %s\n", dir, count(removed.Files, "file"), size(removed.Bytes))
				usages = append(usages, left)
			}
			return printUsage(g, usages)
		},
	}
	cmd.Flags().StringVar(&maxSize, "max-size", maxSize, "the most each cache may hold after pruning (bytes, or a quantity: 500Mi, 2Gi); 0 empties them")
	return cmd
}

// cacheDirs are the folders of compiled and of pulled modules.
func cacheDirs() []string {
	modules := host.Registry{}.ModuleCacheDir()
	if root := os.Getenv("KOPF_WASM_CACHE"); root != "" {
		modules = filepath.Join(root, "modules")
	}
	return []string{offlineSettings().Wasm.CacheDir, modules}
}

func printUsage(g *globals, usages []cachedir.Usage) error {
	tw := tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CACHE\tFILES\tSIZE")
	for _, u := range usages {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", u.Dir, u.Files, size(u.Bytes))
	}
	return tw.Flush()
}

// size writes a byte count for people.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
