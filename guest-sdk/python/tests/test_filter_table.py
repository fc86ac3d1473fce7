"""The shared filter table (abi/testdata/filters.json; its format in
abi/testdata/filters.md): kopf.testing decides each case as the host does,
in the host's words. The module's callables are not in the table: a case's
"when" is their answer, asked last."""

import json
import unittest

from helpers import fixture

from kopf import testing


class FilterTableTest(unittest.TestCase):

    def test_every_case_as_the_host_decides(self):
        table = json.loads(fixture("filters.json"))
        self.assertGreater(len(table["cases"]), 0)
        for case in table["cases"]:
            with self.subTest(case["name"]):
                handler = case["handler"]
                filters = handler.get("filters") or {}
                why = testing.declared_why_not(handler["kind"], filters, case.get("object"), case.get("old"))
                if not why and filters.get("when") and case.get("when") is False:
                    why = testing._callback_refusal(filters, filters.get("field"))
                self.assertEqual(why, case["why"])
                self.assertEqual(case["called"], case["why"] == "")


if __name__ == "__main__":
    unittest.main()
