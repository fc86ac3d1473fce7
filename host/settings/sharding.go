package settings

// validate reports sharding settings that cannot keep two replicas from
// handling one object: a replica must renew, and stop when it cannot,
// before the others stop counting it as a member.
func (sh Sharding) validate(v *validator) {
	if sh.Group == "" || len(sh.Group) > 40 || !dnsSubdomain.MatchString(sh.Group) {
		v.fail("sharding.group", "must be 1 to 40 lower-case letters, digits, '-' or '.', got %q", sh.Group)
	}
	if sh.Namespace != "" && !dnsSubdomain.MatchString(sh.Namespace) {
		v.fail("sharding.namespace", "must be a namespace name, got %q", sh.Namespace)
	}
	v.positive("sharding.leaseDuration", sh.LeaseDuration)
	v.positive("sharding.renewDeadline", sh.RenewDeadline)
	v.positive("sharding.renewInterval", sh.RenewInterval)
	v.positive("sharding.settleInterval", sh.SettleInterval)
	if sh.RenewDeadline >= sh.LeaseDuration && sh.LeaseDuration > 0 {
		v.fail("sharding.renewDeadline", "must be shorter than sharding.leaseDuration (%s), or a replica could still "+
			"handle objects the others already took; got %s", sh.LeaseDuration, sh.RenewDeadline)
	}
	if sh.RenewInterval >= sh.RenewDeadline && sh.RenewDeadline > 0 {
		v.fail("sharding.renewInterval", "must be shorter than sharding.renewDeadline (%s), or one late renewal "+
			"stops the replica; got %s", sh.RenewDeadline, sh.RenewInterval)
	}
}
