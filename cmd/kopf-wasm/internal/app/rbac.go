package app

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/rbac"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const rbacLong = `Print, offline, the RBAC objects an operator running the modules needs, for
kubectl apply: a ServiceAccount, a ClusterRole (or, with --namespace, a Role)
and the binding that grants it to the ServiceAccount.

The rules are the host's own needs plus every permission the modules declare
(kopf.Permit). The host's needs, for each resource a handler selects: get,
list, watch and patch on it and patch on its status; create on core events;
and, for a ClusterRole, list and watch on namespaces (to follow namespace
patterns) and on customresourcedefinitions (to serve resources created while
the host runs; with a Role the host warns and serves those it found at its
start). Validating and mutating handlers need nothing on their resources;
when a module has any, a ClusterRole also gets create and patch on
validatingwebhookconfigurations and mutatingwebhookconfigurations (for
--webhook-managed; a Role cannot grant them). Discovery needs no rule.

Kopf's peering is on by default: the role gets get, list, watch and patch on
the peering objects (clusterkopfpeerings and kopfpeerings of kopf.dev and
zalando.org; a Role only kopfpeerings), unless --standalone says the host
runs without it (run --standalone, or --leader-elect or --shards without -P).
With --webhook-cert-secret NAMESPACE/NAME (as given to run), get and update
on that Secret and create on Secrets of its namespace, in a Role there named
<name>-webhook-cert (in the Role itself when it lives in that namespace): RBAC
cannot restrict create by name.

A handler's resource may be named by its plural, singular, kind or short
name. Offline, the plural is resolved thus: the other names of common
built-in resources are known (Pod, pod, po: pods); a lower-case name is taken
as the plural; a name with upper case is a kind whose plural is guessed by
the English rule of CRDs, with a warning on stderr.

A Role lives in one namespace: --namespace takes a plain name, and the
modules' permissions on cluster-scoped resources need --cluster (the
default).

Example - The RBAC of the example module, cluster-wide:
  kopf-wasm rbac bin/wasm/kopfexample.wasm | kubectl apply -f -

Example - For one namespace, then run the operator there:
  kopf-wasm rbac --namespace team-a bin/wasm/kopfexample.wasm | kubectl apply -f -
  kopf-wasm run -n team-a bin/wasm/kopfexample.wasm   # as system:serviceaccount:team-a:kopf-wasm-kopfexample`

// rbacFlags are the flags of the rbac command.
type rbacFlags struct {
	namespace, saNamespace, name, output, certSecret string
	cluster, standalone                              bool
}

func rbacCmd(g *globals) *cobra.Command {
	var f rbacFlags
	cmd := &cobra.Command{
		Use:   "rbac [flags] MODULE...",
		Short: "Print the ServiceAccount, role and binding a module needs",
		Long:  rbacLong,
		Args:  args(1, -1, "MODULE (one or more .wasm files)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			var manifests []abi.Manifest
			for _, path := range a {
				m, _, err := host.Inspect(cmd.Context(), path, offlineSettings())
				if err != nil {
					return err
				}
				manifests = append(manifests, m)
			}
			name := f.name
			if name == "" {
				name = defaultRBACName(manifests)
			}
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				return clierr.Usagef(fmt.Errorf("rbac: name %q: %s", name, strings.Join(errs, "; ")), "pass a valid --name")
			}
			objs, notes, err := rbac.Generate(name, rbac.Scope{Namespace: f.namespace, ServiceAccountNamespace: f.saNamespace},
				rbac.Host{Standalone: f.standalone, CertSecret: f.certSecret}, manifests...)
			if err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(g.streams.Err, "Warning:", n)
			}
			return writeRBAC(g.streams.Out, f.output, objs)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.namespace, "namespace", "n", "", "make a Role and RoleBinding in this namespace (a plain name), with the ServiceAccount there")
	fs.BoolVar(&f.cluster, "cluster", false, "make a ClusterRole and ClusterRoleBinding (the default)")
	fs.StringVar(&f.saNamespace, "service-account-namespace", "default", "the ServiceAccount's namespace with --cluster")
	fs.StringVar(&f.name, "name", "", "the name of the objects (default kopf-wasm-<module name>, or kopf-wasm for several modules)")
	fs.StringVarP(&f.output, "output", "o", "yaml", "output format: yaml (documents separated by ---) or json (a v1 List)")
	fs.BoolVar(&f.standalone, "standalone", false, "the host runs without Kopf's peering (run --standalone, or --leader-elect or --shards without -P): no rules on the peering objects")
	fs.StringVar(&f.certSecret, "webhook-cert-secret", "", "NAMESPACE/NAME of run's --webhook-cert-secret: get and update on it, create on Secrets there, in a Role of its namespace")
	return cmd
}

// validate refuses flags that cannot work together.
func (f rbacFlags) validate() error {
	switch {
	case f.cluster && f.namespace != "":
		return clierr.Usagef(errors.New("rbac: --namespace and --cluster exclude each other"), "pass one of them")
	case strings.ContainsAny(f.namespace, "*?!,"):
		return clierr.Usagef(fmt.Errorf("rbac: --namespace %q is a pattern: a Role lives in one namespace", f.namespace),
			"pass a plain namespace name, or --cluster for patterns")
	case f.output != "yaml" && f.output != "json":
		return clierr.Usagef(fmt.Errorf("unknown output format %q", f.output), "use -o yaml or -o json")
	}
	if f.certSecret != "" {
		ns, name, ok := strings.Cut(f.certSecret, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return clierr.Usagef(fmt.Errorf("rbac: --webhook-cert-secret %q is not NAMESPACE/NAME", f.certSecret), "pass the Secret as run takes it")
		}
	}
	for what, ns := range map[string]string{"--namespace": f.namespace, "--service-account-namespace": f.saNamespace} {
		if ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return clierr.Usagef(fmt.Errorf("rbac: %s %q: %s", what, ns, strings.Join(errs, "; ")), "pass a valid namespace name")
		}
	}
	return nil
}

// defaultRBACName is kopf-wasm-<module> for one module, kopf-wasm for more.
func defaultRBACName(ms []abi.Manifest) string {
	if len(ms) == 1 && ms[0].Module.Name != "" {
		return "kopf-wasm-" + strings.ToLower(ms[0].Module.Name)
	}
	return "kopf-wasm"
}

// writeRBAC prints the objects as YAML documents or as a JSON v1 List.
func writeRBAC(w io.Writer, format string, objs []rbac.Object) error {
	if format == "json" {
		return writeJSON(w, map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	}
	for i, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("rbac: encoding %s: %w", o.Kind, err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}
