// The allkinds operator in AssemblyScript: one module with every handler
// kind but convert, the same in every guest language (examples/allkinds.md
// is the contract; examples/allkinds is the Go one, the reference). The
// polyglot end-to-end test (internal/polyglottest, TestAllKinds) runs it on
// a real control plane and asserts the same outcomes as for the others.
import * as kopf from "../../../../guest-sdk/assemblyscript/assembly/index";
export { kopf_manifest, kopf_handle } from "../../../../guest-sdk/assemblyscript/assembly/index";
import { Value } from "../../../../guest-sdk/assemblyscript/assembly/index";

const GROUP = "kopf.dev";
const VERSION = "v1";
const PLURAL = "kopfexamples";

kopf.module("allkinds", "0.1.0");
kopf.onStartup("startup_fn", startupFn);
kopf.onCleanup("cleanup_fn", cleanupFn);
kopf.onCreate(GROUP, VERSION, PLURAL, "create_fn", createFn);
// A callable label filter: objects labelled skip=yes are not updated.
kopf.onUpdate(GROUP, VERSION, PLURAL, "update_fn", updateFn).label("skip", kopf.Filter.callable(notYes));
kopf.onField(GROUP, VERSION, PLURAL, "field_fn", fieldFn).field("spec.field");
kopf.onDelete(GROUP, VERSION, PLURAL, "delete_fn", deleteFn);
kopf.onResume(GROUP, VERSION, PLURAL, "resume_fn", resumeFn);
kopf.onEvent(GROUP, VERSION, PLURAL, "event_fn", eventFn);
kopf.timer(GROUP, VERSION, PLURAL, "timer_fn", timerFn).interval(1);
kopf.daemon(GROUP, VERSION, PLURAL, "daemon_fn", daemonFn);
kopf.index(GROUP, VERSION, PLURAL, "by_field", byField);
kopf.onProbe("index_size", indexSize);
kopf.onValidate(GROUP, VERSION, PLURAL, "validate_fn", validateFn);
kopf.onMutate(GROUP, VERSION, PLURAL, "mutate_fn", mutateFn);

function startupFn(ctx: kopf.Context): kopf.Result {
  ctx.info("allkinds started");
  return kopf.ok();
}

function cleanupFn(ctx: kopf.Context): kopf.Result {
  ctx.info("allkinds cleaned up");
  return kopf.ok();
}

// Posts an Event about the object and registers two sub-handlers, whose
// results land in status["create_fn/a"] and status["create_fn/b"].
function createFn(ctx: kopf.Context): kopf.Result {
  const err = ctx.postEvent(kopf.EVENT_NORMAL, "AllKinds", "created");
  if (err !== null) return kopf.arbitrary(err.toString());
  ctx.subhandler("a", subA);
  ctx.subhandler("b", subB);
  return kopf.ok();
}

function subA(ctx: kopf.Context): kopf.Result { return kopf.ok(Value.str("sub a")); }
function subB(ctx: kopf.Context): kopf.Result { return kopf.ok(Value.str("sub b")); }

// The callable filter of update_fn: the label is not "yes".
function notYes(value: Value, ctx: kopf.Context): bool { return value.str != "yes"; }

function updateFn(ctx: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().set("field", ctx.spec().get("field")));
}

function fieldFn(ctx: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().set("old", ctx.old()).set("new", ctx.new()));
}

function deleteFn(ctx: kopf.Context): kopf.Result {
  ctx.info("deleting " + ctx.name);
  return kopf.ok();
}

function resumeFn(ctx: kopf.Context): kopf.Result { return kopf.ok(Value.str("resumed")); }

function eventFn(ctx: kopf.Context): kopf.Result {
  ctx.info("event " + ctx.event().strAt("type") + " " + ctx.name);
  return kopf.ok();
}

// Marks the object once, through the handler's patch.
function timerFn(ctx: kopf.Context): kopf.Result {
  if (!ctx.status().get("ticked").bool) ctx.patch.set("status.ticked", Value.bool(true));
  return kopf.ok();
}

function daemonFn(ctx: kopf.Context): kopf.Result {
  ctx.info("daemon started " + ctx.name);
  while (!ctx.sleepUntilStopped(60)) {}
  ctx.info("daemon stopped " + ctx.name);
  return kopf.ok();
}

// Indexes the object's name under its spec.field.
function byField(ctx: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().setStr(ctx.spec().strAt("field"), ctx.name));
}

// The number of keys in by_field, read whole.
function indexSize(ctx: kopf.Context): kopf.Result {
  return kopf.ok(Value.num(<f64>ctx.index("by_field").length));
}

function validateFn(ctx: kopf.Context): kopf.Result {
  if (ctx.spec().strAt("field") == "forbidden") return kopf.admissionError("field must not be forbidden");
  return kopf.ok();
}

function mutateFn(ctx: kopf.Context): kopf.Result {
  ctx.patch.setStr("metadata.labels.allkinds-mutated", "yes");
  return kopf.ok();
}
