// A module whose convert handlers are registered wrongly: its manifest
// export must fail with every mistake (test/run.mjs checks the message).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";

kopf.module("mistakes", "0.1.0");
kopf.onConvert("kopf.dev", "v1", "widgets", "empty", handle).versions([]);
kopf.onConvert("kopf.dev", "v1", "widgets", "qualified", handle).versions(["kopf.dev/v1"]);
kopf.onConvert("", "v1", "pods", "core", handle);
kopf.onConvert("kopf.dev", "v1", "widgets", "labelled", handle).label("a", kopf.PRESENT);
kopf.onValidate("kopf.dev", "v1", "widgets", "validator", handle).versions(["v1"]);

function handle(ctx: kopf.Context): kopf.Result { return kopf.ok(); }
