package option

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
)

// EnvPrefix starts the environment variable of every flag.
const EnvPrefix = "KOPF_WASM_"

// EnvName is the environment variable of a flag: EnvPrefix and the flag's
// name in upper case with dashes as underscores (--all-namespaces is
// KOPF_WASM_ALL_NAMESPACES).
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// NoEnv is the flag annotation that keeps a flag out of Env: for flags whose
// name another command uses with another meaning (build's -o is a file,
// inspect's a format).
const NoEnv = "kopf-wasm/no-env"

// SkipEnv marks the flag name of fs with NoEnv.
func SkipEnv(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, NoEnv, []string{"true"})
}

// Env sets every flag of fs that the command line left unset from its
// environment variable, when that is set; lookup is os.LookupEnv in
// production. A repeatable flag takes the variable as one value (a
// namespace pattern may itself be a comma list). The help flag and flags
// marked NoEnv are left alone.
func Env(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Annotations[NoEnv] != nil {
			return
		}
		name := EnvName(f.Name)
		v, ok := lookup(name)
		if !ok {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = clierr.Usagef(fmt.Errorf("%s=%q: %w", name, v, serr), "fix or unset the variable")
		}
	})
	return err
}
