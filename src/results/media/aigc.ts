/**
 * The implicit label of AI-generated content in file metadata, as GB 45438-2025 (网络安全技术 人工智能生成合成内容
 * 标识方法) and the TC260 practice guides give it: one field named `AIGC` whose value is a JSON object of seven
 * string elements. A producer fills the first three (and its reserved code); a platform that later spreads the
 * file fills the propagator ones, so the emulator leaves those empty.
 * @see reference "Overview": the service adds AI-generated-content marks to result files
 */
export interface AigcLabel {
  /** `1`: the content is AI-generated (as against possibly or suspected). */
  Label: string;
  /** The producing service's name or code. */
  ContentProducer: string;
  /** The producer's unique number of this piece of content. */
  ProduceID: string;
  /** Reserved for the producer's protection data (a signature or digest); none here. */
  ReservedCode1: string;
  ContentPropagator: string;
  PropagateID: string;
  ReservedCode2: string;
}

/** The metadata key, in MP4 `keys` and as the XMP property name. */
export const AIGC_KEY = 'AIGC';
/** The XMP namespace of the label and the prefix the TC260 guide's reference code registers for it. */
export const AIGC_XMP_NAMESPACE = 'http://www.tc260.org.cn/ns/AIGC/1.0/';
const AIGC_XMP_PREFIX = 'TC260';
/** Emulator-defined: the producer code its result files carry (a real service carries its assigned code). */
export const EMULATOR_PRODUCER = 'svc-emulator';

export function aigcLabel(produceId: string): AigcLabel {
  return {
    Label: '1',
    ContentProducer: EMULATOR_PRODUCER,
    ProduceID: produceId,
    ReservedCode1: '',
    ContentPropagator: '',
    PropagateID: '',
    ReservedCode2: '',
  };
}

/** The label's value as stored: compact JSON in the standard's field order. */
export const aigcJson = (label: AigcLabel): string => JSON.stringify(label);

/** The XMP signature that starts a JPEG APP1 segment holding an XMP packet (XMP Part 3, §1.1.3). */
const XMP_APP1_SIGNATURE = 'http://ns.adobe.com/xap/1.0/\0';

/**
 * The JPEG APP1 payload carrying the label as XMP: one `rdf:Description` with the `TC260:AIGC` property whose
 * text is the JSON (XML-escaped), wrapped in a read-only xpacket.
 */
export function aigcXmpApp1(label: AigcLabel): Buffer {
  const packet = [
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    `<rdf:Description rdf:about="" xmlns:${AIGC_XMP_PREFIX}="${AIGC_XMP_NAMESPACE}">`,
    `<${AIGC_XMP_PREFIX}:${AIGC_KEY}>${escapeXml(aigcJson(label))}</${AIGC_XMP_PREFIX}:${AIGC_KEY}>`,
    '</rdf:Description>',
    '</rdf:RDF>',
    '</x:xmpmeta>',
    '<?xpacket end="r"?>',
  ].join('\n');
  return Buffer.concat([Buffer.from(XMP_APP1_SIGNATURE, 'latin1'), Buffer.from(packet, 'utf8')]);
}

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
