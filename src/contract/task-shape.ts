import type { Points } from '../points/index.ts';

// The task as the API shows it: a wire shape, read by the tasks that hold it and the scenarios that plan it.

/** @see reference "States and transitions" */
export type TaskStatus = 'queued' | 'processing' | 'succeeded' | 'failed' | 'canceled';

/** @see reference "Task failure reasons" */
export type TaskFailureCode =
  | 'invalid_params'
  | 'content_rejected'
  | 'insufficient_points'
  | 'timeout'
  | 'service_unavailable'
  | 'capacity_shortage'
  | 'generation_failed'
  | 'no_result'
  | 'canceled';

export interface FileRecord {
  url: string;
  type: string;
  mime_type: string;
  size: number;
  width: number | null;
  height: number | null;
  duration: number | null;
  cover_url: string | null;
  expires_at: string;
}

export interface TaskOutput {
  files: FileRecord[];
  text?: string | null;
  voice_id?: string | null;
  duration?: number | null;
  usage?: Record<string, unknown> | null;
}

/** The task object exactly as the API shows it. @see reference "Task object" */
export interface Task {
  id: string;
  object: 'task';
  model: string;
  status: TaskStatus;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  input: Record<string, unknown>;
  points: { frozen: Points; charged: Points; refunded: Points };
  output: TaskOutput | null;
  error: { code: TaskFailureCode; message: string } | null;
  metadata: Record<string, string>;
}
