"""Filters as the host applies them, and the module's callable filters.

The table is the Go test kit's (guest-sdk/kopftest/filters_test.go,
TestRunAppliesFilters), whose rules are the host's registry's
(host/internal/registry/filters.go): the same objects, the same verdicts,
the same words.
"""

import unittest

from helpers import KopfTestCase, example, kopf

KEX = ("kopf.dev", "v1", "kopfexamples")


def filtered(**_):
    return "called"


def labelled(labels, annotations, size):
    return example(size, labels=labels, annotations=annotations)


class HostFiltersTest(KopfTestCase):

    def setUp(self):
        super().setUp()
        kopf.on.create(*KEX, id="gold", labels={"tier": "gold"}, annotations={"paused": kopf.ABSENT})(filtered)
        kopf.timer(*KEX, id="sized", field="spec.size", value=2)(filtered)
        kopf.on.field(*KEX, id="grown", field="spec.size", old=1, new=kopf.PRESENT)(filtered)
        kopf.on.update(*KEX, id="any-update")(filtered)
        kopf.on.create(*KEX, id="short", when=lambda name, **_: len(name) <= 2)(filtered)
        kopf.on.create(*KEX, id="owned", annotations={"owner": lambda value, **_: value == "me"})(filtered)

    def test_the_go_kits_table(self):
        gold = {"tier": "gold"}
        long = example(2, name="long-name")
        short = example(1, name="ab")
        cases = [
            ("labels match", "gold", labelled(gold, None, 1), None, ""),
            ("label differs", "gold", labelled({"tier": "silver"}, None, 1), None,
             "its labels filter wants tier=\"gold\", the object has tier=\"silver\""),
            ("annotation present", "gold", labelled(gold, {"paused": "yes"}, 1), None,
             "its annotations filter wants paused absent, the object has \"yes\""),
            ("value matches", "sized/spec.size", example(2), None, ""),
            ("value differs", "sized/spec.size", example(3), None,
             "its field spec.size does not match the value filter 2"),
            ("old and new match", "grown/spec.size", example(2), example(1), ""),
            ("field unchanged", "grown/spec.size", example(1), example(1), "its field spec.size did not change"),
            ("old differs", "grown/spec.size", example(3), example(2),
             "the old value of spec.size does not match the old filter 1"),
            ("update without change", "any-update", example(1), example(1),
             "nothing essential changed between the old and the new object"),
            ("update with a change", "any-update", example(2), example(1), ""),
            ("when true", "short", short, None, ""),
            ("when false", "short", long, None, "its when filter returned false"),
            ("a callable annotation filter says no", "owned", labelled(None, {"owner": "you"}, 1), None,
             "its callable annotations filter on owner (or its when filter, if it has one) returned false"),
            ("a callable annotation filter says yes", "owned", labelled(None, {"owner": "me"}, 1), None, ""),
        ]
        for name, id, obj, old, want in cases:
            with self.subTest(name):
                self.assertEqual(self.host.why_not(id, obj, old), want)

    def test_run_refuses_what_the_host_would_not_call(self):
        with self.assertRaisesRegex(kopf.testing.FilteredOut,
                                    "would not call handler 'gold' for this object: its labels filter"):
            self.host.run("gold", example(1))
        self.assertEqual(self.host.run("gold", example(1), force=True).result, "called")

    def test_status_and_metadata_are_not_essential(self):
        old, new = example(1), example(1)
        new["status"] = {"x": 1}
        new["metadata"]["resourceVersion"] = "2"
        self.assertIn("nothing essential changed", self.host.why_not("any-update", new, old))


class CallableFiltersTest(KopfTestCase):

    def test_callables_are_callbacks_in_the_manifest(self):
        kopf.on.update(*KEX, id="u", labels={"a": lambda v, **_: v == "x", "b": "y"},
                       field="spec.size", new=lambda v, **_: v > 1)(filtered)
        spec = self.host.manifest()["handlers"][0]
        self.assertEqual(spec["filters"], {"labels": {"a": {"callback": True}, "b": {"value": "y"}},
                                           "field": "spec.size", "new": {"callback": True}, "when": True})

    def test_label_callables_get_the_value_or_none_and_kwargs(self):
        seen = []

        def check(value, name, **_):
            seen.append((value, name))
            return value is None or value.startswith("x")

        kopf.on.create(*KEX, id="c", labels={"app": check})(filtered)
        self.assertTrue(self.host.match("c", example(labels={"app": "xyz"})))
        self.assertFalse(self.host.match("c", example(labels={"app": "abc"})))
        self.assertTrue(self.host.match("c", example()))
        self.assertEqual(seen, [("xyz", "kopf-example-1"), ("abc", "kopf-example-1"), (None, "kopf-example-1")])

    def test_value_callables_see_old_or_new(self):
        kopf.on.update(*KEX, id="v", field="spec.size", value=lambda v, **_: v == 5)(filtered)
        kopf.on.update(*KEX, id="o", field="spec.size", old=lambda v, **_: v == 5)(filtered)
        self.assertTrue(self.host.match("v/spec.size", example(6), example(5)))
        self.assertTrue(self.host.match("v/spec.size", example(5), example(6)))
        self.assertFalse(self.host.match("o/spec.size", example(5), example(6)))
        self.assertTrue(self.host.match("o/spec.size", example(6), example(5)))

    def test_combinators(self):
        big = lambda spec, **_: spec["size"] > 2  # noqa: E731
        even = lambda spec, **_: spec["size"] % 2 == 0  # noqa: E731
        kopf.on.create(*KEX, id="all", when=kopf.all_([big, even]))(filtered)
        kopf.on.create(*KEX, id="any", when=kopf.any_([big, even]))(filtered)
        kopf.on.create(*KEX, id="none", when=kopf.none_([big, even]))(filtered)
        kopf.on.create(*KEX, id="not", when=kopf.not_(big))(filtered)
        got = {id: [self.host.match(id, example(n)) for n in (1, 2, 3, 4)] for id in ("all", "any", "none", "not")}
        self.assertEqual(got, {"all": [False, False, False, True], "any": [False, True, True, True],
                               "none": [True, False, False, False], "not": [True, True, False, False]})

    def test_a_failing_filter_is_an_outcome(self):
        kopf.on.create(*KEX, id="c", when=lambda **_: 1 / 0)(filtered)
        req = self.host.request("c", example())
        req["call"] = "when"
        res = self.host.call(req)
        self.assertEqual(res.status, "error")
        self.assertIn("ZeroDivisionError", res.message)


if __name__ == "__main__":
    unittest.main()
