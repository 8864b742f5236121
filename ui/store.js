// The dashboard's state, in one object made by `createState` and handed to every part by `start` (app.js): what
// the user chose and what was last read. Nothing here is read from a global; a part changes only its own fields.

/** A detail's slot: the chosen item's id, what was last read of it (null: nothing yet, or gone), and its row's version then. */
export const emptySlot = (id = null) => ({ id, item: null, version: null });

export function createState() {
  return {
    /** The admin token signed in with, or null when signed out. */
    token: null,
    /** The pending poll's timer. */
    timer: null,
    /**
     * The session whose world the page shows, by its id: every control call names it (api.js). Null: the world the
     * token reaches by itself (the default world with the emulator's token, its own session with a session's).
     */
    world: null,
    /** Signed in with a session's own admin token: that session's id (all the token reaches); null with the emulator's. */
    ownSession: null,
    /** The sessions as last listed (GET /_emulator/sessions), offered in the picker. */
    sessions: [],
    /** Counts the worlds shown since the page was opened: a read begun in another world is not shown in this one. */
    epoch: 0,
    ...worldFields(),
  };
}

/** Forgets everything read of the world shown, as if the page had just been opened (another world is shown next). */
export function resetWorld(state) {
  Object.assign(state, worldFields());
  state.epoch += 1;
}

/** What is read of one world, and chosen in it. */
function worldFields() {
  return {
    /** Polls since this world was shown: scenarios and sessions are read on every few (app.js). */
    ticks: 0,
    /** The world's clock as last read (ISO text), for the waits shown until a callback's next attempt. */
    clockNow: null,
    /** The session shown as last read (GET /_emulator/sessions/{id}), for its overview; null for the default world. */
    overview: null,
    /** The last poll failure announced, so the same one is not announced again on every poll. */
    lastError: '',
    /** The page shown of each list. */
    pages: { accounts: 1, tasks: 1, callbacks: 1, records: 1 },
    /** Every account id and model seen, offered in the filters. */
    accountIds: new Set(),
    models: new Set(),
    /**
     * The chosen account's ledger as held: replaced whole (never changed in place) whenever anything changes it, so
     * a read begun before can tell its answer is stale by identity.
     */
    ledger: { account: null, entries: [], count: 0 },
    /** The chosen account as last read (its balances, callback address and webhook secret). */
    account: emptySlot(),
    /** The account whose webhook secret is shown in full, if any. */
    secretShown: null,
    // The chosen task, call record and callback message (details.js), each a slot.
    task: emptySlot(),
    record: emptySlot(),
    delivery: emptySlot(),
  };
}
