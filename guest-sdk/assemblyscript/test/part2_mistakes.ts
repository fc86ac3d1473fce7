// Registration mistakes of selectors and of one function under several
// resources: the manifest export must fail with each (test/run.mjs).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";

kopf.module("part2-mistakes", "0.1.0");
kopf.onUpdate("", "v1", "pods", "other-filters", one);
kopf.onUpdate("", "v1", "services", "other-filters", one).label("app", kopf.PRESENT);
kopf.onUpdate("", "v1", "pods", "same-resource", one);
kopf.onUpdate("", "v1", "pods", "same-resource", one);
kopf.timer("", "v1", "pods", "tick", one);
kopf.timer("", "v1", "services", "tick", one);
kopf.onCreate("", "v1", "pods", "category-named", one).category("all");
kopf.onCreate("", "", "", "nothing", one);
kopf.onConvert("kopf.dev", "v1", kopf.EVERYTHING, "convert-everything", one);
kopf.onValidate("kopf.dev", "v1", "", "validate-category", one).category("all");

function one(ctx: kopf.Context): kopf.Result { return kopf.ok(); }
