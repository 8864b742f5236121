// The generated parts of docs/: each sits between two marker lines in its page, `npm run docs:checks` writes it
// (scripts/check-list.ts), and test/readme/generated-docs.test.ts fails when a page and its source disagree.
// The sources are the ones a reader would otherwise have to copy by hand: the control API from
// openapi/admin.yaml, and each command's --help.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import * as HELP_TEXTS from '../src/cli/help.ts';
import { START_HELP } from '../src/cli/start-options.ts';

const ROOT = new URL('..', import.meta.url);

export const openMarker = (name: string): string => `<!-- generated: ${name}; written by npm run docs:checks, checked by test/readme/generated-docs.test.ts -->`;
export const closeMarker = (name: string): string => `<!-- end of generated: ${name} -->`;

/** `text` with the part named `name` replaced by `content`; null when its markers are missing. */
export function withGenerated(text: string, name: string, content: string): string | null {
  const open = openMarker(name);
  const close = closeMarker(name);
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start === -1 || end < start) return null;
  return `${text.slice(0, start + open.length)}\n\n${content.trimEnd()}\n\n${text.slice(end)}`;
}

// ---- the control API, from openapi/admin.yaml

type Node = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function adminDocument(): Node {
  return parse(readFileSync(new URL('openapi/admin.yaml', ROOT), 'utf8')) as Node;
}

function resolve(document: Node, node: unknown): Node {
  let current = (node ?? {}) as Node;
  for (let depth = 0; typeof current['$ref'] === 'string' && depth < 10; depth++) {
    const path = (current['$ref'] as string).replace(/^#\//, '').split('/');
    current = path.reduce<Node>((at, key) => (at[key] ?? {}) as Node, document);
  }
  return current;
}

const refName = (node: unknown): string | undefined => {
  const ref = (node as Node | undefined)?.['$ref'];
  return typeof ref === 'string' ? ref.split('/').at(-1) : undefined;
};

function bodyOf(document: Node, operation: Node): string {
  const content = (resolve(document, operation['requestBody'])['content'] ?? {}) as Record<string, Node>;
  const media = content['application/json'] ?? Object.values(content)[0];
  if (!media) return '';
  const schema = resolve(document, media['schema']);
  const properties = Object.keys((schema['properties'] ?? {}) as Node);
  if (properties.length === 0 || properties.length > 6) return ` {${refName(media['schema']) ?? 'body'}}`;
  const required = new Set((schema['required'] ?? []) as string[]);
  return ` {${properties.map((name) => (required.has(name) ? name : `${name}?`)).join(', ')}}`;
}

function queryOf(document: Node, operation: Node): string {
  const names = ((operation['parameters'] ?? []) as unknown[])
    .map((parameter) => resolve(document, parameter))
    .filter((parameter) => parameter['in'] === 'query')
    .map((parameter) => String(parameter['name']));
  return names.length > 0 ? `?${names.join('&')}` : '';
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ').trim();

/** Every operation of the control API by tag, as `openapi/admin.yaml` has them: call, query, body and summary. */
export function controlApiMarkdown(): string {
  const document = adminDocument();
  const tags = (document['tags'] ?? []) as { name: string; description?: string }[];
  const rows = new Map<string, string[]>(tags.map((tag) => [tag.name, []]));
  for (const [path, item] of Object.entries((document['paths'] ?? {}) as Record<string, Node>)) {
    for (const method of METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation) continue;
      const tag = ((operation['tags'] ?? []) as string[])[0] ?? 'other';
      const call = `\`${method.toUpperCase()} ${path}${queryOf(document, operation)}${bodyOf(document, operation)}\``;
      rows.set(tag, [...(rows.get(tag) ?? []), `| ${call} | ${cell(String(operation['summary'] ?? ''))} |`]);
    }
  }
  return [...rows.entries()]
    .filter(([, list]) => list.length > 0)
    .map(([name, list]) => {
      const description = tags.find((tag) => tag.name === name)?.description ?? '';
      return [`### ${name}`, '', description, '', '| call | what it does |', '|---|---|', ...list, ''].join('\n');
    })
    .join('\n');
}

/** The operations `openapi/admin.yaml` defines, as `METHOD path`. */
export function controlApiOperations(): string[] {
  const document = adminDocument();
  return Object.entries((document['paths'] ?? {}) as Record<string, Node>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

// ---- the command line, from each command's --help

/** Each command's --help, by command: `start`'s, and every `<COMMAND>_HELP` of src/cli/help.ts. */
const HELP: Record<string, string> = {
  start: START_HELP,
  ...Object.fromEntries(
    Object.entries(HELP_TEXTS as Record<string, unknown>)
      .filter(([name, text]) => name.endsWith('_HELP') && typeof text === 'string')
      .map(([name, text]) => [name.slice(0, -'_HELP'.length).toLowerCase().replaceAll('_', '-'), String(text)]),
  ),
};

/** The order of `svc-emulator --help`; a command not named here comes after, by name. */
const ORDER = ['start', 'receive', 'conformance', 'store', 'proxy', 'import-recording', 'parity', 'verdict'];
const rank = (command: string): number => (ORDER.includes(command) ? ORDER.indexOf(command) : ORDER.length);

export const COMMANDS = Object.keys(HELP).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

/**
 * A command's --help as a text block. The connection cap's default depends on the machine's open-file limit, so
 * the page says how it is found rather than one machine's figure.
 */
export function helpMarkdown(command: string): string {
  const help = (HELP[command] ?? '').replace(/\(default \d+ here: [^)]*\)/, "(default: the open-file limit less a reserve; this machine's figure in --help)");
  return ['```text', help.trimEnd(), '```'].join('\n');
}

/** Every generated part: the page it sits in, its name, and what it holds. */
export function generatedParts(): { page: string; name: string; content: () => string }[] {
  return [
    { page: 'docs/reference/control-api.md', name: 'control API', content: controlApiMarkdown },
    ...COMMANDS.map((command) => ({ page: 'docs/reference/cli.md', name: `${command} --help`, content: () => helpMarkdown(command) })),
  ];
}
