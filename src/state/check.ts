import type { Contract } from '../contract/index.ts';
import { ApiError, invalidParams } from '../errors/index.ts';
import type { ErrorDetail } from '../errors/index.ts';
import type { StateDocument } from './document.ts';
import { stateRuleDetails } from './rules.ts';

/** At most this many details in a refusal: a document with a thousand bad records is refused as well by a few. */
const MOST_DETAILS = 20;

/**
 * Checks a state document from outside (`POST /_emulator/state/import`, `--import FILE`): every field against
 * openapi/admin.yaml StateDocument, then the rules a schema cannot say (src/state/rules.ts). Returns it checked,
 * or throws 422 `invalid_params` naming the fields, before anything stored is touched. An imported document is
 * untrusted input: a file record's name, say, becomes a path of the blob store.
 * @see README "Store": state snapshots
 */
export function checkStateDocument(contract: Pick<Contract, 'body'>, document: unknown): StateDocument {
  let state: StateDocument;
  try {
    state = contract.body<StateDocument>('admin', 'StateDocument', document);
  } catch (err) {
    if (err instanceof ApiError && err.details) throw refusal(err.details);
    throw err;
  }
  const details = stateRuleDetails(state);
  if (details.length > 0) throw refusal(details);
  return state;
}

function refusal(details: ErrorDetail[]): ApiError {
  const shown = details.slice(0, MOST_DETAILS);
  const error = invalidParams(shown);
  if (details.length <= MOST_DETAILS) return error;
  return new ApiError('invalid_params', `${error.message} (the first ${MOST_DETAILS} of ${details.length} problems)`, shown);
}

/** One line for a refusal: its first problem, and how many more there are. */
export function refusalLine(err: ApiError): string {
  const [first, ...rest] = err.details ?? [];
  if (!first) return err.message;
  const line = first.field ? `${first.field} ${first.message}` : `the document ${first.message}`;
  return rest.length > 0 ? `${line} (and ${rest.length} more)` : line;
}
