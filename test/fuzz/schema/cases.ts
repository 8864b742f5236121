import fc from 'fast-check';
import type { SchemaArbitraries } from './arbitrary.ts';
import { isObject } from './document.ts';
import type { BodyContent, OpenApiDocument, Operation, Parameter, Schema } from './document.ts';
import type { Validity } from './validity.ts';
import { followNotes } from './notes.ts';

/**
 * One generated request of an operation: its parameters and body drawn from the document, checked with Ajv,
 * and written out as a fetch request and as the curl line that repeats it.
 */
export interface Case {
  operation: Operation;
  /** A path parameter is a generated value, or (when ids were harvested for its path) the n-th of those ids. */
  path: Record<string, { value: unknown; pooled: number | null }>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: { content: BodyContent; value: unknown } | null;
  /** Which of the operation's security alternatives to send. */
  security: number;
}

export interface HttpRequest {
  method: string;
  url: string;
  /** Path and query, as the answer is checked against the document. */
  target: string;
  headers: Record<string, string>;
  body: string | FormData | undefined;
  curl: string;
}

interface Part {
  name: string;
  value: string;
  file?: { filename: string; type: string };
}

const BODY_TYPES = [/^application\/(.+\+)?json$/, /^multipart\/form-data$/, /^application\/x-www-form-urlencoded$/, /^text\/plain$/];
const supported = (content: BodyContent): boolean => BODY_TYPES.some((re) => re.test(content.mediaType));

/** C0 control characters and DEL. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/** A header value fetch sends as it is: visible ASCII and inner spaces, nothing to trim. */
const sendableHeader = (v: string): boolean => /^([\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?)?$/.test(v);

/**
 * Every request of the operation the generator can draw, or null when a required part has no values.
 * `skipHeader` names header parameters left out on purpose (see fuzz.ts).
 */
export function caseArbitrary(op: Operation, arbs: SchemaArbitraries, skipHeader: (name: string) => boolean): fc.Arbitrary<Case> | null {
  const parts: Record<'path' | 'query' | 'headers', Record<string, fc.Arbitrary<unknown>>> = { path: {}, query: {}, headers: {} };
  const requiredKeys: Record<'path' | 'query' | 'headers', string[]> = { path: [], query: [], headers: [] };
  for (const p of op.parameters) {
    if (p.in === 'cookie' || (p.in === 'header' && skipHeader(p.name))) continue;
    const where = p.in === 'header' ? 'headers' : p.in;
    // As Schemathesis does: a path parameter is never empty (an empty segment is another path).
    const arb = arbs.ofAll(p.in === 'path' ? [p.schema, { minLength: 1 }] : [p.schema]);
    if (!arb) {
      if (p.required || p.in === 'path') return null;
      continue;
    }
    const sendable =
      p.in === 'header'
        ? arb.filter(arbs.keep((v) => sendableHeader(serialize(v))))
        : p.in === 'path'
          ? arb.filter(arbs.keep((v) => !['', '.', '..'].includes(serialize(v))))
          : arb;
    parts[where][p.name] = p.in === 'path' ? fc.record({ value: sendable, pooled: fc.option(fc.nat(), { nil: null, freq: 3 }) }) : sendable;
    if (p.required || p.in === 'path') requiredKeys[where].push(p.name);
  }
  const contents = (op.body?.contents ?? []).filter(supported);
  const bodies = contents.flatMap((content) => {
    const arb = arbs.of(content.schema);
    const sendable = content.mediaType === 'multipart/form-data' ? arb?.filter(arbs.keep((v) => !isObject(v) || !Object.keys(v).some((k) => CONTROL.test(k)))) : arb;
    return sendable ? [sendable.map((value) => ({ content, value: followNotes(arbs.document, content.schema, value) }))] : [];
  });
  if (op.body?.required && bodies.length === 0) return null;
  const body = bodies.length === 0 ? fc.constant(null) : op.body?.required ? fc.oneof(...bodies) : fc.option(fc.oneof(...bodies), { nil: null });
  return fc.record({
    operation: fc.constant(op),
    path: fc.record(parts.path, { requiredKeys: requiredKeys.path }) as fc.Arbitrary<Case['path']>,
    query: fc.record(parts.query, { requiredKeys: requiredKeys.query }),
    headers: fc.record(parts.headers, { requiredKeys: requiredKeys.headers }),
    body,
    security: fc.nat({ max: Math.max(0, op.security.length - 1) }),
  });
}

/** Whether every part of the case is valid against the document (Ajv), and can be sent as it is. */
export function caseProblem(c: Case, validity: Validity): string | null {
  for (const p of c.operation.parameters) {
    const where = p.in === 'path' ? c.path : p.in === 'query' ? c.query : p.in === 'header' ? c.headers : {};
    if (!(p.name in where)) continue;
    const raw = where[p.name];
    const value = p.in === 'path' ? (raw as { value: unknown }).value : raw;
    if (!validity.valid(p.pointer, value)) return `${p.in} ${p.name}: ${validity.why(p.pointer, value)}`;
    if (p.in === 'header' && !sendableHeader(serialize(value))) return `header ${p.name} cannot be sent as is`;
    if (p.in === 'path' && ['', '.', '..'].includes(serialize(value))) return `path ${p.name} is not a path segment`;
  }
  if (c.body && !validity.valid(c.body.content.pointer, c.body.value)) return `body: ${validity.why(c.body.content.pointer, c.body.value)}`;
  // A part's name travels in its Content-Disposition header, where control characters cannot be written.
  if (c.body?.content.mediaType === 'multipart/form-data' && isObject(c.body.value) && Object.keys(c.body.value).some((k) => CONTROL.test(k))) {
    return 'a multipart part name with control characters cannot be sent';
  }
  return null;
}

/** Simple style: primitives as text, arrays joined with commas, objects as key,value pairs. */
function serialize(value: unknown): string {
  if (value === null) return '';
  if (Array.isArray(value)) return value.map(serialize).join(',');
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => [k, serialize(v)]).join(',');
  return String(value);
}

export interface RenderContext {
  baseUrl: string;
  document: OpenApiDocument;
  arbs: SchemaArbitraries;
  key: string;
  /** Ids harvested for a collection path (`/v1/tasks`). */
  pool(collection: string): readonly string[];
  /** Whether a pooled id fits the path parameter's schema. */
  fits(parameter: Parameter, value: string): boolean;
}

/** The collection a path parameter's ids come from: the path up to the parameter (`/v1/tasks/{id}` → `/v1/tasks`). */
export const collectionOf = (path: string): string => path.split('/{')[0] ?? path;

export function render(c: Case, ctx: RenderContext): HttpRequest {
  const op = c.operation;
  let path = op.path;
  for (const p of op.parameters.filter((x) => x.in === 'path')) {
    const chosen = c.path[p.name];
    if (!chosen) continue;
    const ids = ctx.pool(collectionOf(op.path)).filter((id) => ctx.fits(p, id));
    const value = chosen.pooled !== null && ids.length > 0 ? (ids[chosen.pooled % ids.length] as string) : serialize(chosen.value);
    path = path.replace(`{${p.name}}`, encodeURIComponent(value));
  }
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(c.query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) query.append(name, serialize(v));
    else if (isObject(value)) for (const [k, v] of Object.entries(value)) query.append(k, serialize(v));
    else query.append(name, serialize(value));
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.headers)) if (value !== undefined) headers[name] = serialize(value);
  for (const scheme of op.security[c.security] ?? []) {
    const def = ctx.document.securityScheme(scheme);
    if (def?.['type'] === 'http' && String(def['scheme']).toLowerCase() === 'bearer') headers['Authorization'] = `Bearer ${ctx.key}`;
    if (def?.['type'] === 'apiKey' && typeof def['name'] === 'string') {
      if (def['in'] === 'header') headers[def['name']] = ctx.key;
      if (def['in'] === 'query') query.append(def['name'], ctx.key);
      if (def['in'] === 'cookie') headers['Cookie'] = `${def['name']}=${ctx.key}`;
    }
  }
  const search = query.toString();
  const target = `${path}${search ? `?${search}` : ''}`;
  const url = `${ctx.baseUrl}${target}`;
  let body: HttpRequest['body'];
  let curlBody: string[] = [];
  let stdin = '';
  if (c.body) {
    const { mediaType } = c.body.content;
    const value = c.body.value;
    if (mediaType === 'multipart/form-data') {
      const parts = multipartParts(c.body.content.schema, value, ctx.arbs);
      const form = new FormData();
      for (const part of parts) {
        if (part.file) form.append(part.name, new Blob([part.value], { type: part.file.type }), part.file.filename);
        else form.append(part.name, part.value);
      }
      body = form;
      const file = parts.find((p) => p.file);
      if (file) stdin = `printf %s ${shellQuote(file.value)} | `;
      curlBody = parts.flatMap((p) => ['-F', shellQuote(p.file ? `${p.name}=@-;filename=${p.file.filename};type=${p.file.type}` : `${p.name}=${p.value}`)]);
    } else {
      body =
        mediaType === 'application/x-www-form-urlencoded'
          ? new URLSearchParams(Object.entries(isObject(value) ? value : {}).map(([k, v]): [string, string] => [k, serialize(v)])).toString()
          : mediaType === 'text/plain'
            ? serialize(value)
            : JSON.stringify(value);
      headers['Content-Type'] = mediaType;
      curlBody = ['--data-binary', shellQuote(body)];
    }
  }
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', shellQuote(`${k}: ${v}`)]);
  const curl = `${stdin}curl -sS -i -N -X ${op.method} ${shellQuote(url)} ${[...headerArgs, ...curlBody].join(' ')}`.trim();
  return { method: op.method, url, target, headers, body, curl };
}

/** Each property a part; one whose schema says binary content (contentMediaType, format binary) a file part. */
function multipartParts(schema: Schema, value: unknown, arbs: SchemaArbitraries): Part[] {
  if (!isObject(value)) return [];
  const [flat] = arbs.alternatives(schema);
  return Object.entries(value).map(([name, v]) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    const declared = (flat?.properties.get(name) ?? []).map((s) => arbs.resolveSchema(s));
    const media = declared.map((s) => (isObject(s) ? s['contentMediaType'] ?? (s['format'] === 'binary' ? 'application/octet-stream' : undefined) : undefined)).find(
      (m): m is string => typeof m === 'string',
    );
    return media ? { name, value: text, file: { filename: name, type: media } } : { name, value: text };
  });
}

/** A shell word: single quotes, or $'...' with escapes when the text has control characters. */
export function shellQuote(text: string): string {
  if (!CONTROL.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  const escaped = [...text]
    .map((ch) => {
      const code = ch.codePointAt(0) ?? 0;
      if (ch === '\\' || ch === "'") return `\\${ch}`;
      return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
    })
    .join('');
  return `$'${escaped}'`;
}
