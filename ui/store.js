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
    /** Polls since signing in: scenarios are read on every SCENARIO_EVERY-th. */
    ticks: 0,
    /** The emulator's clock as last read (ISO text), for the waits shown until a callback's next attempt. */
    clockNow: null,
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
