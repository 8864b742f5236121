/** A parsed server-sent event. */
export interface StreamEvent {
  event: string | null;
  data: string;
}

/** Server-sent events per the HTML standard's parsing rules (enough of them for the three formats). */
export function parseSse(text: string): StreamEvent[] {
  const events: StreamEvent[] = [];
  let event: string | null = null;
  let data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length > 0) events.push({ event, data: data.join('\n') });
      event = null;
      data = [];
    } else if (line.startsWith('event:')) event = line.slice(6).trimStart();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length > 0) events.push({ event, data: data.join('\n') });
  return events;
}
