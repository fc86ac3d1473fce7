// Outbound HTTP from handlers, through Extism's http_request: only to the
// hosts the module declares with kopf.allowHosts (globs on the host name);
// the host fails the call for any other, redirects included.
//
//   kopf.allowHosts(["api.example.com"]);
//   const res = kopf.http("GET", "https://api.example.com/v1/items").header("Accept", "application/json").send();
//   if (res.status == 200) items = res.json();

import { Value, quote } from "./json";
import { httpCall } from "./host";

/** An outbound HTTP request being built: headers and a body, then send(). */
export class HttpRequest {
  private headersV: Value = Value.object();
  private bodyS: string | null = null;
  constructor(public method: string, public url: string) {}
  /** Sets a request header. */
  header(name: string, value: string): HttpRequest { this.headersV.setStr(name, value); return this; }
  /** Sets the request's body (text; UTF-8 on the wire). */
  body(text: string): HttpRequest { this.bodyS = text; return this; }
  /** Sets a JSON body and its Content-Type. */
  json(v: Value): HttpRequest { this.bodyS = v.toJSON(); return this.header("Content-Type", "application/json"); }
  /** Sends the request and waits for the response. A host the module did
   * not declare, or a request that fails (no connection, a body above
   * 16 MiB), fails the handler's call with the host's message. */
  send(): HttpResponse {
    const req = "{\"url\":" + quote(this.url) + ",\"method\":" + quote(this.method) + ",\"headers\":" + this.headersV.toJSON() + "}";
    const reply = httpCall(req, this.bodyS);
    const headers = reply.headers.length > 0 ? Value.parse(reply.headers) : null;
    return new HttpResponse(reply.status, headers !== null && (headers as Value).isObject ? headers as Value : Value.object(), reply.body);
  }
}

/** The response of an outbound HTTP request. */
export class HttpResponse {
  constructor(public status: i32, public headers: Value, public body: string) {}
  /** A response header (names are lower-case), or "". */
  header(name: string): string { return this.headers.get(name.toLowerCase()).str; }
  /** The body parsed as JSON, or null when it is not JSON. */
  json(): Value | null { return Value.parse(this.body); }
}

/** A new outbound HTTP request ("GET", "POST", ...) to url. */
export function http(method: string, url: string): HttpRequest { return new HttpRequest(method, url); }
