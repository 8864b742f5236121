/**
 * The bench's reference points, started the same way as the emulator: a bare node:http server answering static
 * JSON (the ceiling), or with `express` as argument a bare Express 5 app doing the same (the framework's cost).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

const task = { id: 'T261123090000ABCDEF', object: 'task', status: 'queued' };
const body = JSON.stringify(task);

const server =
  process.argv[2] === 'express'
    ? createServer(express().get('/', (_req, res) => void res.json(task)))
    : createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      });
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
