import { request } from 'node:http';

/**
 * A streamed POST read event by event, and how it ended: whole, or aborted mid-way (what a cut looks like from
 * the client, which an SDK would turn into an error and hide the events that came before).
 */
export function rawEvents(
  base: string,
  key: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ events: string[]; ended: 'end' | 'aborted' }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      const done = (ended: 'end' | 'aborted') => resolve({ events: text.split(/(?<=\n\n)/).filter((e) => e !== ''), ended });
      res.on('end', () => done('end'));
      res.on('aborted', () => done('aborted'));
      res.on('error', () => done('aborted'));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
