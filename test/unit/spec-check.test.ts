import { expect, it } from 'vitest';
import { responseProblems } from '../support/spec-check.ts';

// The response checker guards every other test; these show it can fail, and on what.

const REQUEST_ID = 'req_0123456789abcdefghijklmn';
const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': REQUEST_ID };
const task = {
  id: 'T261123090000ABCDEF',
  object: 'task',
  model: 'social-notes-data',
  status: 'queued',
  created_at: '2026-11-23T09:00:00+08:00',
  started_at: null,
  finished_at: null,
  input: { mode: 'note', note: 'n', agree: true },
  points: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
  output: null,
  error: null,
  metadata: {},
};

it('passes a task that matches the document', () => {
  expect(responseProblems('service', 'GET', `/v1/tasks/${task.id}`, { status: 200, headers: json, body: task })).toEqual([]);
});

it.each([
  ['points as a float number', { ...task, points: { ...task.points, frozen: 40 } }],
  ['points with two decimals', { ...task, points: { ...task.points, frozen: '40.00' } }],
  ['a UTC time', { ...task, created_at: '2026-11-23T01:00:00Z' }],
  ['a task id of the wrong form', { ...task, id: 'task_1' }],
  ['an unknown status', { ...task, status: 'running' }],
  ['a missing metadata', Object.fromEntries(Object.entries(task).filter(([k]) => k !== 'metadata'))],
])('finds %s', (_name, body) => {
  expect(responseProblems('service', 'GET', `/v1/tasks/${task.id}`, { status: 200, headers: json, body })).not.toEqual([]);
});

it('finds an answer without X-Request-Id', () => {
  const headers = { 'content-type': 'application/json' };
  expect(responseProblems('service', 'GET', `/v1/tasks/${task.id}`, { status: 200, headers, body: task })).not.toEqual([]);
});

it('finds a status the operation does not document', () => {
  const body = { error: { code: 'internal_error', message: 'x', request_id: REQUEST_ID } };
  expect(responseProblems('service', 'GET', '/v1/tasks', { status: 418, headers: json, body })).toEqual([
    expect.stringContaining('status 418 is not documented'),
  ]);
});

it('finds an error in the wrong shape for its endpoint group', () => {
  const general = { error: { code: 'invalid_api_key', message: 'x', request_id: REQUEST_ID } };
  expect(responseProblems('service', 'POST', '/v1/messages', { status: 401, headers: json, body: general })).not.toEqual([]);
  expect(responseProblems('service', 'POST', '/v1/chat/completions', { status: 401, headers: json, body: general })).not.toEqual([]);
});

it('holds answers to paths outside the document to an error body with a request id', () => {
  const body = { error: { code: 'not_found', message: 'x', request_id: REQUEST_ID } };
  expect(responseProblems('service', 'GET', '/v1/nowhere', { status: 404, headers: json, body })).toEqual([]);
  expect(responseProblems('service', 'GET', '/v1/nowhere', { status: 200, headers: json, body })).not.toEqual([]);
  expect(responseProblems('admin', 'GET', '/_emulator/nowhere', { status: 404, headers: json, body: {} })).not.toEqual([]);
});
