// examples/10-conversion in AssemblyScript: a conversion webhook (beyond
// Kopf) for Widgets, served as v1alpha1 (spec.size, a string of digits) and
// v1 (spec.replicas, a number). The host answers the API server's
// ConversionReviews with this handler and sets the apiVersion and the
// metadata of what it returns.
import * as kopf from "../../../../guest-sdk/assemblyscript/assembly/index";
import { Value } from "../../../../guest-sdk/assemblyscript/assembly/index";
export { kopf_manifest, kopf_handle } from "../../../../guest-sdk/assemblyscript/assembly/index";

kopf.module("conversion", "0.1.0");
kopf.onConvert("kopf.dev", "v1", "widgets", "convert", convert).versions(["v1alpha1", "v1"]);

// Returns the widget in the desired version.
function convert(ctx: kopf.Context): kopf.Result {
  const to = ctx.desiredAPIVersion;
  const spec = Value.object();
  if (to == "kopf.dev/v1") {
    const size = ctx.spec().strAt("size");
    if (size.length > 0) {
      if (!digits(size)) return kopf.permanent("spec.size \"" + size + "\" is not a number");
      spec.setNum("replicas", parseFloat(size));
    }
  } else if (to == "kopf.dev/v1alpha1") {
    const replicas = ctx.spec().get("replicas");
    if (!replicas.isNull) spec.setStr("size", (<i64>replicas.num).toString());
  } else {
    return kopf.permanent("cannot convert to " + to);
  }
  return kopf.ok(Value.object().set("spec", spec));
}

function digits(s: string): bool {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
