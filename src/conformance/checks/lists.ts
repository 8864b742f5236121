import { CheckSkipped } from '../client.ts';
import type { Exchange } from '../../wire/index.ts';
import type { Client } from '../client.ts';
import type { Check, CheckContext } from '../types.ts';
import { limitedClient } from './control.ts';
import { body, needAnswer, notesInput, scenario, submitAndCancel } from './shared.ts';
import type { TaskBody } from './shared.ts';

const QUEUED = scenario('timeout-in-queue');
/** "List page size: default 20" ("GET /v1/tasks (list)", "Limits"). */
const DEFAULT_LIMIT = 20;

interface ListBody {
  data: (TaskBody & { model?: unknown })[];
  page: number;
  limit: number;
  has_more: boolean;
}

const idOf = (exchange: Exchange): string => body<TaskBody>(exchange).id;

async function list(client: Client, query: string): Promise<{ listed: Exchange; page: ListBody }> {
  const listed = await client.request('GET', `/v1/tasks${query}`);
  needAnswer(listed);
  const page = body<ListBody>(listed);
  return { listed, page: { ...page, data: Array.isArray(page.data) ? page.data : [] } };
}

/**
 * An account with more tasks than a default page holds: with the control API one of its own, given 21 tasks
 * (queued and canceled, so refunded), whatever else the run did; without it the suite's, if it has them already.
 */
async function accountOfMoreThanAPage(ctx: CheckContext): Promise<Client> {
  if (!ctx.admin) {
    const { page } = await list(ctx.api, `?limit=${DEFAULT_LIMIT + 1}`);
    if (page.data.length > DEFAULT_LIMIT) return ctx.api;
    throw new CheckSkipped(`the account has ${page.data.length} tasks; the default page size shows only beyond ${DEFAULT_LIMIT} (run with the control API, --admin-url, or as an account with more tasks)`);
  }
  const client = await limitedClient(ctx, {});
  for (let n = 0; n <= DEFAULT_LIMIT; n += 1) {
    const submitted = await client.request('POST', '/v1/tasks', { body: notesInput(`page-size-${n}`), headers: QUEUED });
    needAnswer(submitted);
    needAnswer(await client.request('POST', `/v1/tasks/${idOf(submitted)}/cancel`));
  }
  return client;
}

export const listChecks: Check[] = [
  {
    id: 'tasks.list.model-filter',
    group: 'tasks',
    title: 'the list filtered by model holds only tasks of that model, its newest first, and none of another model',
    cost: 80,
    async run(ctx) {
      const notes = idOf((await submitAndCancel(ctx, notesInput('model-filter'), QUEUED)).submitted);
      const avatar = { model: 'avatar-photo', input: { image: 'https://cdn.example.com/conformance/portrait.jpg', audio: 'https://cdn.example.com/conformance/speech.mp3', quality: 'fast' } };
      const photo = idOf((await submitAndCancel(ctx, avatar, QUEUED)).submitted);
      for (const [model, mine, other] of [['avatar-photo', photo, notes], ['social-notes-data', notes, photo]] as const) {
        const { listed, page } = await list(ctx.api, `?model=${model}&limit=100`);
        const others = page.data.filter((t) => t.model !== model).map((t) => `${t.id} (${String(t.model)})`);
        ctx.expect(others.length === 0, `every item is of model ${model}`, listed, model, others);
        ctx.expect(page.data[0]?.id === mine, `the newest ${model} task comes first`, listed, mine, page.data[0]?.id);
        ctx.expect(!page.data.some((t) => t.id === other), `the task of the other model is not listed`, listed, `no ${other}`, other);
      }
    },
  },
  {
    id: 'tasks.list.default-page-size',
    group: 'tasks',
    title: 'without limit the list pages 20 tasks (limit 20, has_more while more remain), and page 2 goes on from the 21st',
    cost: 0,
    async run(ctx) {
      const client = await accountOfMoreThanAPage(ctx);
      const all = await list(client, '?limit=21');
      const ids = all.page.data.map((t) => t.id);
      const { listed, page } = await list(client, '');
      ctx.expect(page.limit === DEFAULT_LIMIT, `limit ${DEFAULT_LIMIT} when none is sent`, listed, DEFAULT_LIMIT, page.limit);
      ctx.expect(page.data.length === DEFAULT_LIMIT, `${DEFAULT_LIMIT} items (the account has more)`, listed, DEFAULT_LIMIT, page.data.length);
      ctx.expect(page.has_more, 'has_more (the account has more)', listed, true, page.has_more);
      const first = page.data.map((t) => t.id);
      ctx.expect(first.join() === ids.slice(0, DEFAULT_LIMIT).join(), `the ${DEFAULT_LIMIT} newest tasks, as limit=21 lists them`, listed, ids.slice(0, DEFAULT_LIMIT), first);
      const second = await list(client, '?page=2');
      ctx.expect(second.page.page === 2 && second.page.limit === DEFAULT_LIMIT, `page 2, limit ${DEFAULT_LIMIT}`, second.listed, { page: 2, limit: DEFAULT_LIMIT }, { page: second.page.page, limit: second.page.limit });
      ctx.expect(second.page.data[0]?.id === ids[DEFAULT_LIMIT], 'page 2 starts with the 21st task', second.listed, ids[DEFAULT_LIMIT], second.page.data[0]?.id);
    },
  },
];
