import { createRandom, pick } from '../random/index.ts';
import type { Random } from '../random/index.ts';

/**
 * A believable result of `social-notes-data` for each mode, as the JSON text of `output.text`. Repeatable: the
 * same task id and input give the same text.
 * @see reference "Model: social-notes-data" Result
 */
export function notesText(taskId: string, input: Record<string, unknown>, publishedAt: string): string {
  const random = createRandom(`${taskId}:${JSON.stringify(input)}`);
  const mode = String(input['mode'] ?? 'note');
  switch (mode) {
    case 'notes': {
      const page = Number(String(input['cursor'] ?? '').replace(/\D/g, '') || 0);
      return JSON.stringify({
        user_id: userId(input['user'], random),
        notes: Array.from({ length: 10 }, (_, i) => noteSummary(random, `${page * 10 + i + 1}`)),
        cursor: `cursor_${page + 1}`,
        has_more: page < 4,
      });
    }
    case 'profile':
      return JSON.stringify({
        user_id: userId(input['user'], random),
        nickname: pick(random, NICKNAMES),
        bio: pick(random, BIOS),
        followers: random.int(500_000),
        following: random.int(2_000),
        likes_and_collects: random.int(5_000_000),
        notes_count: random.int(800),
      });
    case 'search':
      return JSON.stringify({
        keyword: input['keyword'],
        sort: input['sort'],
        note_type: input['note_type'],
        page: input['page'],
        items: Array.from({ length: 20 }, (_, i) => noteSummary(random, `${i + 1}`)),
        has_more: Number(input['page']) < 50,
      });
    default:
      return JSON.stringify({
        note_id: noteId(input['note'], random),
        title: pick(random, TITLES),
        desc: pick(random, BIOS),
        type: random.int(3) === 0 ? 'video' : 'image',
        author: { user_id: hex(random, 24), nickname: pick(random, NICKNAMES) },
        liked_count: random.int(100_000),
        collected_count: random.int(50_000),
        comment_count: random.int(5_000),
        share_count: random.int(2_000),
        tags: [pick(random, TAGS), pick(random, TAGS)],
        published_at: publishedAt,
      });
  }
}

function noteSummary(random: Random, rank: string): Record<string, unknown> {
  return {
    rank: Number(rank),
    note_id: hex(random, 24),
    title: pick(random, TITLES),
    type: random.int(3) === 0 ? 'video' : 'image',
    liked_count: random.int(100_000),
  };
}

/** The id at the end of a link, or the id as given. */
function noteId(value: unknown, random: Random): string {
  const text = String(value ?? '');
  return /[0-9a-f]{24}/.exec(text)?.[0] ?? hex(random, 24);
}
const userId = noteId;

const hex = (random: Random, length: number): string => random.string(length, '0123456789abcdef');

const TITLES = [
  'Weekend hike with a view worth every step',
  'Five quick breakfasts for busy mornings',
  'My capsule wardrobe after one year',
  'A rainy day in the old town',
  'Desk setup tour: small room edition',
  'How I keep my plants alive in winter',
] as const;
const NICKNAMES = ['Little Maple', 'Morning Tea', 'Cloud Walker', 'Paper Crane', 'Sunny Side'] as const;
const BIOS = [
  'Notes on food, travel and the small things.',
  'Weekend photographer. Weekday coffee drinker.',
  'Sharing what works for me, one note at a time.',
] as const;
const TAGS = ['travel', 'food', 'outfit', 'home', 'study', 'photography'] as const;
