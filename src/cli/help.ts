/**
 * The help of the commands other than start, apart from their code: the CLI loads a command's modules only when
 * that command runs (the conformance suite, say, has no place in an emulator's start-up).
 */
import { DEFAULT_BUDGET, DEFAULT_DB, START_DEFAULTS } from '../defaults/index.ts';

export const RECEIVE_HELP = `Usage: svc-emulator receive --secret whsec_... [options]

A local callback receiver: verifies each callback with the Standard Webhooks library, de-duplicates by
webhook-id and prints one line per request.

  --secret S         the account's signing secret (whsec_...; env SVC_EMULATOR_WEBHOOK_SECRET)
  --port P           port to listen on (default 4020; 0 picks a free one)
  --host H           address to listen on (default 127.0.0.1)
  --fail-first N     answer 500 to the first N attempts of every message, to watch retries
  --delay-ms M       answer after M milliseconds (over 10000 the emulator counts a timeout)
`;

export const CONFORMANCE_HELP = `Usage: svc-emulator conformance --base-url URL (--api-key KEY | --admin-url URL --admin-token T) [options]

Checks a deployment (the emulator or the real service) against the contract. Exit 0 when every selected check
passed, 1 when one failed (or, with --fail-on-skip, was skipped), 2 for a usage or configuration error or an
address that does not answer.

Against the emulator, give its control API: the suite runs as a fresh account it funds there (no budget
applies), makes a second account, reads the signing secret and fast-forwards the clock.

  --base-url URL          the deployment: scheme and host, no path (http://127.0.0.1:4010)
  --api-key KEY           a key of an account with some points (not needed with --admin-url)
  --admin-url URL         the emulator's control API (usually the same address as --base-url)
  --admin-token T         its token
  --second-api-key KEY    a key of another account (isolation checks; made for you with --admin-url)
  --only GLOB             run only checks whose id matches (repeatable; * matches anything)
  --skip GLOB             skip checks whose id matches (repeatable)
  --fail-on-skip          exit 1 when any check was skipped (for CI), listing them
  --budget POINTS         real points the suite may spend (default ${DEFAULT_BUDGET}); checks over it are skipped
  --junit FILE            write JUnit XML
  --json FILE             write the results as JSON
  --webhook-url URL       public address of the callback receiver (it must reach --webhook-listen)
  --webhook-secret S      the account's whsec_ secret, to verify callbacks
  --webhook-listen PORT   start the callback receiver on this local port
  --text-model ID         the text model to call (default svc-text-lite)
  --request-timeout MS    real time one request may take, its whole answer included (default 60000)

Callbacks go to the suite's receiver at http://127.0.0.1: an emulator started without --allow-insecure-webhooks
refuses that address, as the real service does, and the callback check is skipped saying so.
`;

export const PROXY_HELP = `Usage: svc-emulator proxy --upstream URL [options]

Listens like the emulator and forwards every /v1 request to URL (the real service, or an emulator) unchanged,
streams included. Every answer is checked against the contract as it passes, and each account's answers (one
per API key) together against the rules of behaviour (tasks only go forward, points settle at the price, list
pages, idempotent replays, text usage; the conformance suite's rules): each deviation is printed to stderr with
its check id and listed at GET /_emulator/proxy/deviations on the proxy's port.

  --upstream URL     the deployment to forward to (https://api.example.com; required)
  --port P           port to listen on (default 4011; 0 picks a free one)
  --host H           address to listen on (default 127.0.0.1)
  --json FILE        on exit (Ctrl-C or SIGTERM), write the deviations to FILE as JSON
  --junit FILE       on exit, write the checks as JUnit XML (one testcase per check id)
  --record DIR       record every exchange into DIR as HAR 1.2 (keys, signatures and secrets redacted)
  --keep-content     with --record: keep prompts and outputs (redacted by default, shape kept)
  --upstream-timeout-ms N
                     real time the upstream has to send its status line (default 60000; 0: no limit); then the
                     client gets 504 upstream_timeout and the deviation wire.upstream.timeout is listed. A stream
                     that has begun is never cut
  --relay-callbacks  pass task callbacks through the proxy and check them: each POST /v1/tasks goes on with its
                     webhook_url replaced by an address of the proxy's (ADDR/_proxy/callbacks/<token>); a callback
                     there is checked (callbacks.* rules) and passed on unchanged (headers, signature, raw bytes) to
                     the original address, whose answer goes back to the service. Answers are not changed (a task
                     does not show its webhook_url); a signed submission keeps its webhook_url, and callbacks
                     to the account's default address (set outside /v1) do not pass through the proxy
  --public-url URL   with --relay-callbacks: the proxy's address as the service reaches it (default: the address
                     it listens on). The real service takes only public https addresses; an emulator takes a local
                     one when started with --allow-insecure-webhooks
  --webhook-secret S with --relay-callbacks: the account's whsec_ secret, to check each callback's signature
                     (without it, signatures are checked only with --admin-url)
  --callback-deadline-ms N
                     with --relay-callbacks: ms of the deployment's clock a relayed task's callback has to come once
                     a read showed the task terminal (default 60000, the first attempt's window); later, the
                     deviation callbacks.arrival.deadline is listed, at the latest when the proxy stops
  --admin-url URL    an emulator's control API (usually the same address as --upstream), with --admin-token:
                     what the proxy sees is timed by the emulator's clock (GET /_emulator/clock), so a clock moved
                     by hand gives no false findings; with --relay-callbacks and no --webhook-secret, each callback
                     is checked with the secrets of the account whose key submitted the task (read, never shown)
  --admin-token T    the emulator's control API token (goes with --admin-url)
  --faults FILE      inject faults (YAML or JSON, the body of POST /_emulator/faults): an error or a reset is the
                     proxy's own answer and never reaches the service; latency, cut and trickle shape the
                     service's answer (its recording is marked); GET /_emulator/proxy/faults lists them with hits

A recording becomes scenarios and text fixtures with svc-emulator import-recording DIR, and is replayed against
an emulator, answer by answer, with svc-emulator parity DIR --base-url URL.
`;

export const VERDICT_HELP = `Usage: svc-emulator verdict --base-url URL --admin-token T [--key K] [--account A] [--junit FILE] [--json FILE]

Judges how a client behaved against a running emulator, from every request of its key and every answer of its
callback receiver the emulator saw since its last reset: retries, idempotency keys, backoff, polling, and a
receiver's answers to callbacks, forged and stale deliveries and duplicates (GET /_emulator/verdict). Prints one
line per check: pass, FAIL with its reason and evidence (request ids, webhook-ids), or n/a when the run never
exercised it. Exit 0 when no check failed, 1 when one did, 2 for a usage error or an emulator that does not answer.

  --base-url URL     the emulator (scheme and host)
  --admin-token T    its control API token (or SVC_EMULATOR_ADMIN_TOKEN)
  --key K            judge only this API key's requests
  --account A        judge only this account's requests and callbacks
  --junit FILE       write JUnit XML (a check not exercised is a skipped test case)
  --json FILE        write the verdict as JSON
`;

export const RECEIVER_CHECK_HELP = `Usage: svc-emulator receiver-check --url URL --secret whsec_... [options]

Sends a webhook receiver (yours, on staging or local) a battery of real callbacks, signed as the service signs
them, and judges each answer, one check per rule: every event type acknowledged in time; a retry acknowledged;
forged signatures, signatures over other bytes, missing headers, timestamps more than 5 minutes off, unknown
signature versions and cut bodies refused; both signatures of a key rotation taken; a slow body, a task at the
documented limits and callbacks out of order acknowledged. The rules are the verdict's receiver checks. Prints one
line per check: pass, FAIL with its reason and the deliveries that show it (webhook-id, status, time), or n/a
when it could not be judged. Exit 0 when no check failed, 1 when one did, 2 for a usage error or a receiver that
cannot be reached (the run stops at the first connection that fails). Callbacks go to --url only; redirects are
not followed; no report or line shows a secret.

  --url URL             the receiver's address (http:// or https://, with its path)
  --secret S            the account's signing secret, as the receiver holds it (whsec_...; env
                        SVC_EMULATOR_WEBHOOK_SECRET)
  --rotated-secret S    the other secret of a key rotation: deliveries signed with both must be taken (default:
                        a fresh secret stands in for it)
  --effects-url URL     the receiver's test hook that answers how many times it acted on a task (a JSON number or
                        {"count": N}; {task_id} in URL is replaced, else ?task_id= is added): a retried message
                        must be acted on once (receiver.acts-once; n/a without it)
  --only IDS            run only these checks (ids or globs with *, comma-separated or repeated);
                        receiver.acknowledges, which judges the time of every answer, runs with any that needs it
  --timeout-ms N        real ms the receiver has to answer each delivery (default ${START_DEFAULTS.webhookTimeoutMs}, the reference's)
  --junit FILE          write JUnit XML (one testcase per check; n/a is a skipped one)
  --json FILE           write the report as JSON (the same as checkReceiver() returns)
  --dry-run             print what would be sent, and send nothing
`;

export const IMPORT_RECORDING_HELP = `Usage: svc-emulator import-recording DIR [--out OUTDIR] [--match request|last-user]

Turns a recording of the proxy (DIR: a folder of .har files, or one .har file) into scenario files the emulator
replays, and prints what it imported, what it skipped and why, and how to start the emulator with them:

  recorded-tasks.yaml   one scenario per recorded task that finished, named recorded-<task id> (lower case):
                        its queue and processing seconds, how it ended (a failure's code; a cancel), its output's
                        shapes (file kinds and dimensions, duration, usage; the text only when content was kept)
  recorded-text.yaml    one scenario per distinct recorded text request: the same request (any key order,
                        streamed or not) gets the recorded answer, chunk by chunk, with its usage and pacing;
                        with --match last-user, any call of the same format and model whose last user message
                        is the recorded one

A recording made with --keep-content matches tasks by model and input; without it, choose a task's scenario
with the header X-Emulator-Scenario: recorded-<task id>, and text answers replay as xxx text.

  --out OUTDIR       where to write the files (default: DIR/scenarios, beside a .har file given alone)
  --match MODE       how a recorded text answer is matched: request (default), the whole request by its
                     fingerprint, so any change to it (a temperature, a field) misses; last-user, the format,
                     the model and the last user message (match.last_user equals), so the answer survives a
                     change elsewhere in the request (needs a recording made with --keep-content)
`;

export const PARITY_HELP = `Usage: svc-emulator parity DIR --base-url URL [options]

Replays a recording (a .har file, or a directory of them, as svc-emulator proxy --record writes them) against a
deployment, normally the emulator, in recorded order, and compares each answer with the recorded one: status,
headers, and the body's shape and values. Ids, times, generated text, token counts, file addresses and whatever
the recording redacted are compared on presence and type only; everything else exactly. Prints, per endpoint
and per check, how many exchanges agreed and differed, then every difference with its JSON path and a curl line.
Exit 0 when every check agrees, 1 when one differs, 2 for a usage error, an unreadable recording or a deployment
that cannot be reached.

  --base-url URL     the deployment to replay against (http://127.0.0.1:4010; required)
  --api-key KEY      the key, sent where the recording had one (default: the emulator's demo key)
  --admin-token T    the emulator's control API token: its clock is moved by the recorded time between
                     exchanges, so each task is polled at the age it had when recorded
  --scenarios MODE   recorded: name the scenario import-recording made of each task (recorded-<task id>) and
                     text call (recorded-text-<fingerprint>) with X-Emulator-Scenario, where the emulator has it
                     (needs --admin-token); none (default): as recorded
  --json FILE        write the report as JSON
  --junit FILE       write the report as JUnit XML (a testsuite per endpoint, a testcase per check)
`;

export const STORE_HELP = `svc-emulator store: look after a store file

Usage: svc-emulator store <check|backup|restore|export> [--db PATH] [FILE]

  check            SQLite's full integrity check and every balance against the ledger; exit 0 when sound, 1 when not
  backup FILE      a consistent copy as of now (works while an emulator runs on the store)
  restore FILE     replace the store with a backup, once the backup passes the check (refused while one runs)
  export FILE      the store as a state document (start another emulator from it with --import FILE)

  --db PATH        the store (default ${DEFAULT_DB})`;

/** The commands `svc-emulator <command>` knows (src/cli/main.ts), for the "did you mean" of a mistyped one. */
export const COMMANDS = ['start', 'receive', 'conformance', 'store', 'proxy', 'import-recording', 'parity', 'verdict', 'receiver-check', 'help'];
