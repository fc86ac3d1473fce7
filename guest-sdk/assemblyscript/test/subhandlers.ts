// Sub-handlers (Kopf's @kopf.subhandler and kopf.execute()): registered
// by a changing handler in every call, run when it returns or at
// execute(), with their own progress; filtered ones are not run; nested
// ones get "parent/child/grandchild" (test/run.mjs drives the cycles).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";
import { Value } from "../assembly/json";

kopf.module("subhandlers", "0.1.0");
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "create_fn", createFn);
kopf.onUpdate("kopf.dev", "v1", "kopfexamples", "explicit", explicit);
kopf.timer("kopf.dev", "v1", "kopfexamples", "tick", tick).interval(1);
kopf.onDelete("kopf.dev", "v1", "kopfexamples", "used_up", usedUp);

function createFn(ctx: kopf.Context): kopf.Result {
  ctx.subhandler("a", subA);
  ctx.subhandler("b", later).retries(3).param(Value.str("p"));
  ctx.subhandler("skipped", subA).label("skip", kopf.ABSENT);
  ctx.subhandler("by_callable", subA).label("team", kopf.Filter.callable(isTeamB));
  ctx.subhandler("nested", nested);
  return kopf.ok(Value.str("parent"));
}

function subA(ctx: kopf.Context): kopf.Result {
  ctx.patch.setStr("metadata.labels.a", "yes");
  ctx.info("in a");
  const memo = ctx.memo();
  memo.setNum("a", memo.get("a").num + 1);
  return kopf.ok(Value.str("sub a"));
}

// Fails at first, then succeeds with its param.
function later(ctx: kopf.Context): kopf.Result {
  if (ctx.retry < 1) return kopf.temporaryAfter("not yet", 0);
  return kopf.ok(Value.str("sub b " + ctx.param().str));
}

function nested(ctx: kopf.Context): kopf.Result {
  ctx.subhandler("inner", subA);
  return kopf.ok();
}

function isTeamB(value: Value, ctx: kopf.Context): bool { return value.str == "b"; }

// Kopf's explicit execute(): the code after it runs once all are finished.
function explicit(ctx: kopf.Context): kopf.Result {
  ctx.subhandler("first", later);
  const pending = ctx.execute();
  if (pending !== null) return pending;
  return kopf.ok(Value.str("after"));
}

// Sub-handlers of a timer are a mistake: a permanent outcome of their own.
function tick(ctx: kopf.Context): kopf.Result {
  ctx.subhandler("x", subA);
  ctx.subhandler("", subA); // no id: a mistake
  return kopf.ok();
}

// A sub-handler whose retries are used up is not called again.
function usedUp(ctx: kopf.Context): kopf.Result {
  ctx.subhandler("failing", failing).retries(2);
  return kopf.ok();
}

function failing(ctx: kopf.Context): kopf.Result { return kopf.arbitrary("broken"); }
