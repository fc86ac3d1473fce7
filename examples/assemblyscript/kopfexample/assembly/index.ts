// Kopf's minimal example operator as a kopf-wasm module in AssemblyScript:
// create, update and delete handlers for kopf.dev/v1 kopfexamples that log
// and return a message, which the host stores under status.create_fn,
// status.update_fn and status.delete_fn (as examples/kopfexample in Go).
import * as kopf from "../../../../guest-sdk/assemblyscript/assembly/index";
export { kopf_manifest, kopf_handle } from "../../../../guest-sdk/assemblyscript/assembly/index";

kopf.module("kopfexample", "0.1.0");
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "create_fn", createFn);
kopf.onUpdate("kopf.dev", "v1", "kopfexamples", "update_fn", updateFn);
kopf.onDelete("kopf.dev", "v1", "kopfexamples", "delete_fn", deleteFn);

function createFn(ctx: kopf.Context): kopf.Result {
  ctx.info("And here we are! Creating", kopf.fields().set("spec", ctx.spec()));
  return kopf.ok(kopf.fields().setStr("message", "hello world"));
}

function updateFn(ctx: kopf.Context): kopf.Result {
  ctx.info("Updating", kopf.fields().setNum("diff", <f64>ctx.diff().length));
  return kopf.ok(kopf.fields().setStr("message", "updated"));
}

function deleteFn(ctx: kopf.Context): kopf.Result {
  ctx.info("Deleting", kopf.fields().setStr("name", ctx.name));
  return kopf.ok(kopf.fields().setStr("message", "deleted"));
}
