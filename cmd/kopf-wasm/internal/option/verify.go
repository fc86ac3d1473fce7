package option

import "github.com/spf13/pflag"

// Verify is a module verification policy: the public keys and keyless
// identities that must have signed a module, and whether any or all of them.
type Verify struct {
	Keys        []string
	TrustedRoot string
	Identities  []string
	Policy      string
}

// ApplyFlags declares the policy's flags, each named prefix + key, -root,
// -identity, -policy (run uses "verify-", verify uses "").
func (o *Verify) ApplyFlags(fs *pflag.FlagSet, prefix string) {
	fs.StringArrayVar(&o.Keys, prefix+"key", nil,
		"a PEM file of an ECDSA P-256 public key (cosign.pub) that may sign modules; repeat for several signers")
	fs.StringVar(&o.TrustedRoot, prefix+"trusted-root", "",
		"a Sigstore trusted_root.json for keyless bundles (Fulcio certificates); read from the file, never fetched")
	fs.StringArrayVar(&o.Identities, prefix+"identity", nil,
		"a keyless signer, SUBJECT@ISSUER-URL (e.g. ci@example.com@https://accounts.example.com); needs the trusted root; repeat for several")
	fs.StringVar(&o.Policy, prefix+"policy", "any-of",
		"any-of: one of the signers must have signed a module; all-of: every signer")
}
