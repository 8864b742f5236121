import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Emulator } from '../../src/index.ts';
import { startAnswersWorld } from '../support/answers-world.ts';

// The answer of a text call reads as English sentences, still one token a word and still the same for the same
// request and seed; driven by the official SDKs.

let emulator: Emulator;
let openai: OpenAI;
let anthropic: Anthropic;

beforeEach(async () => {
  let base: string;
  let key: string;
  ({ emulator, base, key } = await startAnswersWorld({}, '10000.000'));
  openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0 });
});
afterEach(() => emulator.close());

const chat = (extra: Partial<Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'stream'>> = {}) => ({
  model: 'svc-text-lite',
  messages: [
    { role: 'system' as const, content: 'Answer in plain sentences.' },
    { role: 'user' as const, content: 'How should I plan a small garden?' },
  ],
  ...extra,
});
const contentOf = (completion: OpenAI.Chat.ChatCompletion): string => completion.choices[0]?.message.content ?? '';
const tokensIn = (text: string): number => text.match(/\S+/g)?.length ?? 0;
const sentencesOf = (text: string): string[] => text.split(/(?<=[.!?])\s+/).filter((s) => s !== '');
const ARTICLES = new Set(['the', 'a', 'an']);
const CONNECTIVES = new Set(['and', 'so', 'but', 'because', 'while', 'since']);

/** Sentences a reader can follow: the shape of each, and the word salad none of them may hold. */
function expectReadable(text: string): void {
  const sentences = sentencesOf(text);
  expect(sentences.length, text).toBeGreaterThan(0);
  for (const sentence of sentences) {
    // A capital, lower-case words (a comma after some), a full stop: "Often, the plan needs time."
    expect(sentence, text).toMatch(/^[A-Z][a-z]*,?( [a-z]+,?)*\.$/);
    expect(sentence, text).not.toMatch(/,\.$/);
    const words = sentence.toLowerCase().replace(/[,.]/g, '').split(' ');
    words.forEach((word, i) => {
      const next = words[i + 1];
      if (next === undefined) return;
      expect(next, `"${word} ${next}" in: ${sentence}`).not.toBe(word);
      if (ARTICLES.has(word)) expect(ARTICLES.has(next) || CONNECTIVES.has(next), `"${word} ${next}" in: ${sentence}`).toBe(false);
      if (word === 'a') expect(next, sentence).toMatch(/^[^aeiou]/);
      if (word === 'an') expect(next, sentence).toMatch(/^[aeiou]/);
    });
  }
  // Not one word over and over: a fair spread of words, none of them a fifth of the text.
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  if (words.length >= 20) expect(counts.size, text).toBeGreaterThanOrEqual(10);
  expect(Math.max(...counts.values()), text).toBeLessThanOrEqual(Math.max(2, words.length / 5));
}

it('answers in sentences: capitalised, a full stop at the end of each, words in English order, none over and over', async () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const content = contentOf(await openai.chat.completions.create(chat({ seed })));
    expect(tokensIn(content)).toBeGreaterThanOrEqual(24);
    expectReadable(content);
  }
  const json = contentOf(await openai.chat.completions.create(chat({ seed: 1, response_format: { type: 'json_object' } })));
  const { answer } = JSON.parse(json) as { answer: string };
  expect(tokensIn(answer)).toBe(8);
  expectReadable(answer);
});

it('writes a long answer in paragraphs of three to five sentences, 500 tokens exactly, echoing the prompt', async () => {
  const msg = await anthropic.messages.create(
    {
      model: 'svc-text-lite',
      max_tokens: 1000,
      system: 'Answer in plain sentences.',
      messages: [{ role: 'user', content: 'Describe the morning of a lighthouse keeper.' }],
    },
    { headers: { 'X-Emulator-Scenario': 'text-long' } },
  );
  const text = msg.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  expect(msg.usage.output_tokens).toBe(500);
  expect(tokensIn(text)).toBe(500);
  expectReadable(text);
  const paragraphs = text.split('\n\n');
  expect(paragraphs.length).toBeGreaterThan(3);
  for (const paragraph of paragraphs.slice(0, -1)) {
    expect(sentencesOf(paragraph).length, paragraph).toBeGreaterThanOrEqual(3);
    expect(sentencesOf(paragraph).length, paragraph).toBeLessThanOrEqual(5);
  }
  // One of the prompt's own words, never one of its common ones.
  expect(text).toMatch(/\b(morning|lighthouse|keeper)\b/);
  expect(text).not.toMatch(/\bdescribe\b/);
});

it('gives the same text for the same request and seed, streamed or not, and another for another seed', async () => {
  const first = contentOf(await openai.chat.completions.create(chat({ seed: 11 })));
  expect(contentOf(await openai.chat.completions.create(chat({ seed: 11 })))).toBe(first);
  let streamed = '';
  for await (const chunk of await openai.chat.completions.create({ ...chat({ seed: 11 }), stream: true })) streamed += chunk.choices[0]?.delta.content ?? '';
  expect(streamed).toBe(first);
  const others = await Promise.all([12, 13, 14].map(async (seed) => contentOf(await openai.chat.completions.create(chat({ seed })))));
  for (const other of others) expect(other).not.toBe(first);
});

it.each([1, 2, 3, 5, 16, 23])('keeps the token count exact when max_tokens %i cuts the answer: usage, words and streamed chunks agree', async (max) => {
  const full = contentOf(await openai.chat.completions.create(chat({ seed: 21 })));
  const cut = await openai.chat.completions.create(chat({ seed: 21, max_tokens: max }));
  expect(cut.choices[0]?.finish_reason).toBe('length');
  expect(cut.usage?.completion_tokens).toBe(max);
  expect(tokensIn(contentOf(cut))).toBe(max);
  expect(full.startsWith(contentOf(cut))).toBe(true);
  const chunks: string[] = [];
  for await (const chunk of await openai.chat.completions.create({ ...chat({ seed: 21, max_tokens: max }), stream: true })) {
    const piece = chunk.choices[0]?.delta.content;
    if (piece) chunks.push(piece);
  }
  expect(chunks).toHaveLength(max);
  expect(chunks.join('')).toBe(contentOf(cut));
});
