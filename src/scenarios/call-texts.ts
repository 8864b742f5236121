import type { TextView } from '../text-formats/index.ts';
import { IndexRoom, SLOT_BITS, Subject } from './text-index.ts';

/**
 * One call's texts as the conditions read them, each made the first time a condition asks: lowered and indexed
 * once for all the rules (see text-index.ts). A class, not closures: one is made for every call.
 */
export class CallTexts {
  private readonly view: TextView;
  private readonly indexed: number;
  private readonly room = new IndexRoom();
  private user: Subject | null | undefined;
  private systemText: Subject | null | undefined;
  private result: Subject | null | undefined;
  private all: Subject | undefined;

  /** `indexed`: the texts worth an index, by `textsToIndex` of the rules the call is matched against (0: none). */
  constructor(view: TextView, indexed: number) {
    this.view = view;
    this.indexed = indexed;
  }

  lastUser(): Subject | null {
    return this.user === undefined ? (this.user = this.of(TEXT_LAST_USER, this.view.lastUser)) : this.user;
  }

  system(): Subject | null {
    return this.systemText === undefined ? (this.systemText = this.of(TEXT_SYSTEM, this.view.system)) : this.systemText;
  }

  toolResult(): Subject | null {
    return this.result === undefined ? (this.result = this.of(TEXT_TOOL_RESULT, this.view.lastToolResult?.content ?? null)) : this.result;
  }

  messages(): Subject {
    return (this.all ??= this.of(TEXT_MESSAGES, this.view.messages) as Subject);
  }

  /** Whether the call may pass a rule's gate (`gateFor`): false when its text lacks the pair, so the rule cannot fit. */
  admits(gate: number): boolean {
    if (gate < 0) return true;
    const field = gate >>> (SLOT_BITS + 1);
    const subject = field === TEXT_LAST_USER ? this.lastUser() : field === TEXT_SYSTEM ? this.system() : field === TEXT_TOOL_RESULT ? this.toolResult() : this.messages();
    return subject !== null && subject.mayHoldOne(gate & SLOT_MASK, ((gate >>> SLOT_BITS) & 1) === 1);
  }

  private of(field: number, texts: string | readonly string[] | null): Subject | null {
    if (texts === null) return null;
    const worth = (folded: boolean): boolean => (this.indexed & (1 << indexBit(field, folded))) !== 0;
    return new Subject(typeof texts === 'string' ? [texts] : texts, this.room, [worth(false), worth(true)]);
  }
}

/** The texts a condition reads, as gates and `textsToIndex` number them. */
export const TEXT_LAST_USER = 1;
export const TEXT_SYSTEM = 2;
export const TEXT_TOOL_RESULT = 3;
export const TEXT_MESSAGES = 4;
/** The bit of a text in one form, in the `indexed` bits of `CallTexts`. */
export const indexBit = (field: number, folded: boolean): number => (field - 1) * 2 + (folded ? 1 : 0);

/** A gate (see rule-lists.ts `gateOf`): the text, its form and one pair's slot, in one number. */
export const gateFor = (field: number, folded: boolean, slot: number): number => (field << (SLOT_BITS + 1)) | (folded ? 1 << SLOT_BITS : 0) | slot;
const SLOT_MASK = (1 << SLOT_BITS) - 1;
