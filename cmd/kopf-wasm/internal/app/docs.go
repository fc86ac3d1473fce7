package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
)

// Markdown renders the reference of the whole command tree (docs/cli.md):
// every command's usage, description and flags, each flag with its
// environment variable. A test keeps docs/cli.md equal to it.
func Markdown() string {
	root := newRoot(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	root.InitDefaultCompletionCmd()
	var b strings.Builder
	b.WriteString("# kopf-wasm command line\n\n")
	b.WriteString("<!-- Generated from the command tree by `make docs`; do not edit. -->\n\n")
	for _, c := range commands(root) {
		fmt.Fprintf(&b, "- [%s](#%s)\n", c.CommandPath(), strings.ReplaceAll(c.CommandPath(), " ", "-"))
	}
	for _, c := range commands(root) {
		writeCommand(&b, c)
	}
	return b.String()
}

// commands lists the tree depth first, without help and hidden commands,
// and without the per-shell commands of cobra's completion.
func commands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	if c.Name() == "completion" {
		return out
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, commands(sub)...)
		}
	}
	return out
}

func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n%s.\n\n", c.CommandPath(), c.Short)
	fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	if c.Long != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", strings.TrimSpace(c.Long))
	}
	flags := c.LocalFlags()
	if !c.HasParent() {
		flags = c.PersistentFlags()
	}
	if !flags.HasAvailableFlags() {
		return
	}
	if c.HasParent() {
		b.WriteString("Flags (and the global flags of kopf-wasm):\n\n")
	} else {
		b.WriteString("Global flags, accepted by every command:\n\n")
	}
	b.WriteString("| Flag | Environment | Default | Description |\n|---|---|---|---|\n")
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		def := f.DefValue
		if def == "" || def == "[]" || def == "false" || def == "0" {
			def = ""
		} else {
			def = "`" + def + "`"
		}
		envName := "`" + option.EnvName(f.Name) + "`"
		if f.Annotations[option.NoEnv] != nil {
			envName = "—"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, envName, def, strings.ReplaceAll(f.Usage, "|", "\\|"))
	})
}
