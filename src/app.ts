import express from 'express';
import type { Express } from 'express';
import {
  adminAuth,
  adminCallsRoutes,
  adminFaultsRoutes,
  adminVerdictRoutes,
  adminSessionsRoutes,
  unknownSession,
  adminHealthRoutes,
  adminKeysRoutes,
  adminRoutes,
  adminTasksRoutes,
  adminWebhooksRoutes,
  answerEnded,
  apiKeyAuth,
  callRecords,
  readUnreadBody,
  documentedMethods,
  errorHandler,
  exceptOptions,
  faultStep,
  fileServingRoutes,
  hostCheck,
  jsonBody,
  modelPermission,
  rateLimit,
  requestSigning,
  parseJsonBody,
  isTextEndpoint,
  readBody,
  requestIds,
  UPLOAD_BODY_LIMIT,
  modelsRoutes,
  optionsTo,
  ROUTING,
  series,
  tasksRoutes,
  textRoutes,
  uiRoutes,
  unrouted,
  uploadRoutes,
  dispatch,
  mountedStraight,
  routeTable,
} from './http/index.ts';
import type { AppDeps } from './http/index.ts';

/** The settings of every app: Express reads them through `req.app` and `res.app` (the query parser, ETags, …). */
function configured(app: Express): Express {
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Paths are exact, as the documents name them: a case variant or a trailing slash is an unknown path (404).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  return app;
}

/**
 * The request and response prototypes of every app in the process (the default world's and every session's).
 * Express gives each app its own pair, whose only difference is `app`, through which it reads settings; here `app`
 * is one app with the same settings. So a request born with them (expressBorn, at listen) keeps them whichever
 * world takes it: changing an object's prototype per request made every request V8 had seen slow (the default
 * world's /v1 requests took half the time once none did; a session's took twice the default world's).
 */
const SHARED = configured(express());

/**
 * Composition root of the HTTP app: every collaborator comes in through `deps`; it never listens, so tests
 * import it directly.
 */
export function createApp(deps: AppDeps): Express {
  const app = configured(express());
  // Every app's requests and responses share one pair of prototypes (see SHARED): a request another world's app
  // takes keeps the prototypes it was born with (expressBorn) instead of having them changed.
  app.request = SHARED.request;
  app.response = SHARED.response;
  // Internal, for bench/ only, never a user option: SVC_EMULATOR_BENCH_WITHOUT_FAULTS=1 builds the /v1 path as it
  // was before run-time faults and the verdict (no fault step, no client-log feed), so that `npm run bench`'s
  // `faults` section can show in one run what the two cost while no rule is loaded.
  const withoutFaults = process.env['SVC_EMULATOR_BENCH_WITHOUT_FAULTS'] === '1';
  // The request's id first; when its answer ends, its call record (/v1) and its log line.
  const withIds = requestIds(deps, answerEnded(deps, { clientLog: !withoutFaults }));
  app.use(withIds);
  // First on every path, before anything reads the request: it must be addressed to a host this emulator answers
  // (the guard against DNS rebinding).
  const allowedHost = hostCheck(deps.config);

  // A request no route takes: 405 with Allow on a path the documents name (their methods are the path's), else 404.
  const noRoute = unrouted(documentedMethods([deps.contract.documents.service, deps.contract.documents.admin]));

  // The checks every /v1 request passes, as one step (a router layer per check costs a GET more than some of the
  // checks do). The order of checks: host, authentication, signing, rate, model permission, validation, quota,
  // points, concurrency (the last three where work is admitted).
  const checks = series(
    // Every /v1 request leaves a call record, those refused by the host check or authentication included.
    callRecords(deps),
    allowedHost,
    // Authentication comes before reading the body: a bad key is refused whatever it sent.
    apiKeyAuth(deps.db),
    readBody((req) => (req.path === '/files' ? UPLOAD_BODY_LIMIT : isTextEndpoint(req) ? deps.config.textBodyLimit : deps.config.bodyLimit)),
    requestSigning(deps),
    rateLimit(deps),
    // Only POST /v1/files takes multipart/form-data; on every other endpoint it is a wrong content type.
    parseJsonBody({ takesMultipart: (req) => req.method === 'POST' && req.path === '/files' }),
    modelPermission,
    // Express would answer OPTIONS itself, from one router's methods; here it is a wrong method like any other.
    optionsTo(noRoute),
    // Last: a rule may match the key, the account and the body's model; nothing is admitted before it.
    ...(withoutFaults ? [] : [faultStep(deps)]),
  );
  // The routes of /v1 in a table, not a Router: every /v1 request passes the checks and one route, and a Router
  // between the two was a good part of a GET's cost. Their paths do not overlap, so their order decides nothing.
  const v1 = routeTable();
  tasksRoutes(deps, v1);
  textRoutes(deps, v1);
  uploadRoutes(deps, v1);
  modelsRoutes(deps, v1);
  // With --record-content, a request refused before its body was read has it read for its record first.
  const api = dispatch(checks, v1, noRoute, deps.config.recordContent ? readUnreadBody : null);
  app.use('/v1', api);
  // Every other path (the files, the dashboard, the control API, unknown paths): /v1 answers all of its own.
  app.use(allowedHost);

  app.use('/files', fileServingRoutes(deps));

  // The dashboard's page holds no data, so it is served before the control API's token check.
  app.use('/_emulator/ui', uiRoutes(deps.signIns, deps.config.adminTokens, noRoute));

  const admin = express.Router(ROUTING);
  // OPTIONS goes past it to the token check, as every other method the health path does not take.
  admin.use(exceptOptions(adminHealthRoutes(deps)));
  // The token comes before reading the body: a request without it is refused (401) whatever it sent.
  admin.use(adminAuth(deps.config.adminTokens));
  admin.use(unknownSession);
  // POST /_emulator/scenarios takes a scenario file's YAML as it is, as well as JSON.
  admin.use(jsonBody(deps.config.bodyLimit, { takesYaml: (req) => req.method === 'POST' && req.path === '/scenarios' }));
  admin.use(optionsTo(noRoute));
  const adminDeps = { contract: deps.contract, control: deps.control };
  admin.use(adminRoutes(adminDeps));
  admin.use(adminKeysRoutes(adminDeps));
  admin.use(adminTasksRoutes(adminDeps));
  admin.use(adminWebhooksRoutes(adminDeps));
  admin.use(adminCallsRoutes(adminDeps));
  admin.use(adminFaultsRoutes(adminDeps));
  admin.use(adminVerdictRoutes(adminDeps));
  admin.use(adminSessionsRoutes(deps.sessions));
  admin.use(noRoute);
  app.use('/_emulator', admin);

  app.use(noRoute);
  const answerError = errorHandler(deps.log);
  app.use(answerError);
  // The busiest paths by far: straight to their handler, as mounted above, without the app router before them.
  mountedStraight(app, '/v1', withIds, api, answerError);
  return app;
}
