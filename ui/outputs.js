// A task's output where the page shows it: its files as links and a video's cover as a picture, then the JSON; and
// for a task that ended without one, what ended it, not a promise of output to come.
/* global location, URL */
import { h, jsonBlock, time } from './dom.js';

const ENDED = { failed: 'the task failed', canceled: 'the task was canceled' };

/** The output part of a task's payloads. */
export function outputOf(task) {
  if (task.output) return [filesOf(task), jsonBlock('Output', task.output, `${task.id}-output`)];
  const ended = ENDED[task.status];
  if (!ended) return h('p', { className: 'hint' }, 'Output: none yet.');
  const { error } = task;
  return h('p', { className: `ended ended-${task.status}` },
    h('strong', {}, `Output: none, ${ended}`),
    error ? [': ', h('code', {}, error.code), ` ${error.message}`] : '.');
}

/**
 * A link to a file of the emulator, in a new tab: /files serves each sandboxed (no script of it runs in this
 * origin), and `noopener` leaves the new tab no hold on this one.
 */
const fileLink = (url, label) => h('a', { href: url, target: '_blank', rel: 'noopener', className: 'url' }, label);

/** Shown as a picture only from this origin: the page's CSP loads images from nowhere else. */
function sameOrigin(url) {
  try {
    return new URL(url).origin === location.origin;
  } catch {
    return false;
  }
}

/** `video/mp4, 1280×720, 5 s, 20480 bytes`: what the record says of a file. */
function shapeOf(file) {
  const parts = [file.mime_type];
  if (file.width && file.height) parts.push(`${file.width}×${file.height}`);
  if (typeof file.duration === 'number') parts.push(`${file.duration} s`);
  if (typeof file.size === 'number') parts.push(`${file.size} bytes`);
  return parts.filter(Boolean).join(', ');
}

function filesOf(task) {
  const files = task.output.files ?? [];
  if (files.length === 0) return null;
  return h('ul', { className: 'files plain', 'aria-label': `Files of ${task.id}` }, files.map((file, i) => {
    const name = `${file.type ?? 'file'} ${i + 1}`;
    return h('li', {},
      h('strong', {}, name), ': ', fileLink(file.url, file.url),
      h('span', { className: 'hint' }, ` (${shapeOf(file)}`, file.expires_at ? [', expires ', time(file.expires_at)] : null, ')'),
      file.cover_url
        ? h('figure', { className: 'cover' },
            sameOrigin(file.cover_url) ? fileLink(file.cover_url, h('img', { src: file.cover_url, alt: `Cover of ${name}` })) : null,
            h('figcaption', {}, 'Cover: ', fileLink(file.cover_url, file.cover_url)))
        : null);
  }));
}
