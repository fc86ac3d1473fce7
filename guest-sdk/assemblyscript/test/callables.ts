// Callable label, annotation and value filters, the category, everything
// and callable resource selectors, and one function under several
// resources of one kind (test/run.mjs).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";
import { Value } from "../assembly/json";

const G = "kopf.dev", V = "v1", P = "kopfexamples";
kopf.module("callables", "0.1.0");
kopf.onUpdate(G, V, P, "by_label", done).label("team", kopf.Filter.callable(isTeamA)).annotation("note", kopf.PRESENT);
kopf.onField(G, V, P, "by_value", done).field("spec.size").value(kopf.Filter.callable(isBig));
kopf.onField(G, V, P, "by_old_new", done).field("spec.size").old(kopf.Filter.callable(isSmall)).new(kopf.Filter.callable(isBig));
kopf.onEvent(G, V, P, "event_value", done).field("spec.size").value(kopf.Filter.callable(isBig)).when(isNamedA);
kopf.onCreate("", "", kopf.EVERYTHING, "everything", done);
kopf.onCreate("", "", "", "category", done).category("all");
kopf.onCreate(G, "", "", "selected", done).selectResources(isNamespacedCustom);
kopf.onUpdate("", "v1", "pods", "multi", multi).label("app", kopf.Filter.str("web")).param(Value.str("pods"));
kopf.onUpdate("", "v1", "services", "multi", multi).label("app", kopf.Filter.str("web")).param(Value.str("services"));
kopf.onEvent("", "v1", "pods", "watch", multi);
kopf.onEvent("", "v1", "configmaps", "watch", multi);

function done(ctx: kopf.Context): kopf.Result { return kopf.ok(Value.str("called")); }
function multi(ctx: kopf.Context): kopf.Result { return kopf.ok(ctx.param()); }
function isTeamA(value: Value, ctx: kopf.Context): bool { return value.str == "a"; }
function isBig(value: Value, ctx: kopf.Context): bool { return value.num > 10; }
function isSmall(value: Value, ctx: kopf.Context): bool { return !value.isNull && value.num <= 10; }
function isNamedA(ctx: kopf.Context): bool { return ctx.name == "a"; }
function isNamespacedCustom(r: kopf.ResourceInfo): bool { return r.namespaced && r.group.length > 0 && r.categories.includes("all"); }
