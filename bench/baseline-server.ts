/**
 * The bench's reference points, started the same way as the emulator: a bare node:http server answering static
 * JSON (the ceiling), or with `express` as argument a bare Express 5 hello-world doing the same (the framework's
 * cost). Both answer `GET /v1/tasks/{id}` and `POST /v1/tasks` (any path, for node:http) with a task of the size
 * the emulator answers (about 350 bytes); Express parses the POST body as JSON first, as the emulator must. With
 * `sse <file>` it is a bare node:http event-stream server: every request, once its body is read, is answered
 * with the events in the file (a stream the emulator sent, recorded by bench/compare.ts) in one write.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

const task = {
  id: 'T261123090000ABCDEF',
  object: 'task',
  model: 'social-notes-data',
  status: 'queued',
  created_at: '2026-11-23T09:00:00+08:00',
  started_at: null,
  finished_at: null,
  input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true },
  points: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
  output: null,
  error: null,
  metadata: {},
};
const body = JSON.stringify(task);

function bareExpress(): express.Express {
  const app = express();
  app.get('/', (_req, res) => void res.json(task));
  app.get('/v1/tasks/:id', (req, res) => void res.json({ ...task, id: req.params.id }));
  app.post('/v1/tasks', express.json(), (req, res) => void res.json({ ...task, model: (req.body as { model?: string }).model ?? task.model }));
  return app;
}

function bareSse(events: string): ReturnType<typeof createServer> {
  return createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      res.end(events);
    });
  });
}

const server =
  process.argv[2] === 'express'
    ? createServer(bareExpress())
    : process.argv[2] === 'sse'
      ? bareSse(readFileSync(process.argv[3] ?? '', 'utf8'))
      : createServer((req, res) => {
        // The body is read before answering, so a POST costs what reading one costs.
        req.resume();
        req.once('end', () => {
          res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
          res.end(body);
        });
      });
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
// A clean exit on SIGTERM, so that node writes a --cpu-prof profile (bench/profile.ts).
process.on('SIGTERM', () => process.exit(0));
