// Hierarchies, Kopf's kopf.adopt and friends: pure functions that prepare
// a child object (a JSON Value) before the handler creates it. They change
// the child in place and keep what it already has, unless the options say
// forced. Kopf's keyword arguments are a Hierarchy's chained methods:
//
//   kopf.adopt(child, owner, kopf.hierarchy().strict().nested(["spec.template"]));

import { Value } from "./json";

/** Kopf's keyword arguments of the hierarchy functions: forced, strict,
 * nested, and the owner reference's controller and blockOwnerDeletion
 * flags (both true by default). */
export class Hierarchy {
  isForced: bool = false;
  isStrict: bool = false;
  nestedPaths: Array<string> = [];
  isController: bool = true;
  blocks: bool = true;
  /** Overwrites what the child already has (its name or generateName,
   * namespace, labels), Kopf's forced=True. */
  forced(): Hierarchy { this.isForced = true; return this; }
  /** Names the child exactly as the owner (metadata.name) instead of a
   * generateName "<owner>-", Kopf's strict=True. */
  strict(): Hierarchy { this.isStrict = true; return this; }
  /** Also labels the templates at these dotted paths of the child
   * ("spec.template", "spec.jobTemplate.spec.template") when they exist,
   * Kopf's nested=. */
  nested(paths: Array<string>): Hierarchy { for (let i = 0; i < paths.length; i++) this.nestedPaths.push(paths[i]); return this; }
  /** The owner reference's controller flag (default true). */
  controller(v: bool): Hierarchy { this.isController = v; return this; }
  /** The owner reference's blockOwnerDeletion flag (default true). */
  blockOwnerDeletion(v: bool): Hierarchy { this.blocks = v; return this; }
}

/** New hierarchy options, to chain: kopf.hierarchy().forced(). */
export function hierarchy(): Hierarchy { return new Hierarchy(); }

/** The defaults: nothing forced, a controller reference that blocks the owner's deletion. */
export const DEFAULT_HIERARCHY = new Hierarchy();

/** An owner reference to owner (Kopf's build_owner_reference): a
 * controller that blocks the owner's deletion unless opts say otherwise. */
export function ownerReference(owner: Value, opts: Hierarchy = DEFAULT_HIERARCHY): Value {
  return Value.object().setStr("apiVersion", owner.strAt("apiVersion")).setStr("kind", owner.strAt("kind"))
    .setStr("name", owner.strAt("metadata.name")).setStr("uid", owner.strAt("metadata.uid"))
    .setBool("controller", opts.isController).setBool("blockOwnerDeletion", opts.blocks);
}

/** The reference to obj that Events and other objects use (Kopf's
 * build_object_reference): apiVersion, kind, name, uid, and namespace
 * when it has one. */
export function buildObjectReference(obj: Value): Value {
  const ref = Value.object().setStr("apiVersion", obj.strAt("apiVersion")).setStr("kind", obj.strAt("kind"))
    .setStr("name", obj.strAt("metadata.name")).setStr("uid", obj.strAt("metadata.uid"));
  const ns = obj.strAt("metadata.namespace");
  if (ns.length > 0) ref.setStr("namespace", ns);
  return ref;
}

/** Adds an owner reference to owner unless the child has one with the
 * owner's uid, Kopf's append_owner_reference. */
export function appendOwnerReference(child: Value, owner: Value, opts: Hierarchy = DEFAULT_HIERARCHY): void {
  const ref = ownerReference(owner, opts);
  const meta = child.entryObject("metadata");
  let refs = meta.get("ownerReferences");
  if (refs.kind != 4) { refs = Value.array(); meta.set("ownerReferences", refs); }
  for (let i = 0; i < refs.arr.length; i++) if (refs.arr[i].strAt("uid") == ref.strAt("uid")) return;
  refs.arr.push(ref);
}

/** Removes the child's owner references to owner (by its uid), Kopf's
 * remove_owner_reference. */
export function removeOwnerReference(child: Value, owner: Value): void {
  const meta = child.get("metadata");
  if (!meta.isObject) return;
  const uid = owner.strAt("metadata.uid");
  const kept = Value.array();
  const refs = meta.get("ownerReferences").arr;
  for (let i = 0; i < refs.length; i++) if (refs[i].strAt("uid") != uid) kept.push(refs[i]);
  meta.set("ownerReferences", kept);
}

/** Adds labels (an object of strings) to the child, keeping the values it
 * already has unless forced; with nested, also to the templates at those
 * paths that exist. Kopf's kopf.label. */
export function label(child: Value, labels: Value, opts: Hierarchy = DEFAULT_HIERARCHY): void {
  if (labels.length == 0) return;
  labelOne(child, labels, opts.isForced);
  for (let i = 0; i < opts.nestedPaths.length; i++) {
    const nested = child.path(opts.nestedPaths[i]);
    if (nested.isObject) labelOne(nested, labels, opts.isForced);
  }
}

function labelOne(obj: Value, labels: Value, forced: bool): void {
  const dst = obj.entryObject("metadata").entryObject("labels");
  const keys = labels.keys();
  for (let i = 0; i < keys.length; i++) if (forced || !dst.has(keys[i])) dst.set(keys[i], labels.get(keys[i]));
}

/** Names the child after name, Kopf's harmonize_naming: a generateName
 * "<name>-" (strict: metadata.name = name) unless the child has a name or
 * a generateName (forced: whatever it has; the other of the two goes). */
export function harmonize(child: Value, name: string, opts: Hierarchy = DEFAULT_HIERARCHY): void {
  const meta = child.entryObject("metadata");
  const named = meta.has("name") || meta.has("generateName");
  if (name.length == 0 || (named && !opts.isForced)) return;
  if (opts.isStrict) {
    meta.setStr("name", name);
    meta.delete("generateName");
    return;
  }
  meta.setStr("generateName", name + "-");
  meta.delete("name");
}

/** Puts the child into namespace unless it has one (forced: whatever it
 * has), Kopf's adjust_namespace. An empty namespace (a cluster-scoped
 * owner) changes nothing. */
export function adjustNamespace(child: Value, namespace: string, opts: Hierarchy = DEFAULT_HIERARCHY): void {
  const meta = child.entryObject("metadata");
  if (namespace.length == 0 || (meta.has("namespace") && !opts.isForced)) return;
  meta.setStr("namespace", namespace);
}

/** Makes child a child of owner, Kopf's kopf.adopt: an owner reference,
 * a name after the owner's, the owner's namespace and its labels. */
export function adopt(child: Value, owner: Value, opts: Hierarchy = DEFAULT_HIERARCHY): void {
  appendOwnerReference(child, owner, opts);
  harmonize(child, owner.strAt("metadata.name"), opts);
  adjustNamespace(child, owner.strAt("metadata.namespace"), opts);
  label(child, owner.get("metadata").get("labels"), opts);
}
