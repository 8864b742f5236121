import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, endpointGroup } from '../errors/index.ts';

interface BodyParserError {
  type?: string;
  status?: number;
}

/**
 * Parses JSON bodies and turns every way a body can be wrong into a documented 4xx: malformed JSON and
 * non-object bodies are 400 bad_request, a wrong content type 415 (400 on text endpoints, whose rule is "a body
 * that is not a valid JSON object gives 400"), and an oversized body 413.
 */
export function jsonBody(limit: string): RequestHandler {
  const parse = express.json({ limit, strict: false, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) {
      req.body = undefined;
      next();
      return;
    }
    const textEndpoint = endpointGroup(req.originalUrl) !== 'general';
    if (!req.is('application/json') && !req.is('application/*+json')) {
      next(
        textEndpoint
          ? new ApiError('bad_request', 'The request body must be a JSON object sent as application/json.')
          : new ApiError('unsupported_media_type'),
      );
      return;
    }
    parse(req, res, (err?: unknown) => {
      if (err) next(bodyError(err as BodyParserError, limit));
      else next();
    });
  };
}

/** The body must be a JSON object; routes that take no body accept none or an empty object. */
export function requireObjectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('bad_request', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function bodyError(err: BodyParserError, limit: string): ApiError {
  switch (err.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', `The request body is larger than ${limit}.`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'The request body must be UTF-8 JSON.');
    default:
      return new ApiError('bad_request', 'The request body is not valid JSON.');
  }
}
