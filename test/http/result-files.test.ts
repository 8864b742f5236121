import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFile, MP4BoxBuffer } from 'mp4box';
import type { Movie } from 'mp4box';
import type { Response } from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { downloadFile, runTask, uploadFile } from '../support/tasks.ts';

// Result files are what their records say: the MP4's container duration, track size and H.264 picture size and the
// cover JPEG's frame size are the record's width, height and duration, its size is the bytes' length, and both
// files carry the GB 45438-2025 implicit label (an `AIGC` metadata field of JSON) naming the task.
// @see reference "File record" (width, height, duration, size, cover_url); "Overview": the service adds
// AI-generated-content marks to result files

let t: TestEmulator;
let api: ApiClient;
const download = (url: string, emulator: TestEmulator = t): Promise<Response> => downloadFile(url, emulator);
beforeAll(async () => {
  t = await startEmulator();
  api = t.as((await newAccount(t, '1000000.000')).key);
});
afterAll(() => t.close());

interface FileRecord {
  url: string;
  cover_url: string;
  size: number;
  width: number;
  height: number;
  duration: number;
}
interface StoredRecord {
  name: string;
  size: number;
  width: number | null;
  height: number | null;
  duration: number | null;
}

const AIGC_NAMESPACE = 'http://www.tc260.org.cn/ns/AIGC/1.0/';
const LABEL_FIELDS = ['Label', 'ContentProducer', 'ProduceID', 'ReservedCode1', 'ContentPropagator', 'PropagateID', 'ReservedCode2'];

// --- Shapes -----------------------------------------------------------------------------------------------------

/** Each ratio at each resolution, the size it gives, and a duration from 4 to 15 s so every length is seen. */
const SIZES: Record<string, [number, number][]> = {
  '16:9': [[854, 480], [1280, 720], [1920, 1080]],
  '9:16': [[480, 854], [720, 1280], [1080, 1920]],
  '1:1': [[480, 480], [720, 720], [1080, 1080]],
  '4:3': [[640, 480], [960, 720], [1440, 1080]],
  '3:4': [[480, 640], [720, 960], [1080, 1440]],
  '21:9': [[1120, 480], [1680, 720], [2520, 1080]],
  adaptive: [[854, 480], [1280, 720], [1920, 1080]],
};
const RESOLUTIONS = ['480p', '720p', '1080p'];
const SHAPES = Object.entries(SIZES).flatMap(([ratio, sizes], i) =>
  sizes.map(([width, height], j) => ({ ratio, resolution: RESOLUTIONS[j], width, height, duration: 4 + ((i * 3 + j) % 12) })),
);

it.each(SHAPES)('serves a $ratio $resolution $duration s result as a $width×$height MP4 that long, with a cover that size', async (shape) => {
  const task = await runTask(t, api, {
    model: 'video-gen-2.0-fast',
    input: { prompt: 'a lighthouse at dusk', ratio: shape.ratio, resolution: shape.resolution, duration: shape.duration },
  });
  const [file] = task.output.files as FileRecord[];
  expect(file).toMatchObject({ width: shape.width, height: shape.height, duration: shape.duration });
  await expectFilesAgree(file!);
});

it.each([
  ['an uploaded 600×800 photo and 7.2 s of speech', { width: 600, height: 800 }, 7.2, 600, 800],
  ['a photo of odd size, made even', { width: 601, height: 799 }, 12.345, 600, 798],
  ['a photo larger than 4096×2304, scaled down keeping its ratio', { width: 8000, height: 6000 }, 3.5, 3072, 2304],
  ['a photo of unknown size, as 720×1280', null, 9.96, 720, 1280],
])('serves an avatar-photo result for %s at the actual (fractional) seconds', async (_name, photo, seconds, width, height) => {
  const image = photo ? await uploadFile(api, 'face.jpg', 'image/jpeg', photo) : 'https://cdn.example.com/face.jpg';
  const audio = await uploadFile(api, 'speech.mp3', 'audio/mpeg', { duration: seconds });
  const task = await runTask(t, api, { model: 'avatar-photo', input: { image, audio } });
  expect(task.output.duration).toBe(seconds);
  const [file] = task.output.files as FileRecord[];
  expect(file).toMatchObject({ width, height, duration: seconds });
  await expectFilesAgree(file!);
});

// --- The AIGC label ------------------------------------------------------------------------------------------------

it('labels the video (MP4 udta/meta mdta key AIGC) and the cover (XMP TC260:AIGC) with the task as ProduceID', async () => {
  const task = await runTask(t, api, { model: 'video-gen-2.0-fast', input: { prompt: 'p', ratio: '9:16', duration: 6 } });
  const [file] = task.output.files as FileRecord[];
  const video = mp4Label((await download(file!.url)).body as Buffer);
  const cover = jpegLabel((await download(file!.cover_url)).body as Buffer);
  for (const [label, which] of [[video, 'video'], [cover, 'cover']] as const) {
    expect(Object.keys(label)).toEqual(LABEL_FIELDS);
    expect(label).toEqual({
      Label: '1',
      ContentProducer: 'svc-emulator',
      ProduceID: `${task.id}/0/${which}`,
      ReservedCode1: '',
      ContentPropagator: '',
      PropagateID: '',
      ReservedCode2: '',
    });
  }
});

it('makes a result file a scenario adds past the generated ones a real 320×180, 2 s video labelled with its position', async () => {
  const submitted = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  const done = await t.admin.post(`/_emulator/tasks/${submitted.body.id}/complete`, { output: { files: [{}, {}] } });
  expect(done.status).toBe(200);
  const [first, added] = done.body.output.files as FileRecord[];
  expect(first).toMatchObject({ width: 1280, height: 720, duration: 5 });
  expect(added).toMatchObject({ width: 320, height: 180, duration: 2 });
  await expectFilesAgree(added!);
  expect(mp4Label((await download(added!.url)).body as Buffer)['ProduceID']).toBe(`${submitted.body.id}/1/video`);
  expect(jpegLabel((await download(added!.cover_url)).body as Buffer)['ProduceID']).toBe(`${submitted.body.id}/1/cover`);
});

// --- Across restarts ---------------------------------------------------------------------------------------------

it('serves the same bytes after a restart on the store file and in an emulator started from the exported state', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-emulator-'));
  const db = join(dir, 'store.db');
  try {
    const first = await startEmulator({ db });
    const input = { prompt: 'p', ratio: '4:3', resolution: '480p', duration: 7 };
    const task = await runTask(first, first.api, { model: 'video-gen-2.0-fast', input });
    const [file] = task.output.files as FileRecord[];
    const urls = [file!.url, file!.cover_url];
    const before = await Promise.all(urls.map(async (url) => (await download(url, first)).body as Buffer));
    const exported = (await first.admin.post('/_emulator/state/export')).body as unknown;
    await first.close();

    const second = await startEmulator({ db });
    const imported = await startEmulator();
    try {
      expect((await imported.admin.post('/_emulator/state/import', exported)).status).toBe(200);
      for (const emulator of [second, imported]) {
        const after = await Promise.all(urls.map(async (url) => (await download(url, emulator)).body as Buffer));
        after.forEach((bytes, i) => expect(bytes.equals(before[i]!), urls[i]).toBe(true));
      }
    } finally {
      await second.close();
      await imported.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('serves a result file record of an earlier version (fixtures/media), and refuses a state naming any other media', async () => {
  const submitted = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  const done = await t.admin.post(`/_emulator/tasks/${submitted.body.id}/complete`, { output: { files: [{}, {}] } });
  const [first, second] = done.body.output.files as FileRecord[];
  const state = (await t.admin.post('/_emulator/state/export')).body as { files: (StoredRecord & { source: unknown })[] };
  const recordOf = (url: string | null | undefined): number => state.files.findIndex((f) => url?.endsWith(`/${f.name}`));
  const huge = { media: 'video', width: 100000, height: 100000, duration: 5, produce_id: 'x' };
  // A state document is checked field by field (issue 24): media the emulator would not have made are refused.
  const refused: [string | null, unknown][] = [
    [first!.cover_url, { kind: 'fixture', fixture: '../../package.json' }],
    [second!.url, { kind: 'fixture', fixture: huge }],
    [second!.cover_url, { kind: 'fixture', fixture: null }],
  ];
  const target = await startEmulator();
  try {
    for (const [url, source] of refused) {
      const i = recordOf(url);
      const res = await target.admin.post('/_emulator/state/import', { ...state, files: state.files.map((f, k) => (k === i ? { ...f, source } : f)) });
      expect(res.status, String(url)).toBe(422);
      expect((res.body.error.details as { field: string }[]).some((d) => d.field.startsWith(`files[${i}].source`)), String(url)).toBe(true);
    }
    state.files[recordOf(first!.url)]!.source = { kind: 'fixture', fixture: 'sample.mp4' };
    expect((await target.admin.post('/_emulator/state/import', state)).status).toBe(200);
    const legacy = await download(first!.url, target);
    expect(legacy.status).toBe(200);
    expect(probeMp4(legacy.body as Buffer)).toMatchObject({ duration: 2, track: { width: 320, height: 180 } });
  } finally {
    await target.close();
  }
});

// --- Helpers -----------------------------------------------------------------------------------------------------

/** Downloads a result video and its cover and compares what a media probe reads with the records. */
async function expectFilesAgree(file: FileRecord): Promise<void> {
  const videoRes = await download(file.url);
  expect(videoRes.status).toBe(200);
  const video = videoRes.body as Buffer;
  expect(video.length).toBe(file.size);

  const probe = probeMp4(video);
  expect(probe.duration).toBeCloseTo(file.duration, 3);
  expect(probe.track).toEqual({ width: file.width, height: file.height });
  expect(probe.sampleEntry).toEqual({ width: file.width, height: file.height });
  expect(probe.sps).toEqual({ width: file.width, height: file.height });

  const coverRes = await download(file.cover_url);
  expect(coverRes.status).toBe(200);
  const cover = coverRes.body as Buffer;
  expect(jpegSize(cover)).toEqual({ width: file.width, height: file.height });

  // The stored records, as the state export holds them: each size is its bytes' length.
  const stored = (await t.admin.post('/_emulator/state/export')).body.files as StoredRecord[];
  const record = (url: string): StoredRecord | undefined => stored.find((f) => url.endsWith(`/${f.name}`));
  expect(record(file.url)).toMatchObject({ size: video.length, width: file.width, height: file.height, duration: file.duration });
  expect(record(file.cover_url)).toMatchObject({ size: cover.length, width: file.width, height: file.height, duration: null });
}


/** What mp4box reads: container duration (s), tkhd size, avc1 sample entry size, and the SPS's cropped size. */
function probeMp4(bytes: Buffer): { duration: number; track: Size; sampleEntry: Size; sps: Size } {
  const file = parseMp4(bytes);
  const info = file.info;
  expect(info.videoTracks).toHaveLength(1);
  const track = info.videoTracks[0]!;
  const avcC = file.iso.getBox('avcC');
  const sps = avcC?.SPS[0]?.data;
  if (!sps) throw new Error('no SPS in avcC');
  return {
    duration: info.duration / info.timescale,
    track: { width: track.track_width, height: track.track_height },
    sampleEntry: { width: track.video?.width ?? 0, height: track.video?.height ?? 0 },
    sps: spsSize(Buffer.from(sps)),
  };
}

function parseMp4(bytes: Buffer): { iso: ReturnType<typeof createFile>; info: Movie } {
  const iso = createFile();
  let info: Movie | undefined;
  iso.onReady = (movie) => (info = movie);
  iso.onError = (module, message) => {
    throw new Error(`${module}: ${message}`);
  };
  const copy = new Uint8Array(bytes).buffer;
  iso.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, 0));
  iso.flush();
  if (!info) throw new Error('mp4box found no movie');
  return { iso, info };
}

/** The MP4's `AIGC` metadata item: `keys` names it (namespace mdta), `ilst` holds its UTF-8 value by position. */
function mp4Label(bytes: Buffer): Record<string, unknown> {
  const { iso } = parseMp4(bytes);
  const keys = iso.getBox('keys')?.keys ?? {};
  const index = Object.entries(keys).find(([, key]) => key === 'mdtaAIGC')?.[0];
  const item = iso.getBox('ilst')?.list[Number(index)] as { valueType?: number; value?: unknown } | undefined;
  expect(item?.valueType).toBe(1); // UTF-8
  return JSON.parse(String(item?.value)) as Record<string, unknown>;
}

interface Size {
  width: number;
  height: number;
}

/** The JPEG's frame size from its SOF segment (T.81 B.2.2). */
function jpegSize(bytes: Buffer): Size {
  const sof = jpegSegments(bytes).find(({ marker }) => marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker));
  if (!sof) throw new Error('no SOF segment');
  return { height: sof.payload.readUInt16BE(1), width: sof.payload.readUInt16BE(3) };
}

/** The label in the JPEG's XMP (APP1): the `AIGC` property of the TC260 namespace, its text the JSON. */
function jpegLabel(bytes: Buffer): Record<string, unknown> {
  const signature = 'http://ns.adobe.com/xap/1.0/\0';
  const isXmp = ({ marker, payload }: { marker: number; payload: Buffer }): boolean =>
    marker === 0xe1 && payload.subarray(0, signature.length).toString('latin1') === signature;
  const xmp = jpegSegments(bytes).find(isXmp);
  const packet = xmp?.payload.subarray(signature.length).toString('utf8') ?? '';
  const prefix = new RegExp(`xmlns:(\\w+)="${AIGC_NAMESPACE.replace(/[./]/g, '\\$&')}"`).exec(packet)?.[1];
  const text = new RegExp(`<${prefix}:AIGC>([^<]*)</${prefix}:AIGC>`).exec(packet)?.[1] ?? '';
  return JSON.parse(text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')) as Record<string, unknown>;
}

/** Marker segments up to the start of scan. */
function jpegSegments(bytes: Buffer): { marker: number; payload: Buffer }[] {
  expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]);
  const segments: { marker: number; payload: Buffer }[] = [];
  let at = 2;
  while (at + 4 <= bytes.length && bytes[at] === 0xff) {
    const marker = bytes[at + 1]!;
    const length = bytes.readUInt16BE(at + 2);
    segments.push({ marker, payload: bytes.subarray(at + 4, at + 2 + length) });
    if (marker === 0xda) break;
    at += 2 + length;
  }
  return segments;
}

/**
 * The picture size an H.264 SPS declares (ITU-T H.264 §7.3.2.1.1, §7.4.2.1.1): macroblocks less the frame
 * cropping. Reads the syntax the Baseline, Main and High profiles use, with picture order count type 0 or 2.
 */
function spsSize(nal: Buffer): Size {
  const rbsp: number[] = [];
  for (let i = 1; i < nal.length; i++) {
    if (i >= 3 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue; // emulation prevention
    rbsp.push(nal[i]!);
  }
  let bit = 0;
  const u = (count: number): number => {
    let value = 0;
    for (let i = 0; i < count; i++, bit++) value = value * 2 + ((rbsp[bit >> 3]! >> (7 - (bit & 7))) & 1);
    return value;
  };
  const ue = (): number => {
    let zeros = 0;
    while (u(1) === 0) zeros++;
    return 2 ** zeros - 1 + u(zeros);
  };
  const profile = u(8);
  u(16); // constraint flags, level_idc
  ue(); // seq_parameter_set_id
  let chromaFormat = 1;
  if ([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].includes(profile)) {
    chromaFormat = ue();
    if (chromaFormat === 3) u(1);
    ue(); // bit_depth_luma_minus8
    ue(); // bit_depth_chroma_minus8
    u(1); // qpprime_y_zero_transform_bypass_flag
    if (u(1)) throw new Error('SPS with scaling matrices: not read here');
  }
  ue(); // log2_max_frame_num_minus4
  const pocType = ue();
  if (pocType === 0) ue();
  else if (pocType !== 2) throw new Error(`pic_order_cnt_type ${pocType}: not read here`);
  ue(); // max_num_ref_frames
  u(1); // gaps_in_frame_num_value_allowed_flag
  const widthMbs = ue() + 1;
  const heightUnits = ue() + 1;
  const frameMbsOnly = u(1);
  if (!frameMbsOnly) u(1);
  u(1); // direct_8x8_inference_flag
  const crop = u(1) ? [ue(), ue(), ue(), ue()] : [0, 0, 0, 0];
  const cropX = chromaFormat === 1 || chromaFormat === 2 ? 2 : 1;
  const cropY = (chromaFormat === 1 ? 2 : 1) * (2 - frameMbsOnly);
  return {
    width: widthMbs * 16 - cropX * (crop[0]! + crop[1]!),
    height: heightUnits * 16 * (2 - frameMbsOnly) - cropY * (crop[2]! + crop[3]!),
  };
}
