import { entry } from '../store/index.ts';

/** File kinds of the reference's file records (`image`, `video`, `audio`, `file`) from a MIME type. */
export function kindOf(mimeType: string): 'image' | 'video' | 'audio' | 'file' {
  const top = mimeType.split('/')[0];
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'file';
}

const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  txt: 'text/plain',
  json: 'application/json',
};

export function mimeFromName(filename: string): string {
  const ext = filename.toLowerCase().split('.').pop() ?? '';
  return entry(BY_EXTENSION, ext) ?? 'application/octet-stream';
}

export function extensionOf(mimeType: string): string {
  const found = Object.entries(BY_EXTENSION).find(([, mime]) => mime === mimeType);
  return found ? found[0] : 'bin';
}
