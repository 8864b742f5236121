// The filter forms above the lists, and the account ids and models they offer.
/* global document, FormData */
import { $, h, renderInto } from './dom.js';

/** Each form and the list it filters (none: the ledger's, which sets how many entries a load reads). */
const FORMS = { 'account-filters': 'accounts', 'task-filters': 'tasks', 'record-filters': 'records', 'callback-filters': 'callbacks', 'ledger-filters': null };

/** A form's values, trimmed. */
export function formValues(form) {
  const values = {};
  for (const [name, value] of new FormData(form)) values[name] = String(value).trim();
  return values;
}

/** The values of each list's filter form. */
export const listFilters = () => ({
  accounts: formValues($('account-filters')),
  tasks: formValues($('task-filters')),
  records: formValues($('record-filters')),
  callbacks: formValues($('callback-filters')),
});

/** The account ids and models seen so far, offered as the filters' suggestions. */
export function renderDatalists(state) {
  const models = [...state.models].sort();
  renderInto($('models'), models.join(), () => models.map((model) => h('option', { value: model })));
  const accounts = [...state.accountIds].sort();
  renderInto($('account-ids'), accounts.join(), () => accounts.map((id) => h('option', { value: id })));
}

/** Empties the fields that name an account or a key: another world, whose accounts and keys are others, is shown. */
export function clearWorldFilters() {
  for (const field of document.querySelectorAll('input[list="account-ids"], #record-key, #verdict-key')) field.value = '';
}

/** Other filters, other pages: a changed form takes its list back to the first page (the ledger: read afresh). */
export function startFilters({ state, refresh }) {
  for (const [formId, list] of Object.entries(FORMS)) {
    const form = $(formId);
    const apply = () => {
      if (list) state.pages[list] = 1;
      else state.ledger = { ...state.ledger, entries: [] };
      refresh();
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (form.reportValidity()) apply();
    });
    form.addEventListener('change', () => {
      if (form.checkValidity()) apply();
    });
  }
}
