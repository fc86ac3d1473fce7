// Typed access to objects in AssemblyScript's idiom: classes with typed
// getters over the JSON, which stays the one copy (writes through a
// getter's Value change the object). A module declares its resource's
// class by extending KubeObject and reads it with ctx.bodyAs<T>() or
// kopf.view<T>(value):
//
//   class KopfExample extends kopf.KubeObject {
//     get field(): string { return this.spec.strAt("field"); }
//     get replicas(): i64 { return this.spec.intAt("replicas"); }
//   }
//   const ex = ctx.bodyAs<KopfExample>();
//   ctx.info("field", kopf.fields().setStr("field", ex.field));

import { Value } from "./json";

/** A typed view of a JSON value: extend it with getters over raw. */
export class Typed {
  constructor(public raw: Value) {}
  toJSON(): string { return this.raw.toJSON(); }
}

/** Kubernetes' ObjectMeta. */
export class ObjectMeta extends Typed {
  get name(): string { return this.raw.strAt("name"); }
  get generateName(): string { return this.raw.strAt("generateName"); }
  get namespace(): string { return this.raw.strAt("namespace"); }
  get uid(): string { return this.raw.strAt("uid"); }
  get resourceVersion(): string { return this.raw.strAt("resourceVersion"); }
  get generation(): i64 { return this.raw.intAt("generation"); }
  get creationTimestamp(): string { return this.raw.strAt("creationTimestamp"); }
  /** RFC 3339, "" when the object is not being deleted. */
  get deletionTimestamp(): string { return this.raw.strAt("deletionTimestamp"); }
  /** The labels object (NULL when none). */
  get labels(): Value { return this.raw.get("labels"); }
  /** The annotations object (NULL when none). */
  get annotations(): Value { return this.raw.get("annotations"); }
  /** A label's value, or "". */
  label(key: string): string { return this.labels.get(key).str; }
  /** An annotation's value, or "". */
  annotation(key: string): string { return this.annotations.get(key).str; }
  get finalizers(): Array<string> {
    const out = new Array<string>();
    const items = this.raw.get("finalizers").arr;
    for (let i = 0; i < items.length; i++) out.push(items[i].str);
    return out;
  }
  get ownerReferences(): Array<Value> { return this.raw.listAt("ownerReferences"); }
}

/** A Kubernetes object: apiVersion, kind, metadata, spec and status. */
export class KubeObject extends Typed {
  get apiVersion(): string { return this.raw.strAt("apiVersion"); }
  get kind(): string { return this.raw.strAt("kind"); }
  get metadata(): ObjectMeta { return new ObjectMeta(this.raw.get("metadata")); }
  get name(): string { return this.raw.strAt("metadata.name"); }
  get namespace(): string { return this.raw.strAt("metadata.namespace"); }
  /** The spec object (NULL when none). */
  get spec(): Value { return this.raw.get("spec"); }
  /** The status object (NULL when none). */
  get status(): Value { return this.raw.get("status"); }
}

/** The typed view T of a value: kopf.view<Deployment>(obj). */
export function view<T extends Typed>(v: Value): T { return instantiate<T>(v); }

/** Typed views of a list of values. */
export function views<T extends Typed>(vs: Array<Value>): Array<T> {
  const out = new Array<T>();
  for (let i = 0; i < vs.length; i++) out.push(instantiate<T>(vs[i]));
  return out;
}
