package app

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const signLong = `Sign a module file or a module pushed to an OCI registry with an ECDSA
P-256 private key (an unencrypted PEM file, e.g. from
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt).

The signature is a Sigstore bundle (v0.3) in cosign v3's form: a DSSE
envelope over an in-toto statement whose subject is the module's sha256
digest. A file's bundle is written next to it as MODULE.wasm.sigstore.json.
A reference's manifest digest is signed and the bundle pushed as an OCI 1.1
referrer of the manifest (artifact type
application/vnd.dev.sigstore.bundle.v0.3+json); on a registry without the
referrers API the sha256-<hex> tag lists it. Nothing is sent to a
transparency log.

Example - Sign a module file:
  kopf-wasm sign --key signing.key handlers.wasm

Example - Sign a pushed module:
  kopf-wasm sign --key signing.key localhost:5000/operators/kopfexample:v1`

func signCmd(g *globals) *cobra.Command {
	var reg option.Registry
	var key string
	cmd := &cobra.Command{
		Use:   "sign [flags] MODULE.wasm|REF",
		Short: "Sign a module file or a pushed module",
		Long:  signLong,
		Args:  args(1, 1, "MODULE.wasm or REF"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if key == "" {
				return clierr.Usagef(errors.New("no signing key"), "pass --key FILE (an ECDSA P-256 private key in PEM)")
			}
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			s, err := host.Sign(cmd.Context(), a[0], key, registryOptions(reg, log))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "Signed:\t%s\n", a[0])
			fmt.Fprintf(tw, "Digest:\t%s\n", s.Digest)
			fmt.Fprintf(tw, "Bundle:\t%s\n", s.Bundle)
			return tw.Flush()
		},
	}
	reg.ApplyFlags(cmd.Flags())
	cmd.Flags().StringVar(&key, "key", "", "the ECDSA P-256 private key (unencrypted PEM) to sign with")
	return cmd
}

const verifyLong = `Verify a module file or a module pushed to an OCI registry against a
policy: the public keys (--key) and keyless identities (--identity, checked
against --trusted-root) that may sign it, and whether one of them (any-of)
or all of them (all-of) must have. A file's bundle is MODULE.wasm.sigstore.json;
a reference's are the Sigstore bundles attached to its manifest as OCI 1.1
referrers (or listed under its sha256-<hex> tag). Verification is offline:
no transparency log or TUF repository is asked.

run applies the same policy before it loads a module (--verify-key, ...).
Exit code 0 when the module passes, 1 when it is refused.

Example - Verify a file signed with sign:
  kopf-wasm verify --key signing.pub handlers.wasm

Example - Require two signers of a pushed module:
  kopf-wasm verify --key release.pub --key security.pub --policy all-of localhost:5000/operators/kopfexample:v1`

func verifyCmd(g *globals) *cobra.Command {
	var reg option.Registry
	var pol option.Verify
	cmd := &cobra.Command{
		Use:   "verify [flags] MODULE.wasm|REF",
		Short: "Verify a module's signatures against a policy",
		Long:  verifyLong,
		Args:  args(1, 1, "MODULE.wasm or REF"),
		RunE: func(cmd *cobra.Command, a []string) error {
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			d, err := host.Verify(cmd.Context(), a[0], verifyPolicy(pol), registryOptions(reg, log))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "Verified:\t%s\n", a[0])
			fmt.Fprintf(tw, "Digest:\t%s\n", d)
			return tw.Flush()
		},
	}
	reg.ApplyFlags(cmd.Flags())
	pol.ApplyFlags(cmd.Flags(), "")
	return cmd
}

// verifyPolicy turns the policy flags into the host's policy.
func verifyPolicy(o option.Verify) host.VerifyPolicy {
	return host.VerifyPolicy{Keys: o.Keys, TrustedRoot: o.TrustedRoot, Identities: o.Identities, Mode: o.Policy}
}
