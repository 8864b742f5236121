import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * An OpenAPI 3.1 document as the fuzzer reads it: local `$ref`s followed by JSON pointer, and its operations
 * listed with their parameters, bodies and security alternatives. Nothing here knows this project's API.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type SchemaObject = Record<string, unknown>;
export type Schema = boolean | SchemaObject;

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
  /** JSON pointer of the schema in the document, for the validator. */
  pointer: string;
}

export interface BodyContent {
  mediaType: string;
  schema: Schema;
  pointer: string;
}

export interface Operation {
  id: string;
  method: string;
  /** The path template, `/v1/tasks/{id}`. */
  path: string;
  parameters: Parameter[];
  body: { required: boolean; contents: BodyContent[] } | null;
  /** Alternatives, each naming the security schemes it needs together; empty: none needed. */
  security: string[][];
  /** The media types of the 2xx answers (an event stream is read to its end). */
  successMediaTypes: string[];
}

export class OpenApiDocument {
  readonly root: SchemaObject;

  constructor(root: SchemaObject) {
    this.root = root;
  }

  static load(path: string): OpenApiDocument {
    return new OpenApiDocument(parse(readFileSync(path, 'utf8')) as SchemaObject);
  }

  /** The node a local pointer (`#/components/schemas/Task`, or `/components/...`) names. */
  at(pointer: string): unknown {
    const path = pointer.startsWith('#') ? pointer.slice(1) : pointer;
    if (path === '') return this.root;
    return path
      .split('/')
      .slice(1)
      .reduce<unknown>((node, part) => {
        const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
        if (Array.isArray(node)) return node[Number(key)];
        return isObject(node) ? node[key] : undefined;
      }, this.root);
  }

  /** Follows `$ref` until a node without one; returns it with its pointer. */
  follow(node: unknown, pointer: string): { node: unknown; pointer: string } {
    let current = { node, pointer };
    for (let hops = 0; isObject(current.node) && typeof current.node['$ref'] === 'string'; hops++) {
      const ref = current.node['$ref'];
      if (!ref.startsWith('#')) throw new Error(`only local references are supported, not ${ref}`);
      if (hops > 32) throw new Error(`reference cycle at ${ref}`);
      current = { node: this.at(ref), pointer: ref.slice(1) };
    }
    return current;
  }

  /** Every operation under `paths` (callbacks and `webhooks` are the server's requests, not ours). */
  operations(): Operation[] {
    const paths = isObject(this.root['paths']) ? this.root['paths'] : {};
    const globalSecurity = this.root['security'];
    const result: Operation[] = [];
    for (const [path, item] of Object.entries(paths)) {
      if (!isObject(item)) continue;
      const itemPointer = `/paths/${escape(path)}`;
      const shared = this.parameters(item['parameters'], `${itemPointer}/parameters`);
      for (const method of ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']) {
        const op = item[method];
        if (!isObject(op)) continue;
        const opPointer = `${itemPointer}/${method}`;
        const own = this.parameters(op['parameters'], `${opPointer}/parameters`);
        const parameters = [...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own];
        result.push({
          id: typeof op['operationId'] === 'string' ? op['operationId'] : `${method} ${path}`,
          method: method.toUpperCase(),
          path,
          parameters,
          body: this.requestBody(op['requestBody'], `${opPointer}/requestBody`),
          security: securityAlternatives(op['security'] ?? globalSecurity),
          successMediaTypes: this.successMediaTypes(op['responses'], `${opPointer}/responses`),
        });
      }
    }
    return result;
  }

  securityScheme(name: string): SchemaObject | undefined {
    const scheme = this.follow(this.at(`/components/securitySchemes/${escape(name)}`), '').node;
    return isObject(scheme) ? scheme : undefined;
  }

  private parameters(list: unknown, pointer: string): Parameter[] {
    if (!Array.isArray(list)) return [];
    return list.flatMap((raw, i) => {
      const { node, pointer: at } = this.follow(raw, `${pointer}/${i}`);
      if (!isObject(node) || typeof node['name'] !== 'string' || !('schema' in node)) return [];
      const where = node['in'];
      if (where !== 'path' && where !== 'query' && where !== 'header' && where !== 'cookie') return [];
      return [{ name: node['name'], in: where, required: node['required'] === true, schema: node['schema'] as Schema, pointer: `${at}/schema` }];
    });
  }

  private requestBody(raw: unknown, pointer: string): Operation['body'] {
    if (raw === undefined) return null;
    const { node, pointer: at } = this.follow(raw, pointer);
    if (!isObject(node) || !isObject(node['content'])) return null;
    const contents = Object.entries(node['content']).flatMap(([mediaType, media]) =>
      isObject(media) && 'schema' in media
        ? [{ mediaType, schema: media['schema'] as Schema, pointer: `${at}/content/${escape(mediaType)}/schema` }]
        : [],
    );
    return { required: node['required'] === true, contents };
  }

  private successMediaTypes(raw: unknown, pointer: string): string[] {
    if (!isObject(raw)) return [];
    return Object.entries(raw).flatMap(([status, response]) => {
      if (!/^2/.test(status)) return [];
      const { node } = this.follow(response, `${pointer}/${status}`);
      return isObject(node) && isObject(node['content']) ? Object.keys(node['content']) : [];
    });
  }
}

/** A JSON pointer segment, URI-encoded so the pointer can also be a URI fragment (Ajv's `$ref`). */
export const escape = (segment: string): string => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

function securityAlternatives(raw: unknown): string[][] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(isObject).map((requirement) => Object.keys(requirement));
}
