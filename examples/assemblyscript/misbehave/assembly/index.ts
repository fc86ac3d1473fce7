// An AssemblyScript test guest whose handlers fail on purpose, one way
// each (as examples/testguests/misbehave in Go and examples/rust/misbehave
// in Rust), for the host's tests of its limits (wasmrt's
// TestHandleMisbehavingAssemblyScript):
//
// - "loop" spins forever: only the host's loop checks can stop it;
// - "oom" allocates until the memory limit stops it;
// - "trap" executes wasm's unreachable;
// - "panic" throws, which in AssemblyScript is an abort: the SDK's
//   kopfAbort logs the message, sets it as the call's error and traps;
// - "sleep" sleeps for an hour in the host's sleep_until_stopped, the only
//   sleep an AssemblyScript guest has (it imports no WASI); outside a
//   daemon nothing asks it to stop, so only its call's timeout ends it;
// - "nap" sleeps 10 ms the same way and succeeds;
// - "fail" returns an arbitrary error, a handler's own outcome;
// - "ok" succeeds, to show that the module recovers on a fresh instance.
import * as kopf from "../../../../guest-sdk/assemblyscript/assembly/index";
export { kopf_manifest, kopf_handle } from "../../../../guest-sdk/assemblyscript/assembly/index";

// spins counts the loop's turns in a global, so that the optimiser keeps
// the loop as it is.
let spins: u64 = 0;

function spin(_: kopf.Context): kopf.Result {
  while (true) spins++;
  return kopf.ok();
}

// held keeps every block alive, so that the collector frees none of them.
const held: Array<ArrayBuffer> = [];

function oom(_: kopf.Context): kopf.Result {
  while (true) {
    const block = new ArrayBuffer(8 << 20);
    store<u8>(changetype<usize>(block) + <usize>(held.length % (8 << 20)), 1);
    held.push(block);
  }
  return kopf.ok();
}

function trap(_: kopf.Context): kopf.Result {
  unreachable();
  return kopf.ok();
}

function panic(ctx: kopf.Context): kopf.Result {
  throw new Error("misbehave: deliberate panic in " + ctx.handler);
}

function sleep(ctx: kopf.Context): kopf.Result {
  ctx.sleepUntilStopped(3600);
  return kopf.ok(kopf.fields().setStr("message", "woke up after an hour"));
}

function nap(ctx: kopf.Context): kopf.Result {
  ctx.sleepUntilStopped(0.01);
  return kopf.ok(kopf.fields().setStr("message", "napped"));
}

function fail(_: kopf.Context): kopf.Result {
  return kopf.arbitrary("misbehave: deliberate failure");
}

function ok(_: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().setStr("message", "ok"));
}

// Registered after the globals the handlers use: AssemblyScript wants a
// global declared before any top-level code that reaches it.
kopf.module("misbehave-as", "0.1.0");
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "loop", spin);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "oom", oom);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "trap", trap);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "panic", panic);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "sleep", sleep);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "nap", nap);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "fail", fail);
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "ok", ok);
