// The overview's search box: one id, typed or pasted (or a dashboard address naming one), opens that task, call
// record, callback message or account at once; an id the world shown does not hold is said so.
import { readOrNull } from './details.js';
import { $ } from './dom.js';
import { linkOf } from './links.js';

/** What each kind of id is, how it starts, and where the control API reads it (to tell an unknown one). */
const KINDS = [
  { kind: 'task', word: 'task', pattern: /^T\d/, path: '/_emulator/tasks/' },
  { kind: 'record', word: 'call record', pattern: /^req_/, path: '/_emulator/records/' },
  { kind: 'delivery', word: 'callback message', pattern: /^msg_/, path: '/_emulator/webhooks/deliveries/' },
  { kind: 'account', word: 'account', pattern: /^acct_/, path: '/_emulator/accounts/' },
];
const ACCOUNT = KINDS[3];

/** What the box holds: an id, or an address of the dashboard (`…/_emulator/ui#task=T…`) for the id it names. */
function wanted(text) {
  const hash = text.indexOf('#');
  const link = hash === -1 ? null : linkOf(text.slice(hash));
  if (link) return { id: link.id, spec: KINDS.find((k) => k.kind === link.kind) };
  // Accounts made through the control API may be given any id: an id of no other kind is looked for among them.
  return { id: text, spec: KINDS.find((k) => k.pattern.test(text)) ?? ACCOUNT };
}

/** `choosers` opens an item by kind (app.js); the box is the form #find, its field #find-id. */
export function createSearch({ api, announce }, choosers) {
  async function find(text) {
    const { id, spec } = wanted(text);
    const found = await readOrNull(api, `${spec.path}${encodeURIComponent(id)}`);
    if (!found) {
      const known = KINDS.find((k) => k.pattern.test(id));
      announce(
        known
          ? `No ${spec.word} ${id} in the world shown.`
          : `Nothing has the id ${id} in the world shown: task ids start with T, request ids with req_, message ids with msg_, account ids with acct_.`,
        true,
      );
      return;
    }
    choosers[spec.kind](id, { fromLink: true });
    announce(`Found ${spec.word} ${id}.`);
  }

  function start() {
    const form = $('find');
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const text = $('find-id').value.trim();
      if (!text) return;
      try {
        await find(text);
      } catch (error) {
        announce(`Could not look for ${text}: ${error.message}`, true);
      }
    });
  }

  return { start };
}
