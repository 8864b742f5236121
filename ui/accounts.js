// Accounts: the list with their points, and the chosen one (whose ledger is shown below it) with its callback
// address and webhook secret, masked until asked for.
import { copyText } from './actions.js';
import { readHeld, readOrNull } from './details.js';
import { $, emptyRow, fact, h, invalidate, renderInto, time } from './dom.js';
import { reveal, setLink } from './links.js';
import { emptySlot } from './store.js';

/** `whsec_…abcd`: enough to tell secrets apart, not enough to sign with. */
export const maskSecret = (secret) => `${secret.slice(0, 6)}…${secret.slice(-4)}`;

export function createAccounts({ state, api, refresh, announce, actions }) {
  function render(list) {
    const accounts = list.rows;
    for (const a of accounts) state.accountIds.add(a.id);
    if (!state.ledger.account && accounts[0]) state.ledger.account = accounts[0].id;
    $('accounts-caption').textContent = `Accounts and their points, oldest first: ${accounts.length} on page ${list.page}`;
    renderInto($('accounts-body'), JSON.stringify([list.versions, state.ledger.account]), () =>
      accounts.length === 0
        ? emptyRow(6, 'No accounts.')
        : accounts.map((a) =>
            h(
              'tr',
              { className: a.id === state.ledger.account ? 'chosen' : undefined },
              h('th', { scope: 'row' }, h('code', {}, a.id)),
              h('td', { className: 'num' }, a.available),
              h('td', { className: 'num' }, a.frozen),
              h('td', { className: 'num' }, a.charged),
              h('td', { className: 'url' }, a.webhook_url ?? '–'),
              h(
                'td',
                {},
                h(
                  'button',
                  { type: 'button', 'aria-pressed': String(a.id === state.ledger.account), dataset: { focus: `ledger-${a.id}` }, onClick: () => choose(a.id) },
                  `Ledger of ${a.id}`,
                ),
              ),
            ),
          ),
    );
    actions.listPager('accounts', list, 'Previous accounts', 'Next accounts');
  }

  function choose(id, { fromLink = false } = {}) {
    if (state.ledger.account !== id) state.ledger = { account: id, entries: [], count: 0 };
    invalidate($('accounts-body'));
    setLink('account', id);
    if (fromLink) reveal('account-heading', true);
    refresh();
  }

  /** The chosen account as it is now: from the page shown when it is there unchanged, else read by id. */
  async function refreshChosen(list) {
    const id = state.ledger.account;
    if (!id) {
      $('account-heading').textContent = 'No account chosen';
      renderInto($('account-facts'), 'none', () => []);
      return;
    }
    if (state.account.id !== id) state.account = emptySlot(id);
    const account = await readHeld(state, 'account', list, {
      keyOf: (a) => a.id,
      // The list's rows are the account as GET /_emulator/accounts/{id} shows it.
      read: (wanted) => list.rows.find((a) => a.id === wanted) ?? readOrNull(api, `/_emulator/accounts/${encodeURIComponent(wanted)}`),
    });
    if (account === undefined) return;
    $('account-heading').textContent = `Account ${id}`;
    renderAccount(id, account);
  }

  function renderAccount(id, account) {
    const shown = state.secretShown === id;
    renderInto($('account-facts'), JSON.stringify([id, account, shown]), () =>
      account
        ? [
            fact('Available', account.available),
            fact('Frozen', account.frozen),
            fact('Charged', account.charged),
            fact('Callback address', account.webhook_url ? h('span', { className: 'url' }, account.webhook_url) : 'none'),
            fact('Webhook secret', secretOf(id, account.webhook_secret, shown)),
            account.previous_webhook_secrets.length > 0
              ? fact(
                  'Earlier secrets still signing',
                  account.previous_webhook_secrets.map((p, i) => [i > 0 ? ', ' : '', h('code', {}, maskSecret(p.secret)), ' until ', time(p.expires_at)]),
                )
              : null,
            fact('Created', time(account.created_at)),
          ]
        : fact('Account', 'not found: no such account (a reset, or a wrong link?)'),
    );
  }

  /** The secret, masked unless shown, with the buttons to show it and to copy it whole. */
  function secretOf(id, secret, shown) {
    const code = h('code', { className: 'secret', 'aria-label': `Webhook secret of ${id}` }, shown ? secret : maskSecret(secret));
    const toggle = () => {
      state.secretShown = shown ? null : id;
      renderAccount(id, state.account.item);
    };
    const copy = async () => {
      if (await copyText(secret, code)) announce(`Copied the webhook secret of ${id}.`);
      else announce(`Could not reach the clipboard: ${shown ? 'the secret is selected, copy it' : 'show the secret and copy it'} with your keyboard.`, true);
    };
    return [
      code,
      ' ',
      h('button', { type: 'button', 'aria-pressed': String(shown), dataset: { focus: 'secret-show' }, onClick: toggle }, 'Show secret'),
      ' ',
      h('button', { type: 'button', dataset: { focus: 'secret-copy' }, onClick: copy }, 'Copy secret'),
    ];
  }

  return { render, choose, refreshChosen };
}
