/**
 * The task models' parameter tables as this project states them: field by field, the type, whether it is
 * required, its values, default, range and lengths, as the service's published reference gives them. The tests
 * of openapi-document.test.ts hold the OpenAPI document to these rows, so the document cannot drift from the
 * tables without a test saying so; the rows are the project's own words and live in the repository.
 */
export type ParameterType = 'string' | 'integer' | 'boolean' | 'file address' | 'array of file addresses' | 'array of strings';

export interface ParameterRow {
  field: string;
  type: ParameterType;
  required: boolean;
  /** The allowed values of a string field, in the table's order. */
  values?: string[];
  /** A boolean field that must have this value. */
  must?: true;
  default?: string | number | boolean;
  /** Inclusive bounds of an integer field. */
  range?: [number, number];
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
}

export const PARAMETER_TABLES: Record<string, ParameterRow[]> = {
  'social-notes-data': [
    { field: 'mode', type: 'string', required: true, values: ['note', 'notes', 'profile', 'search'], default: 'note' },
    { field: 'note', type: 'string', required: false, maxLength: 1000 },
    { field: 'user', type: 'string', required: false, maxLength: 1000 },
    { field: 'keyword', type: 'string', required: false, maxLength: 50 },
    { field: 'sort', type: 'string', required: false, values: ['general', 'hot', 'latest', 'comments', 'collects'], default: 'general' },
    { field: 'note_type', type: 'string', required: false, values: ['all', 'video', 'image'], default: 'all' },
    { field: 'page', type: 'integer', required: false, range: [1, 50], default: 1 },
    { field: 'cursor', type: 'string', required: false, maxLength: 500 },
    // The table marks it optional, but its combination rules require it to be true on every call.
    { field: 'agree', type: 'boolean', required: true, must: true },
  ],
  'video-gen-2.0-fast': [
    { field: 'mode', type: 'string', required: false, values: ['text', 'frames', 'reference', 'video'], default: 'text' },
    { field: 'prompt', type: 'string', required: true, minLength: 1, maxLength: 2000 },
    { field: 'image', type: 'file address', required: false },
    { field: 'last_image', type: 'file address', required: false },
    { field: 'videos', type: 'array of file addresses', required: false, maxItems: 3 },
    { field: 'images', type: 'array of file addresses', required: false, maxItems: 9 },
    { field: 'portraits', type: 'array of strings', required: false, maxItems: 9 },
    { field: 'audio', type: 'file address', required: false },
    { field: 'ratio', type: 'string', required: false, values: ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'], default: '16:9' },
    { field: 'resolution', type: 'string', required: false, values: ['480p', '720p', '1080p'], default: '720p' },
    { field: 'duration', type: 'integer', required: false, range: [4, 15], default: 5 },
    { field: 'sound', type: 'boolean', required: false, default: true },
    { field: 'seed', type: 'integer', required: false, range: [0, 2147483647] },
  ],
  'avatar-photo': [
    { field: 'image', type: 'file address', required: true },
    { field: 'drive', type: 'string', required: false, values: ['audio', 'text'], default: 'audio' },
    { field: 'audio', type: 'file address', required: false },
    { field: 'content', type: 'string', required: false, minLength: 2, maxLength: 1000 },
    { field: 'voice_audio', type: 'file address', required: false },
    { field: 'prompt', type: 'string', required: false, maxLength: 500 },
    { field: 'quality', type: 'string', required: false, values: ['fast', 'standard', 'max'], default: 'standard' },
  ],
};
