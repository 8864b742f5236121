/**
 * A most-significant-bit-first bit writer: the bit order of both H.264 (ITU-T H.264 §7.2) and JPEG entropy-coded
 * data (ITU-T T.81 §F.1.2). Grows as needed; `zeros` only moves the position, as the buffer starts zeroed.
 */
export class BitWriter {
  private bytes = Buffer.alloc(64);
  private bit = 0;

  /** The low `count` bits of `value` (at most 32), most significant first. */
  bits(value: number, count: number): this {
    this.room(count);
    for (let i = count - 1; i >= 0; i--) {
      if ((value >>> i) & 1) this.bytes[this.bit >> 3]! |= 0x80 >> (this.bit & 7);
      this.bit++;
    }
    return this;
  }

  zeros(count: number): this {
    this.room(count);
    this.bit += count;
    return this;
  }

  flag(on: boolean): this {
    return this.bits(on ? 1 : 0, 1);
  }

  /** Unsigned Exp-Golomb code ue(v) (H.264 §9.1). */
  ue(value: number): this {
    const coded = value + 1;
    const length = 31 - Math.clz32(coded);
    return this.zeros(length).bits(coded, length + 1);
  }

  /** Signed Exp-Golomb code se(v) (H.264 §9.1.1): 0, 1, -1, 2, -2 … as 0, 1, 2, 3, 4 … */
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** rbsp_trailing_bits() (H.264 §7.3.2.11): a stop bit, then zeros to the byte boundary. */
  trailing(): this {
    this.bits(1, 1);
    return this.align(0);
  }

  /** Fills to the byte boundary with `fill` bits (JPEG pads its entropy-coded data with ones, T.81 §F.1.2.3). */
  align(fill: 0 | 1): this {
    const pad = (8 - (this.bit & 7)) & 7;
    return fill ? this.bits(0xff, pad) : this.zeros(pad);
  }

  /** The bytes written so far; call after aligning. */
  done(): Buffer {
    return Buffer.from(this.bytes.subarray(0, Math.ceil(this.bit / 8)));
  }

  private room(count: number): void {
    const needed = Math.ceil((this.bit + count) / 8);
    if (needed <= this.bytes.length) return;
    const grown = Buffer.alloc(Math.max(needed, this.bytes.length * 2));
    this.bytes.copy(grown);
    this.bytes = grown;
  }
}
